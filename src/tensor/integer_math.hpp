// Internal: integer arithmetic with Linnet's semantics and no undefined
// behaviour. Results wrap at the type's width (two's complement); division
// and remainder truncate toward zero (the caller has ruled out a zero
// divisor); shifts by a count outside [0, bits) shift every bit out.
#pragma once

#include <type_traits>

namespace linnet::tensor::detail {

// Unsigned arithmetic of at least `unsigned int` width: types narrower than
// int would otherwise be promoted to (signed) int, where overflow is UB.
template <class I>
using WrapWord = std::conditional_t<(sizeof(I) < sizeof(unsigned)), unsigned, std::make_unsigned_t<I>>;

// Converting the wrapped unsigned value back is modular in C++20.
template <class I>
inline I wrapping_add(I a, I b) {
  return static_cast<I>(static_cast<WrapWord<I>>(a) + static_cast<WrapWord<I>>(b));
}
template <class I>
inline I wrapping_sub(I a, I b) {
  return static_cast<I>(static_cast<WrapWord<I>>(a) - static_cast<WrapWord<I>>(b));
}
template <class I>
inline I wrapping_mul(I a, I b) {
  return static_cast<I>(static_cast<WrapWord<I>>(a) * static_cast<WrapWord<I>>(b));
}
template <class I>
inline I wrapping_neg(I a) {
  return static_cast<I>(WrapWord<I>{0} - static_cast<WrapWord<I>>(a));
}

// a / b truncated toward zero; MIN / -1 wraps to MIN.
template <class I>
inline I truncating_div(I a, I b) {
  if constexpr (std::is_signed_v<I>) {
    if (b == -1) return wrapping_neg(a);
  }
  return static_cast<I>(a / b);
}

// a % b with the sign of a (truncating division); MIN % -1 is 0.
template <class I>
inline I truncating_rem(I a, I b) {
  if constexpr (std::is_signed_v<I>) {
    if (b == -1) return I{0};
  }
  return static_cast<I>(a % b);
}

// base ** exponent with wrapping. A negative exponent gives the truncated
// value of 1 / base**|exponent|: 1 for base 1, +-1 for base -1, else 0.
template <class I>
inline I wrapping_pow(I base, I exponent) {
  if constexpr (std::is_signed_v<I>) {
    if (exponent < 0) {
      if (base == 1) return I{1};
      if (base == -1) return (exponent & 1) ? I{-1} : I{1};
      return I{0};
    }
  }
  I result{1};
  auto remaining = static_cast<std::make_unsigned_t<I>>(exponent);
  while (remaining != 0) {
    if (remaining & 1u) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    remaining >>= 1;
  }
  return result;
}

template <class I>
inline bool shift_count_outside(I count) {
  constexpr I kBits = static_cast<I>(sizeof(I) * 8);
  if constexpr (std::is_signed_v<I>) {
    if (count < 0) return true;
  }
  return count >= kBits;
}

template <class I>
inline I shift_left(I value, I count) {
  if (shift_count_outside(count)) return I{0};
  return static_cast<I>(static_cast<WrapWord<I>>(static_cast<std::make_unsigned_t<I>>(value)) << count);
}

// Arithmetic for signed types (C++20 defines >> on negative values so), logical for unsigned.
template <class I>
inline I shift_right(I value, I count) {
  if (shift_count_outside(count)) {
    if constexpr (std::is_signed_v<I>) return value < 0 ? I{-1} : I{0};
    return I{0};
  }
  return static_cast<I>(value >> count);
}

}  // namespace linnet::tensor::detail
