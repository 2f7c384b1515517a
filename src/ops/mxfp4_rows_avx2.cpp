// The MXFP4 row kernel on AVX2: eight f32 lanes, the 16 values of a group's
// scale looked up as two eight-entry permutations (vpermps reads the low
// three index bits) blended on the code's bit 3. Compiled with -mavx2
// -ffp-contract=off; called only when the CPU has AVX2 (mxfp4_experts.cpp).
#include <immintrin.h>

#include "mxfp4_rows.hpp"

namespace linnet::ops::detail {
namespace {

struct Lookup {
  static __m256 values(__m256i codes, const float* table) {
    const __m256 low = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), codes);
    const __m256 high = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 8), codes);
    // blendv picks by each lane's sign bit: the code's bit 3 moved there.
    return _mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_slli_epi32(codes, 28)));
  }
};

#include "mxfp4_rows.inc"

}  // namespace

void mxfp4_rows_avx2(const Mxfp4Rows& problem) { run_rows(problem); }

void mxfp4_decode_avx2(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                     bool bf16, void* out) {
  decode_rows_as(bf16, blocks, scales, values, value_table, out);
}

}  // namespace linnet::ops::detail
