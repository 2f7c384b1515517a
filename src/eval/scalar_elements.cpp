// Typed scalars as bare elements: conversions and the operators, computed
// with the tensor kernels' own element rules (see scalar_elements.hpp).
#include "scalar_elements.hpp"

#include <cstring>

// The kernels' own element rules: sharing them keeps a scalar step
// bit-identical to the same step on a tensor.
#include "linnet/tensor/element_arithmetic.hpp"

namespace linnet::eval::scalar_elements {

namespace {

namespace rules = tensor::elements;
using tensor::BinaryOp;
using tensor::DType;
using tensor::UnaryOp;

template <class S>
S element_as(const Element& element) {
  // f16_t/bf16_t have a default constructor but are plain bits: copy bytes.
  S value{};
  std::memcpy(static_cast<void*>(&value), &element.bits, sizeof(S));
  return value;
}

template <class S>
Element element_of(S value) {
  Element element{rules::dtype_of_storage<S>, 0};
  std::memcpy(&element.bits, static_cast<const void*>(&value), sizeof(S));
  return element;
}

// op(a, b) stored as the kernel stores it (kernels_binary.cpp).
template <class S>
std::optional<Element> binary_typed(BinaryOp op, S a, S b) {
  const rules::compute_t<S> x = rules::load(a), y = rules::load(b);
  if constexpr (rules::is_integer_storage_v<S>) {
    // The kernel refuses a zero divisor; the caller's tensor path reports it.
    if ((op == BinaryOp::Div || op == BinaryOp::Rem) && y == 0) return std::nullopt;
  }
  return rules::visit_binary_rule<S>(
      op, [&]<class Out>(auto rule) { return std::optional<Element>(element_of(rules::store<Out>(rule(x, y)))); },
      [] { return std::optional<Element>(); });
}

// op(value) stored as the kernel stores it (kernels_unary.cpp).
template <class S>
std::optional<Element> unary_typed(UnaryOp op, S value) {
  const rules::compute_t<S> v = rules::load(value);
  return rules::visit_unary_rule<S>(
      op, [&]<class Out>(auto rule) { return std::optional<Element>(element_of(rules::store<Out>(rule(v)))); },
      [] { return std::optional<Element>(); });
}

}  // namespace

Element from_scalar(DType dtype, const tensor::Scalar& value) {
  return rules::visit_dtype(dtype, [&]<class S>() { return element_of(rules::scalar_to<S>(value)); });
}

tensor::Scalar to_scalar(const Element& element) {
  return rules::visit_dtype(element.dtype, [&]<class S>() { return rules::to_scalar(element_as<S>(element)); });
}

tensor::Tensor to_tensor(const Element& element) {
  tensor::Tensor result = tensor::Tensor::empty(element.dtype, {});
  std::memcpy(result.raw_mutable_data(), &element.bits, tensor::dtype_size(element.dtype));
  return result;
}

Element of_tensor(const tensor::Tensor& scalar) {
  Element element{scalar.dtype(), 0};
  std::memcpy(&element.bits, scalar.raw_data(), tensor::dtype_size(element.dtype));
  return element;
}

std::optional<Element> binary(BinaryOp op, const Element& a, const Element& b) {
  if (a.dtype != b.dtype) return std::nullopt;
  return rules::visit_dtype(a.dtype,
                            [&]<class S>() { return binary_typed<S>(op, element_as<S>(a), element_as<S>(b)); });
}

std::optional<Element> unary(UnaryOp op, const Element& x) {
  return rules::visit_dtype(x.dtype, [&]<class S>() { return unary_typed<S>(op, element_as<S>(x)); });
}

}  // namespace linnet::eval::scalar_elements
