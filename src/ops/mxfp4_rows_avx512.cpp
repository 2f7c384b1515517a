// The MXFP4 row kernel on AVX-512 (F + VL, and BW for the decoder): eight f32 lanes in ymm
// registers (the documented order has eight lanes), the 16 values of a
// group's scale looked up with one two-table permutation (vpermt2ps).
// Compiled with -mavx512f -mavx512vl -mavx512bw -mavx2 -ffp-contract=off; called only
// when the CPU has AVX-512 (mxfp4_experts.cpp).
#include <immintrin.h>

#include "mxfp4_rows.hpp"

namespace linnet::ops::detail {
namespace {

struct Lookup {
  // Lane l: table[codes[l] & 15]; vpermt2ps reads the low four index bits only.
  static __m256 values(__m256i codes, const float* table) {
    return _mm256_permutex2var_ps(_mm256_loadu_ps(table), codes, _mm256_loadu_ps(table + 8));
  }
};

#include "mxfp4_rows.inc"

#include "mxfp4_decode_avx512.inc"

}  // namespace

void mxfp4_rows_avx512(const Mxfp4Rows& problem) { run_rows(problem); }

void mxfp4_decode_avx512(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                     bool bf16, void* out) {
  if (bf16) {
    decode_groups_bf16(blocks, scales, values / 32, mxfp4_value_table_bf16(), static_cast<uint16_t*>(out));
  } else {
    decode_groups_f32(blocks, scales, values / 32, value_table, static_cast<float*>(out));
  }
}

}  // namespace linnet::ops::detail
