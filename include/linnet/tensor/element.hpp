// The C++ types that hold one element of each dtype in memory, and the map
// from a C++ type to its dtype (used by Tensor::from_vector / to_vector).
#pragma once

#include <cstdint>
#include <type_traits>

#include "linnet/tensor/dtype.hpp"
#include "linnet/tensor/half.hpp"

namespace linnet::tensor {

// A bf16 element as stored: the upper 16 bits of an IEEE f32.
struct bf16_t {
  uint16_t bits = 0;
  static bf16_t from_float(float value) { return bf16_t{float_to_bf16_bits(value)}; }
  float to_float() const { return bf16_bits_to_float(bits); }
};

// An f16 element as stored: IEEE binary16.
struct f16_t {
  uint16_t bits = 0;
  static f16_t from_float(float value) { return f16_t{float_to_f16_bits(value)}; }
  float to_float() const { return f16_bits_to_float(bits); }
};

static_assert(sizeof(bf16_t) == 2 && sizeof(f16_t) == 2);
static_assert(sizeof(bool) == 1, "bool tensors store one byte per element");

template <class T>
struct dtype_of_t;
template <> struct dtype_of_t<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of_t<int8_t> { static constexpr DType value = DType::I8; };
template <> struct dtype_of_t<int16_t> { static constexpr DType value = DType::I16; };
template <> struct dtype_of_t<int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of_t<int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of_t<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct dtype_of_t<uint16_t> { static constexpr DType value = DType::U16; };
template <> struct dtype_of_t<uint32_t> { static constexpr DType value = DType::U32; };
template <> struct dtype_of_t<uint64_t> { static constexpr DType value = DType::U64; };
template <> struct dtype_of_t<f16_t> { static constexpr DType value = DType::F16; };
template <> struct dtype_of_t<bf16_t> { static constexpr DType value = DType::BF16; };
template <> struct dtype_of_t<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of_t<double> { static constexpr DType value = DType::F64; };

// dtype_of<float> == DType::F32, dtype_of<bf16_t> == DType::BF16, ...
template <class T>
inline constexpr DType dtype_of = dtype_of_t<std::remove_cv_t<T>>::value;

template <class T>
concept ElementType = requires { dtype_of_t<std::remove_cv_t<T>>::value; };

}  // namespace linnet::tensor
