// Calls: resolving the callee (a method of the current block, a module
// item, an imported item, an item of an imported module, a method of a
// sub-block, the prelude), matching arguments to parameters, binding the
// generics (explicit, inferred from the arguments, defaults), checking every
// argument and the result against the declared types, and running the body
// (or, for an `op`, a native implementation the dispatcher offers).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "evaluator.hpp"
#include "linnet/syntax/prelude.hpp"

namespace linnet::eval {

namespace {

// One native run of an op that began at `started`: counted, and its wall
// time added (two clock reads, against the microseconds an op call costs).
void count_native(OpCounts& counts, std::chrono::steady_clock::time_point started) {
  ++counts.native;
  counts.native_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// Same storage, dtype and view: restoring one from the other changes nothing.
bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.strides() == b.strides() && a.offset() == b.offset();
}

// While alive, `slot` (a variable the calling statement overwrites with the
// call's result) holds nothing, when one of the call's arguments is the very
// same tensor: the argument then carries the value alone. Put back on
// destruction unless keep_released() was called (the kernel returned; the
// statement assigns the slot next). A kernel that updated the tensor in
// place and then failed leaves the slot with the updated tensor.
class SlotRelease {
 public:
  SlotRelease(Value* slot, const std::vector<Value>& arguments) {
    if (slot == nullptr || !slot->is_tensor()) return;
    for (const Value& argument : arguments) {
      if (argument.is_tensor() && same_view(argument.tensor(), slot->tensor())) {
        slot_ = slot;
        argument_ = &argument;
        *slot_ = Value();
        return;
      }
    }
  }
  SlotRelease(const SlotRelease&) = delete;
  SlotRelease& operator=(const SlotRelease&) = delete;
  ~SlotRelease() {
    if (slot_ != nullptr && argument_->is_tensor()) *slot_ = *argument_;
  }
  void keep_released() { slot_ = nullptr; }

