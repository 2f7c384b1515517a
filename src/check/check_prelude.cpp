// The prelude's functions (spec 2.3): casts, shape primitives (`reshape`,
// `permute`, `broadcast_to`, `concat`), data functions (`iota`, `fill`,
// `cumsum`), elementwise math, `min`/`max`, shifts and `select`. Each has
// its own typing rule; the shape ones are where element counts, broadcasts
// and axes are proved.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>
#include <numeric>

#include "checker_internal.hpp"
#include "linnet/syntax/prelude.hpp"

namespace linnet::check {

namespace {

constexpr std::string_view kFloatMath[] = {"exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh"};

bool is_float_math(std::string_view name) {
  return std::find(std::begin(kFloatMath), std::end(kFloatMath), name) != std::end(kFloatMath);
}

// A call's arguments split into positional ones and `name = value` ones.
struct CallArguments {
  std::vector<const ast::Argument*> positional;
  std::map<std::string, const ast::Argument*, std::less<>> named;
};

CallArguments split_arguments(const ast::CallExpr& call) {
  CallArguments out;
  for (const ast::Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      out.positional.push_back(&argument);
    } else {
      out.named.emplace(argument.name.text, &argument);
    }
  }
  return out;
}

DimExpr product(const Shape& shape) {
  DimExpr out(1);
  bool first = true;
  for (const ShapeItem& item : shape) {
    DimExpr factor = item.is_pack() ? DimExpr::symbol("*" + item.pack) : item.dim;
    out = first ? factor : out * factor;
    first = false;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& Checker::Impl::prelude_function_names() { return syntax::prelude_functions(); }

bool Checker::Impl::is_prelude_function(std::string_view name) { return syntax::is_prelude_function(name); }

TypePtr Checker::Impl::call_prelude(const ast::CallExpr& call, const std::string& name, Context& cx) {
  const Span span = call.span;
  const std::string what = quoted(name);
  if (syntax::is_unspecified_prelude_function(name)) {
    error("E2190", what + " has no specified signature and is not implemented", call.callee->span)
        .with_help(name == "gather" ? "index with a runtime value in a comprehension: `let y[i, h] = table[ids[i], h]`"
                                    : "build the result with a comprehension and `select`");
    return error_type();
  }
  CallArguments args = split_arguments(call);
  // Generic arguments: only `cast`, `iota` and `fill` take one, a dtype.
  DTypeRef generic_dtype;
  const bool takes_dtype = name == "cast" || name == "iota" || name == "fill";
  if (call.has_generic_args) {
    if (!takes_dtype || call.generic_args.size() != 1) {
      error("E2111", takes_dtype ? what + " takes one generic argument, a dtype" : what + " takes no generic arguments",
            span);
      return error_type();
    }
    const ast::GenericArg& arg = call.generic_args.front();
    if (!arg.type) {
      error("E2111", what + " takes a dtype, not " + quoted(text_of(arg.span)), arg.span);
      return error_type();
    }
    generic_dtype = resolve_dtype(*arg.type, cx);
    if (generic_dtype.is_error()) return error_type();
  }
  auto expect_count = [&](std::size_t count, std::initializer_list<std::string_view> keywords) {
    for (const auto& [key, argument] : args.named) {
      if (std::find(keywords.begin(), keywords.end(), key) == keywords.end()) {
        error("E2102", what + " has no parameter " + quoted(key), argument->name.span);
        return false;
      }
    }
    if (args.positional.size() != count) {
      error("E2102", what + " takes " + std::to_string(count) + " argument" + (count == 1 ? "" : "s") + ", not " +
                         std::to_string(args.positional.size()),
            span);
      return false;
    }
    return true;
  };
  auto arg_type = [&](std::size_t i, const TypePtr& hint = nullptr) {
    return check_expr(*args.positional[i]->value, cx, hint);
  };
  auto arg_span = [&](std::size_t i) { return args.positional[i]->value->span; };
  auto reject_tensor_in_notation = [&](const TypePtr& type, Span where) {
    if (cx.in_index_notation() && type->is_tensor()) {
      error("E3104", "a whole tensor cannot appear in index notation", where)
          .note("inside a comprehension or reduction every tensor is indexed on all of its axes");
      return true;
    }
    return false;
  };
  // An `axis = k` argument: a constant integer.
  auto axis_argument = [&](std::optional<std::int64_t>& axis) {
    auto it = args.named.find("axis");
    if (it == args.named.end()) {
      error("E2102", what + " needs its axis: `" + name + "(..., axis = k)`", span);
      return false;
    }
    const TypePtr type = check_expr(*it->second->value, cx);
    if (type->is_error()) return false;
    if (!type->is_compile_time_int()) {
      error("E2123", "the axis must be a compile-time integer", it->second->value->span);
      return false;
    }
    axis = constant_value(*type->value, cx);
    if (!axis) {
      error("E2210", "the axis must be a constant, not " + quoted(type->value->to_string()), it->second->value->span);
      return false;
    }
    return true;
  };
  // Resolves `axis` against a shape: the position counted from the front or
  // the back, with no pack on the counted side.
  auto axis_position = [&](std::int64_t axis, const Shape& shape, Span where, std::size_t& position) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (axis >= 0) {
      for (std::int64_t i = 0; i <= axis && i < rank; ++i) {
        if (shape[static_cast<std::size_t>(i)].is_pack()) {
          error("E2210", "axis " + std::to_string(axis) + " of " + shape_to_string(shape) + " lies past a shape pack",
                where)
              .with_help("count from the back with a negative axis");
          return false;
        }
      }
      if (axis >= rank) {
        error("E2210", "axis " + std::to_string(axis) + " is out of range for " + shape_to_string(shape), where);
        return false;
      }
      position = static_cast<std::size_t>(axis);
      return true;
    }
    if (-axis > rank) {
      error("E2210", "axis " + std::to_string(axis) + " is out of range for " + shape_to_string(shape), where);
      return false;
    }
    for (std::int64_t i = rank + axis; i < rank; ++i) {
      if (shape[static_cast<std::size_t>(i)].is_pack()) {
        error("E2210", "axis " + std::to_string(axis) + " of " + shape_to_string(shape) + " lies past a shape pack",
              where);
        return false;
      }
    }
    position = static_cast<std::size_t>(rank + axis);
    return true;
  };
  auto shape_argument = [&](std::size_t i) -> std::optional<Shape> {
    const ast::Expr& value = *args.positional[i]->value;
    if (value.kind != ast::ExprKind::Shape) {
      const TypePtr type = check_expr(value, cx);
      if (!type->is_error()) {
        error("E2101", what + " takes a shape literal such as `[B, S]`, not " + quoted(type_to_string(type)),
              value.span);
      }
      return std::nullopt;
    }
    const TypePtr type = check_shape_literal(value.cast<ast::ShapeExpr>(), cx);
    if (type->is_error()) return std::nullopt;
    return type->shape;
  };

  if (name == "cast") {
    if (!call.has_generic_args) {
      error("E2110", "`cast` needs its target dtype: `cast<T>(x)`", span);
      return error_type();
    }
    if (!expect_count(1, {})) return error_type();
    const TypePtr value = arg_type(0);
    if (value->is_error()) return value;
    if (!value->has_dtype()) {
      error("E2101", "`cast` takes a scalar or a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    if (reject_tensor_in_notation(value, arg_span(0))) return error_type();
    return with_dtype(value, generic_dtype);
  }
  if (is_float_math(name) || name == "abs") {
    if (!expect_count(1, {})) return error_type();
    const TypePtr value = arg_type(0);
    if (value->is_error()) return value;
    if (!value->has_dtype()) {
      error("E2101", what + " takes a scalar or a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    if (reject_tensor_in_notation(value, arg_span(0))) return error_type();
    if (value->is_contextual()) return name == "abs" ? value : float_literal(0.0);
    const bool ok = name == "abs" ? value->dtype.is_numeric() : value->dtype.is_float();
    if (!ok) {
      error("E2112", what + " takes a " + (name == "abs" ? "numeric" : "float") + " dtype, not " +
                         value->dtype.to_string(),
            arg_span(0));
      return error_type();
    }
    return value;
  }
  if (name == "min" || name == "max" || name == "shl" || name == "shr") {
    if (!expect_count(2, {})) return error_type();
    const TypePtr a = arg_type(0);
    const TypePtr b = arg_type(1, a->is_contextual() ? nullptr : a);
    if (a->is_error() || b->is_error()) return error_type();
    if ((name == "min" || name == "max") && a->is_compile_time_int() && b->is_compile_time_int()) {
      return compile_time_int(name == "min" ? DimExpr::min(*a->value, *b->value) : DimExpr::max(*a->value, *b->value));
    }
    const TypePtr combined = elementwise(a, b, span, arg_span(0), arg_span(1), cx);
    if (combined->is_error()) return combined;
    if (combined->is_contextual()) return combined;
    const bool shift = name == "shl" || name == "shr";
    if (shift ? !combined->dtype.is_integer() : !combined->dtype.is_numeric()) {
      error("E2112", what + " takes " + (shift ? "integer" : "numeric") + " operands, not " +
                         combined->dtype.to_string(),
            span);
      return error_type();
    }
    return combined;
  }
  if (name == "select") {
    if (!expect_count(3, {})) return error_type();
    const TypePtr condition = arg_type(0);
    const TypePtr a = arg_type(1);
    const TypePtr b = arg_type(2, a->is_contextual() ? nullptr : a);
    if (condition->is_error() || a->is_error() || b->is_error()) return error_type();
    if (!condition->has_dtype() || condition->is_contextual() || !condition->dtype.is_bool()) {
      error("E2101", "the condition of `select` must be `bool`, not " + quoted(type_to_string(condition)),
            arg_span(0));
      return error_type();
    }
    if (reject_tensor_in_notation(condition, arg_span(0))) return error_type();
    const TypePtr values = elementwise(a, b, span, arg_span(1), arg_span(2), cx);
    if (values->is_error()) return values;
    if (!condition->is_tensor()) return values;
    if (!values->is_tensor()) {
      if (values->is_contextual()) return tensor_type(condition->shape, default_literal(values)->dtype);
      return tensor_type(condition->shape, values->dtype);
    }
    Shape shape;
    if (!broadcast(condition->shape, values->shape, shape, span, cx)) return error_type();
    return tensor_type(std::move(shape), values->dtype);
  }
  if (name == "reshape") {
    if (!expect_count(2, {})) return error_type();
    const TypePtr value = arg_type(0);
    std::optional<Shape> target = shape_argument(1);
    if (value->is_error() || !target) return error_type();
    if (!value->is_tensor()) {
      error("E2101", "`reshape` takes a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    const DimExpr from = product(value->shape);
    const DimExpr to = product(*target);
    const Relation same{from, RelOp::Eq, to};
    if (!prove_equal_dims(from, to, cx)) {
      const ProofResult proof = cx.solver->prove(same);
      if (!proof.proved()) {
        Diagnostic& d = error("E2203", "cannot prove that `reshape` keeps the element count", span);
        d.note(quoted(text_of(*args.positional[0]->value)) + " has shape " + shape_to_string(value->shape) + ", " +
               quoted(from.to_string()) + " elements");
        d.note("the target shape " + shape_to_string(*target) + " has " + quoted(to.to_string()) + " elements");
        d.note("needed: " + quoted(same.to_string()));
        explain_failure(d, proof, cx);
        return error_type();
      }
    }
    return tensor_type(std::move(*target), value->dtype);
  }
  if (name == "broadcast_to") {
    if (!expect_count(2, {})) return error_type();
    const TypePtr value = arg_type(0);
    std::optional<Shape> target = shape_argument(1);
    if (value->is_error() || !target) return error_type();
    if (!value->is_tensor()) {
      error("E2101", "`broadcast_to` takes a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    const Shape& from = value->shape;
    bool ok = from.size() <= target->size() && !has_pack(from);
    for (std::size_t i = 0; ok && i < from.size(); ++i) {
      const DimExpr& a = from[from.size() - 1 - i].dim;
      const DimExpr& b = (*target)[target->size() - 1 - i].dim;
      if (prove_equal_dims(a, b, cx) || is_one(a, cx)) continue;
      Diagnostic& d = error("E2207", "cannot prove that these shapes broadcast", span);
      d.note(quoted(a.to_string()) + " must equal " + quoted(b.to_string()) + " or be 1");
      d.note("the tensor's shape is " + shape_to_string(from));
      d.note("the target shape is " + shape_to_string(*target));
      if (cx.solver) explain_failure(d, cx.solver->prove_equal(a, b), cx);
      return error_type();
    }
    if (!ok) {
      error("E2207", "cannot broadcast " + shape_to_string(from) + " to " + shape_to_string(*target), span)
          .note("the target needs at least the tensor's rank, and no shape pack can be broadcast");
      return error_type();
    }
    return tensor_type(std::move(*target), value->dtype);
  }
  if (name == "permute") {
    if (!expect_count(2, {})) return error_type();
    const TypePtr value = arg_type(0);
    std::optional<Shape> axes = shape_argument(1);
    if (value->is_error() || !axes) return error_type();
    if (!value->is_tensor()) {
      error("E2101", "`permute` takes a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    if (has_pack(value->shape)) {
      error("E2210", "`permute` needs a known rank; " + shape_to_string(value->shape) + " has a shape pack", span);
      return error_type();
    }
    const std::size_t rank = value->shape.size();
    std::vector<bool> seen(rank, false);
    Shape out;
    for (const ShapeItem& axis : *axes) {
      const std::optional<std::int64_t> constant = constant_value(axis.dim, cx);
      if (!constant || *constant < 0 || static_cast<std::size_t>(*constant) >= rank ||
          seen[static_cast<std::size_t>(*constant)]) {
        error("E2210", shape_to_string(*axes) + " is not a permutation of the axes 0.." + std::to_string(rank),
              arg_span(1))
            .note("the tensor has rank " + std::to_string(rank));
        return error_type();
      }
      seen[static_cast<std::size_t>(*constant)] = true;
      out.push_back(value->shape[static_cast<std::size_t>(*constant)]);
    }
    if (out.size() != rank) {
      error("E2210", shape_to_string(*axes) + " is not a permutation of the axes 0.." + std::to_string(rank),
            arg_span(1))
          .note("the tensor has rank " + std::to_string(rank));
      return error_type();
    }
    return tensor_type(std::move(out), value->dtype);
  }
  if (name == "concat") {
    for (const auto& [key, argument] : args.named) {
      if (key != "axis") {
        error("E2102", "`concat` has no parameter " + quoted(key), argument->name.span);
        return error_type();
      }
    }
    if (args.positional.empty()) {
      error("E2102", "`concat` takes at least one tensor", span);
      return error_type();
    }
    std::vector<TypePtr> parts;
    bool ok = true;
    for (std::size_t i = 0; i < args.positional.size(); ++i) {
      TypePtr part = arg_type(i);
      if (part->is_error()) {
        ok = false;
      } else if (!part->is_tensor()) {
        error("E2101", "`concat` joins tensors, not " + quoted(type_to_string(part)), arg_span(i));
        ok = false;
      }
      parts.push_back(std::move(part));
    }
    std::optional<std::int64_t> axis;
    if (!axis_argument(axis) || !ok) return error_type();
    const Shape& first = parts.front()->shape;
    std::size_t position = 0;
    if (!axis_position(*axis, first, arg_span(0), position)) return error_type();
    Shape out = first;
    DimExpr total = first[position].dim;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const Type& part = *parts[i];
      if (!(part.dtype == parts.front()->dtype)) {
        error("E2103", "tensor dtypes do not match", arg_span(i))
            .note("the first tensor has dtype " + parts.front()->dtype.to_string())
            .note("this one has dtype " + part.dtype.to_string())
            .with_help("Linnet does not implicitly promote tensor dtypes; use an explicit cast");
        return error_type();
      }
      bool same = part.shape.size() == first.size();
      std::size_t bad_axis = 0;
      for (std::size_t a = 0; same && a < first.size(); ++a) {
        if (a == position) continue;
        if (first[a].is_pack() || part.shape[a].is_pack()) {
          same = first[a].pack == part.shape[a].pack;
        } else {
          same = prove_equal_dims(first[a].dim, part.shape[a].dim, cx);
        }
        if (!same) bad_axis = a;
      }
      if (!same) {
        Diagnostic& d = error("E2202", "`concat` needs equal shapes except along axis " + std::to_string(*axis),
                              arg_span(i));
        d.note("the first tensor has shape " + shape_to_string(first));
        d.note("this one has shape " + shape_to_string(part.shape));
        if (part.shape.size() == first.size() && cx.solver && !first[bad_axis].is_pack() &&
            !part.shape[bad_axis].is_pack()) {
          explain_failure(d, cx.solver->prove_equal(first[bad_axis].dim, part.shape[bad_axis].dim), cx);
        }
        return error_type();
      }
      total = total + part.shape[position].dim;
    }
    out[position] = ShapeItem::of(simplify(total, cx));
    return tensor_type(std::move(out), parts.front()->dtype);
  }
  if (name == "cumsum") {
    if (!expect_count(1, {"axis"})) return error_type();
    const TypePtr value = arg_type(0);
    if (value->is_error()) return value;
    if (!value->is_tensor()) {
      error("E2101", "`cumsum` takes a tensor, not " + quoted(type_to_string(value)), arg_span(0));
      return error_type();
    }
    if (!value->dtype.is_numeric()) {
      error("E2112", "`cumsum` takes a numeric tensor, not " + value->dtype.to_string(), arg_span(0));
      return error_type();
    }
    std::optional<std::int64_t> axis;
    if (!axis_argument(axis)) return error_type();
    std::size_t position = 0;
    if (!axis_position(*axis, value->shape, args.named["axis"]->value->span, position)) return error_type();
    return value;
  }
  if (name == "iota") {
    if (!expect_count(1, {})) return error_type();
    const DTypeRef dtype = call.has_generic_args ? generic_dtype : DTypeRef::of(tensor::DType::I64);
    if (!dtype.is_numeric()) {
      error("E2112", "`iota` makes a numeric tensor, not " + dtype.to_string(), span);
      return error_type();
    }
    std::optional<DimExpr> length = resolve_dim(*args.positional[0]->value, cx);
    if (!length) return error_type();
    check_nonnegative(*length, arg_span(0), cx);
    return tensor_type(Shape{ShapeItem::of(*length)}, dtype);
  }
  if (name == "fill") {
    if (!expect_count(2, {})) return error_type();
    std::optional<Shape> shape = shape_argument(0);
    const TypePtr value = arg_type(1);
    if (!shape || value->is_error()) return error_type();
    if (!value->is_scalar()) {
      error("E2101", "`fill` takes a scalar value, not " + quoted(type_to_string(value)), arg_span(1));
      return error_type();
    }
    if (call.has_generic_args) {
      if (!coerce(value, scalar_type(generic_dtype), arg_span(1), "the fill value", cx)) return error_type();
      return tensor_type(std::move(*shape), generic_dtype);
    }
    if (value->is_contextual()) {
      error("E2110", "`fill` with a literal value needs its dtype: `fill<T>(shape, value)`", span);
      return error_type();
    }
    return tensor_type(std::move(*shape), value->dtype);
  }
  error("E1201", "cannot find function " + what, call.callee->span);
  return error_type();
}

}  // namespace linnet::check
