// A single number of any kind, used where the runtime takes or gives one value
// (fill, literals, reading an element). It keeps the value exactly: a bool, a
// signed or unsigned 64-bit integer, or a double. Converting it to a dtype
// follows the cast rules of kernels.hpp.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "linnet/tensor/dtype.hpp"

namespace linnet::tensor {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, UInt, Float };

  Scalar() : Scalar(int64_t{0}) {}
  // Any C++ arithmetic value: bool stays Bool, signed integers become Int,
  // unsigned ones UInt, floating ones Float.
  template <class T>
    requires std::is_arithmetic_v<T>
  Scalar(T value) {  // NOLINT(google-explicit-constructor): a number is a scalar
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      int_ = value ? 1 : 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind_ = Kind::Float;
      float_ = static_cast<double>(value);
    } else if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::Int;
      int_ = static_cast<int64_t>(value);
    } else {
      kind_ = Kind::UInt;
      uint_ = static_cast<uint64_t>(value);
    }
  }

  Kind kind() const { return kind_; }
  bool is_float() const { return kind_ == Kind::Float; }

  // The dtype that holds this value exactly: bool, i64, u64 or f64.
  DType natural_dtype() const;

  // Plain C++ conversions of the held value (static_cast semantics, except
  // that a float converted to an integer type is truncated and saturated as
  // `cast` does, so that no conversion is undefined).
  template <class T>
    requires std::is_arithmetic_v<T>
  T to() const;

  std::string to_string() const;

  bool operator==(const Scalar& other) const = default;

 private:
  Kind kind_ = Kind::Int;
  int64_t int_ = 0;      // Bool (0/1) and Int
  uint64_t uint_ = 0;    // UInt
  double float_ = 0.0;   // Float
};

namespace detail {
// Truncates toward zero and saturates at the range of I; NaN gives 0.
template <class I, class F>
I saturating_float_to_int(F value) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  if (value != value) return I{0};
  // 2^(bits) for unsigned, 2^(bits-1) for signed: the first value past the range; exact in F.
  constexpr int value_bits = std::numeric_limits<I>::digits;
  const F upper = static_cast<F>(1ull << (value_bits - 1)) * F(2);  // 2^value_bits, exact
  F truncated = std::trunc(value);
  if (truncated >= upper) return std::numeric_limits<I>::max();
  if constexpr (std::is_signed_v<I>) {
    if (truncated < -upper) return std::numeric_limits<I>::min();
  } else {
    if (truncated < F(0)) return I{0};
  }
  return static_cast<I>(truncated);
}
}  // namespace detail

template <class T>
  requires std::is_arithmetic_v<T>
T Scalar::to() const {
  switch (kind_) {
    case Kind::Bool: return static_cast<T>(int_ != 0);
    case Kind::Int: return static_cast<T>(int_);
    case Kind::UInt: return static_cast<T>(uint_);
    case Kind::Float:
      if constexpr (std::is_same_v<T, bool>) return float_ != 0.0;
      else if constexpr (std::is_integral_v<T>) return detail::saturating_float_to_int<T>(float_);
      else return static_cast<T>(float_);
  }
  return T{};
}

}  // namespace linnet::tensor