 private:
  Value* slot_ = nullptr;
  const Value* argument_ = nullptr;
};

// An exact spelling of a scalar argument for constant_call_key; empty for
// anything else.
std::string scalar_key(const Value& value) {
  char text[64];
  if (value.kind() == Value::Kind::Int) return "i" + std::to_string(value.int_value());
  if (value.kind() == Value::Kind::Float) {
    std::snprintf(text, sizeof text, "f%a", value.float_value());
    return text;
  }
  if (value.is_scalar_tensor()) {
    const Tensor& scalar = value.tensor();
    std::string key = std::string(tensor::dtype_name(scalar.dtype())) + ":";
    const auto* bytes = static_cast<const unsigned char*>(scalar.raw_data());
    for (size_t i = 0; i < scalar.element_size(); ++i) {
      std::snprintf(text, sizeof text, "%02x", bytes[i]);
      key += text;
    }
    return key;
  }
  return "";
}

}  // namespace

bool Evaluator::is_constant_expression(const ast::Expr& expr, Frame& frame) const {
  switch (expr.kind) {
    case ast::ExprKind::Integer:
    case ast::ExprKind::Float:
    case ast::ExprKind::Bool: return true;
    case ast::ExprKind::Name: {
      const std::string& name = expr.cast<ast::NameExpr>().name.text;
      if (frame.index != nullptr && (frame.index->is_index(name) || frame.index->is_pack(name))) return false;
      if (find_local(frame, name) != nullptr) return false;
      auto generic = frame.generics.find(name);
      if (generic != frame.generics.end()) return generic->second.kind == GenericValue::Kind::Dim;
      if (frame.self != nullptr && frame.self->members.count(name)) return false;
      auto resolved = find_item(frame.module, name);
      return resolved && resolved->item != nullptr && resolved->item->as<ast::ConstItem>() != nullptr;
    }
    case ast::ExprKind::Unary: return is_constant_expression(*expr.cast<ast::UnaryExpr>().operand, frame);
    case ast::ExprKind::Binary: {
      const auto& binary = expr.cast<ast::BinaryExpr>();
      return is_constant_expression(*binary.lhs, frame) && is_constant_expression(*binary.rhs, frame);
    }
    default: return false;
  }
}

std::string Evaluator::constant_call_key(const ast::CallExpr& call, const ast::FunctionItem& function,
                                         const GenericBindings& preset, const CallArgs& args, Frame& frame) const {
  for (const ast::Argument& argument : call.arguments) {
    if (!is_constant_expression(*argument.value, frame)) return "";
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", static_cast<const void*>(&function));
  std::string key = std::string(address) + numerics_policy_name(options.numerics) + describe_bindings(preset);
  for (const Value& value : args.positional) {
    const std::string part = scalar_key(value);
    if (part.empty()) return "";
    key += "," + part;
  }
  for (const auto& [name, value] : args.named) {
    const std::string part = scalar_key(value);
    if (part.empty()) return "";
    key += "," + name + "=" + part;
  }
  return key;
}

void Evaluator::remember_constant_call(const std::string& key, const Value& result) {
  // Only tensors and tuples of them are kept, within a memory budget.
  size_t bytes = 0;
  auto measure = [&](const Value& value, auto& self) -> bool {
    if (value.is_tensor()) {
      bytes += static_cast<size_t>(value.tensor().numel()) * value.tensor().element_size();
      return true;
    }
    if (value.kind() != Value::Kind::Tuple) return false;
    for (const Value& element : value.elements()) {
      if (!self(element, self)) return false;
    }
    return true;
  };
  if (!measure(result, measure) || constant_call_bytes_ + bytes > kConstantCallBudget) return;
  constant_call_bytes_ += bytes;
  constant_calls_.emplace(key, result);
}

const std::string& Evaluator::function_display_name(const Module* module, const ast::FunctionItem& function,
                                                    const BlockInstance* self) {
  const ast::BlockItem* block = self != nullptr ? self->item : nullptr;
  auto [entry, added] = display_names_.try_emplace({self != nullptr ? self->module : module, &function, block});
  if (added) {
    entry->second = self != nullptr ? qualified_name(self->module, self->item->name.text) + "." + function.name.text
                                    : qualified_name(module, function.name.text);
  }
  return entry->second;
}

Indexed Evaluator::eval_call(const ast::CallExpr& call, Frame& frame) {
  // What is called.
  const Module* module = nullptr;
  const ast::Item* item = nullptr;
  BlockInstance* self = nullptr;
  std::string prelude;
  if (const auto* name = call.callee->as<ast::NameExpr>()) {
    const std::string& text = name->name.text;
    if (frame.self != nullptr && frame.self->methods.count(text)) {
      self = frame.self;
      module = frame.self->module;
      item = frame.self->methods.at(text);
    } else if (auto resolved = find_item(frame.module, text); resolved && resolved->item != nullptr) {
      module = resolved->module;
      item = resolved->item;
    } else if (is_prelude(text) || (frame.kernel != nullptr && syntax::is_kernel_builtin(text))) {
      prelude = text;
    } else if (syntax::is_kernel_builtin(text)) {
      fail(codes::invalid_kernel, "`" + text + "` is available only in a kernel", name->span);
    } else {
      fail(codes::unknown_symbol, "cannot find function `" + text + "` in this scope" + function_did_you_mean(text, frame),
           name->span);
    }
  } else if (const auto* member = call.callee->as<ast::MemberExpr>()) {
    const auto* base = member->object->as<ast::NameExpr>();
    bool through_module = false;
    if (base != nullptr && find_local(frame, base->name.text) == nullptr &&
        (frame.self == nullptr || !frame.self->members.count(base->name.text))) {
      auto resolved = find_item(frame.module, base->name.text);
      if (resolved && resolved->item == nullptr) {
        through_module = true;
        auto found = resolved->module->items.find(member->member.text);
        if (found == resolved->module->items.end()) {
          fail(codes::unknown_symbol,
               "module `" + resolved->module->name + "` has no item `" + member->member.text + "`",
               member->member.span);
        }
        module = resolved->module;
        item = found->second;
      }
    }
    if (!through_module) {
      const Value object = eval_value(*member->object, frame);
      if (object.kind() != Value::Kind::Block) {
        fail(codes::unknown_member, object.describe() + " has no method `" + member->member.text + "`",
             member->member.span);
      }
      self = object.block().get();
      auto method = self->methods.find(member->member.text);
      if (method == self->methods.end()) {
        fail(codes::unknown_member,
             "block `" + self->item->name.text + "` has no method `" + member->member.text + "`",
             member->member.span);
      }
      module = self->module;
      item = method->second;
    }
  } else {
    fail(codes::not_callable, "this expression cannot be called", call.callee->span);
  }

  if (!prelude.empty()) return call_prelude(prelude, call, frame);
  if (const auto* structure = item->as<ast::StructItem>()) return {construct_struct(module, *structure, call, frame), {}};
  const auto* function = item->as<ast::FunctionItem>();
  if (function == nullptr) {
    fail(codes::not_callable, "`" + item->name.text + "` is not a function", call.callee->span,
         item->kind == ast::ItemKind::Kernel ? std::vector<std::string>{"a kernel runs in place of the op naming it"}
                                             : std::vector<std::string>{});
  }

  // The arguments; inside index notation some may range over index
  // variables, and the call is then made on their aligned tensors.
  std::vector<Indexed> positional;
  std::vector<std::pair<std::string, Indexed>> named;
  CallArgs args;
  positional.reserve(call.arguments.size());
  args.positional_spans.reserve(call.arguments.size());
  for (const ast::Argument& argument : call.arguments) {
    Indexed value = eval(*argument.value, frame);
    if (argument.name.empty()) {
      if (!named.empty()) fail(codes::bad_arguments, "positional arguments come before named ones", argument.span);
      positional.push_back(std::move(value));
      args.positional_spans.push_back(argument.value->span);
    } else {
      named.push_back({argument.name.text, std::move(value)});
      args.named_spans.push_back(argument.span);
    }
  }
  std::vector<const Indexed*> all;
  all.reserve(positional.size() + named.size());
  for (const Indexed& value : positional) all.push_back(&value);
  for (const auto& entry : named) all.push_back(&entry.second);
  const std::vector<std::string> order = union_axes(all);
  auto unwrap = [&](Indexed& value) {
    return value.has_axes() ? Value::from_tensor(aligned(value, order)) : std::move(value.value);
  };
  args.positional.reserve(positional.size());
  for (Indexed& value : positional) args.positional.push_back(unwrap(value));
  for (auto& [key, value] : named) args.named.push_back({key, unwrap(value)});
  // The call's arguments now live in `args` alone (a kernel may find it
  // holds the only reference to a tensor, see DeadAfterCall).
  positional.clear();
  named.clear();

  const std::string& display = function_display_name(module, *function, self);
  GenericBindings preset = bind_explicit_generics(function->generics, call.generic_args, frame, call.span, display);
  // A function called on elements calls others on elements too.
  const bool lifted = !order.empty() || frame.lifted;
  Value* dead_slot = nullptr;
  if (dead_after_call.call == &call) {
    dead_slot = dead_after_call.slot;
    dead_after_call = {};
  }
  std::string constant_key;
  if (!lifted && self == nullptr && function->function == ast::FunctionKind::Fn) {
    constant_key = constant_call_key(call, *function, preset, args, frame);
    if (!constant_key.empty()) {
      auto found = constant_calls_.find(constant_key);
      if (found != constant_calls_.end()) return {found->second, {}};
    }
  }
  Value result = invoke(module, *function, self, std::move(preset), std::move(args), call.span, lifted, dead_slot);
  if (!constant_key.empty()) remember_constant_call(constant_key, result);
  if (order.empty()) return {result, {}};
  if (!result.is_tensor() || result.tensor().rank() != static_cast<int>(order.size())) {
    fail(codes::invalid_index_expression,
         "a call on elements inside index notation must return one value per element", call.span,
         {"it returned " + result.describe()});
  }
  return {result, order};
}

Value Evaluator::invoke(const Module* module, const ast::FunctionItem& function, BlockInstance* self,
                        GenericBindings preset, CallArgs args, Span call_site, bool lifted, Value* dead_slot) {
  const std::string& display = function_display_name(module, function, self);
  CallScope scope(*this, calls, display, call_site, options.max_call_depth);
  Frame callee;
  callee.module = module;
  callee.self = self;
  callee.lifted = lifted;
  // The explicit generics, over the block's when there is one: without a
  // block they are the callee's bindings as they stand (moved, not copied).
  const bool has_block = self != nullptr;
  if (has_block) {
    callee.generics = self->generics;
    for (const auto& [name, value] : preset) callee.generics[name] = value;
  } else {
    callee.generics = std::move(preset);
  }
  callee.scopes.emplace_back();

  std::vector<Value> values = bind_arguments(function.params, function.generics, has_block ? preset : callee.generics,
                                             std::move(args), callee, call_site, display);
  check_where(function.where, callee, call_site, display);
  auto declare_parameters = [&] {
    for (size_t i = 0; i < function.params.size(); ++i) {
      declare(callee, function.params[i].name.text, values[i], false);
    }
  };

  auto check_result = [&](Value result, Span span) {
    if (!function.result) return Value::unit();
    return coerce(*function.result, std::move(result), callee, span, Subject{{"the result of `", display, "`"}});
  };

  if (function.function == ast::FunctionKind::Op) {
    // An op is a module item: its display name is its qualified name.
    const std::string& qualified = self == nullptr ? display : function_display_name(module, function, nullptr);
    if (options.dispatcher) {
      // The op's generics alone; the callee's bindings are exactly those
      // when it has no block (the usual case, passed without a copy).
      const bool only_own = self == nullptr && callee.generics.size() == function.generics.size();
      GenericBindings own;
      if (!only_own) {
        for (const ast::GenericParam& generic : function.generics) {
          own[generic.name.text] = callee.generics.at(generic.name.text);
        }
      }
      const GenericBindings& bound = only_own ? callee.generics : own;
      NativeCall native{function, qualified, bound, values, options.numerics};
      // Until the kernel returns, `values` holds the arguments' only
      // references this call makes (the parameters are declared only for
      // the body), and the overwritten slot lets go of its own.
      SlotRelease release(dead_slot, values);
      const auto started = std::chrono::steady_clock::now();
      if (std::optional<Value> result = options.dispatcher->try_native(native)) {
        release.keep_released();
        count_native(stats[qualified], started);
        return check_result(std::move(*result), call_site);
      }
    }
    declare_parameters();
    if (function.kernel && options.run_kernels && options.numerics != NumericsPolicy::Exact) {
      const auto started = std::chrono::steady_clock::now();
      if (std::optional<Value> result = run_bound_kernel(module, function, callee, values, call_site)) {
        count_native(stats[qualified], started);
        return check_result(std::move(*result), call_site);
      }
    }
    ++stats[qualified].body;
  } else {
    declare_parameters();
  }

  exec_statements(function.body.statements, callee, function.result.get());
  if (!callee.returned) {
    if (function.result) {
      fail(codes::missing_return, "`" + display + "` ended without returning a value", function.body.span);
    }
    return Value::unit();
  }
  return check_result(std::move(callee.result), callee.return_site);
}

std::vector<Value> Evaluator::bind_arguments(const std::vector<ast::Param>& params,
                                            const std::vector<ast::GenericParam>& generics,
                                            const GenericBindings& preset, CallArgs args, Frame& callee,
                                            Span call_site, const std::string& display) {
  // Arguments to parameters: positional first, then by name.
  std::vector<std::optional<Value>> slots(params.size());
  std::vector<Span> spans(params.size(), call_site);
  if (args.positional.size() > params.size()) {
    fail(codes::bad_arguments,
         "`" + display + "` takes " + std::to_string(params.size()) + " arguments, found " +
             std::to_string(args.positional.size() + args.named.size()),
         call_site);
  }
  for (size_t i = 0; i < args.positional.size(); ++i) {
    slots[i] = std::move(args.positional[i]);
    if (i < args.positional_spans.size()) spans[i] = args.positional_spans[i];
  }
  for (size_t n = 0; n < args.named.size(); ++n) {
    const std::string& key = args.named[n].first;
    const Span span = n < args.named_spans.size() ? args.named_spans[n] : call_site;
    auto param = std::find_if(params.begin(), params.end(), [&](const ast::Param& p) { return p.name.text == key; });
    if (param == params.end()) fail(codes::bad_arguments, "`" + display + "` has no parameter `" + key + "`", span);
    const size_t slot = static_cast<size_t>(param - params.begin());
    if (slots[slot]) fail(codes::bad_arguments, "parameter `" + key + "` is given twice", span);
    slots[slot] = std::move(args.named[n].second);
    spans[slot] = span;
  }

  // Generics: the explicit ones are bound; infer the rest from the arguments.
  Inference inference;
  for (const ast::GenericParam& generic : generics) {
    if (preset.count(generic.name.text)) continue;
    // A method's own generic hides a block generic of the same name.
    callee.generics.erase(generic.name.text);
    inference.unbound.insert(generic.name.text);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!slots[i]) continue;
    inference.failure.clear();
    if (!unify(*params[i].type, *slots[i], callee, inference)) {
      const char* code = codes::type_mismatch;
      if (params[i].type->kind == ast::TypeKind::Tensor && slots[i]->is_tensor()) code = codes::shape_mismatch;
      const std::string failure = inference.failure;
      EvalError error(diagnostic(
          code, "argument `" + params[i].name.text + "` of `" + display + "` does not fit its parameter", spans[i],
          {"parameter `" + params[i].name.text + ": " + source_text(params[i].type->span) + "`",
           "expected `" + describe_type(*params[i].type, callee) + "`", "found `" + slots[i]->describe() + "`",
           failure}));
      error.argument_of = &params;
      error.argument = params[i].name.text;
      throw error;
    }
  }
  resolve_deferred(callee, inference);
  apply_generic_defaults(generics, callee, call_site, display);

  // Defaults of the parameters not given, then every argument checked.
  std::vector<Value> values;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!slots[i]) {
      if (!params[i].default_value) {
        fail(codes::bad_arguments, "missing argument `" + params[i].name.text + "` in call to `" + display + "`",
             call_site);
      }
      slots[i] = eval_value(*params[i].default_value, callee);
      spans[i] = params[i].default_value->span;
    }
    try {
      values.push_back(coerce(*params[i].type, std::move(*slots[i]), callee, spans[i],
                              Subject{{"argument `", params[i].name.text, "` of `", display, "`"}}));
    } catch (EvalError& error) {
      error.argument_of = &params;
      error.argument = params[i].name.text;
      throw;
    }
  }
  return values;
}

