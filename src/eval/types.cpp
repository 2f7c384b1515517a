// Types at run time: dimensions, dtypes and shapes evaluated with concrete
// generics; values checked against declared types; generic arguments bound
// explicitly, by default, or inferred from argument values.
#include <algorithm>
#include <limits>

#include "evaluator.hpp"
#include "scalar_elements.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::eval {

namespace {

bool satisfies(ast::GenericKind constraint, DType dtype) {
  switch (constraint) {
    case ast::GenericKind::Float: return tensor::is_float(dtype);
    case ast::GenericKind::Integer: return tensor::is_integer(dtype);
    case ast::GenericKind::Numeric: return dtype != DType::Bool;
    default: return true;
  }
}

bool is_dtype_kind(ast::GenericKind kind) {
  return kind == ast::GenericKind::DType || kind == ast::GenericKind::Numeric || kind == ast::GenericKind::Integer ||
         kind == ast::GenericKind::Float;
}

// The single-segment name of a plain named type (`T`, `f32`, `H`), or null.
const ast::Ident* plain_name(const ast::Type& type) {
  const auto* named = type.as<ast::NamedType>();
  if (named == nullptr || named->path.size() != 1 || named->has_generic_args) return nullptr;
  return &named->path.front();
}

// Every name in `expr` that is one of `unbound`, with repetitions.
void collect_unbound(const ast::Expr& expr, const std::set<std::string>& unbound, std::vector<std::string>& found) {
  switch (expr.kind) {
    case ast::ExprKind::Name: {
      const auto& name = expr.cast<ast::NameExpr>().name.text;
      if (unbound.count(name)) found.push_back(name);
      break;
    }
    case ast::ExprKind::Binary: {
      const auto& binary = expr.cast<ast::BinaryExpr>();
      collect_unbound(*binary.lhs, unbound, found);
      collect_unbound(*binary.rhs, unbound, found);
      break;
    }
    case ast::ExprKind::Unary: collect_unbound(*expr.cast<ast::UnaryExpr>().operand, unbound, found); break;
    case ast::ExprKind::Call:
      for (const auto& argument : expr.cast<ast::CallExpr>().arguments) {
        collect_unbound(*argument.value, unbound, found);
      }
      break;
    default: break;
  }
}

int64_t integer_min(DType dtype) {
  switch (dtype) {
    case DType::I8: return std::numeric_limits<int8_t>::min();
    case DType::I16: return std::numeric_limits<int16_t>::min();
    case DType::I32: return std::numeric_limits<int32_t>::min();
    case DType::I64: return std::numeric_limits<int64_t>::min();
    default: return 0;
  }
}

int64_t integer_max(DType dtype) {
  switch (dtype) {
    case DType::I8: return std::numeric_limits<int8_t>::max();
    case DType::I16: return std::numeric_limits<int16_t>::max();
    case DType::I32: return std::numeric_limits<int32_t>::max();
    case DType::U8: return std::numeric_limits<uint8_t>::max();
    case DType::U16: return std::numeric_limits<uint16_t>::max();
    case DType::U32: return std::numeric_limits<uint32_t>::max();
    default: return std::numeric_limits<int64_t>::max();
  }
}

}  // namespace

// ---------------------------------------------------------------- dimensions and dtypes

int64_t Evaluator::eval_int(const ast::Expr& expr, Frame& frame, const char* what) {
  Value value = eval_value(expr, frame);
  if (value.kind() == Value::Kind::Int) return value.int_value();
  if (value.is_scalar_tensor() && tensor::is_integer(value.tensor().dtype())) {
    return value.tensor().item().to<int64_t>();
  }
  fail(codes::not_compile_time, std::string(what) + " must be a compile-time integer, found " + value.describe(),
       expr.span);
}

std::optional<DType> Evaluator::scalar_type_name(const std::string& name) const {
  return tensor::dtype_from_name(name);
}

