// The element rules of the tensor kernels, one definition for every caller:
// the storage type of each dtype, the type its arithmetic happens in, loads
// and stores (the one rounding of a bf16/f16 result), the cast rules, integer
// arithmetic with Linnet's semantics and no undefined behaviour, and the
// element function of each elementwise operator. The kernels apply them to
// every element of a tensor (src/tensor/kernels_binary.cpp, ...); the
// evaluator applies them to a typed scalar held as a bare element
// (src/eval/scalar_elements.cpp), which is therefore bit-identical to the
// same step on a rank-0 tensor.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "linnet/tensor/dtype.hpp"
#include "linnet/tensor/element.hpp"
#include "linnet/tensor/error.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/scalar.hpp"

namespace linnet::tensor::elements {

// ---------------------------------------------------------------- element types

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
    if constexpr (std::is_floating_point_v<CF>) return detail::saturating_float_to_int<CT>(v);  // scalar.hpp
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

// ---------------------------------------------------------------- integer arithmetic
//
// Results wrap at the type's width (two's complement); division and
// remainder truncate toward zero (the caller has ruled out a zero divisor);
// shifts by a count outside [0, bits) shift every bit out.

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

// ---------------------------------------------------------------- operators

// Calls visit.template operator()<Out>(rule), where `rule` computes `op` on
// two values of S's compute type and Out is the storage type its result is
// stored as (bool8_t for a comparison, else S); returns missing() when `op`
// does not apply to S. An integer Div or Rem needs a nonzero divisor, which
// the caller checks.
template <class S, class Visit, class Missing>
auto visit_binary_rule(BinaryOp op, Visit&& visit, Missing&& missing) -> decltype(missing()) {
  using C = compute_t<S>;
  switch (op) {
    case BinaryOp::Eq: return visit.template operator()<bool8_t>([](C x, C y) { return x == y; });
    case BinaryOp::Ne: return visit.template operator()<bool8_t>([](C x, C y) { return x != y; });
    case BinaryOp::Lt: return visit.template operator()<bool8_t>([](C x, C y) { return x < y; });
    case BinaryOp::Le: return visit.template operator()<bool8_t>([](C x, C y) { return x <= y; });
    case BinaryOp::Gt: return visit.template operator()<bool8_t>([](C x, C y) { return x > y; });
    case BinaryOp::Ge: return visit.template operator()<bool8_t>([](C x, C y) { return x >= y; });
    default: break;
  }
  if constexpr (is_bool_storage_v<S>) {
    switch (op) {
      case BinaryOp::And: return visit.template operator()<S>([](bool x, bool y) { return x && y; });
      case BinaryOp::Or: return visit.template operator()<S>([](bool x, bool y) { return x || y; });
      case BinaryOp::Xor: return visit.template operator()<S>([](bool x, bool y) { return x != y; });
      default: return missing();
    }
  } else if constexpr (is_integer_storage_v<S>) {
    switch (op) {
      case BinaryOp::Add: return visit.template operator()<S>([](C x, C y) { return wrapping_add(x, y); });
      case BinaryOp::Sub: return visit.template operator()<S>([](C x, C y) { return wrapping_sub(x, y); });
      case BinaryOp::Mul: return visit.template operator()<S>([](C x, C y) { return wrapping_mul(x, y); });
      case BinaryOp::Div: return visit.template operator()<S>([](C x, C y) { return truncating_div(x, y); });
      case BinaryOp::Rem: return visit.template operator()<S>([](C x, C y) { return truncating_rem(x, y); });
      case BinaryOp::Min: return visit.template operator()<S>([](C x, C y) { return y < x ? y : x; });
      case BinaryOp::Max: return visit.template operator()<S>([](C x, C y) { return x < y ? y : x; });
      case BinaryOp::Pow: return visit.template operator()<S>([](C x, C y) { return wrapping_pow(x, y); });
      case BinaryOp::And: return visit.template operator()<S>([](C x, C y) { return static_cast<C>(x & y); });
      case BinaryOp::Or: return visit.template operator()<S>([](C x, C y) { return static_cast<C>(x | y); });
      case BinaryOp::Xor: return visit.template operator()<S>([](C x, C y) { return static_cast<C>(x ^ y); });
      case BinaryOp::Shl: return visit.template operator()<S>([](C x, C y) { return shift_left(x, y); });
      case BinaryOp::Shr: return visit.template operator()<S>([](C x, C y) { return shift_right(x, y); });
      default: return missing();
    }
  } else {
    switch (op) {
      case BinaryOp::Add: return visit.template operator()<S>([](C x, C y) { return x + y; });
      case BinaryOp::Sub: return visit.template operator()<S>([](C x, C y) { return x - y; });
      case BinaryOp::Mul: return visit.template operator()<S>([](C x, C y) { return x * y; });
      case BinaryOp::Div: return visit.template operator()<S>([](C x, C y) { return x / y; });
      case BinaryOp::Rem: return visit.template operator()<S>([](C x, C y) { return std::fmod(x, y); });
      // A NaN operand gives NaN (std::fmin/fmax would drop it).
      case BinaryOp::Min:
        return visit.template operator()<S>([](C x, C y) { return x != x ? x : (y != y ? y : (y < x ? y : x)); });
      case BinaryOp::Max:
        return visit.template operator()<S>([](C x, C y) { return x != x ? x : (y != y ? y : (x < y ? y : x)); });
      case BinaryOp::Pow: return visit.template operator()<S>([](C x, C y) { return std::pow(x, y); });
      default: return missing();
    }
  }
}

// The same for a unary operator: `rule` computes `op` on one compute value.
template <class S, class Visit, class Missing>
auto visit_unary_rule(UnaryOp op, Visit&& visit, Missing&& missing) -> decltype(missing()) {
  using C = compute_t<S>;
  if constexpr (is_bool_storage_v<S>) {
    if (op == UnaryOp::Not) return visit.template operator()<S>([](bool v) { return !v; });
    return missing();
  } else if constexpr (is_integer_storage_v<S>) {
    switch (op) {
      case UnaryOp::Neg: return visit.template operator()<S>([](C v) { return wrapping_neg(v); });
      case UnaryOp::Abs:
        if constexpr (std::is_signed_v<C>) return visit.template operator()<S>([](C v) { return v < 0 ? wrapping_neg(v) : v; });
        else return visit.template operator()<S>([](C v) { return v; });
      case UnaryOp::Sign:
        if constexpr (std::is_signed_v<C>) {
          return visit.template operator()<S>([](C v) { return static_cast<C>((v > 0) - (v < 0)); });
        } else {
          return visit.template operator()<S>([](C v) { return static_cast<C>(v != 0); });
        }
      case UnaryOp::Not: return visit.template operator()<S>([](C v) { return static_cast<C>(~v); });
      default: return missing();
    }
  } else {
    switch (op) {
      case UnaryOp::Neg: return visit.template operator()<S>([](C v) { return -v; });
      case UnaryOp::Abs: return visit.template operator()<S>([](C v) { return std::fabs(v); });
      case UnaryOp::Sign:
        return visit.template operator()<S>([](C v) { return v != v ? v : static_cast<C>((v > C(0)) - (v < C(0))); });
      case UnaryOp::Exp: return visit.template operator()<S>([](C v) { return std::exp(v); });
      case UnaryOp::Log: return visit.template operator()<S>([](C v) { return std::log(v); });
      case UnaryOp::Log1p: return visit.template operator()<S>([](C v) { return std::log1p(v); });
      case UnaryOp::Expm1: return visit.template operator()<S>([](C v) { return std::expm1(v); });
      case UnaryOp::Sqrt: return visit.template operator()<S>([](C v) { return std::sqrt(v); });
      case UnaryOp::Rsqrt: return visit.template operator()<S>([](C v) { return C(1) / std::sqrt(v); });
      case UnaryOp::Reciprocal: return visit.template operator()<S>([](C v) { return C(1) / v; });
      case UnaryOp::Sin: return visit.template operator()<S>([](C v) { return std::sin(v); });
      case UnaryOp::Cos: return visit.template operator()<S>([](C v) { return std::cos(v); });
      case UnaryOp::Tan: return visit.template operator()<S>([](C v) { return std::tan(v); });
      case UnaryOp::Tanh: return visit.template operator()<S>([](C v) { return std::tanh(v); });
      case UnaryOp::Sigmoid: return visit.template operator()<S>([](C v) { return C(1) / (C(1) + std::exp(-v)); });
      case UnaryOp::Erf: return visit.template operator()<S>([](C v) { return std::erf(v); });
      case UnaryOp::Floor: return visit.template operator()<S>([](C v) { return std::floor(v); });
      case UnaryOp::Ceil: return visit.template operator()<S>([](C v) { return std::ceil(v); });
      case UnaryOp::Round: return visit.template operator()<S>([](C v) { return std::nearbyint(v); });  // ties to even
      case UnaryOp::Trunc: return visit.template operator()<S>([](C v) { return std::trunc(v); });
      case UnaryOp::IsNan: return visit.template operator()<bool8_t>([](C v) { return v != v; });
      case UnaryOp::Not: return missing();
    }
    return missing();
  }
}

}  // namespace linnet::tensor::elements