Value Evaluator::construct_struct(const Module* module, const ast::StructItem& item, const ast::CallExpr& call,
                                  Frame& frame) {
  Frame fields_frame;
  fields_frame.module = module;
  fields_frame.generics = bind_explicit_generics(item.generics, call.generic_args, frame, call.span, item.name.text);
  std::vector<std::optional<Value>> values(item.fields.size());
  for (const ast::Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      fail(codes::bad_arguments, "the fields of `" + item.name.text + "` are given by name", argument.span);
    }
    auto field = std::find_if(item.fields.begin(), item.fields.end(),
                              [&](const ast::Field& f) { return f.name.text == argument.name.text; });
    if (field == item.fields.end()) {
      fail(codes::bad_arguments, "struct `" + item.name.text + "` has no field `" + argument.name.text + "`",
           argument.name.span);
    }
    const size_t slot = static_cast<size_t>(field - item.fields.begin());
    if (values[slot]) fail(codes::bad_arguments, "field `" + argument.name.text + "` is given twice", argument.span);
    values[slot] = eval_value(*argument.value, frame);
  }
  Inference inference;
  for (const ast::GenericParam& generic : item.generics) {
    if (!fields_frame.generics.count(generic.name.text)) inference.unbound.insert(generic.name.text);
  }
  for (size_t i = 0; i < item.fields.size(); ++i) {
    if (!values[i]) {
      fail(codes::bad_arguments, "field `" + item.fields[i].name.text + "` of `" + item.name.text + "` is missing",
           call.span);
    }
    unify(*item.fields[i].type, *values[i], fields_frame, inference);
  }
  resolve_deferred(fields_frame, inference);
  apply_generic_defaults(item.generics, fields_frame, call.span, item.name.text);
  std::vector<std::pair<std::string, Value>> fields;
  for (size_t i = 0; i < item.fields.size(); ++i) {
    fields.push_back({item.fields[i].name.text,
                      coerce(*item.fields[i].type, std::move(*values[i]), fields_frame, call.span,
                             Subject{{"field `", item.fields[i].name.text, "` of `", item.name.text, "`"}})});
  }
  return Value::structure(&item, fields_frame.generics, std::move(fields));
}

}  // namespace linnet::eval
