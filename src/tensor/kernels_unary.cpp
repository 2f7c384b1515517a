// Elementwise unary kernels: sign and magnitude, logical/bitwise not, and the
// float math functions (bf16/f16 evaluated in f32, rounded once).
#include <cmath>
#include <string>

#include "dispatch.hpp"
#include "elementwise.hpp"
#include "integer_math.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::Not: return "not";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Log1p: return "log1p";
    case UnaryOp::Expm1: return "expm1";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Reciprocal: return "reciprocal";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Tan: return "tan";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Erf: return "erf";
    case UnaryOp::Floor: return "floor";
    case UnaryOp::Ceil: return "ceil";
    case UnaryOp::Round: return "round";
    case UnaryOp::Trunc: return "trunc";
    case UnaryOp::IsNan: return "isnan";
  }
  return "?";
}

namespace {

using detail::bool8_t;
using detail::compute_t;

[[noreturn]] void unsupported(UnaryOp op, DType dtype) {
  const bool float_only = op != UnaryOp::Neg && op != UnaryOp::Abs && op != UnaryOp::Sign && op != UnaryOp::Not;
  throw TensorError(ErrorKind::UnsupportedDType,
                    std::string(unary_op_name(op)) + (float_only ? " needs a float tensor" : " does not apply to") +
                        (float_only ? ", got " : " ") + std::string(dtype_name(dtype)) +
                        (float_only ? "" : " tensors"));
}

template <class Out, class S, class Op>
Tensor apply(const Tensor& x, Op op) {
  Tensor out = Tensor::empty(detail::dtype_of_storage<Out>, x.shape());
  detail::map_unary<Out, S>(out, x, [op](S value) { return detail::store<Out>(op(detail::load(value))); });
  return out;
}

template <class S>
Tensor unary_typed(UnaryOp op, const Tensor& x) {
  using C = compute_t<S>;
  const DType dtype = x.dtype();
  if constexpr (detail::is_bool_storage_v<S>) {
    if (op == UnaryOp::Not) return apply<S, S>(x, [](bool v) { return !v; });
    unsupported(op, dtype);
  } else if constexpr (detail::is_integer_storage_v<S>) {
    switch (op) {
      case UnaryOp::Neg: return apply<S, S>(x, [](C v) { return detail::wrapping_neg(v); });
      case UnaryOp::Abs:
        if constexpr (std::is_signed_v<C>) return apply<S, S>(x, [](C v) { return v < 0 ? detail::wrapping_neg(v) : v; });
        else return x.clone();
      case UnaryOp::Sign:
        if constexpr (std::is_signed_v<C>) return apply<S, S>(x, [](C v) { return static_cast<C>((v > 0) - (v < 0)); });
        else return apply<S, S>(x, [](C v) { return static_cast<C>(v != 0); });
      case UnaryOp::Not: return apply<S, S>(x, [](C v) { return static_cast<C>(~v); });
      default: unsupported(op, dtype);
    }
  } else {
    switch (op) {
      case UnaryOp::Neg: return apply<S, S>(x, [](C v) { return -v; });
      case UnaryOp::Abs: return apply<S, S>(x, [](C v) { return std::fabs(v); });
      case UnaryOp::Sign:
        return apply<S, S>(x, [](C v) { return v != v ? v : static_cast<C>((v > C(0)) - (v < C(0))); });
      case UnaryOp::Exp: return apply<S, S>(x, [](C v) { return std::exp(v); });
      case UnaryOp::Log: return apply<S, S>(x, [](C v) { return std::log(v); });
      case UnaryOp::Log1p: return apply<S, S>(x, [](C v) { return std::log1p(v); });
      case UnaryOp::Expm1: return apply<S, S>(x, [](C v) { return std::expm1(v); });
      case UnaryOp::Sqrt: return apply<S, S>(x, [](C v) { return std::sqrt(v); });
      case UnaryOp::Rsqrt: return apply<S, S>(x, [](C v) { return C(1) / std::sqrt(v); });
      case UnaryOp::Reciprocal: return apply<S, S>(x, [](C v) { return C(1) / v; });
      case UnaryOp::Sin: return apply<S, S>(x, [](C v) { return std::sin(v); });
      case UnaryOp::Cos: return apply<S, S>(x, [](C v) { return std::cos(v); });
      case UnaryOp::Tan: return apply<S, S>(x, [](C v) { return std::tan(v); });
      case UnaryOp::Tanh: return apply<S, S>(x, [](C v) { return std::tanh(v); });
      case UnaryOp::Sigmoid: return apply<S, S>(x, [](C v) { return C(1) / (C(1) + std::exp(-v)); });
      case UnaryOp::Erf: return apply<S, S>(x, [](C v) { return std::erf(v); });
      case UnaryOp::Floor: return apply<S, S>(x, [](C v) { return std::floor(v); });
      case UnaryOp::Ceil: return apply<S, S>(x, [](C v) { return std::ceil(v); });
      case UnaryOp::Round: return apply<S, S>(x, [](C v) { return std::nearbyint(v); });  // ties to even
      case UnaryOp::Trunc: return apply<S, S>(x, [](C v) { return std::trunc(v); });
      case UnaryOp::IsNan: return apply<bool8_t, S>(x, [](C v) { return v != v; });
      case UnaryOp::Not: unsupported(op, dtype);
    }
  }
  unsupported(op, dtype);
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  return detail::visit_dtype(x.dtype(), [&]<class S>() { return unary_typed<S>(op, x); });
}

}  // namespace linnet::tensor