DType Evaluator::eval_dtype(const ast::Type& type, Frame& frame) {
  const ast::Ident* name = plain_name(type);
  if (name == nullptr) fail(codes::type_mismatch, "expected a dtype, found `" + source_text(type.span) + "`", type.span);
  if (auto scalar = scalar_type_name(name->text)) return *scalar;
  auto bound = frame.generics.find(name->text);
  if (bound != frame.generics.end() && bound->second.kind == GenericValue::Kind::DType) return bound->second.dtype;
  if (bound != frame.generics.end()) {
    fail(codes::type_mismatch, "generic `" + name->text + "` is " + bound->second.to_string() + ", not a dtype",
         type.span);
  }
  fail(codes::cannot_infer, "dtype `" + name->text + "` is not bound here", type.span);
}

Shape Evaluator::eval_shape(const std::vector<ast::ShapeElement>& shape, Frame& frame) {
  Shape dims;
  for (const ast::ShapeElement& element : shape) {
    if (element.is_pack) {
      auto bound = frame.generics.find(element.pack.text);
      if (bound == frame.generics.end() || bound->second.kind != GenericValue::Kind::Shape) {
        fail(codes::cannot_infer, "shape pack `*" + element.pack.text + "` is not bound here", element.span);
      }
      dims.insert(dims.end(), bound->second.shape.begin(), bound->second.shape.end());
      continue;
    }
    const int64_t dim = eval_int(*element.dim, frame, "a dimension");
    if (dim < 0) {
      fail(codes::negative_dimension, "dimension `" + source_text(element.span) + "` is " + std::to_string(dim),
           element.span);
    }
    dims.push_back(dim);
  }
  return dims;
}

GenericValue Evaluator::eval_generic_arg(const ast::GenericArg& arg, const ast::GenericParam& param, Frame& caller) {
  const ast::Ident* name = arg.type ? plain_name(*arg.type) : nullptr;
  if (param.is_pack || param.constraint == ast::GenericKind::Shape) {
    if (arg.expr && arg.expr->kind == ast::ExprKind::Shape) {
      Shape dims;
      for (const auto& element : arg.expr->cast<ast::ShapeExpr>().elements) {
        dims.push_back(eval_int(*element, caller, "a dimension"));
      }
      return GenericValue::of_shape(std::move(dims));
    }
    if (name != nullptr) {
      auto bound = caller.generics.find(name->text);
      if (bound != caller.generics.end() && bound->second.kind == GenericValue::Kind::Shape) return bound->second;
    }
    fail(codes::bad_generic_arguments,
         "shape pack `*" + param.name.text + "` takes a shape such as `[B, S]`, found `" + source_text(arg.span) + "`",
         arg.span);
  }
  bool wants_dtype = is_dtype_kind(param.constraint);
  if (param.constraint == ast::GenericKind::Unknown && name != nullptr) {
    auto bound = caller.generics.find(name->text);
    wants_dtype = scalar_type_name(name->text).has_value() ||
                  (bound != caller.generics.end() && bound->second.kind == GenericValue::Kind::DType);
  }
  if (wants_dtype) {
    if (!arg.type) {
      fail(codes::bad_generic_arguments,
           "generic `" + param.name.text + "` takes a dtype, found `" + source_text(arg.span) + "`", arg.span);
    }
    const DType dtype = eval_dtype(*arg.type, caller);
    if (!satisfies(param.constraint, dtype)) {
      fail(codes::dtype_constraint,
           "`" + std::string(tensor::dtype_name(dtype)) + "` does not satisfy the constraint `" +
               param.constraint_name.text + "` on `" + param.name.text + "`",
           arg.span);
    }
    return GenericValue::of_dtype(dtype);
  }
  // A dimension: an expression, or a bare name parsed as a type.
  if (arg.expr) return GenericValue::of_dim(eval_int(*arg.expr, caller, "a dimension argument"));
  if (name == nullptr) {
    fail(codes::bad_generic_arguments,
         "generic `" + param.name.text + "` takes a dimension, found `" + source_text(arg.span) + "`", arg.span);
  }
  ast::NameExpr as_expression(name->span);
  as_expression.name = *name;
  return GenericValue::of_dim(eval_int(as_expression, caller, "a dimension argument"));
}

