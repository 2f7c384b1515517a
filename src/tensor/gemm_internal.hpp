// What gemm.cpp (dispatch and threads) and the ISA-specific kernel files
// share. The kernel files are compiled with ISA flags (-mavx2, -mavx512f,
// ...), so this header declares plain functions and a plain struct only:
// an inline standard-library template instantiated in such a file could be
// picked by the linker for the whole program and run on a CPU without it.
#pragma once

#include <cstdint>

namespace linnet::tensor::gemm::detail {

// One product y[r, o] = sum[i] x[r, i] * w[o, i]; elements are f32, or bf16
// bits when the flag says so.
struct Problem {
  int64_t inner = 0;
  const void* x = nullptr;
  int64_t x_stride = 0;
  bool x_bf16 = false;
  const void* w = nullptr;
  int64_t w_stride = 0;
  bool w_bf16 = false;
  float* y = nullptr;
  int64_t y_stride = 0;
  // When set, the results go here as bf16 bits instead (row stride
  // y_stride), each rounded once from its f32 sum, and `y` is unused.
  uint16_t* rounded_y = nullptr;
  // When set, bias[o] is added to output o's f32 sum before it is stored.
  // Only library_block and gemm.cpp's own split honour rounded_y and bias
  // (through a panel and store_panel): the kernels below always write plain
  // f32 sums.
  const float* bias = nullptr;
};

// Stores rows x count f32 sums of a panel (rows `panel_stride` apart) as the
// outputs [out_begin, out_begin + count) of rows [row_begin, ...) of p's
// destination: plus p.bias, rounded to bf16 (nearest even, as every cast
// to bf16 rounds) for p.rounded_y.
void store_panel(const Problem& p, const float* panel, int64_t panel_stride, int64_t rows, int64_t count,
                 int64_t row_begin, int64_t out_begin);

// The calling thread's scratch for partial sums: kScratchBytes, aligned to
// kScratchAlignment.
inline constexpr int64_t kScratchBytes = int64_t{192} * 1024;
inline constexpr int64_t kScratchAlignment = 64;

// Each computes the outputs of rows [row_begin, row_end) and outputs
// [out_begin, out_end) on the calling thread.
using BlockFunction = void (*)(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin,
                               int64_t out_end, void* scratch);
void block_scalar(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                  void* scratch);
void block_avx2(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                void* scratch);
void block_avx512(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                  void* scratch);
// bf16 x bf16 only (vdpbf16ps); other operand pairs go to block_avx512.
void block_avx512bf16(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                      void* scratch);

// oneDNN's matmul (gemm_dnnl.cpp, built when CMake's LINNET_DNNL finds
// libdnnl). Whether it multiplies f32 x f32 (or bf16 x bf16) on this CPU
// with one of its vector kernels rather than its slow reference code.
bool library_multiplies_f32();
bool library_multiplies_bf16();
// Rows [row_begin, row_end) by outputs [out_begin, out_end) of the product
// as one oneDNN matmul on the calling thread. bf16 x bf16 is multiplied as
// bf16 (f32 sums); any other pair as f32, a bf16 operand's block widened
// first into a per-thread panel (exact). `product` numbers the product the
// block belongs to, a different number for every library product (never 0):
// a thread given several blocks that share rows of a bf16 operand within one
// product widens those rows once (operands do not change during a product).
// Throws TensorError if oneDNN fails.
void library_block(const Problem& p, uint64_t product, int64_t row_begin, int64_t row_end, int64_t out_begin,
                   int64_t out_end);

}  // namespace linnet::tensor::gemm::detail
