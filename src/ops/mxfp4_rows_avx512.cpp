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

// Whole groups decoded 32 values at a time in zmm registers (AVX-512BW),
// for the grouped products, which decode every weight tile they multiply.
// A block's 16 bytes widen to 16 dword lanes; lane j holds value 2j's code
// (its low nibble) and value 2j + 1's (its high nibble). Same table, same
// bits as decode_rows.
void decode_groups_f32(const uint8_t* blocks, const uint8_t* scales, int64_t groups, const float* value_table,
                       float* out) {
  const __m512i low_nibble = _mm512_set1_epi32(0x0F);
  // Values 0..15 are lanes 0..7 of (low, high) interleaved; values 16..31 lanes 8..15.
  const __m512i first_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second_half = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (int64_t group = 0; group < groups; ++group) {
    const __m512 table = _mm512_loadu_ps(value_table + scales[group] * 16);
    const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + group * 16)));
    const __m512i low = _mm512_and_si512(bytes, low_nibble), high = _mm512_srli_epi32(bytes, 4);
    _mm512_storeu_ps(out + group * 32, _mm512_permutexvar_ps(_mm512_permutex2var_epi32(low, first_half, high), table));
    _mm512_storeu_ps(out + group * 32 + 16,
                     _mm512_permutexvar_ps(_mm512_permutex2var_epi32(low, second_half, high), table));
  }
}

// The bf16 bits: each table value's upper half (see decode_rows), picked
// by one 16-bit permutation over the word lanes (low word of lane j is
// value 2j, high word value 2j + 1).
void decode_groups_bf16(const uint8_t* blocks, const uint8_t* scales, int64_t groups, const float* value_table,
                        uint16_t* out) {
  const __m512i low_nibble = _mm512_set1_epi32(0x0F);
  for (int64_t group = 0; group < groups; ++group) {
    const __m512i table_f32 = _mm512_loadu_si512(value_table + scales[group] * 16);
    const __m512i table = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(_mm512_srli_epi32(table_f32, 16)));
    const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + group * 16)));
    const __m512i codes =
        _mm512_or_si512(_mm512_and_si512(bytes, low_nibble), _mm512_slli_epi32(_mm512_srli_epi32(bytes, 4), 16));
    _mm512_storeu_si512(out + group * 32, _mm512_permutexvar_epi16(codes, table));
  }
}

}  // namespace

void mxfp4_rows_avx512(const Mxfp4Rows& problem) { run_rows(problem); }

void mxfp4_decode_avx512(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                     bool bf16, void* out) {
  if (bf16) {
    decode_groups_bf16(blocks, scales, values / 32, value_table, static_cast<uint16_t*>(out));
  } else {
    decode_groups_f32(blocks, scales, values / 32, value_table, static_cast<float*>(out));
  }
}

}  // namespace linnet::ops::detail
