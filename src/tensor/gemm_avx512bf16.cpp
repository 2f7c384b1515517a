// The AVX512-BF16 kernel path for bf16 x bf16: `vdpbf16ps` multiplies 32
// bf16 pairs exactly and adds each lane's two products to its f32 sum
// (the instruction treats bf16 subnormal inputs as zero and flushes
// subnormal sums). Tiles of 4 x rows by 6 w rows, as the AVX-512F path.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16; called only
// when the CPU has them (gemm.cpp).
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_ps()`, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "gemm_tiles.hpp"

namespace linnet::tensor::gemm::detail {
namespace {

#include "gemm_avx512_tiles.inc"

struct Avx512Bf16Lanes : Avx512Tiles {
  using Vec = __m512bh;
  static constexpr int64_t kStep = 32;
  static Vec load(const uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  // The first `count` (< 32) elements, zeros after them; reads nothing past them.
  static Vec load_part(const uint16_t* p, int count) {
    return (__m512bh)_mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << count) - 1), p);
  }
  static Acc madd(Acc acc, Vec a, Vec b) { return _mm512_dpbf16_ps(acc, a, b); }
};

}  // namespace

void block_avx512bf16(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                 void* scratch) {
  run_block<Avx512Bf16Lanes, uint16_t, uint16_t>(p, row_begin, row_end, out_begin, out_end, scratch);
}

}  // namespace linnet::tensor::gemm::detail
