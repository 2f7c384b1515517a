// cast<T>(x): every dtype to every dtype, by the rules in kernels.hpp
// (implemented element by element in dispatch.hpp's `convert`, applied by
// the span kernels of elementwise_spans.hpp where they have the pair).
#include "dispatch.hpp"
#include "elementwise.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

Tensor cast(const Tensor& x, DType to) {
  Tensor out = Tensor::empty(to, x.shape());
  // The active path's span kernel where it has one (the same bits), else
  // the per-element loop.
  if (const detail::UnarySpans spans = detail::cast_spans(x.dtype(), to)) {
    detail::map_unary_spans(out, x, spans);
    return out;
  }
  detail::visit_dtype(x.dtype(), [&]<class From>() {
    detail::visit_dtype(to, [&]<class To>() {
      detail::map_unary<To, From>(out, x, [](From value) { return detail::convert<To>(value); });
    });
  });
  return out;
}

}  // namespace linnet::tensor
