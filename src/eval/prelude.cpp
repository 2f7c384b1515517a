// The prelude: the functions every module sees without an import.
//
// Elementwise ones (`cast`, the float functions, `abs`, `min`, `max`,
// `shl`, `shr`, `select`) also work on elements inside index notation: their
// arguments' axes are aligned by index variable as operators' are. The
// others (`reshape`, `permute`, `broadcast_to`, `concat`, `iota`, `fill`,
// `cumsum`) take whole tensors and compile-time shapes.
#include <cmath>
#include <limits>
#include <set>

#include "evaluator.hpp"
#include "linnet/syntax/prelude.hpp"
#include "linnet/syntax/std_index.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::eval {

namespace {

std::optional<tensor::UnaryOp> float_function(const std::string& name) {
  if (name == "exp") return tensor::UnaryOp::Exp;
  if (name == "log") return tensor::UnaryOp::Log;
  if (name == "sqrt") return tensor::UnaryOp::Sqrt;
  if (name == "rsqrt") return tensor::UnaryOp::Rsqrt;
  if (name == "sin") return tensor::UnaryOp::Sin;
  if (name == "cos") return tensor::UnaryOp::Cos;
  if (name == "tanh") return tensor::UnaryOp::Tanh;
  return std::nullopt;
}

double float_function_value(tensor::UnaryOp op, double x) {
  switch (op) {
    case tensor::UnaryOp::Exp: return std::exp(x);
    case tensor::UnaryOp::Log: return std::log(x);
    case tensor::UnaryOp::Sqrt: return std::sqrt(x);
    case tensor::UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
    case tensor::UnaryOp::Sin: return std::sin(x);
    case tensor::UnaryOp::Cos: return std::cos(x);
    case tensor::UnaryOp::Tanh: return std::tanh(x);
    default: return x;
  }
}

// The arguments of a prelude call: positional ones, and the one keyword
// argument (`axis`) some of them take.
struct PreludeArgs {
  std::vector<const ast::Expr*> positional;
  const ast::Expr* axis = nullptr;
};

}  // namespace

bool Evaluator::is_prelude(const std::string& name) { return syntax::is_prelude_function(name); }

std::string Evaluator::function_did_you_mean(const std::string& name, const Frame& frame) const {
  std::vector<std::string> callable = syntax::prelude_functions();
  if (frame.kernel != nullptr) callable.insert(callable.end(), {"program_id", "load"});
  if (frame.module != nullptr) {
    for (const auto& [item, declared] : frame.module->items) callable.push_back(item);
    for (const auto& [imported, target] : frame.module->imports) callable.push_back(imported);
  }
  if (frame.self != nullptr) {
    for (const auto& [method, function] : frame.self->methods) callable.push_back(method);
  }
  if (std::string near = syntax::did_you_mean(name, callable); !near.empty()) return near;
  // As `check` says: an item of the standard library without its `use`.
  const std::map<std::string, std::string> std_items = syntax::index_std_items(program.std_root());
  if (std::optional<std::string> item = syntax::std_item_for(name, std_items)) {
    return "; did you mean `" + *item + "`? it is in the standard library: add `use " + std_items.at(*item) + "::{" +
           *item + "}`";
  }
  return "";
}