GenericBindings Evaluator::bind_explicit_generics(const std::vector<ast::GenericParam>& params,
                                                  const std::vector<ast::GenericArg>& args, Frame& caller, Span span,
                                                  const std::string& callee) {
  if (args.size() > params.size()) {
    fail(codes::bad_generic_arguments,
         "`" + callee + "` takes " + std::to_string(params.size()) + " generic arguments, found " +
             std::to_string(args.size()),
         span);
  }
  GenericBindings bound;
  for (size_t i = 0; i < args.size(); ++i) bound[params[i].name.text] = eval_generic_arg(args[i], params[i], caller);
  return bound;
}

void Evaluator::apply_generic_defaults(const std::vector<ast::GenericParam>& params, Frame& frame, Span span,
                                       const std::string& callee) {
  for (const ast::GenericParam& param : params) {
    if (frame.generics.count(param.name.text)) continue;
    if (!param.default_value) {
      fail(codes::cannot_infer, "cannot infer generic `" + param.name.text + "` in call to `" + callee + "`", span,
           {"pass it explicitly: `" + callee + "<...>(...)`"});
    }
    frame.generics[param.name.text] = eval_generic_arg(*param.default_value, param, frame);
  }
  for (const ast::GenericParam& param : params) {
    const GenericValue& value = frame.generics.at(param.name.text);
    const bool wants_shape = param.is_pack || param.constraint == ast::GenericKind::Shape;
    const bool wants_dtype = is_dtype_kind(param.constraint);
    const bool wants_dim = param.constraint == ast::GenericKind::Dim;
    if ((wants_shape && value.kind != GenericValue::Kind::Shape) ||
        (wants_dtype && value.kind != GenericValue::Kind::DType) ||
        (wants_dim && value.kind != GenericValue::Kind::Dim)) {
      fail(codes::bad_generic_arguments,
           "generic `" + param.name.text + "` of `" + callee + "` cannot be " + value.to_string(), span);
    }
    if (wants_dim && value.dim < 0) {
      fail(codes::negative_dimension,
           "generic `" + param.name.text + "` of `" + callee + "` is negative: " + value.to_string(), span);
    }
    if (wants_dtype && !satisfies(param.constraint, value.dtype)) {
      fail(codes::dtype_constraint,
           "`" + value.to_string() + "` does not satisfy the constraint `" + param.constraint_name.text + "` on `" +
               param.name.text + "` of `" + callee + "`",
           span);
    }
  }
}

void Evaluator::check_where(const ast::WhereClause& where, Frame& frame, Span span, const std::string& callee) {
  for (const auto& constraint : where.constraints) {
    const Value holds = eval_value(*constraint, frame);
    if (!scalar_condition(holds, constraint->span, "a `where` constraint")) {
      std::vector<std::string> notes{"required: `" + source_text(constraint->span) + "`"};
      if (const auto* comparison = constraint->as<ast::BinaryExpr>()) {
        const Value lhs = eval_value(*comparison->lhs, frame);
        const Value rhs = eval_value(*comparison->rhs, frame);
        notes.push_back("with " + lhs.describe() + " on the left and " + rhs.describe() + " on the right");
      }
      notes.push_back("generics: " + describe_bindings(frame.generics));
      fail(codes::constraint_unsatisfied, "a `where` constraint of `" + callee + "` does not hold", span, notes);
    }
  }
}

// ---------------------------------------------------------------- inference

