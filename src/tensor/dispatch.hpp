// Internal: the element types kernels instantiate for each dtype, the
// arithmetic ("compute") type each one is evaluated in, the conversions
// between them, and the switch from a runtime DType to a template argument.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "linnet/tensor/dtype.hpp"
#include "linnet/tensor/element.hpp"
#include "linnet/tensor/error.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/scalar.hpp"

namespace linnet::tensor::detail {

// Kernels read bool storage as bytes: a borrowed buffer may hold any nonzero
// byte for true, which would be undefined behaviour through a C++ bool.
struct bool8_t {
  uint8_t value;
};

// The storage type of each dtype inside kernels.
template <DType D> struct storage_of;
template <> struct storage_of<DType::Bool> { using type = bool8_t; };
template <> struct storage_of<DType::I8> { using type = int8_t; };
template <> struct storage_of<DType::I16> { using type = int16_t; };
template <> struct storage_of<DType::I32> { using type = int32_t; };
template <> struct storage_of<DType::I64> { using type = int64_t; };
template <> struct storage_of<DType::U8> { using type = uint8_t; };
template <> struct storage_of<DType::U16> { using type = uint16_t; };
template <> struct storage_of<DType::U32> { using type = uint32_t; };
template <> struct storage_of<DType::U64> { using type = uint64_t; };
template <> struct storage_of<DType::F16> { using type = f16_t; };
template <> struct storage_of<DType::BF16> { using type = bf16_t; };
template <> struct storage_of<DType::F32> { using type = float; };
template <> struct storage_of<DType::F64> { using type = double; };

template <class S> inline constexpr DType dtype_of_storage = dtype_of<S>;
template <> inline constexpr DType dtype_of_storage<bool8_t> = DType::Bool;

// The type arithmetic happens in: bf16/f16 widen to float, bool to bool.
template <class S> struct compute_of { using type = S; };
template <> struct compute_of<bool8_t> { using type = bool; };
template <> struct compute_of<bf16_t> { using type = float; };
template <> struct compute_of<f16_t> { using type = float; };
template <class S> using compute_t = typename compute_of<S>::type;

template <class S> inline constexpr bool is_half_v = std::is_same_v<S, bf16_t> || std::is_same_v<S, f16_t>;
template <class S> inline constexpr bool is_float_storage_v = is_half_v<S> || std::is_floating_point_v<S>;
template <class S> inline constexpr bool is_integer_storage_v = std::is_integral_v<S>;  // bool8_t is a struct
template <class S> inline constexpr bool is_bool_storage_v = std::is_same_v<S, bool8_t>;

template <class S>
inline compute_t<S> load(S value) {
  if constexpr (std::is_same_v<S, bool8_t>) return value.value != 0;
  else if constexpr (std::is_same_v<S, bf16_t>) return bf16_bits_to_float(value.bits);
  else if constexpr (std::is_same_v<S, f16_t>) return f16_bits_to_float(value.bits);
  else return value;
}

// Stores a value of S's compute type: the one rounding of a bf16/f16 result.
template <class S>
inline S store(compute_t<S> value) {
  if constexpr (std::is_same_v<S, bool8_t>) return bool8_t{static_cast<uint8_t>(value ? 1 : 0)};
  else if constexpr (std::is_same_v<S, bf16_t>) return bf16_t{float_to_bf16_bits(value)};
  else if constexpr (std::is_same_v<S, f16_t>) return f16_t{float_to_f16_bits(value)};
  else return value;
}

// Rounds a compute value to what S can hold (identity except for bf16/f16).
template <class S>
inline compute_t<S> round_to(compute_t<S> value) {
  if constexpr (is_half_v<S>) return load(store<S>(value));
  else return value;
}

// Converts an integer to double "to odd" (exactly when it fits in 53 bits,
// else truncated with the lowest significand bit forced to 1), so that one
// more nearest-even rounding to f32/bf16/f16 is the correctly rounded result.
template <class I>
inline double integer_to_double_round_to_odd(I value) {
  static_assert(std::is_integral_v<I>);
  if constexpr (sizeof(I) < 8) {
    return static_cast<double>(value);  // exact
  } else {
    const bool negative = value < 0;
    uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    if (magnitude < (uint64_t{1} << 53)) return static_cast<double>(value);
    const int top_bit = 63 - std::countl_zero(magnitude);
    const int dropped = top_bit - 52;
    const uint64_t kept = magnitude >> dropped << dropped;
    double result = static_cast<double>(kept);  // exact: 53 significant bits
    if (kept != magnitude) result = std::bit_cast<double>(std::bit_cast<uint64_t>(result) | 1u);
    return negative ? -result : result;
  }
}

// One element of dtype From converted to dtype To by the cast rules.
template <class To, class From>
inline To convert(From value) {
  using CF = compute_t<From>;
  using CT = compute_t<To>;
  const CF v = load(value);
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (is_bool_storage_v<To>) {
    return store<To>(v != CF{});
  } else if constexpr (is_bool_storage_v<From>) {
    return store<To>(static_cast<CT>(v ? 1 : 0));
  } else if constexpr (is_half_v<To>) {
    uint16_t bits;
    if constexpr (std::is_same_v<CF, float>) {
      bits = std::is_same_v<To, bf16_t> ? float_to_bf16_bits(v) : float_to_f16_bits(v);
    } else {
      // f64 and integers: through double (rounded to odd), never twice to nearest.
      double wide;
      if constexpr (std::is_integral_v<CF>) wide = integer_to_double_round_to_odd(v);
      else wide = v;
      bits = std::is_same_v<To, bf16_t> ? double_to_bf16_bits(wide) : double_to_f16_bits(wide);
    }
    return To{bits};
  } else if constexpr (std::is_integral_v<CT>) {
    if constexpr (std::is_floating_point_v<CF>) return saturating_float_to_int<CT>(v);
    else return static_cast<CT>(v);  // integer -> integer wraps (C++20 modular conversion)
  } else {
    // Into f32/f64 from an integer or a float: the hardware conversion rounds once to nearest even.
    return static_cast<CT>(v);
  }
}

// A Scalar converted to storage type S by the cast rules.
template <class S>
inline S scalar_to(const Scalar& value) {
  switch (value.kind()) {
    case Scalar::Kind::Bool: return convert<S>(bool8_t{static_cast<uint8_t>(value.to<bool>() ? 1 : 0)});
    case Scalar::Kind::Int: return convert<S>(value.to<int64_t>());
    case Scalar::Kind::UInt: return convert<S>(value.to<uint64_t>());
    case Scalar::Kind::Float: return convert<S>(value.to<double>());
  }
  return S{};
}

// A storage value as a Scalar (exact).
template <class S>
inline Scalar to_scalar(S value) {
  const compute_t<S> v = load(value);
  if constexpr (std::is_same_v<compute_t<S>, bool>) return Scalar(v);
  else if constexpr (std::is_floating_point_v<compute_t<S>>) return Scalar(static_cast<double>(v));
  else if constexpr (std::is_signed_v<compute_t<S>>) return Scalar(static_cast<int64_t>(v));
  else return Scalar(static_cast<uint64_t>(v));
}

// Calls f.template operator()<S>() with S the storage type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f.template operator()<bool8_t>();
    case DType::I8: return f.template operator()<int8_t>();
    case DType::I16: return f.template operator()<int16_t>();
    case DType::I32: return f.template operator()<int32_t>();
    case DType::I64: return f.template operator()<int64_t>();
    case DType::U8: return f.template operator()<uint8_t>();
    case DType::U16: return f.template operator()<uint16_t>();
    case DType::U32: return f.template operator()<uint32_t>();
    case DType::U64: return f.template operator()<uint64_t>();
    case DType::F16: return f.template operator()<f16_t>();
    case DType::BF16: return f.template operator()<bf16_t>();
    case DType::F32: return f.template operator()<float>();
    case DType::F64: return f.template operator()<double>();
  }
  throw TensorError(ErrorKind::UnsupportedDType, "unknown dtype");
}

// Calls f.template operator()<U>() with U an unsigned integer of the given
// byte width: kernels that only move elements need no more than that.
template <class F>
decltype(auto) visit_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
  }
  throw TensorError(ErrorKind::UnsupportedDType, "unsupported element width " + std::to_string(bytes));
}

}  // namespace linnet::tensor::detail
