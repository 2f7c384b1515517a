// Native kernels for `std.quant`'s MXFP4 items, on raw buffers: dequantizing
// packed expert weights, and the expert products that read the packed bytes
// where they lie.
//
// Layout (the gpt-oss checkpoint's, and the parameters' in the cards):
// blocks [E, Out, G, 16; u8], scales [E, Out, G; u8]. Row `o` of expert `e`
// holds G * 32 values; value `j` of group `g` is nibble `j % 2` (low nibble
// for even `j`) of byte `j / 2` of blocks[e, o, g], an E2M1 code
// (0, 0.5, 1, 1.5, 2, 3, 4, 6, then the same negated for codes 8..15; code 8
// is -0.0), times the group's scale 2^(scales[e, o, g] - 127).
//
// Values agree bit for bit with transformers' convert_moe_packed_tensors
// (dtype=T) on CPU, which computes `torch.ldexp(lut[code], scale - 127)`,
// i.e. `lut[code] * pow(2.0, scale - 127)` with the power in f32 and the
// product rounded to T:
// - scale byte 0 gives 2^-127, an f32 subnormal, so values stay nonzero
//   (0.5 * 2^-127 = 2^-128 is exact in f32 and bf16);
// - scale byte 255 gives 2^128, which is +inf in f32: nonzero codes become
//   +-inf and the zero codes NaN (0 * inf). The NaN's sign and payload
//   differ between PyTorch's kernels (scalar 0x7FC0, AVX2 0xFFFF, CUDA
//   0x7FFF in bf16); here it is always the canonical quiet NaN (0x7FC00000,
//   0x7FC0, 0x7E00, 0x7FF8000000000000);
// - magnitudes 2, 3, 4, 6 with scale 254, and 4, 6 with scale 253, are
//   past f32's range and become +-inf in f32 and bf16 (for f64 the product
//   is taken in f64 and stays finite, as torch's f64 result does; f16
//   overflows and underflows far sooner, rounding to nearest even).
// For f32 and bf16, every other value is exact: an E2M1 value times a power
// of two has at most two significant bits, and bf16 shares f32's exponent
// range. So the f32 and the bf16 dequantization hold the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "linnet/tensor/dtype.hpp"

namespace linnet::ops {

inline constexpr int64_t kMxfp4BlockValues = 32;  // values per scale byte
inline constexpr int64_t kMxfp4BlockBytes = 16;   // packed bytes per block

// Packed MXFP4 experts as stored: a view, nothing is copied.
struct Mxfp4Experts {
  std::span<const uint8_t> blocks;  // [experts, rows, groups, 16]
  std::span<const uint8_t> scales;  // [experts, rows, groups]
  int64_t experts = 0;              // E
  int64_t rows = 0;                 // Out: rows of each expert's matrix
  int64_t groups = 0;               // G: each row holds groups * 32 values

