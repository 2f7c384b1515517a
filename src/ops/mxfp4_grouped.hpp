// The grouped MXFP4 expert product of a prompt (mxfp4_grouped.cpp), for
// mxfp4_experts.cpp: every expert that many slots chose multiplies all of
// them at once, as one matrix product per tile of its rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "linnet/ops/mxfp4.hpp"

namespace linnet::ops::detail {

// Where the input of slot k of row r starts: x + r * row_stride + k * slot_stride.
struct InputLayout {
  int64_t row_stride = 0;
  int64_t slot_stride = 0;  // 0 when the slots of a row share one input
};

// A call's slots (flat index r * K + k) ordered by the expert they chose:
// those of expert e are by_expert[start[e] .. start[e + 1]), in increasing
// slot order.
struct SlotsByExpert {
  int64_t slots_per_row = 1;  // K
  std::vector<int64_t> start;
  std::vector<int64_t> by_expert;

  int64_t count(int64_t expert) const { return start[expert + 1] - start[expert]; }
};

// Where the products go: y[s * Out + o] in f32, or, when `bf16` is set,
// rounded to bf16 (round to nearest even, tensor::float_to_bf16_bits) as
// each tile's products are scattered to their slots, which spares T = bf16
// a pass over the whole f32 result.
struct ProductsOut {
  float* f32 = nullptr;
  uint16_t* bf16 = nullptr;
};

// y[s * Out + o] = sum over i of x_s[i] * W[e, o, i] for every slot s of
// every expert e in `experts` (each chosen by at least one slot), in f32
// (then rounded to bf16 when `y.bf16`).
// The expert's slots' inputs are gathered into one matrix (bf16 when
// `bf16_products`, which the caller allows only when every input is a bf16
// value, else f32); its rows are decoded a tile of kGroupedTileOutputs at a
// time into a per-thread buffer of the same type (exact: every MXFP4 value
// is a bf16 value) and multiplied by the gathered matrix. Work items are
// (expert, tile), shared by the OpenMP threads; each is computed whole by
// one thread, so the bits do not depend on the thread count. The product:
// - with AVX-512 (f32) or AVX512-BF16 (bf16 too), the packed kernel
//   below: weights decoded a part of the row at a time; each output's bits
//   depend on its two rows only;
// - otherwise tensor::gemm (gemm_bt_serial), the dense `linear`'s product,
//   whose bits depend on how many slots chose the expert (the product's
//   row count picks the engine and its blocks).
void grouped_expert_products(const Mxfp4Experts& weights, const float* x, InputLayout layout,
                             const SlotsByExpert& slots, std::span<const int64_t> experts, bool bf16_products,
                             ProductsOut y);

// The calling thread's scratch of at least `bytes`, kept for its later
// calls (grow-only, 64-byte aligned; its contents are left as they were).
// For the products' large per-call buffers: a prompt's are tens of MB, and
// a fresh allocation that large is mapped anew each time and pays a page
// fault per 4 KiB when first written (measured: a fifth of a GPT-OSS
// prefill). `which` picks one of a few independent buffers.
enum class Scratch { Products, Gathered, TileWeights, TileProducts };
void* thread_scratch(Scratch which, size_t bytes);

// The rows of one tile: tensor::gemm's oneDNN block width, so a tile is
// one block of the library's grid.
inline constexpr int64_t kGroupedTileOutputs = 128;

// The packed kernel (mxfp4_grouped_avx512.cpp): f32 inputs on CPUs with
// AVX-512, bf16 inputs on CPUs with AVX512-BF16. An expert's gathered
// inputs are its tokens' rows, [tokens][length], f32 or bf16 bits, with no
// padding. The inner dimension goes in parts of this many values
// (multiples of 32, one MXFP4 group), 48 weight rows decoded at a time:
// 24 KiB of weights in f32 and in bf16, with a part of each token's row.
inline constexpr int64_t kGroupedPartF32 = 128;
inline constexpr int64_t kGroupedPartBf16 = 256;

// One work item: `outputs` consecutive weight rows of one expert (packed
// blocks and scales from its first row) times all the expert's tokens.
struct GroupedRowsTile {
  const uint8_t* blocks = nullptr;  // outputs * groups * 16 bytes
  const uint8_t* scales = nullptr;  // outputs * groups bytes
  int64_t groups = 0;
  int64_t outputs = 0;  // at most kGroupedTileOutputs
  const void* inputs = nullptr;  // f32, or bf16 bits
  int64_t tokens = 0;
};

// c[t * kGroupedTileOutputs + o] receives output o of token t; `part` is
// scratch of kGroupedTileOutputs * kGroupedPart* values of the tile's type.
// Each output is summed over i in increasing order from zero, one fused
// multiply-add per index (f32) or one vdpbf16ps per pair of indices (2p,
// 2p + 1) (bf16), so its bits depend on its own input row and weight row
// only.
void grouped_rows_avx512_f32(const GroupedRowsTile& tile, void* part, float* c);
void grouped_rows_avx512bf16(const GroupedRowsTile& tile, void* part, float* c);

// One input row (`length` f32 values, a multiple of 16, each a bf16 value)
// as bf16 bits.
void grouped_gather_bf16(const float* input, int64_t length, uint16_t* row);

// Stores products c[t * kGroupedTileOutputs + o] (o < outputs, t < count)
// to output row t, which starts at element offsets[t] of `y`: f32, or
// rounded to bf16 as tensor::float_to_bf16_bits does.
void grouped_store_rows_avx512(const float* c, int64_t outputs, const int64_t* offsets, int64_t count,
                               ProductsOut y);

// Off: grouped products take tensor::gemm even where the CPU has the packed
// kernel (for bench_grouped's comparison and the tests). On by default.
void set_grouped_packed_enabled(bool enabled);

}  // namespace linnet::ops::detail
