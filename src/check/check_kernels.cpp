// Kernels (spec 7.9), an op's `kernel` binding, and `grad` clauses (7.2).
//
// A kernel's tensor parameters and results live in memory: the body reads
// them only through `load` and writes results only through `store` or an
// atomic, each result with one kind of write. The launch grid is one to three
// compile-time integers; `warps(n)` is a power of two.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>

#include "checker_internal.hpp"

namespace linnet::check {

namespace {

bool is_power_of_two(std::int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

bool atomic_dtype_ok(ast::StoreKind kind, const DTypeRef& dtype) {
  if (dtype.kind != DTypeRef::Kind::Concrete) return false;
  switch (dtype.concrete) {
    case tensor::DType::F32:
    case tensor::DType::I32:
    case tensor::DType::U32:
    case tensor::DType::I64:
    case tensor::DType::U64: return true;
    case tensor::DType::F16: return kind == ast::StoreKind::AtomicAdd;
    default: return false;
  }
}

}  // namespace

bool Checker::Impl::is_memory_tensor(const ast::Expr& expr, Context& cx) {
  const auto* name = expr.as<ast::NameExpr>();
  if (!name) return false;
  const Local* local = find_local(name->name.text, cx);
  return local && local->memory;
}

namespace {

// The tile a memory access reads or writes: the indices' tiles side by side.
std::optional<Shape> memory_access(Checker::Impl& impl, const ast::Expr& target, Context& cx, const char* what,
                                   TypePtr& memory) {
  const auto* index = target.as<ast::IndexExpr>();
  if (!index || !impl.is_memory_tensor(*index->object, cx)) {
    impl.error("E2127", std::string("`") + what + "` takes an indexed tensor parameter or result, such as `x[row, cols]`",
               target.span);
    return std::nullopt;
  }
  cx.in_memory_access = true;
  memory = impl.check_expr(*index->object, cx);
  cx.in_memory_access = false;
  if (memory->is_error()) return std::nullopt;
  if (index->components.size() != memory->shape.size()) {
    impl.error("E2204", quoted(impl.text_of(*index->object)) + " has rank " + std::to_string(memory->shape.size()) +
                            ", not " + std::to_string(index->components.size()),
               target.span);
    return std::nullopt;
  }
  Shape tile;
  bool ok = true;
  for (const ast::IndexComponent& component : index->components) {
    if (component.kind != ast::IndexComponentKind::Value) {
      impl.error("E2127", "a memory index takes integers and integer tiles, not slices", component.span)
          .with_help("index with a tile of positions, such as `iota<i32>(B)`, and a mask");
      ok = false;
      continue;
    }
    const TypePtr type = impl.check_expr(*component.value, cx);
    if (type->is_error()) {
      ok = false;
      continue;
    }
    const bool integer = type->is_contextual() ? type->contextual == Contextual::Integer : type->dtype.is_integer();
    if (!type->has_dtype() || !integer) {
      impl.error("E2101", "a memory index must be an integer or an integer tile, not " + quoted(type_to_string(type)),
                 component.span);
      ok = false;
      continue;
    }
    if (type->is_tensor()) tile.insert(tile.end(), type->shape.begin(), type->shape.end());
  }
  if (!ok) return std::nullopt;
  return tile;
}

}  // namespace

TypePtr Checker::Impl::kernel_builtin(const ast::CallExpr& call, const std::string& name, Context& cx) {
  std::vector<const ast::Argument*> args;
  for (const ast::Argument& argument : call.arguments) {
    if (!argument.name.empty()) {
      error("E2102", quoted(name) + " takes no named arguments", argument.span);
      return error_type();
    }
    args.push_back(&argument);
  }
  if (name == "program_id") {
    if (args.size() != 1) {
      error("E2102", "`program_id` takes one argument, the grid axis", call.span);
      return error_type();
    }
    const TypePtr axis = check_expr(*args[0]->value, cx);
    if (axis->is_error()) return axis;
    const std::optional<std::int64_t> value = axis->is_compile_time_int() ? constant_value(*axis->value, cx) : std::nullopt;
    if (!value || *value < 0 || *value > 2) {
      error("E2127", "`program_id` takes a grid axis: 0, 1 or 2", args[0]->value->span);
      return error_type();
    }
    return scalar_type(DTypeRef::of(tensor::DType::I32));
  }
  // load(x[i, j], mask, other)
  if (args.empty() || args.size() > 3) {
    error("E2102", "`load` takes a memory index, then an optional mask and fill value", call.span);
    return error_type();
  }
  TypePtr memory;
  std::optional<Shape> tile = memory_access(*this, *args[0]->value, cx, "load", memory);
  if (!tile) return error_type();
  const TypePtr result = tile->empty() ? scalar_type(memory->dtype) : tensor_type(*tile, memory->dtype);
  if (args.size() >= 2) {
    const TypePtr mask = check_expr(*args[1]->value, cx);
    if (!mask->is_error()) {
      const bool boolean = mask->has_dtype() && !mask->is_contextual() && mask->dtype.is_bool();
      const bool fits = mask->is_scalar() || (mask->is_tensor() && shapes_equal(mask->shape, *tile, cx));
      if (!boolean || !fits) {
        error("E2101", "the mask of `load` is a `bool` scalar or a tile of the loaded shape " + shape_to_string(*tile) +
                           ", not " + quoted(type_to_string(mask)),
              args[1]->value->span);
      }
    }
  }
  if (args.size() == 3) {
    const TypePtr other = check_expr(*args[2]->value, cx);
    coerce(other, scalar_type(memory->dtype), args[2]->value->span, "the fill value of `load`", cx);
  }
  return result;
}

void Checker::Impl::check_store(const ast::StoreStmt& stmt, Context& cx) {
  const char* keyword = ast::store_kind_spelling(stmt.store);
  TypePtr memory;
  std::optional<Shape> tile = memory_access(*this, *stmt.target, cx, keyword, memory);
  if (!tile) return;
  const std::string name = text_of(*stmt.target->cast<ast::IndexExpr>().object);
  const bool is_result =
      cx.function && std::any_of(cx.function->kernel_results.begin(), cx.function->kernel_results.end(),
                                 [&](const ParamInfo& r) { return r.name == name; });
  if (!is_result) {
    error("E2127", std::string("`") + keyword + "` writes a kernel result, and " + quoted(name) + " is a parameter",
          stmt.target->span);
    return;
  }
  auto previous = cx.kernel_writes.find(name);
  if (previous != cx.kernel_writes.end() && previous->second.first != stmt.store) {
    error("E2127", "a result takes one kind of write", stmt.keyword_span.valid() ? stmt.keyword_span : stmt.span)
        .also(previous->second.second,
              std::string("written with `") + ast::store_kind_spelling(previous->second.first) + "` here")
        .note("`store` and each atomic combine differently with what other programs write");
  } else if (previous == cx.kernel_writes.end()) {
    cx.kernel_writes.emplace(name, std::make_pair(stmt.store, stmt.keyword_span.valid() ? stmt.keyword_span : stmt.span));
  }
  if (stmt.store != ast::StoreKind::Store && !atomic_dtype_ok(stmt.store, memory->dtype)) {
    error("E2127", std::string("`") + keyword + "` cannot write " + memory->dtype.to_string(), stmt.target->span)
        .note(stmt.store == ast::StoreKind::AtomicAdd ? "atomic_add writes f32, i32, u32, i64, u64 or f16"
                                                      : "atomics write f32, i32, u32, i64 or u64");
  }
  if (stmt.value) {
    const TypePtr value = check_expr(*stmt.value, cx);
    if (!value->is_error()) {
      if (value->is_tensor()) {
        if (!(value->dtype == memory->dtype)) {
          error("E2101", "the stored tile has dtype " + value->dtype.to_string() + ", not " + memory->dtype.to_string(),
                stmt.value->span);
        } else if (!shapes_equal(value->shape, *tile, cx)) {
          error("E2202", "the stored tile has shape " + shape_to_string(value->shape) + ", not the indexed " +
                             shape_to_string(*tile),
                stmt.value->span);
        }
      } else {
        coerce(value, scalar_type(memory->dtype), stmt.value->span, "the stored value", cx);
      }
    }
  }
  if (stmt.mask) {
    const TypePtr mask = check_expr(*stmt.mask, cx);
    if (!mask->is_error()) {
      const bool boolean = mask->has_dtype() && !mask->is_contextual() && mask->dtype.is_bool();
      const bool fits = mask->is_scalar() || (mask->is_tensor() && shapes_equal(mask->shape, *tile, cx));
      if (!boolean || !fits) {
        error("E2101", "the mask is a `bool` scalar or a tile of the indexed shape " + shape_to_string(*tile) +
                           ", not " + quoted(type_to_string(mask)),
              stmt.mask->span);
      }
    }
  }
}

void Checker::Impl::check_kernel_declaration(FunctionDecl& kernel_decl, Context& cx) {
  const ast::KernelItem& kernel = *kernel_decl.kernel;
  for (const ParamInfo& param : kernel_decl.params) {
    const TypePtr& type = param.type;
    if (type->is_error()) continue;
    if (type->is_tensor() ? has_pack(type->shape) : type->kind != TypeKind::Scalar) {
      error("E2127", "a kernel parameter is a tensor of known rank or a scalar, not " + quoted(type_to_string(type)),
            param.span);
    }
  }
  for (const ParamInfo& result : kernel_decl.kernel_results) {
    if (result.type->is_error()) continue;
    if (!result.type->is_tensor() || has_pack(result.type->shape)) {
      error("E2127", "a kernel result is a tensor of known rank, not " + quoted(type_to_string(result.type)),
            result.span);
    }
  }
  if (kernel.grid.empty() || kernel.grid.size() > 3) {
    error("E2127", "`grid(...)` gives one to three compile-time integers", kernel.grid_span.valid() ? kernel.grid_span : kernel.span);
  }
  for (const ast::ExprPtr& axis : kernel.grid) {
    if (!axis) continue;
    const TypePtr type = check_expr(*axis, cx);
    if (type->is_error()) continue;
    if (!type->is_compile_time_int()) {
      error("E2123", "a kernel's grid is a compile-time integer", axis->span)
          .note("this is " + quoted(type_to_string(type)) + "; the grid is fixed when the kernel is launched");
      continue;
    }
    check_divisors(*type->value, axis->span, cx);
  }
  for (const ast::LaunchHint& hint : kernel.hints) {
    const auto* literal = hint.value ? hint.value->as<ast::IntegerLiteral>() : nullptr;
    if (!literal) {
      error("E2127", quoted(hint.name.text) + " takes an integer literal", hint.span);
      continue;
    }
    const auto value = static_cast<std::int64_t>(literal->value);
    if (hint.name.text == "warps" && !is_power_of_two(value)) {
      error("E2127", "`warps(" + literal->text + ")`: the number of warps is a power of two", hint.span);
    } else if (hint.name.text == "stages" && value < 1) {
      error("E2127", "`stages(" + literal->text + ")`: a loop runs in at least one stage", hint.span);
    }
  }
}

void Checker::Impl::check_kernel_binding(FunctionDecl& op) {
  const ast::KernelBinding& binding = *op.function->kernel;
  Context cx = make_context(op.module, op.block, &op);
  std::optional<Symbol> symbol = find_symbol(binding.kernel.text, cx);
  if (!symbol) {
    if (!was_imported(*cx.module, binding.kernel.text)) {
      error("E1201", "cannot find kernel " + quoted(binding.kernel.text), binding.kernel.span);
    }
    return;
  }
  if (symbol->kind != Symbol::Kind::Function || !symbol->function->is_kernel()) {
    error("E2126", quoted(binding.kernel.text) + " is not a kernel", binding.kernel.span);
    return;
  }
  FunctionDecl& kernel = *symbol->function;
  resolve_function(kernel);
  const std::string what = "kernel " + quoted(kernel.name);
  if (binding.generic_args.size() > kernel.generics.size()) {
    error("E2126", what + " takes " + std::to_string(kernel.generics.size()) + " generic arguments, not " +
                       std::to_string(binding.generic_args.size()),
          binding.span);
    return;
  }
  Substitution args;
  for (std::size_t i = 0; i < kernel.generics.size(); ++i) {
    const GenericParamInfo& g = kernel.generics[i];
    std::optional<GenericValue> value;
    if (i < binding.generic_args.size()) {
      value = resolve_generic_arg(binding.generic_args[i], g, cx);
      if (!value) return;
    } else if (g.has_default) {
      value = g.default_value;
    } else {
      error("E2126", what + " needs a value for its generic " + quoted(g.name), binding.span);
      return;
    }
    if (value->kind == GenericValue::Kind::Dim) args.dims[g.name] = value->dim;
    if (value->kind == GenericValue::Kind::Pack) args.packs[g.name] = value->pack;
    if (value->kind == GenericValue::Kind::DType) args.dtypes[g.name] = value->dtype;
  }
  if (kernel.params.size() != op.params.size()) {
    error("E2126", what + " takes " + std::to_string(kernel.params.size()) + " parameters, but the op has " +
                       std::to_string(op.params.size()),
          binding.span)
        .note("the kernel takes the op's parameters, in order and of the same types");
    return;
  }
  for (std::size_t i = 0; i < op.params.size(); ++i) {
    const TypePtr expected = substitute(kernel.params[i].type, args);
    if (!same_type(expected, op.params[i].type, cx)) {
      error("E2126", what + " does not take the op's parameter " + quoted(op.params[i].name), binding.span)
          .note("the op's parameter is " + quoted(type_to_string(op.params[i].type)))
          .note("the kernel's parameter " + quoted(kernel.params[i].name) + " is " + quoted(type_to_string(expected)));
      return;
    }
  }
  const TypePtr written = substitute(kernel.result, args);
  if (!same_type(written, op.result, cx)) {
    error("E2126", what + " does not write what the op returns", binding.span)
        .note("the op returns " + quoted(type_to_string(op.result)))
        .note("the kernel writes " + quoted(type_to_string(written)));
  }
}

void Checker::Impl::check_grad(FunctionDecl& op) {
  const ast::GradClause& grad = *op.function->grad;
  if (!op.is_op()) {
    error("E2125", std::string("`grad` belongs to an `op`, not a `") + ast::function_kind_spelling(op.function->function) +
                       "`",
          grad.span)
        .note("a `fn` has no semantic identity to attach a backward pass to");
    return;
  }
  bool ok = true;
  const TypePtr& result = op.result;
  const bool float_result = (result->is_tensor() || (result->is_scalar() && !result->is_contextual())) &&
                            result->dtype.is_float();
  if (!result->is_error() && !float_result) {
    error("E2125", "an op with `grad` returns one floating tensor or scalar, not " + quoted(type_to_string(result)),
          grad.span);
    ok = false;
  }
  std::vector<TypePtr> gradients;
  for (const ParamInfo& param : op.params) {
    if (param.type->is_error()) continue;
    if (!param.type->is_tensor() && !(param.type->is_scalar())) {
      error("E2125", "parameter " + quoted(param.name) + " of an op with `grad` must be a tensor or a scalar, not " +
                         quoted(type_to_string(param.type)),
            param.span);
      ok = false;
      continue;
    }
    if (param.type->is_tensor() && param.type->dtype.is_float()) gradients.push_back(param.type);
  }
  if (ok && gradients.empty()) {
    error("E2125", "this op has no floating tensor parameter to differentiate", grad.span)
        .note("a gradient is returned for each tensor parameter of a float dtype");
    ok = false;
  }
  if (!ok) return;
  Context cx = make_context(op.module, op.block, &op);
  cx.in_grad = true;
  cx.result = gradients.size() == 1 ? gradients.front() : tuple_type(gradients);
  for (const ParamInfo& param : op.params) {
    declare_local(ast::Ident{param.name, param.span}, param.type, Local::Kind::Param, cx).used = true;
  }
  declare_local(grad.result, op.result, Local::Kind::GradName, cx).used = true;
  declare_local(grad.gradient, op.result, Local::Kind::GradName, cx).used = true;
  check_body(grad.body, cx, true);
}

}  // namespace linnet::check