  int64_t row_length() const { return groups * kMxfp4BlockValues; }
  // Throws std::invalid_argument unless the dimensions are positive and the
  // spans hold exactly E * Out * G * 16 and E * Out * G bytes.
  void validate() const;
};

// 2^(scale_byte - 127) as PyTorch's f32 pow computes it: 2^-127 (a
// subnormal) for 0, +inf for 255.
float mxfp4_scale_f32(uint8_t scale_byte);

// One value, E2M1 `code` (its low four bits) times the scale, as f32.
float mxfp4_value_f32(uint8_t code, uint8_t scale_byte);

// `dequantize_mxfp4<E, Out, G, T>(blocks, scales)`: [E, Out, G * 32] values,
// in `out_type` (F16, BF16, F32 or F64; anything else is refused), written
// little-endian into `out` (E * Out * G * 32 * dtype_size bytes).
void dequantize_mxfp4(const Mxfp4Experts& weights, tensor::DType out_type, std::span<std::byte> out);
void dequantize_mxfp4_f32(const Mxfp4Experts& weights, std::span<float> out);
void dequantize_mxfp4_bf16(const Mxfp4Experts& weights, std::span<uint16_t> out);  // bf16 bit patterns

// One row of one expert, f32: out.size() must be G * 32.
void dequantize_mxfp4_row_f32(const Mxfp4Experts& weights, int64_t expert, int64_t row, std::span<float> out);

// ---------------------------------------------------------------------------
// Expert products. For each row r and slot k, with e = experts[r, k]:
//   y[r, k, o] = sum over i in [0, G * 32) of x_rk[i] * W[e, o, i]
// in f32, W the dequantized values above. Only the chosen experts are read,
// never dequantized whole. Results do not depend on the kernel path's
// thread count; every result is computed by one thread.
//
// How, and in which order, depends on how many of the call's slots chose
// the expert (a decode step's token gives each of its experts one slot; a
// prompt gives each expert dozens):
//
// - Fewer than kMxfp4GroupedSlots: with AVX-512 or AVX2 the packed bytes
//   are decoded in vector registers as they are multiplied (or, for an
//   expert several inputs chose, a run of its rows into a small per-thread
//   panel); the scalar path dequantizes each row once into a one-row
//   buffer. Runs of output rows are spread over OpenMP threads. The order
//   (f32, no fused multiply-add), the same on every path: lane l in 0..7
//   sums the products of the indices i = l (mod 8) in increasing i,
//   starting from 0; the lanes then combine as
//   ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
// - kMxfp4GroupedSlots or more (the grouped product, as llama.cpp's
//   mul_mat_id and vLLM's fused MoE run a prompt): the inputs of the
//   expert's slots are gathered into one matrix, and each tile of 128 of
//   its rows is decoded into a per-thread buffer and multiplied by that
//   matrix. With AVX-512 (AVX512-BF16 for bf16 products) the packed
//   kernel does it (src/ops/mxfp4_grouped_avx512.cpp): each output summed
//   over i in increasing order from zero, one fused multiply-add per
//   index (f32) or one vdpbf16ps per pair of indices (bf16). Otherwise
//   tensor::gemm (gemm.hpp) does, the dense `linear`'s product, in its
//   order: oneDNN's blocked order (fused multiply-adds) once the gathered
//   rows, padded with zero rows to a multiple of 16, reach
//   tensor::gemm::kLibraryMinRows, our kernels' lanes below that. In the
//   `_bf16` variants, when every input is a bf16 value
//   (as a T = bf16 call's are), the tile and the inputs are bf16 and the
//   products bf16 x bf16 with f32 sums (vdpbf16ps where the CPU has it;
//   the products are exact, but such kernels flush subnormal operands and
//   results to zero); otherwise f32. The bits never depend on the thread
//   count; on tensor::gemm they depend on the number of slots that chose
//   the expert, on the packed kernel not even on that.
//
// Both are the `equivalent` numerics policy's "f32 accumulation": not the
// body's sequential `sum<f32>[i]` order, so results can differ from the
// body's in the last bits (the native kernels never run under `exact`).
//
// Inputs arrive as f32 (a bf16 `x` or `weights` widens exactly). These
// kernels serve T = f32 and T = bf16 (whose dequantized weights are the
// same numbers, see above), and T = f64 once its inputs are cast to f32 as
// the bodies do; T = f16 rounds the weights themselves and is left to the
// bodies. The `_bf16` variants round each result to bf16 (nearest even),
// the body's final `cast<T>`.
//
// Every entry of `experts` must lie in [0, E); otherwise std::out_of_range
// names the row, slot and value. Sizes that disagree throw
// std::invalid_argument. Nothing is written when an error is thrown.

// The fewest slots of one call that make an expert's products one grouped
// matrix product (above).
inline constexpr int64_t kMxfp4GroupedSlots = 8;

// Which expert each slot of each row uses: experts[r * slots + k].
struct ExpertChoice {
  std::span<const int64_t> experts;  // [rows, slots]
  int64_t rows = 0;                  // R
  int64_t slots = 0;                 // K
};

// `mxfp4_experts_shared<R, K, E, Out, G, T>(x[R, 1, G * 32], ...) -> [R, K, Out]`:
// every slot of row r multiplies the same input x[r].
void mxfp4_experts_shared_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                              std::span<float> out);
void mxfp4_experts_shared_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                               std::span<uint16_t> out);

// `mxfp4_linear_experts_shared<R, K, E, Out, G, T>(x[R, G * 32], ...) -> [R, K, Out]`:
// the same products as mxfp4_experts_shared, with x laid out [R, In]
// (the same bytes as [R, 1, In]).
void mxfp4_linear_experts_shared_f32(const Mxfp4Experts& weights, std::span<const float> x,
                                     const ExpertChoice& choice, std::span<float> out);
void mxfp4_linear_experts_shared_bf16(const Mxfp4Experts& weights, std::span<const float> x,
                                      const ExpertChoice& choice, std::span<uint16_t> out);

// `mxfp4_experts<R, K, E, Out, G, T>(x[R, K, G * 32], ...) -> [R, K, Out]`:
// slot k of row r multiplies its own input x[r, k].
void mxfp4_experts_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                       std::span<float> out);
void mxfp4_experts_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                        std::span<uint16_t> out);

// `mxfp4_combine_experts<R, K, E, Out, G, T>(x[R, K, G * 32], ..., weights[R, K]) -> [R, Out]`:
//   out[r, o] = sum over k in increasing order of mixing[r, k] * y[r, k, o]
// in f32 from 0, y as in mxfp4_experts (unrounded), rounded to T once at
// the end.
void mxfp4_combine_experts_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                               std::span<const float> mixing, std::span<float> out);
void mxfp4_combine_experts_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                                std::span<const float> mixing, std::span<uint16_t> out);

}  // namespace linnet::ops
