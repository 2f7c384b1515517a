// Block instantiation: generics bound (defaults applied, `where` checked),
// `param` and `buffer` tensors fetched from a ParameterSource by path and
// checked against their declared dtype and shape, `state` tensors created as
// zeros, and sub-blocks and sub-block arrays instantiated recursively. The
// same walk without a source lists the parameter manifest.
#include <new>

#include "evaluator.hpp"

namespace linnet::eval {

namespace {

// Thrown inside an optional sub-block when the source lacks a parameter it
// requires: the sub-block is then absent.
struct MissingParameter {
  std::string path;
};

ParameterKind parameter_kind(ast::MemberKind kind) {
  switch (kind) {
    case ast::MemberKind::Buffer: return ParameterKind::Buffer;
    case ast::MemberKind::State: return ParameterKind::State;
    default: return ParameterKind::Param;
  }
}

}  // namespace

GenericBindings Evaluator::root_generics(const Module* module, const ast::BlockItem& item,
                                         const GenericBindings& given) {
  const std::string name = qualified_name(module, item.name.text);
  Frame frame;
  frame.module = module;
  for (const auto& [key, value] : given) {
    bool declared = false;
    for (const ast::GenericParam& generic : item.generics) declared = declared || generic.name.text == key;
    if (!declared) {
      fail(codes::bad_generic_arguments, "block `" + name + "` has no generic `" + key + "`", item.name.span);
    }
    frame.generics[key] = value;
  }
  apply_generic_defaults(item.generics, frame, item.name.span, name);
  check_where(item.where, frame, item.name.span, name);
  return frame.generics;
}

std::shared_ptr<BlockInstance> Evaluator::instantiate_block(const Module* module, const ast::BlockItem& item,
                                                            GenericBindings generics, const std::string& path,
                                                            ParameterSource* source,
                                                            std::vector<ParameterInfo>* manifest, bool inside_optional,
                                                            Span use_site) {
  auto instance = std::make_shared<BlockInstance>();
  instance->module = module;
  instance->item = &item;
  instance->generics = generics;
  instance->path = path;
  const std::string block_name = qualified_name(module, item.name.text);
  CallScope scope(*this, calls, "instantiating " + block_name + (path.empty() ? "" : " at `" + path + "`"), use_site,
                  options.max_call_depth);
  Frame frame;
  frame.module = module;
  frame.generics = std::move(generics);
  frame.scopes.emplace_back();

  for (const ast::ItemPtr& member_item : item.members) {
    if (const auto* method = member_item->as<ast::FunctionItem>()) {
      instance->methods[method->name.text] = method;
      continue;
    }
    const auto* member = member_item->as<ast::MemberItem>();
    if (member == nullptr) continue;
    const std::string member_path = instance->member_path(member->name.text);
    const ast::Type* type = member->type.get();
    const bool optional = type->kind == ast::TypeKind::Optional;
    if (optional) type = type->cast<ast::OptionalType>().inner.get();

    if (member->member != ast::MemberKind::Sub) {
      const auto* tensor_type = type->as<ast::TensorType>();
      if (tensor_type == nullptr) {
        fail(codes::type_mismatch, std::string(ast::member_kind_spelling(member->member)) + " `" + member->name.text +
                                       "` must have a tensor type", member->type->span);
      }
      if (member->member == ast::MemberKind::State && optional) {
        fail(codes::type_mismatch, "state `" + member->name.text + "` cannot be optional", member->type->span);
      }
      const DType dtype = eval_dtype(*tensor_type->dtype, frame);
      const Shape shape = eval_shape(tensor_type->shape, frame);
      const ParameterKind kind = parameter_kind(member->member);
      try {
        // A shape whose element or byte count overflows is refused here, at
        // its declaration, before any listing or allocation uses it.
        (void)tensor::shape_bytes(shape, tensor::dtype_size(dtype));
      } catch (const tensor::TensorError& error) {
        fail_tensor(error, member->type->span);
      }
      if (manifest != nullptr) {
        manifest->push_back({member_path, kind, dtype, shape, optional || inside_optional, member->span});
      }
      Value value;
      if (kind == ParameterKind::State && source == nullptr) {
        value = Value();  // only listing the manifest: no memory for the state
      } else if (kind == ParameterKind::State) {
        try {
          value = Value::from_tensor(Tensor::zeros(dtype, shape));
        } catch (const tensor::TensorError& error) {
          fail_tensor(error, member->type->span);
        } catch (const std::bad_alloc&) {
          fail(codes::resource_limit,
               "out of memory creating state `" + member_path + "` of " + describe_type(*type, frame),
               member->type->span);
        }
      } else if (source == nullptr) {
        value = optional ? Value::none() : Value();
      } else {
        const ParameterRequest request{member_path, kind, dtype, shape, optional || inside_optional};
        std::optional<Tensor> fetched = source->fetch(request);
        if (!fetched || !fetched->defined()) {
          if (optional) {
            value = Value::none();
          } else if (inside_optional) {
            throw MissingParameter{member_path};
          } else {
            fail(codes::parameter_binding,
                 "the weights have no tensor for " + std::string(parameter_kind_name(kind)) + " `" + member_path + "`",
                 member->span,
                 {"declared as `" + describe_type(*type, frame) + "` in `" + block_name + "`"});
          }
        } else {
          if (fetched->dtype() != dtype || fetched->shape() != shape) {
            fail(codes::parameter_binding,
                 std::string(parameter_kind_name(kind)) + " `" + member_path + "` does not fit its declaration",
                 member->span,
                 {"declared as `" + describe_type(*type, frame) + "`", "the weights hold " + fetched->describe()});
          }
          value = optional ? Value::some(Value::from_tensor(*fetched)) : Value::from_tensor(*fetched);
        }
      }
      instance->members[member->name.text] = {member, std::move(value)};
      continue;
    }

    // A sub-block, an array of them, or an optional one.
    const ast::Type* block_type = type;
    std::optional<int64_t> length;
    if (const auto* array = type->as<ast::ArrayType>()) {
      if (optional) fail(codes::type_mismatch, "an array of blocks cannot be optional", member->type->span);
      length = eval_int(*array->length, frame, "a block array length");
      if (*length < 0) fail(codes::negative_dimension, "a block array of negative length", array->length->span);
      if (*length > options.max_block_array_length) {
        fail(codes::resource_limit,
             "a block array of " + std::to_string(*length) + " blocks is past the interpreter's limit of " +
                 std::to_string(options.max_block_array_length),
             array->length->span, {"`" + source_text(array->length->span) + "` = " + std::to_string(*length)});
      }
      block_type = array->element.get();
    }
    const auto* named = block_type->as<ast::NamedType>();
    if (named == nullptr) fail(codes::type_mismatch, "sub `" + member->name.text + "` must name a block", block_type->span);
    const ResolvedItem resolved = resolve_path(module, named->path, named->span);
    const auto* child = resolved.item != nullptr ? resolved.item->as<ast::BlockItem>() : nullptr;
    if (child == nullptr) {
      const std::string written = source_text(named->span);
      fail(codes::wrong_symbol_kind, std::string("`") + written + "` is not a block", named->span);
    }
    const std::string child_name = qualified_name(resolved.module, child->name.text);
    Frame child_frame;
    child_frame.module = resolved.module;
    child_frame.generics = bind_explicit_generics(child->generics, named->generic_args, frame, named->span, child_name);
    apply_generic_defaults(child->generics, child_frame, named->span, child_name);
    check_where(child->where, child_frame, named->span, child_name);

    if (length) {
      std::vector<std::shared_ptr<BlockInstance>> elements;
      for (int64_t i = 0; i < *length; ++i) {
        elements.push_back(instantiate_block(resolved.module, *child, child_frame.generics,
                                             member_path + "." + std::to_string(i), source, manifest, inside_optional,
                                             member->span));
      }
      instance->members[member->name.text] = {member, Value::block_array(std::move(elements))};
      continue;
    }
    if (!optional) {
      instance->members[member->name.text] = {
          member, Value::block(instantiate_block(resolved.module, *child, child_frame.generics, member_path, source,
                                                 manifest, inside_optional, member->span))};
      continue;
    }
    Value value;
    try {
      value = Value::some(Value::block(instantiate_block(resolved.module, *child, child_frame.generics, member_path,
                                                         source, manifest, true, member->span)));
    } catch (const MissingParameter&) {
      value = Value::none();
    }
    if (source == nullptr) value = Value::none();
    instance->members[member->name.text] = {member, std::move(value)};
  }
  return instance;
}

}  // namespace linnet::eval