Indexed Evaluator::call_prelude(const std::string& name, const ast::CallExpr& call, Frame& frame) {
  if (frame.kernel != nullptr && syntax::is_kernel_builtin(name)) return call_kernel_builtin(name, call, frame);
  if (syntax::is_unspecified_prelude_function(name)) {
    fail(codes::not_implemented, "`" + name + "` has no specified signature and is not implemented", call.callee->span);
  }
  PreludeArgs args;
  for (const ast::Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      args.positional.push_back(argument.value.get());
    } else if (argument.name.text == "axis" && (name == "concat" || name == "cumsum") && args.axis == nullptr) {
      args.axis = argument.value.get();
    } else {
      fail(codes::bad_arguments, "`" + name + "` has no parameter `" + argument.name.text + "`", argument.name.span);
    }
  }
  auto expect = [&](size_t count, const char* signature) {
    if (args.positional.size() != count) {
      fail(codes::bad_arguments,
           "`" + name + "` takes " + std::to_string(count) + " arguments, found " +
               std::to_string(args.positional.size()),
           call.span, {std::string("signature: `") + signature + "`"});
    }
  };
  auto generic_dtype = [&](bool required) -> std::optional<DType> {
    if (call.generic_args.size() > 1) {
      fail(codes::bad_generic_arguments, "`" + name + "` takes at most one generic argument", call.span);
    }
    if (call.generic_args.empty()) {
      if (required) {
        fail(codes::cannot_infer, "`" + name + "` needs a dtype", call.span, {"write `" + name + "<f32>(...)`"});
      }
      return std::nullopt;
    }
    const ast::GenericArg& arg = call.generic_args.front();
    if (!arg.type) fail(codes::bad_generic_arguments, "`" + name + "` takes a dtype", arg.span);
    return eval_dtype(*arg.type, frame);
  };
  auto no_generics = [&]() {
    if (!call.generic_args.empty()) {
      fail(codes::bad_generic_arguments, "`" + name + "` takes no generic arguments", call.span);
    }
  };
  auto whole = [&](const ast::Expr& expr) {
    Indexed value = eval(expr, frame);
    if (value.has_axes()) {
      fail(codes::invalid_index_expression,
           "`" + name + "` takes whole tensors, not elements inside index notation", expr.span);
    }
    return value.value;
  };
  auto elements = [&]() {
    std::vector<Indexed> values;
    for (const ast::Expr* expr : args.positional) values.push_back(eval(*expr, frame));
    return values;
  };

  // ---- elementwise ----
  if (name == "cast") {
    const DType dtype = *generic_dtype(true);
    expect(1, "cast<T>(x)");
    return elementwise(elements(), [&](const std::vector<Value>& values) {
      const Value& x = values[0];
      if (x.kind() == Value::Kind::Int) return Value::scalar(dtype, tensor::Scalar(x.int_value()));
      if (x.kind() == Value::Kind::Float) return Value::scalar(dtype, tensor::Scalar(x.float_value()));
      return Value::from_tensor(tensor::cast(as_tensor(x, args.positional[0]->span, "`cast`"), dtype));
    });
  }
  if (auto op = float_function(name)) {
    no_generics();
    expect(1, (name + "(x)").c_str());
    return elementwise(elements(), [&](const std::vector<Value>& values) {
      const Value& x = values[0];
      if (x.is_contextual()) return Value::contextual_float(float_function_value(*op, x.float_value()));
      const Tensor t = as_tensor(x, args.positional[0]->span, name.c_str());
      if (!tensor::is_float(t.dtype())) {
        fail(codes::invalid_operand,
             "`" + name + "` needs a floating-point value, found " + std::string(tensor::dtype_name(t.dtype())),
             args.positional[0]->span, {"convert it first: `" + name + "(cast<f32>(...))`"});
      }
      return Value::from_tensor(tensor::unary(*op, t));
    });
  }
  if (name == "abs") {
    no_generics();
    expect(1, "abs(x)");
    return elementwise(elements(), [&](const std::vector<Value>& values) {
      const Value& x = values[0];
      if (x.kind() == Value::Kind::Int) {
        if (x.int_value() == std::numeric_limits<int64_t>::min()) {
          fail(codes::literal_out_of_range, "compile-time integer overflow in `abs`", call.span);
        }
        return Value::contextual_int(x.int_value() < 0 ? -x.int_value() : x.int_value());
      }
      if (x.kind() == Value::Kind::Float) return Value::contextual_float(std::fabs(x.float_value()));
      return Value::from_tensor(tensor::unary(tensor::UnaryOp::Abs, as_tensor(x, args.positional[0]->span, "`abs`")));
    });
  }
  if (name == "min" || name == "max" || name == "shl" || name == "shr") {
    no_generics();
    expect(2, (name + (name.size() == 3 && name[0] == 's' ? "(x, bits)" : "(a, b)")).c_str());
    return elementwise(elements(), [&](const std::vector<Value>& values) {
      const Value& a = values[0];
      const Value& b = values[1];
      if (a.kind() == Value::Kind::Int && b.kind() == Value::Kind::Int) {
        const int64_t x = a.int_value();
        const int64_t y = b.int_value();
        if (name == "min") return Value::contextual_int(std::min(x, y));
        if (name == "max") return Value::contextual_int(std::max(x, y));
        if (y < 0 || y >= 64) return Value::contextual_int(0);
        return Value::contextual_int(name == "shl" ? static_cast<int64_t>(static_cast<uint64_t>(x) << y) : x >> y);
      }
      if (a.is_contextual() && b.is_contextual() && (name == "min" || name == "max")) {
        return Value::contextual_float(name == "min" ? std::fmin(a.float_value(), b.float_value())
                                                     : std::fmax(a.float_value(), b.float_value()));
      }
      auto [x, y] = typed_pair(a, b, call.span, name.c_str());
      const tensor::BinaryOp op = name == "min"   ? tensor::BinaryOp::Min
                                  : name == "max" ? tensor::BinaryOp::Max
                                  : name == "shl" ? tensor::BinaryOp::Shl
                                                  : tensor::BinaryOp::Shr;
      return Value::from_tensor(tensor::binary(op, x, y));
    });
  }
  if (name == "select") {
    no_generics();
    expect(3, "select(condition, a, b)");
    return elementwise(elements(), [&](const std::vector<Value>& values) {
      const Value& condition = values[0];
      if (!condition.is_tensor() || condition.tensor().dtype() != DType::Bool) {
        fail(codes::condition_not_bool, "the condition of `select` must be `bool`, found " + condition.describe(),
             args.positional[0]->span);
      }
      if (values[1].is_contextual() && values[2].is_contextual()) {
        fail(codes::cannot_infer, "`select` between two literals has no dtype", call.span,
             {"give one side a dtype, for example `cast<f32>(0.0)`"});
      }
      auto [a, b] = typed_pair(values[1], values[2], call.span, "select");
      return Value::from_tensor(tensor::select(condition.tensor(), a, b));
    });
  }

  // ---- whole tensors ----
  auto shape_argument = [&](const Value& value, const ast::Expr& expr) -> Shape {
    if (value.kind() == Value::Kind::Shape) return value.shape_dims();
    fail(codes::type_mismatch, "`" + name + "` expects a shape such as `[B, S, H]` here, found " + value.describe(),
         expr.span);
  };
  auto tensor_argument = [&](const Value& value, const ast::Expr& expr) -> Tensor {
    if (value.is_tensor()) return value.tensor();
    fail(codes::type_mismatch, "`" + name + "` expects a tensor here, found " + value.describe(), expr.span);
  };
  if (name == "reshape") {
    no_generics();
    expect(2, "reshape(x, shape)");
    const Tensor x = tensor_argument(whole(*args.positional[0]), *args.positional[0]);
    const Shape shape = shape_argument(whole(*args.positional[1]), *args.positional[1]);
    if (tensor::shape_numel(shape) != x.numel()) {
      fail(codes::reshape_count, "`reshape` must keep the number of elements", call.span,
           {"the input is " + x.describe() + " (" + std::to_string(x.numel()) + " elements)",
            "the result would be " + tensor::shape_to_string(shape) + " (" +
                std::to_string(tensor::shape_numel(shape)) + " elements)"});
    }
    return {Value::from_tensor(x.reshape(shape)), {}};
  }
  if (name == "permute") {
    no_generics();
    expect(2, "permute(x, axes)");
    const Tensor x = tensor_argument(whole(*args.positional[0]), *args.positional[0]);
    const Shape axes = shape_argument(whole(*args.positional[1]), *args.positional[1]);
    std::vector<int> order;
    std::vector<bool> used(static_cast<size_t>(x.rank()), false);
    bool valid = static_cast<int>(axes.size()) == x.rank();
    for (int64_t axis : axes) {
      valid = valid && axis >= 0 && axis < x.rank() && !used[static_cast<size_t>(axis)];
      if (!valid) break;
      used[static_cast<size_t>(axis)] = true;
      order.push_back(static_cast<int>(axis));
    }
    if (!valid) {
      fail(codes::invalid_axis,
           "the axes of `permute` must be a permutation of 0.." + std::to_string(x.rank() - 1) + ", found " +
               tensor::shape_to_string(axes),
           args.positional[1]->span, {"the input is " + x.describe()});
    }
    return {Value::from_tensor(x.permute(order)), {}};
  }
  if (name == "broadcast_to") {
    no_generics();
    expect(2, "broadcast_to(x, shape)");
    const Tensor x = tensor_argument(whole(*args.positional[0]), *args.positional[0]);
    const Shape shape = shape_argument(whole(*args.positional[1]), *args.positional[1]);
    bool valid = x.rank() <= static_cast<int>(shape.size());
    for (int i = 1; valid && i <= x.rank(); ++i) {
      const int64_t from = x.shape()[static_cast<size_t>(x.rank() - i)];
      valid = from == 1 || from == shape[shape.size() - static_cast<size_t>(i)];
    }
    if (!valid) {
      fail(codes::broadcast_mismatch,
           x.describe() + " does not broadcast to " + tensor::shape_to_string(shape), call.span,
           {"trailing axes must be equal or 1"});
    }
    return {Value::from_tensor(x.broadcast_to(shape)), {}};
  }
  if (name == "concat") {
    no_generics();
    if (args.positional.empty() || args.axis == nullptr) {
      fail(codes::bad_arguments, "`concat` takes tensors and a keyword `axis`", call.span,
           {"signature: `concat(a, b, ..., axis = 0)`"});
    }
    const int64_t axis = eval_int(*args.axis, frame, "`axis`");
    std::vector<Tensor> parts;
    for (const ast::Expr* expr : args.positional) {
      parts.push_back(tensor_argument(whole(*expr), *expr));
      if (parts.back().dtype() != parts.front().dtype()) {
        fail(codes::dtype_mismatch, "tensor dtypes do not match", expr->span,
             {"the first tensor is " + parts.front().describe(), "this tensor is " + parts.back().describe()});
      }
      if (parts.back().rank() != parts.front().rank()) {
        fail(codes::rank_mismatch, "`concat` joins tensors of one rank", expr->span,
             {"the first tensor is " + parts.front().describe(), "this tensor is " + parts.back().describe()});
      }
    }
    const int rank = parts.front().rank();
    if (axis < -rank || axis >= rank) {
      fail(codes::invalid_axis, "axis " + std::to_string(axis) + " does not name a dimension of rank " +
                                    std::to_string(rank), args.axis->span);
    }
    const int at = static_cast<int>(axis < 0 ? axis + rank : axis);
    for (size_t i = 1; i < parts.size(); ++i) {
      for (int a = 0; a < rank; ++a) {
        if (a != at && parts[i].shape()[static_cast<size_t>(a)] != parts[0].shape()[static_cast<size_t>(a)]) {
          fail(codes::shape_mismatch, "`concat` needs equal shapes except along the axis", args.positional[i]->span,
               {"the first tensor is " + parts[0].describe(), "this tensor is " + parts[i].describe()});
        }
      }
    }
    return {Value::from_tensor(tensor::concat(parts, at)), {}};
  }
  if (name == "iota") {
    const DType dtype = generic_dtype(false).value_or(DType::I64);
    expect(1, "iota<T = i64>(n)");
    if (dtype == DType::Bool) fail(codes::dtype_constraint, "`iota` needs a numeric dtype", call.span);
    const int64_t count = eval_int(*args.positional[0], frame, "the length of `iota`");
    if (count < 0) fail(codes::negative_dimension, "`iota` of a negative length " + std::to_string(count), call.span);
    return {Value::from_tensor(tensor::iota(count, dtype)), {}};
  }
  if (name == "fill") {
    std::optional<DType> dtype = generic_dtype(false);
    expect(2, "fill<T>(shape, value)");
    const Shape shape = shape_argument(whole(*args.positional[0]), *args.positional[0]);
    const Value value = whole(*args.positional[1]);
    if (!dtype) {
      if (!value.is_scalar_tensor()) {
        fail(codes::cannot_infer, "cannot infer the dtype of `fill`", call.span, {"write `fill<f32>(shape, value)`"});
      }
      dtype = value.tensor().dtype();
    }
    if (value.is_contextual()) {
      return {Value::from_tensor(tensor::fill(shape, *dtype, literal_as(value, *dtype, args.positional[1]->span).item())), {}};
    }
    if (!value.is_scalar_tensor() || value.tensor().dtype() != *dtype) {
      fail(codes::dtype_mismatch,
           "`fill<" + std::string(tensor::dtype_name(*dtype)) + ">` needs a scalar of that dtype, found " +
               value.describe(),
           args.positional[1]->span);
    }
    return {Value::from_tensor(tensor::fill(shape, *dtype, value.tensor().item())), {}};
  }
  if (name == "cumsum") {
    no_generics();
    expect(1, "cumsum(x, axis = -1)");
    const Tensor x = tensor_argument(whole(*args.positional[0]), *args.positional[0]);
    const int64_t axis = args.axis ? eval_int(*args.axis, frame, "`axis`") : -1;
    if (x.rank() == 0 || axis < -x.rank() || axis >= x.rank()) {
      fail(codes::invalid_axis, "axis " + std::to_string(axis) + " does not name a dimension of " + x.describe(),
           call.span);
    }
    std::optional<DType> accumulate;
    if ((x.dtype() == DType::BF16 || x.dtype() == DType::F16) && options.numerics != NumericsPolicy::Exact) {
      accumulate = DType::F32;
    }
    Tensor sums = tensor::cumsum(x, static_cast<int>(axis), accumulate);
    if (sums.dtype() != x.dtype()) sums = tensor::cast(sums, x.dtype());
    return {Value::from_tensor(sums), {}};
  }
  fail(codes::unknown_symbol, "cannot find function `" + name + "` in this scope" + function_did_you_mean(name, frame),
       call.span);
}

}  // namespace linnet::eval