namespace {

// Solves `expr == target` for the one unbound generic it mentions, when the
// expression is a chain of +, - and * with known operands around it.
// Returns false when it cannot (the caller defers the dimension).
bool solve(Evaluator& evaluator, const ast::Expr& expr, int64_t target, Frame& frame,
           Evaluator::Inference& inference) {
  if (const auto* name = expr.as<ast::NameExpr>()) {
    if (!inference.unbound.count(name->name.text)) return false;
    if (target < 0) {
      inference.failure = "generic `" + name->name.text + "` would be negative (" + std::to_string(target) + ")";
      return false;
    }
    frame.generics[name->name.text] = GenericValue::of_dim(target);
    inference.unbound.erase(name->name.text);
    return true;
  }
  const auto* binary = expr.as<ast::BinaryExpr>();
  if (binary == nullptr) return false;
  std::vector<std::string> in_lhs, in_rhs;
  collect_unbound(*binary->lhs, inference.unbound, in_lhs);
  collect_unbound(*binary->rhs, inference.unbound, in_rhs);
  const bool unknown_left = !in_lhs.empty();
  const ast::Expr& unknown = unknown_left ? *binary->lhs : *binary->rhs;
  const ast::Expr& known = unknown_left ? *binary->rhs : *binary->lhs;
  switch (binary->op) {
    case ast::BinaryOp::Add: {
      const int64_t k = evaluator.eval_int(known, frame, "a dimension");
      return solve(evaluator, unknown, target - k, frame, inference);
    }
    case ast::BinaryOp::Subtract: {
      const int64_t k = evaluator.eval_int(known, frame, "a dimension");
      return solve(evaluator, unknown, unknown_left ? target + k : k - target, frame, inference);
    }
    case ast::BinaryOp::Multiply: {
      const int64_t k = evaluator.eval_int(known, frame, "a dimension");
      if (k == 0) return false;
      if (target % k != 0) {
        inference.failure = "extent " + std::to_string(target) + " is not a multiple of " + std::to_string(k) +
                            " as `" + evaluator.source_text(expr.span) + "` requires";
        return false;
      }
      return solve(evaluator, unknown, target / k, frame, inference);
    }
    default: return false;
  }
}

// Unifies one dimension; returns false on a definite mismatch.
bool unify_dim(Evaluator& evaluator, const ast::Expr& expr, int64_t actual, Frame& frame,
               Evaluator::Inference& inference) {
  std::vector<std::string> unknowns;
  collect_unbound(expr, inference.unbound, unknowns);
  if (unknowns.empty()) {
    const int64_t expected = evaluator.eval_int(expr, frame, "a dimension");
    if (expected == actual) return true;
    inference.failure = "dimension `" + evaluator.source_text(expr.span) + "` is " + std::to_string(expected) +
                        ", found " + std::to_string(actual);
    return false;
  }
  if (unknowns.size() == 1) {
    const std::string before = inference.failure;
    if (solve(evaluator, expr, actual, frame, inference)) return true;
    if (inference.failure != before) return false;  // no integer solution
  }
  inference.deferred.push_back({&expr, actual});
  return true;
}

}  // namespace

void Evaluator::resolve_deferred(Frame& frame, Inference& inference) {
  bool progress = true;
  while (progress && !inference.deferred.empty()) {
    progress = false;
    std::vector<Inference::Deferred> pending;
    pending.swap(inference.deferred);
    for (const Inference::Deferred& entry : pending) {
      std::vector<std::string> unknowns;
      collect_unbound(*entry.expr, inference.unbound, unknowns);
      if (unknowns.size() == 1 && solve(*this, *entry.expr, entry.actual, frame, inference)) {
        progress = true;
      } else if (!unknowns.empty()) {
        inference.deferred.push_back(entry);
      }
      // With no unknown left, the final check of the argument compares it.
    }
  }
}

