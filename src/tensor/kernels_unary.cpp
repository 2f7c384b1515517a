// Elementwise unary kernels: sign and magnitude, logical/bitwise not, and the
// float math functions (bf16/f16 evaluated in f32, rounded once).
#include <cmath>
#include <string>

#include "dispatch.hpp"
#include "elementwise.hpp"
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
  // The element rules are linnet/tensor/element_arithmetic.hpp's, applied
  // by the active path's span kernels where it has them (the same bits).
  if (const detail::UnarySpans spans = detail::unary_spans(x.dtype(), op)) {
    Tensor out = Tensor::empty(spans.out, x.shape());
    detail::map_unary_spans(out, x, spans);
    return out;
  }
  return detail::visit_unary_rule<S>(
      op, [&]<class Out>(auto rule) { return apply<Out, S>(x, rule); },
      [&]() -> Tensor { unsupported(op, x.dtype()); });
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  return detail::visit_dtype(x.dtype(), [&]<class S>() { return unary_typed<S>(op, x); });
}

}  // namespace linnet::tensor
