// Matrix products for the op kernels: y[r, o] = sum[i] x[r, i] * w[o, i],
// with f32 or bf16 operands and f32 accumulation, on the widest vector unit
// the CPU has (chosen at run time, so the default build runs on any x86-64).
//
// Two engines, chosen by the number of rows:
//
// - Fewer than kLibraryMinRows rows (decode steps, short prompts), or a
//   build without oneDNN: our kernels. Both operands are read in place along
//   their contiguous inner dimension, the way a `linear` weight [Out, In] is
//   stored: nothing is packed or widened whole. Each output is one dot
//   product whose summation order depends only on its two rows and the
//   kernel path (vector lanes summed sequentially along i, then the lanes
//   added in a fixed tree), never on the output's position, the number of
//   rows or the number of threads.
// - kLibraryMinRows rows or more, when the build has oneDNN (CMake
//   LINNET_DNNL) and oneDNN has a vector kernel for the operand types on
//   this CPU: oneDNN's matmul, which packs panels for an outer-product
//   kernel and runs about twice as fast on prompts. The product is cut into
//   blocks of a fixed grid (from the shape alone) and each block is one
//   single-threaded oneDNN call, so results do not depend on the number of
//   threads either; they do depend on the number of rows (a row alone and
//   the same row in a prompt of 32 or more may differ in the last bits).
//   bf16 x bf16 is multiplied as bf16 with f32 sums; every other pair as
//   f32, a bf16 operand widened block by block (exact, so a bf16 weight
//   under T=f32 gives the bits of the weight widened first). f32 operands
//   are never rounded to a narrower type (oneDNN's fpmath mode strict).
//
// Our kernel paths, best first:
//   avx512bf16  bf16 x bf16 with `vdpbf16ps` (bf16 products, f32 sums);
//               f32 operands as avx512.
//   avx512      AVX-512F FMA over 16 f32 lanes; bf16 operands widened as they
//               are loaded (exact), so an f32 x times a bf16 weight gives the
//               same bits as times the weight widened first.
//   avx2        AVX2 + FMA over 8 lanes, same widening.
//   scalar      portable C++, one sequential sum per output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace linnet::tensor::gemm {

enum class Isa { Scalar, Avx2, Avx512, Avx512Bf16 };

// A row-major matrix operand: row r starts `stride` elements after row r-1,
// and its elements are contiguous. bf16 elements are raw bf16 bits.
struct Operand {
  const void* data = nullptr;
  bool bf16 = false;
  int64_t stride = 0;
};

// Where a product's results go: row r starts `stride` elements after row
// r-1. f32, or bf16 bits: each result rounded once to nearest even from its
// f32 sum, the bits of the f32 product cast afterwards, without an f32
// copy of the whole result or a second pass over it. With `bias`, output o
// stores its f32 sum plus bias[o] (one f32 addition, before the rounding).
struct Destination {
  void* data = nullptr;
  bool bf16 = false;
  int64_t stride = 0;
  const float* bias = nullptr;
};

// y[r * y.stride + o] = sum[i] x[r, i] * w[o, i] for r < rows, o < outputs,
// i < inner. Splits the outputs over the OpenMP threads when the work is
// worth it (tensor::worth_threads) and not already inside a parallel region.
void gemm_bt(int64_t rows, int64_t outputs, int64_t inner, Operand x, Operand w, Destination y);
inline void gemm_bt(int64_t rows, int64_t outputs, int64_t inner, Operand x, Operand w, float* y, int64_t y_stride) {
  gemm_bt(rows, outputs, inner, x, w, Destination{y, false, y_stride});
}

// The same product on the calling thread only, for outputs [first, last):
// for callers that split work themselves. A many-row product's oneDNN grid
// starts at first_output here, so its bits equal gemm_bt's when the range
// is all the outputs.
void gemm_bt_serial(int64_t rows, int64_t first_output, int64_t last_output, int64_t inner, Operand x, Operand w,
                    Destination y);
inline void gemm_bt_serial(int64_t rows, int64_t first_output, int64_t last_output, int64_t inner, Operand x,
                           Operand w, float* y, int64_t y_stride) {
  gemm_bt_serial(rows, first_output, last_output, inner, x, w, Destination{y, false, y_stride});
}

// Products with at least this many rows go to oneDNN when it is available
// and enabled (measured: below it our kernels are as fast or faster).
inline constexpr int64_t kLibraryMinRows = 64;
// The granularity of outputs that keeps a product's bits when it is split:
// gemm_bt_serial over outputs [a, b) gives the bits of the whole product's
// outputs there whenever a is a multiple of this (and b is one, or the last
// output). 1 for our kernels (every output is its own dot product); the
// width of oneDNN's blocks when a product of `rows` rows with these operand
// types goes to oneDNN.
int64_t output_alignment(int64_t rows, bool x_bf16, bool w_bf16);
// Whether this build has oneDNN and oneDNN multiplies f32 (bf16) on this
// CPU with a vector kernel.
bool library_available();
bool library_available_bf16();
// Whether many-row products may use oneDNN (default true); tests and
// benchmarks turn it off to measure our kernels alone. Without oneDNN it
// changes nothing.
void set_library_enabled(bool enabled);
// Whether many-row f32 products use oneDNN now.
bool library_enabled();

// The kernel path our products use: the best the CPU supports, unless overridden.
Isa active_isa();
// The best path this CPU supports.
Isa best_supported_isa();
bool isa_supported(Isa isa);
// Forces our kernels' path (tests and benchmarks compare paths); nullopt restores the
// default. Throws TensorError for a path this CPU lacks.
void override_isa(std::optional<Isa> isa);
std::string isa_name(Isa isa);

}  // namespace linnet::tensor::gemm
