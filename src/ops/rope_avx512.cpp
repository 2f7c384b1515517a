// One row of `std.nn.rope` (kernels_rope.cpp) sixteen lanes at a time, for
// CPUs with AVX-512 (F + BW + VL): the scalar loop's operations in the same
// order, so the same bits. Out[d] = x[d] * cos[d] + turned[d] * sin[d], with
// turned[d] = -x[d + half] below half and x[d - half] from half on; in bf16
// both products are rounded to bf16 and so is their sum (the body's three
// roundings), in f32 nothing is rounded and nothing is fused (compiled with
// -ffp-contract=off; the intrinsics multiply, then add).
// g++ 12's AVX-512 intrinsics start from `_mm512_undefined_*()`, which
// -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

#include "linnet/tensor/bf16_round_avx512.hpp"
#include "rope_vector.hpp"

// Only code defined here runs with AVX-512 enabled: no standard-library
// templates or inline functions of shared headers (the linker could pick
// this file's copy of one for callers on any x86-64).
namespace linnet::ops::detail {

namespace {

__mmask16 first_lanes(int64_t count) { return static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u); }

__m512 negated(__m512 x) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
}

__m512 load_bf16(const uint16_t* p, __mmask16 lanes) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(lanes, p)), 16));
}

// Elements [first, end) of the row, each with its partner `partner` places
// on (negated when `negate`).
void part_f32(const float* in, const float* cos_row, const float* sin_row, float* out, int64_t first, int64_t end,
              int64_t partner, bool negate) {
  for (int64_t d = first; d < end; d += 16) {
    const __mmask16 lanes = first_lanes(end - d);
    const __m512 value = _mm512_maskz_loadu_ps(lanes, in + d);
    __m512 turned = _mm512_maskz_loadu_ps(lanes, in + d + partner);
    if (negate) turned = negated(turned);
    const __m512 sum = _mm512_add_ps(_mm512_mul_ps(value, _mm512_maskz_loadu_ps(lanes, cos_row + d)),
                                     _mm512_mul_ps(turned, _mm512_maskz_loadu_ps(lanes, sin_row + d)));
    _mm512_mask_storeu_ps(out + d, lanes, sum);
  }
}

void part_bf16(const uint16_t* in, const float* cos_row, const float* sin_row, uint16_t* out, int64_t first,
               int64_t end, int64_t partner, bool negate) {
  using tensor::avx512::round_to_bf16;
  for (int64_t d = first; d < end; d += 16) {
    const __mmask16 lanes = first_lanes(end - d);
    const __m512 value = load_bf16(in + d, lanes);
    __m512 turned = load_bf16(in + d + partner, lanes);
    if (negate) turned = negated(turned);
    const __m512 sum = _mm512_add_ps(round_to_bf16(_mm512_mul_ps(value, _mm512_maskz_loadu_ps(lanes, cos_row + d))),
                                     round_to_bf16(_mm512_mul_ps(turned, _mm512_maskz_loadu_ps(lanes, sin_row + d))));
    _mm256_mask_storeu_epi16(out + d, lanes, tensor::avx512::round_to_bf16_bits(sum));
  }
}

}  // namespace

void rope_row_f32_avx512(const float* in, const float* cos_row, const float* sin_row, float* out, int64_t length) {
  const int64_t half = length / 2;
  part_f32(in, cos_row, sin_row, out, 0, half, half, true);
  part_f32(in, cos_row, sin_row, out, half, length, -half, false);
}

void rope_row_bf16_avx512(const uint16_t* in, const float* cos_row, const float* sin_row, uint16_t* out,
                          int64_t length) {
  const int64_t half = length / 2;
  part_bf16(in, cos_row, sin_row, out, 0, half, half, true);
  part_bf16(in, cos_row, sin_row, out, half, length, -half, false);
}

}  // namespace linnet::ops::detail
