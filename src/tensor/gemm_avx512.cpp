// The AVX-512F kernel path (with BW and VL for the masked bf16 loads):
// 16 f32 lanes, tiles of 4 x rows by 6 w rows (24 accumulators of 32 zmm).
// bf16 operands are widened as they are loaded, which is exact.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mfma; called only when the
// CPU has them (gemm.cpp).
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_ps()`, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "gemm_tiles.hpp"

namespace linnet::tensor::gemm::detail {
namespace {

#include "gemm_avx512_tiles.inc"

struct Avx512Lanes : Avx512Tiles {
  using Vec = __m512;
  static constexpr int64_t kStep = 16;
  static Vec widen(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec load(const uint16_t* p) { return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  // The first `count` (< 16) elements, zeros after them; reads nothing past them.
  static Vec load_part(const float* p, int count) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static Vec load_part(const uint16_t* p, int count) {
    return widen(_mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << count) - 1), p));
  }
  static Acc madd(Acc acc, Vec a, Vec b) { return _mm512_fmadd_ps(a, b, acc); }
};

}  // namespace

void block_avx512(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                 void* scratch) {
  run_block_any<Avx512Lanes>(p, row_begin, row_end, out_begin, out_end, scratch);
}

}  // namespace linnet::tensor::gemm::detail
