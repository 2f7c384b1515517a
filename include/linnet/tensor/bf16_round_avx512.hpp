// float_to_bf16_bits (half.hpp) on 16 f32 lanes at once: round to nearest
// even, a NaN made quiet. The one AVX-512 form of that rule, for the files
// compiled with -mavx512f -mavx512bw (the exact bf16 sums in
// src/tensor/exact_sum_avx512.cpp; the grouped experts' scatter and the
// experts' combine in src/ops): only such files may include this header.
// Its functions are in an unnamed namespace, so every file keeps its own
// copy and none can become the copy a file built for any x86-64 calls.
#pragma once

#include <immintrin.h>

namespace linnet::tensor::avx512 {
namespace {

// Each lane's upper half holds the bf16 rounding of the lane's f32 value
// (the lower half is left over): bits + 0x7FFF plus the lowest kept bit for
// a number, the bits with the quiet bit set for a NaN.
inline __m512i round_to_bf16_upper(__m512 values) {
  const __m512i bits = _mm512_castps_si512(values);
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
  const __m512i kept_low = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(kept_low, _mm512_set1_epi32(0x7FFF)));
  const __m512i quiet = _mm512_or_si512(bits, _mm512_set1_epi32(0x00400000));
  return _mm512_mask_blend_epi32(nan, rounded, quiet);
}

// The 16 results as bf16 bits (words).
inline __m256i round_to_bf16_bits(__m512 values) {
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(round_to_bf16_upper(values), 16));
}

// The 16 results widened back to f32 (exact).
inline __m512 round_to_bf16(__m512 values) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(round_to_bf16_upper(values), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

}  // namespace
}  // namespace linnet::tensor::avx512
