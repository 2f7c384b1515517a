// What kernels_contract_exact.cpp shares with its AVX-512 file (compiled
// with -mavx512f/bw/vl; plain declarations only, as gemm_internal.hpp explains).
#pragma once

#include <cstdint>

namespace linnet::tensor::detail {

// The width of an output tile of the bf16 exact sums.
inline constexpr int64_t kExactTileOutputs = 64;

// For kExactTileOutputs outputs: acc[j] = round(acc[j] + round(a[k] * tile[k][j]))
// for k = 0..count-1 in order, rounding to bf16 (values kept as f32).
// `a` holds bf16 bits, `tile` is count x kExactTileOutputs f32 values.
void exact_steps_scalar(float* acc, const uint16_t* a, const float* tile, int64_t count);
void exact_steps_avx512(float* acc, const uint16_t* a, const float* tile, int64_t count);

// The same steps when no input of the whole sum (no value of `a`, of the
// tile, of any earlier tile of these outputs) is NaN. Then the only NaN that
// can arise is the one x86 makes for inf * 0 and inf - inf (0xFFC00000), and
// rounding it by the plain integer formula leaves it as it is, so the check
// for NaN in every rounding can go: same bits, half the instructions.
void exact_steps_avx512_no_nan(float* acc, const uint16_t* a, const float* tile, int64_t count);

// Packs a chunk of b for one output tile: tile[t][j] = b value of term t for
// output j as f32, for t < count and j < width, and 0 for width <= j <
// kExactTileOutputs; the value of (t, j) is source[t * term_stride +
// j * output_stride] (bf16 bits). Returns whether any packed value is NaN.
bool exact_pack_scalar(float* tile, const uint16_t* source, int64_t term_stride, int64_t output_stride, int64_t width,
                       int64_t count);
// The same, with 16 x 16 register transposes when terms are contiguous
// (a [Out, In] weight) and plain vector rows when outputs are.
bool exact_pack_avx512(float* tile, const uint16_t* source, int64_t term_stride, int64_t output_stride, int64_t width,
                       int64_t count);

}  // namespace linnet::tensor::detail
