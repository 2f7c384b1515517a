// rms_norm's per-element step on bf16 rows in zmm registers (see
// norm_vector.hpp). Compiled with -mavx512f -mavx512bw -mavx512vl
// -ffp-contract=off; called only when the CPU has them (kernels_norm.cpp).
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_*()`, which -Wuninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "linnet/tensor/bf16_round_avx512.hpp"
#include "norm_vector.hpp"

namespace linnet::ops::detail {

void rms_scale_row_bf16_avx512(const uint16_t* in, const float* gain, float inverse_rms, uint16_t* out,
                               int64_t count) {
  const __m512 scale = _mm512_set1_ps(inverse_rms);
  for (int64_t at = 0; at < count; at += 16) {
    const int64_t left = count - at;
    const auto lanes = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
    const __m512i bits = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(lanes, in + at));
    const __m512 values = _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16));
    const __m512 normalized = tensor::avx512::round_to_bf16(_mm512_mul_ps(values, scale));
    const __m512 weighted = _mm512_mul_ps(normalized, _mm512_maskz_loadu_ps(lanes, gain + at));
    _mm256_mask_storeu_epi16(out + at, lanes, tensor::avx512::round_to_bf16_bits(weighted));
  }
}

}  // namespace linnet::ops::detail
