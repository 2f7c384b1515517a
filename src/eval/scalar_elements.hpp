// Internal: typed scalars (rank-0 values such as an `i32` loop counter) held
// as one element's bits instead of in tensor storage, and the operators on
// them. Scalar loops then allocate nothing per step. Every function computes
// what the tensor kernels compute on rank-0 tensors, with the same element
// types, rounding and operator rules (linnet/tensor/element_arithmetic.hpp);
// where a kernel would refuse (an unsupported operator, an integer division by
// zero) they answer nullopt and the caller takes the tensor path, which
// reports it.
#pragma once

#include <cstdint>
#include <optional>

#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/scalar.hpp"

namespace linnet::eval::scalar_elements {

// One element: its dtype and its bytes as tensor storage holds them (in
// the low bytes of `bits`, the rest zero).
struct Element {
  tensor::DType dtype = tensor::DType::Bool;
  uint64_t bits = 0;
};

// `value` converted to `dtype` by the cast rules (as Tensor::scalar does).
Element from_scalar(tensor::DType dtype, const tensor::Scalar& value);
// The exact value of an element.
tensor::Scalar to_scalar(const Element& element);
// A new rank-0 tensor holding the element.
tensor::Tensor to_tensor(const Element& element);
// The element of a rank-0 tensor.
Element of_tensor(const tensor::Tensor& scalar);

// tensor::binary(op, a, b) on two elements of one dtype.
std::optional<Element> binary(tensor::BinaryOp op, const Element& a, const Element& b);
// tensor::unary(op, x) on one element.
std::optional<Element> unary(tensor::UnaryOp op, const Element& x);

}  // namespace linnet::eval::scalar_elements
