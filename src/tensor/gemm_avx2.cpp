// The AVX2 + FMA kernel path: 8 f32 lanes, tiles of 3 x rows by 4 w rows
// (12 accumulators of 16 ymm). bf16 operands are widened as they are
// loaded, which is exact. Compiled with -mavx2 -mfma; called only when the
// CPU has them (gemm.cpp).
#include <immintrin.h>

#include <cstring>

#include "gemm_tiles.hpp"

namespace linnet::tensor::gemm::detail {
namespace {

struct Avx2Lanes {
  using Acc = __m256;
  using Vec = __m256;
  static constexpr int64_t kStep = 8;
  static constexpr int kRows = 3;
  // Blocks of x rows by w rows, and the part of the inner dimension they
  // share at a time (gemm_tiles.hpp).
  static constexpr int64_t kBlockRows = 48;
  static constexpr int64_t kBlockOutputs = 48;
  static constexpr int64_t kPart = 512;
  static constexpr int kCols = 4;
  static Acc zero() { return _mm256_setzero_ps(); }
  static Vec widen(__m128i bits) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16)); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec load(const uint16_t* p) { return widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  // The first `count` (< 8) elements, zeros after them; reads nothing past them.
  static Vec load_part(const float* p, int count) {
    float part[8] = {};
    std::memcpy(part, p, static_cast<size_t>(count) * sizeof(float));
    return _mm256_loadu_ps(part);
  }
  static Vec load_part(const uint16_t* p, int count) {
    uint16_t part[8] = {};
    std::memcpy(part, p, static_cast<size_t>(count) * sizeof(uint16_t));
    return load(part);
  }
  static Acc madd(Acc acc, Vec a, Vec b) { return _mm256_fmadd_ps(a, b, acc); }
  // Lanes added in a fixed tree: halves, then quarters, then pairs.
  static float sum(Acc acc) {
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_movehdup_ps(half));
    return _mm_cvtss_f32(half);
  }
};

}  // namespace

void block_avx2(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                 void* scratch) {
  run_block_any<Avx2Lanes>(p, row_begin, row_end, out_begin, out_end, scratch);
}

}  // namespace linnet::tensor::gemm::detail