bool Evaluator::unify_named(const ast::NamedType& type, const Value& value, Frame& frame, Inference& inference) {
  const ResolvedItem resolved = resolve_path(frame.module, type.path, type.span);
  if (const auto* structure = resolved.item != nullptr ? resolved.item->as<ast::StructItem>() : nullptr) {
    // A struct value carries its generics: the caller's unbound generics
    // written as the struct's arguments take them.
    if (value.kind() != Value::Kind::Struct || value.struct_item() != structure) return true;
    for (size_t i = 0; i < structure->generics.size() && i < type.generic_args.size(); ++i) {
      const ast::GenericArg& arg = type.generic_args[i];
      const ast::Ident* name = arg.type ? plain_name(*arg.type) : nullptr;
      auto carried = value.struct_generics().find(structure->generics[i].name.text);
      if (name == nullptr || !inference.unbound.count(name->text) || carried == value.struct_generics().end()) continue;
      frame.generics[name->text] = carried->second;
      inference.unbound.erase(name->text);
    }
    return true;
  }
  const auto* alias = resolved.item != nullptr ? resolved.item->as<ast::TypeAliasItem>() : nullptr;
  if (alias == nullptr) return true;  // an enum or block type: `fits` compares it
  // The alias's own generics: those its arguments already determine are
  // bound; an argument that is one of the caller's unbound generics is
  // inferred through the alias and copied back.
  Frame alias_frame;
  alias_frame.module = resolved.module;
  alias_frame.lifted = frame.lifted;
  Inference alias_inference;
  std::map<std::string, std::string> copied_back;  // alias generic -> the caller's
  for (size_t i = 0; i < alias->generics.size(); ++i) {
    const ast::GenericParam& param = alias->generics[i];
    if (i >= type.generic_args.size()) {
      alias_inference.unbound.insert(param.name.text);
      continue;
    }
    const ast::GenericArg& arg = type.generic_args[i];
    std::vector<std::string> unknowns;
    if (arg.expr) collect_unbound(*arg.expr, inference.unbound, unknowns);
    const ast::Ident* name = arg.type ? plain_name(*arg.type) : nullptr;
    if (name != nullptr && inference.unbound.count(name->text)) {
      alias_inference.unbound.insert(param.name.text);
      copied_back[param.name.text] = name->text;
    } else if (unknowns.empty()) {
      alias_frame.generics[param.name.text] = eval_generic_arg(arg, param, frame);
    } else {
      alias_inference.unbound.insert(param.name.text);  // checked once everything is bound
    }
  }
  const bool fits_alias = unify(*alias->type, value, alias_frame, alias_inference);
  resolve_deferred(alias_frame, alias_inference);
  for (const auto& [alias_name, caller_name] : copied_back) {
    auto bound = alias_frame.generics.find(alias_name);
    if (bound == alias_frame.generics.end() || !inference.unbound.count(caller_name)) continue;
    frame.generics[caller_name] = bound->second;
    inference.unbound.erase(caller_name);
  }
  if (!fits_alias) inference.failure = alias_inference.failure;
  return fits_alias;
}

bool Evaluator::unify(const ast::Type& type, const Value& value, Frame& frame, Inference& inference) {
  switch (type.kind) {
    case ast::TypeKind::Named: {
      const ast::Ident* name = plain_name(type);
      if (name == nullptr || (!scalar_type_name(name->text) && !frame.generics.count(name->text) &&
                              !inference.unbound.count(name->text))) {
        return unify_named(type.cast<ast::NamedType>(), value, frame, inference);
      }
      if (scalar_type_name(name->text) || frame.generics.count(name->text)) return true;
      if (inference.unbound.count(name->text)) {
        // A dtype generic used as a scalar type: a typed scalar binds it.
        if (value.is_tensor() && (value.tensor().rank() == 0 || frame.lifted)) {
          frame.generics[name->text] = GenericValue::of_dtype(value.tensor().dtype());
          inference.unbound.erase(name->text);
        }
      }
      return true;
    }
    case ast::TypeKind::Tensor: {
      const auto& tensor_type = type.cast<ast::TensorType>();
      if (!value.is_tensor()) {
        inference.failure = "expected a tensor, found " + value.describe();
        return false;
      }
      const Tensor& tensor = value.tensor();
      // The dtype.
      if (const ast::Ident* dtype_name = plain_name(*tensor_type.dtype)) {
        if (inference.unbound.count(dtype_name->text)) {
          frame.generics[dtype_name->text] = GenericValue::of_dtype(tensor.dtype());
          inference.unbound.erase(dtype_name->text);
        }
      }
      // The shape: at most one pack whose length the rank decides.
      const auto& elements = tensor_type.shape;
      std::optional<size_t> open_pack;
      size_t fixed_count = 0;
      for (size_t i = 0; i < elements.size(); ++i) {
        if (!elements[i].is_pack) {
          ++fixed_count;
          continue;
        }
        auto bound = frame.generics.find(elements[i].pack.text);
        if (bound != frame.generics.end() && bound->second.kind == GenericValue::Kind::Shape) {
          fixed_count += bound->second.shape.size();
        } else if (open_pack) {
          inference.failure = "two unbound shape packs in one tensor type";
          return false;
        } else {
          open_pack = i;
        }
      }
      const Shape& dims = tensor.shape();
      const size_t rank = dims.size();
      if (open_pack ? rank < fixed_count : rank != fixed_count) {
        inference.failure = "expected rank " + std::string(open_pack ? "at least " : "") +
                            std::to_string(fixed_count) + ", found " + tensor.describe();
        return false;
      }
      const size_t pack_length = rank - fixed_count;
      size_t axis = 0;
      for (size_t i = 0; i < elements.size(); ++i) {
        const ast::ShapeElement& element = elements[i];
        if (element.is_pack) {
          auto bound = frame.generics.find(element.pack.text);
          if (open_pack && *open_pack == i) {
            frame.generics[element.pack.text] =
                GenericValue::of_shape(Shape(dims.begin() + static_cast<std::ptrdiff_t>(axis),
                                             dims.begin() + static_cast<std::ptrdiff_t>(axis + pack_length)));
            inference.unbound.erase(element.pack.text);
            axis += pack_length;
            continue;
          }
          const Shape& pack = bound->second.shape;
          for (int64_t extent : pack) {
            if (dims[axis] != extent) {
              inference.failure = "shape pack `*" + element.pack.text + "` is " + tensor::shape_to_string(pack) +
                                  ", found " + tensor.describe();
              return false;
            }
            ++axis;
          }
          continue;
        }
        if (!unify_dim(*this, *element.dim, dims[axis], frame, inference)) return false;
        ++axis;
      }
      return true;
    }
    case ast::TypeKind::Tuple: {
      const auto& tuple_type = type.cast<ast::TupleType>();
      if (value.kind() != Value::Kind::Tuple || value.elements().size() != tuple_type.elements.size()) {
        inference.failure = "expected a tuple of " + std::to_string(tuple_type.elements.size()) + ", found " +
                            value.describe();
        return false;
      }
      for (size_t i = 0; i < tuple_type.elements.size(); ++i) {
        if (!unify(*tuple_type.elements[i], value.elements()[i], frame, inference)) return false;
      }
      return true;
    }
    case ast::TypeKind::Optional: {
      if (value.kind() != Value::Kind::Optional) {
        inference.failure = "found " + value.describe() + " where an optional is expected; wrap it in `some(...)`";
        return false;
      }
      if (!value.has_value()) return true;
      return unify(*type.cast<ast::OptionalType>().inner, value.inner(), frame, inference);
    }
    case ast::TypeKind::Array:
    case ast::TypeKind::Error: return true;
  }
  return true;
}

