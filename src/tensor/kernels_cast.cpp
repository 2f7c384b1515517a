// cast<T>(x): every dtype to every dtype, by the rules in kernels.hpp
// (implemented element by element in dispatch.hpp's `convert`).
#include "dispatch.hpp"
#include "elementwise.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

Tensor cast(const Tensor& x, DType to) {
  Tensor out = Tensor::empty(to, x.shape());
  detail::visit_dtype(x.dtype(), [&]<class From>() {
    detail::visit_dtype(to, [&]<class To>() {
      detail::map_unary<To, From>(out, x, [](From value) { return detail::convert<To>(value); });
    });
  });
  return out;
}

}  // namespace linnet::tensor
