// The AVX-512 form of exact_steps (exact_sum_internal.hpp): 64 outputs in
// four zmm registers, the bf16 rounding done on the f32 bits exactly as
// float_to_bf16_bits does it (nearest even; NaN kept, made quiet).
// Compiled with -mavx512f; called only when the CPU has it.
// g++ 12's AVX-512 intrinsics trip -Wuninitialized in their own header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "exact_sum_internal.hpp"

namespace linnet::tensor::detail {
namespace {

inline __m512 round_to_bf16(__m512 value) {
  const __m512i bits = _mm512_castps_si512(value);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_and_si512(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), high);
  const __m512i quiet = _mm512_and_si512(_mm512_or_si512(bits, _mm512_set1_epi32(0x00400000)), high);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(nan, rounded, quiet));
}

}  // namespace

void exact_steps_avx512(float* acc, const uint16_t* a, const float* tile, int64_t count) {
  static_assert(kExactTileOutputs == 64, "four registers of 16 outputs");
  __m512 sums[4];
  for (int v = 0; v < 4; ++v) sums[v] = _mm512_loadu_ps(acc + 16 * v);
  for (int64_t k = 0; k < count; ++k) {
    const __m512 weight = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(a[k]) << 16)));
    const float* row = tile + k * kExactTileOutputs;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const __m512 product = round_to_bf16(_mm512_mul_ps(weight, _mm512_loadu_ps(row + 16 * v)));
      sums[v] = round_to_bf16(_mm512_add_ps(sums[v], product));
    }
  }
  for (int v = 0; v < 4; ++v) _mm512_storeu_ps(acc + 16 * v, sums[v]);
}

}  // namespace linnet::tensor::detail