// ---------------------------------------------------------------- checking values against types

std::optional<scalar_elements::Element> Evaluator::literal_element(const Value& value, DType dtype) const {
  if (value.kind() == Value::Kind::Int) {
    const int64_t number = value.int_value();
    if (dtype == DType::Bool) return std::nullopt;
    if (tensor::is_integer(dtype) && (number < integer_min(dtype) || number > integer_max(dtype))) return std::nullopt;
    return scalar_elements::from_scalar(dtype, tensor::Scalar(number));
  }
  if (value.kind() == Value::Kind::Float && tensor::is_float(dtype)) {
    return scalar_elements::from_scalar(dtype, tensor::Scalar(value.float_value()));
  }
  return std::nullopt;
}

Value Evaluator::literal_value(const Value& value, DType dtype, Span span) {
  if (auto element = literal_element(value, dtype)) return Value::from_element(element->dtype, element->bits);
  return Value::from_tensor(literal_as(value, dtype, span));
}

Tensor Evaluator::literal_as(const Value& value, DType dtype, Span span) {
  if (value.is_tensor()) return value.tensor();
  const std::string dtype_text(tensor::dtype_name(dtype));
  if (value.kind() == Value::Kind::Int) {
    const int64_t number = value.int_value();
    if (dtype == DType::Bool) {
      fail(codes::invalid_operand, "the integer " + std::to_string(number) + " cannot be a `bool`", span);
    }
    if (tensor::is_integer(dtype) && (number < integer_min(dtype) || number > integer_max(dtype))) {
      fail(codes::literal_out_of_range, "the integer " + std::to_string(number) + " does not fit `" + dtype_text + "`",
           span);
    }
    return Tensor::scalar(dtype, tensor::Scalar(number));
  }
  if (value.kind() == Value::Kind::Float) {
    if (!tensor::is_float(dtype)) {
      fail(codes::dtype_mismatch, "a floating literal cannot take the dtype `" + dtype_text + "`", span,
           {"only f16, bf16, f32 and f64 hold fractions; write `cast<" + dtype_text + ">(...)` to convert"});
    }
    return Tensor::scalar(dtype, tensor::Scalar(value.float_value()));
  }
  fail(codes::type_mismatch, "expected a `" + dtype_text + "` value, found " + value.describe(), span);
}

