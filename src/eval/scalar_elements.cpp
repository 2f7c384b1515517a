// Typed scalars as bare elements: conversions and the operators, computed
// with the tensor kernels' own element rules (see scalar_elements.hpp).
#include "scalar_elements.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

// The kernels' element types, loads, stores and integer arithmetic: sharing
// them keeps a scalar step bit-identical to the same step on a tensor.
#include "../tensor/dispatch.hpp"
#include "../tensor/integer_math.hpp"

namespace linnet::eval::scalar_elements {

namespace {

using tensor::BinaryOp;
using tensor::DType;
using tensor::UnaryOp;
using tensor::detail::bool8_t;
using tensor::detail::compute_t;

template <class S>
S element_as(const Element& element) {
  // f16_t/bf16_t have a default constructor but are plain bits: copy bytes.
  S value{};
  std::memcpy(static_cast<void*>(&value), &element.bits, sizeof(S));
  return value;
}

template <class S>
Element element_of(S value) {
  Element element{tensor::detail::dtype_of_storage<S>, 0};
  std::memcpy(&element.bits, static_cast<const void*>(&value), sizeof(S));
  return element;
}

// op(x, y) stored as S (or as bool for a comparison), as kernels_binary.cpp computes it.
template <class S>
std::optional<Element> binary_typed(BinaryOp op, S a, S b) {
  using C = compute_t<S>;
  using tensor::detail::load;
  using tensor::detail::store;
  const C x = load(a);
  const C y = load(b);
  const auto result = [](C value) { return std::optional<Element>(element_of(store<S>(value))); };
  const auto truth = [](bool value) { return std::optional<Element>(element_of(store<bool8_t>(value))); };
  switch (op) {
    case BinaryOp::Eq: return truth(x == y);
    case BinaryOp::Ne: return truth(x != y);
    case BinaryOp::Lt: return truth(x < y);
    case BinaryOp::Le: return truth(x <= y);
    case BinaryOp::Gt: return truth(x > y);
    case BinaryOp::Ge: return truth(x >= y);
    default: break;
  }
  if constexpr (tensor::detail::is_bool_storage_v<S>) {
    switch (op) {
      case BinaryOp::And: return result(x && y);
      case BinaryOp::Or: return result(x || y);
      case BinaryOp::Xor: return result(x != y);
      default: return std::nullopt;
    }
  } else if constexpr (tensor::detail::is_integer_storage_v<S>) {
    namespace d = tensor::detail;
    switch (op) {
      case BinaryOp::Add: return result(d::wrapping_add(x, y));
      case BinaryOp::Sub: return result(d::wrapping_sub(x, y));
      case BinaryOp::Mul: return result(d::wrapping_mul(x, y));
      case BinaryOp::Div:
        if (y == C{0}) return std::nullopt;
        return result(d::truncating_div(x, y));
      case BinaryOp::Rem:
        if (y == C{0}) return std::nullopt;
        return result(d::truncating_rem(x, y));
      case BinaryOp::Min: return result(y < x ? y : x);
      case BinaryOp::Max: return result(x < y ? y : x);
      case BinaryOp::Pow: return result(d::wrapping_pow(x, y));
      case BinaryOp::And: return result(static_cast<C>(x & y));
      case BinaryOp::Or: return result(static_cast<C>(x | y));
      case BinaryOp::Xor: return result(static_cast<C>(x ^ y));
      case BinaryOp::Shl: return result(d::shift_left(x, y));
      case BinaryOp::Shr: return result(d::shift_right(x, y));
      default: return std::nullopt;
    }
  } else {
    switch (op) {
      case BinaryOp::Add: return result(x + y);
      case BinaryOp::Sub: return result(x - y);
      case BinaryOp::Mul: return result(x * y);
      case BinaryOp::Div: return result(x / y);
      case BinaryOp::Rem: return result(std::fmod(x, y));
      case BinaryOp::Min: return result(x != x ? x : (y != y ? y : (y < x ? y : x)));
      case BinaryOp::Max: return result(x != x ? x : (y != y ? y : (x < y ? y : x)));
      case BinaryOp::Pow: return result(std::pow(x, y));
      default: return std::nullopt;
    }
  }
}

template <class S>
std::optional<Element> unary_typed(UnaryOp op, S value) {
  using C = compute_t<S>;
  using tensor::detail::load;
  using tensor::detail::store;
  const C v = load(value);
  if constexpr (tensor::detail::is_bool_storage_v<S>) {
    if (op == UnaryOp::Not) return element_of(store<S>(!v));
  } else if constexpr (tensor::detail::is_integer_storage_v<S>) {
    if (op == UnaryOp::Neg) return element_of(store<S>(tensor::detail::wrapping_neg(v)));
    if (op == UnaryOp::Not) return element_of(store<S>(static_cast<C>(~v)));
  } else {
    if (op == UnaryOp::Neg) return element_of(store<S>(-v));
  }
  return std::nullopt;
}

}  // namespace

Element from_scalar(DType dtype, const tensor::Scalar& value) {
  return tensor::detail::visit_dtype(dtype, [&]<class S>() { return element_of(tensor::detail::scalar_to<S>(value)); });
}

tensor::Scalar to_scalar(const Element& element) {
  return tensor::detail::visit_dtype(element.dtype,
                                     [&]<class S>() { return tensor::detail::to_scalar(element_as<S>(element)); });
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
  return tensor::detail::visit_dtype(
      a.dtype, [&]<class S>() { return binary_typed<S>(op, element_as<S>(a), element_as<S>(b)); });
}

std::optional<Element> unary(UnaryOp op, const Element& x) {
  return tensor::detail::visit_dtype(x.dtype, [&]<class S>() { return unary_typed<S>(op, element_as<S>(x)); });
}

}  // namespace linnet::eval::scalar_elements
