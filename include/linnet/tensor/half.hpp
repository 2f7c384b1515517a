// bf16 and f16 conversions. Narrowing rounds to nearest, ties to even (as
// PyTorch and NumPy do); NaN stays NaN. Widening is exact.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace linnet::tensor {

inline uint16_t float_to_bf16_bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Round to nearest even: add 0x7FFF plus the lowest kept bit, then truncate.
  uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline float bf16_bits_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

// Rounds an f32 to the nearest bf16 value, returned as f32.
inline float round_to_bf16(float value) { return bf16_bits_to_float(float_to_bf16_bits(value)); }

inline uint16_t float_to_f16_bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow (rounds to inf)
  if (magnitude < 0x38800000u) {
    // Subnormal or zero in f16: scale to a multiple of 2^-24 and round to nearest even.
    float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // exact: times 2^24
    float rounded = std::nearbyint(scaled);                       // default mode: ties to even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t rounding = 0xFFFu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rebased + rounding) >> 13));
}

inline float f16_bits_to_float(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline float round_to_f16(float value) { return f16_bits_to_float(float_to_f16_bits(value)); }

// Narrowing from f64 must round once, not twice (f64 -> f32 -> bf16 can land
// on a bf16 tie that the f64 value was not on). Rounding to f32 "to odd"
// first keeps enough information: f32 has more than two bits beyond bf16's
// and f16's significands, so a second, nearest-even rounding is then exact.
inline float double_to_float_round_to_odd(double value) {
  float nearest = static_cast<float>(value);
  if (static_cast<double>(nearest) == value || value != value) return nearest;
  uint32_t bits = std::bit_cast<uint32_t>(nearest);
  // Step back toward zero when the nearest f32 lies beyond the value, so that
  // `bits` is the truncation; then make its lowest bit 1 (inexact marker).
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(value)) bits -= 1;
  return std::bit_cast<float>(bits | 1u);
}

inline uint16_t double_to_bf16_bits(double value) { return float_to_bf16_bits(double_to_float_round_to_odd(value)); }
inline uint16_t double_to_f16_bits(double value) { return float_to_f16_bits(double_to_float_round_to_odd(value)); }

}  // namespace linnet::tensor