Evaluator::Mismatch Evaluator::fits(const ast::Type& type, const Value& value, Frame& frame, std::string& why) {
  switch (type.kind) {
    case ast::TypeKind::Named: {
      const auto& named = type.cast<ast::NamedType>();
      const ast::Ident* name = plain_name(type);
      const bool is_dtype = name != nullptr && (scalar_type_name(name->text) ||
                                                (frame.generics.count(name->text) &&
                                                 frame.generics.at(name->text).kind == GenericValue::Kind::DType));
      if (is_dtype) {
        const DType dtype = eval_dtype(type, frame);
        if (!value.is_tensor() || (value.tensor().rank() != 0 && !frame.lifted)) {
          why = "expected a scalar";
          return Mismatch::Other;
        }
        if (value.tensor().dtype() != dtype) {
          why = "dtype is " + std::string(tensor::dtype_name(value.tensor().dtype())) + ", expected " +
                std::string(tensor::dtype_name(dtype));
          return Mismatch::DType;
        }
        return Mismatch::None;
      }
      const ResolvedItem resolved = resolve_path(frame.module, named.path, type.span);
      switch (resolved.item ? resolved.item->kind : ast::ItemKind::Error) {
        case ast::ItemKind::Struct:
          if (value.kind() == Value::Kind::Struct && value.struct_item() == resolved.item) return Mismatch::None;
          why = "expected a `" + named.path.back().text + "` struct";
          return Mismatch::Other;
        case ast::ItemKind::Enum:
          if (value.kind() == Value::Kind::Enum && value.enum_item() == resolved.item) return Mismatch::None;
          why = "expected a `" + named.path.back().text + "` value";
          return Mismatch::Other;
        case ast::ItemKind::Block:
          if (value.kind() == Value::Kind::Block && value.block()->item == resolved.item) return Mismatch::None;
          why = "expected a `" + named.path.back().text + "` block";
          return Mismatch::Other;
        case ast::ItemKind::TypeAlias: {
          const auto& alias = resolved.item->cast<ast::TypeAliasItem>();
          Frame alias_frame;
          alias_frame.module = resolved.module;
          alias_frame.lifted = frame.lifted;
          alias_frame.generics =
              bind_explicit_generics(alias.generics, named.generic_args, frame, type.span, alias.name.text);
          apply_generic_defaults(alias.generics, alias_frame, type.span, alias.name.text);
          return fits(*alias.type, value, alias_frame, why);
        }
        default:
          why = "`" + source_text(type.span) + "` is not a type";
          return Mismatch::Other;
      }
    }
    case ast::TypeKind::Tensor: {
      const auto& tensor_type = type.cast<ast::TensorType>();
      if (!value.is_tensor()) {
        why = "expected a tensor";
        return Mismatch::Other;
      }
      const DType dtype = eval_dtype(*tensor_type.dtype, frame);
      const Shape shape = eval_shape(tensor_type.shape, frame);
      const Tensor& tensor = value.tensor();
      if (tensor.dtype() != dtype) {
        why = "dtype is " + std::string(tensor::dtype_name(tensor.dtype())) + ", expected " +
              std::string(tensor::dtype_name(dtype));
        return Mismatch::DType;
      }
      if (tensor.shape() != shape) {
        why = "shape is " + tensor::shape_to_string(tensor.shape()) + ", expected " + tensor::shape_to_string(shape);
        return Mismatch::Shape;
      }
      return Mismatch::None;
    }
    case ast::TypeKind::Tuple: {
      const auto& tuple_type = type.cast<ast::TupleType>();
      if (value.kind() != Value::Kind::Tuple || value.elements().size() != tuple_type.elements.size()) {
        why = "expected a tuple of " + std::to_string(tuple_type.elements.size());
        return Mismatch::Other;
      }
      for (size_t i = 0; i < tuple_type.elements.size(); ++i) {
        const Mismatch element = fits(*tuple_type.elements[i], value.elements()[i], frame, why);
        if (element != Mismatch::None) {
          why = "element " + std::to_string(i) + ": " + why;
          return element;
        }
      }
      return Mismatch::None;
    }
    case ast::TypeKind::Optional: {
      if (value.kind() != Value::Kind::Optional) {
        why = "expected an optional; wrap the value in `some(...)`";
        return Mismatch::Other;
      }
      return value.has_value() ? fits(*type.cast<ast::OptionalType>().inner, value.inner(), frame, why) : Mismatch::None;
    }
    case ast::TypeKind::Array: {
      const auto& array = type.cast<ast::ArrayType>();
      const int64_t length = eval_int(*array.length, frame, "an array length");
      if (value.kind() != Value::Kind::BlockArray || static_cast<int64_t>(value.blocks().size()) != length) {
        why = "expected an array of " + syntax::count_of(static_cast<std::size_t>(std::max<int64_t>(length, 0)), "block", "blocks");
        return Mismatch::Other;
      }
      return Mismatch::None;
    }
    case ast::TypeKind::Error: return Mismatch::None;
  }
  return Mismatch::None;
}

