// The weighted sum over each row's expert slots (mxfp4_combine_experts),
// 16 outputs per step in zmm registers, for CPUs with AVX-512 (F + BW + VL;
// mxfp4_experts.cpp chooses). Compiled without contraction: each term is a
// multiplication then an addition, as the portable loop computes it.
#include <immintrin.h>

#include <cstdint>

#include "linnet/tensor/bf16_round_avx512.hpp"
#include "mxfp4_rows.hpp"

namespace linnet::ops::detail {

void mxfp4_combine_rows_avx512(const float* products, const float* mixing, int64_t first_row, int64_t last_row,
                               int64_t slots, int64_t out_rows, float* out_f32, uint16_t* out_bf16) {
  for (int64_t row = first_row; row < last_row; ++row) {
    const float* weights = mixing + row * slots;
    const float* first_product = products + row * slots * out_rows;
    for (int64_t o = 0; o < out_rows; o += 16) {
      const int64_t left = out_rows - o;
      const __mmask16 lanes = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
      __m512 total = _mm512_setzero_ps();
      for (int64_t slot = 0; slot < slots; ++slot) {
        const __m512 product = _mm512_maskz_loadu_ps(lanes, first_product + slot * out_rows + o);
        total = _mm512_add_ps(total, _mm512_mul_ps(_mm512_set1_ps(weights[slot]), product));
      }
      if (out_bf16 != nullptr) {
        _mm256_mask_storeu_epi16(out_bf16 + row * out_rows + o, lanes, tensor::avx512::round_to_bf16_bits(total));
      } else {
        _mm512_mask_storeu_ps(out_f32 + row * out_rows + o, lanes, total);
      }
    }
  }
}

}  // namespace linnet::ops::detail
