// Elementwise binary kernels: arithmetic, comparisons, logical/bitwise
// operators and shifts, with right-aligned broadcasting.
#include <atomic>
#include <string>

#include "dispatch.hpp"
#include "elementwise.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Rem: return "rem";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::And: return "&";
    case BinaryOp::Or: return "|";
    case BinaryOp::Xor: return "^";
    case BinaryOp::Shl: return "shl";
    case BinaryOp::Shr: return "shr";
  }
  return "?";
}

namespace {

[[noreturn]] void unsupported(BinaryOp op, DType dtype) {
  throw TensorError(ErrorKind::UnsupportedDType, std::string("operator ") + binary_op_name(op) +
                                                     " does not apply to " + std::string(dtype_name(dtype)) +
                                                     " tensors");
}

// True when some element of integer tensor `t` is zero.
template <class S>
bool contains_zero(const Tensor& t) {
  std::atomic<bool> found{false};
  auto loop = detail::plan_loop<1>(t.shape(), {&t});
  detail::run_loop(loop, [&](const detail::Pointers<1>& p, const detail::ByteSteps<1>& s, int64_t n) {
    bool zero = false;
    for (int64_t i = 0; i < n; ++i) zero |= *reinterpret_cast<const S*>(p[0] + i * s[0]) == S{0};
    if (zero) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

// out = op(a, b) computed in S's compute type and stored (rounded) as Out.
template <class Out, class S, class Op>
Tensor apply(const Tensor& a, const Tensor& b, const Shape& shape, Op op) {
  Tensor out = Tensor::empty(detail::dtype_of_storage<Out>, shape);
  detail::map_binary<Out, S, S>(out, a, b,
                                [op](S x, S y) { return detail::store<Out>(op(detail::load(x), detail::load(y))); });
  return out;
}

template <class S>
Tensor binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& shape) {
  const DType dtype = a.dtype();
  if constexpr (detail::is_integer_storage_v<S>) {
    if ((op == BinaryOp::Div || op == BinaryOp::Rem) && contains_zero<S>(b)) {
      throw TensorError(ErrorKind::DivisionByZero, std::string("integer ") +
                                                       (op == BinaryOp::Div ? "division" : "remainder") +
                                                       " by zero (" + std::string(dtype_name(dtype)) + ")");
    }
  }
  // The element rules are linnet/tensor/element_arithmetic.hpp's, applied
  // by the active path's span kernels where it has them (the same bits).
  if (const detail::BinarySpans spans = detail::binary_spans(dtype, op)) {
    Tensor out = Tensor::empty(spans.out, shape);
    detail::map_binary_spans(out, a, b, spans);
    return out;
  }
  return detail::visit_binary_rule<S>(
      op, [&]<class Out>(auto rule) { return apply<Out, S>(a, b, shape, rule); },
      [&]() -> Tensor { unsupported(op, dtype); });
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw TensorError(ErrorKind::DTypeMismatch, std::string("operator ") + binary_op_name(op) +
                                                    " needs operands of one dtype, got " + a.describe() + " and " +
                                                    b.describe() + " (cast one side explicitly)");
  }
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  const Tensor left = a.broadcast_to(shape);
  const Tensor right = b.broadcast_to(shape);
  return detail::visit_dtype(a.dtype(), [&]<class S>() { return binary_typed<S>(op, left, right, shape); });
}

}  // namespace linnet::tensor