Value Evaluator::coerce(const ast::Type& type, Value value, Frame& frame, Span span, const Subject& what) {
  // Contextual numbers take the scalar type they meet.
  if (value.is_contextual()) {
    const ast::Ident* name = plain_name(type);
    if (name != nullptr) {
      const bool is_dtype = scalar_type_name(name->text) ||
                            (frame.generics.count(name->text) &&
                             frame.generics.at(name->text).kind == GenericValue::Kind::DType);
      if (is_dtype) return Value::from_tensor(literal_as(value, eval_dtype(type, frame), span));
    }
  }
  if (type.kind == ast::TypeKind::Optional && value.kind() == Value::Kind::Optional && value.has_value()) {
    return Value::some(coerce(*type.cast<ast::OptionalType>().inner, value.inner(), frame, span, what));
  }
  if (type.kind == ast::TypeKind::Tuple && value.kind() == Value::Kind::Tuple &&
      value.elements().size() == type.cast<ast::TupleType>().elements.size()) {
    std::vector<Value> elements;
    const auto& types = type.cast<ast::TupleType>().elements;
    for (size_t i = 0; i < types.size(); ++i) {
      elements.push_back(coerce(*types[i], value.elements()[i], frame, span, what));
    }
    value = Value::tuple(std::move(elements));
  }
  std::string why;
  const Mismatch mismatch = fits(type, value, frame, why);
  if (mismatch == Mismatch::None) return value;
  const char* code = mismatch == Mismatch::DType   ? codes::dtype_mismatch
                     : mismatch == Mismatch::Shape ? codes::shape_mismatch
                                                   : codes::type_mismatch;
  fail(code, what.text() + " does not fit its type", span,
       {"expected `" + describe_type(type, frame) + "`", "found `" + value.describe() + "`", why});
}

std::string Evaluator::describe_type(const ast::Type& type, Frame& frame) {
  try {
    switch (type.kind) {
      case ast::TypeKind::Tensor: {
        const auto& tensor_type = type.cast<ast::TensorType>();
        const Shape shape = eval_shape(tensor_type.shape, frame);
        std::string text = "Tensor[";
        for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
        return text + "; " + std::string(tensor::dtype_name(eval_dtype(*tensor_type.dtype, frame))) + "]";
      }
      case ast::TypeKind::Optional: return describe_type(*type.cast<ast::OptionalType>().inner, frame) + "?";
      case ast::TypeKind::Tuple: {
        std::string text = "(";
        const auto& elements = type.cast<ast::TupleType>().elements;
        for (size_t i = 0; i < elements.size(); ++i) text += (i ? ", " : "") + describe_type(*elements[i], frame);
        return text + ")";
      }
      case ast::TypeKind::Named: {
        const ast::Ident* name = plain_name(type);
        if (name != nullptr && frame.generics.count(name->text)) return frame.generics.at(name->text).to_string();
        return source_text(type.span);
      }
      default: return source_text(type.span);
    }
  } catch (const EvalError&) {
    return source_text(type.span);
  }
}

}  // namespace linnet::eval
