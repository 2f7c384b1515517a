// What mxfp4_experts.cpp (the expert products) and the ISA-specific row
// kernels (mxfp4_rows_<path>.cpp) share. The kernel files are compiled with
// ISA flags, so this header declares plain functions and a plain struct
// only (an inline standard-library template instantiated in such a file
// could be picked by the linker for the whole program and run on a CPU
// without the instructions).
#pragma once

#include <cstdint>

namespace linnet::ops::detail {

// Consecutive rows of one MXFP4 expert times a few inputs:
//   outputs[s][r] = sum over i of inputs[s][i] * W[r, i]
// for r < rows, s < input_count, W[r, i] the f32 value of row r's code i
// (value_table[scale * 16 + code], mxfp4.cpp's table, so every value has
// the bits of dequantize_mxfp4). Each sum in mxfp4.hpp's documented order:
// eight lanes over i mod 8, a multiplication then an addition per term (no
// fused multiply-add), the lanes combined pairwise at the end.
struct Mxfp4Rows {
  const uint8_t* blocks = nullptr;  // rows * groups * 16 bytes, row after row
  const uint8_t* scales = nullptr;  // rows * groups bytes
  int64_t groups = 0;               // each row holds groups * 32 values
  int64_t rows = 0;
  const float* value_table = nullptr;  // [256][16]
  const float* const* inputs = nullptr;
  float* const* outputs = nullptr;
  int64_t input_count = 0;
  // rows * groups * 32 floats of scratch, or null: with many inputs the
  // rows are decoded there once rather than in registers per input tile.
  float* panel = nullptr;
  // Rows of the same expert after these (the caller's next run): a kernel
  // may prefetch into them, never past them.
  int64_t rows_after = 0;
  // The one input's values as bf16 pairs (mxfp4_bf16_pairs), or null. Given
  // only with input_count 1 and an input that mxfp4_bf16_pairs_safe passed:
  // mxfp4_rows_avx512 then multiplies with vdpbf16ps where the CPU has
  // AVX512-BF16, with the same bits.
  const uint16_t* input_pairs = nullptr;
};

// Whether `length` values can take the bf16 dot-product kernel: each a bf16
// value (its f32 bits' lower half zero) that is zero or of magnitude in
// [2^-60, 2^60] (so no product or partial sum is subnormal or overflows:
// mxfp4_rows_avx512.cpp). Plain code, callable on any CPU.
bool mxfp4_bf16_pairs_safe(const float* values, int64_t length);
// `length` (a multiple of 32) such values laid out for that kernel:
// length * 2 words (see mxfp4_rows_avx512.cpp). Plain code.
void mxfp4_bf16_pairs(const float* values, int64_t length, uint16_t* pairs);

// The f32 value of every (scale byte, code): [256][16], made once.
const float* mxfp4_value_table_f32();
// The same values' bf16 bits (their upper halves): [256][16].
const uint16_t* mxfp4_value_table_bf16();

// Each computes the whole problem on the calling thread. AVX-512 (F + VL,
// for the two-table permutation on 8 lanes) and AVX2; called only when the
// CPU has them (mxfp4_experts.cpp).
void mxfp4_rows_avx512(const Mxfp4Rows& problem);
void mxfp4_rows_avx2(const Mxfp4Rows& problem);
// The AVX-512 file's eight-lane kernel alone (mxfp4_rows_avx512 takes it
// for the panel, and on CPUs without AVX512-VBMI; otherwise, with few
// inputs, its two-rows-per-register kernel): for the test that holds the
// two to the same bits, and for bench/bench_mxfp4_rows.cpp.
void mxfp4_rows_avx512_eight_lanes(const Mxfp4Rows& problem);

// mxfp4_combine_experts' sum for rows [first_row, last_row): out[r, o] =
// sum over slots k, in order from zero, of mixing[r, k] * products[r, k, o]
// (a multiplication, then an addition), stored in f32, or rounded to bf16
// when `out_bf16` is given. AVX-512 F + BW + VL (mxfp4_combine_avx512.cpp).
void mxfp4_combine_rows_avx512(const float* products, const float* mixing, int64_t first_row, int64_t last_row,
                               int64_t slots, int64_t out_rows, float* out_f32, uint16_t* out_bf16);

// `values` (a multiple of 32) consecutive values of packed rows, decoded
// into `out` through the f32 value table: f32, or bf16 bits (the bf16
// table's values, which are the f32 values' upper halves). The AVX-512
// one decodes a whole group (32 values) per step in zmm registers (BW).
void mxfp4_decode_avx512(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                         bool bf16, void* out);
void mxfp4_decode_avx2(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                       bool bf16, void* out);

}  // namespace linnet::ops::detail
