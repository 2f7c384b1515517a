// The register-blocked dot-product tiles every kernel path shares, written
// once over a `Lanes` description of the vector unit (see gemm_avx512.cpp
// for one). Included only by the gemm_*.cpp kernel files, each compiled for
// its ISA; everything here has internal linkage so that no copy compiled
// for one ISA can stand in for another's.
//
// A tile is RM rows of x by RN rows of w: RM * RN accumulators, each a
// vector of partial sums along the inner dimension (lane l sums the
// products at i = l, l + step, ...; the vector's last partial step loads
// zeros past the end). Per step RM + RN vectors are loaded for RM * RN
// multiply-adds, and the x rows of a tile stay in L1 while the tile walks a
// block of w rows sized to stay in L2 (the layout llamafile's tinyBLAS uses:
// no packing, both operands read along their contiguous dimension). An
// output's value depends on its two rows only, whatever tile holds it.
#pragma once

#include <cstdint>
#include <utility>

#include "gemm_internal.hpp"

namespace linnet::tensor::gemm::detail {
namespace {

inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// A block whose x rows take at most this many bytes (a decode step's row,
// a prompt of a few tokens) goes through the inner dimension in one part.
constexpr int64_t kStreamedRowsBytes = int64_t{256} * 1024;

// How far ahead a streaming tile prefetches its w rows, in bytes (whatever
// the element type: an f32 step over bf16 weights covers 32 bytes, a bf16
// step 64), and the cache line each prefetch brings.
constexpr int64_t kPrefetchBytes = 1024;
constexpr int64_t kLineBytes = 64;

// The part [begin, end) of the inner dimension for one tile. The first part
// starts the sums at zero, the last writes them to y (the lanes added);
// sums in between wait in `saved` (RM * RN accumulators). `streams`: this
// tile is the first to read its w rows' part, from memory (see below).
template <class Lanes, class XT, class WT, int RM, int RN>
void dot_tile(const XT* x, int64_t x_stride, const WT* w, int64_t w_stride, int64_t begin, int64_t end, bool first,
              bool last, bool streams, typename Lanes::Acc* saved, float* y, int64_t y_stride) {
  using Acc = typename Lanes::Acc;
  Acc acc[RM][RN];
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) acc[r][c] = first ? Lanes::zero() : saved[r * RN + c];
  constexpr int64_t step = Lanes::kStep;
  // One step: RM + RN loads, RM * RN multiply-adds, in the order every
  // path below keeps (so the bits do not depend on which loop ran a step).
  const auto one_step = [&](int64_t at) {
    typename Lanes::Vec a[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r) a[r] = Lanes::load(x + r * x_stride + at);
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) {
      const auto b = Lanes::load(w + c * w_stride + at);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r) acc[r][c] = Lanes::madd(acc[r][c], a[r], b);
    }
  };
  int64_t i = begin;
  if (RM <= 2 || streams) {
    // A tile of one or two x rows streams w from memory (decode) and does
    // too little arithmetic to hide the latency; checkpoint weights sit in
    // 4 KiB pages, where the hardware prefetcher stops at every page edge,
    // so each w row is fetched a kilobyte ahead by hand, one prefetch per
    // cache line: the steps go in groups that cover a line of each w row.
    // So does a wider tile that is the first of its block to read a part
    // of w (a prompt of a few tokens: its other row tiles then find that
    // part in cache): without it, products of 8 and 16 rows read their
    // weights at 20-35 GB/s, waiting on each line (docs/performance.md).
    constexpr int64_t line_steps = kLineBytes / (step * static_cast<int64_t>(sizeof(WT))) > 0
                                       ? kLineBytes / (step * static_cast<int64_t>(sizeof(WT)))
                                       : 1;
    // In the last kilobyte of its rows a tile prefetches the first kilobyte
    // of the next tile's rows (RN rows further on: where run_block goes
    // next), so that tile starts on lines already on their way instead of a
    // round trip to memory per row (a prefetch past a row's end used to land
    // in the next row of the same tile, read long before).
    constexpr int64_t ahead = kPrefetchBytes / static_cast<int64_t>(sizeof(WT));
    // A narrow tile's w lines are read once per call (a decode step streams
    // every weight once), so they are asked for as non-temporal: they then
    // do not push out of the caches what the step reads again between its
    // products (activations, the KV cache, the interpreter's own data).
    // Wider tiles keep theirs: the block's other row tiles read them next.
    // Measured on whole decode steps, alternated runs: Mistral bf16 new /
    // old 0.946-0.965 (8 of 8 rounds faster), GPT-OSS bf16 0.93 (median of
    // 9), Qwen3 and the f32 steps within the host's noise (0.97-1.09).
    for (; i + line_steps * step <= end; i += line_steps * step) {
      const int64_t past_end = i + ahead - end;
      const WT* prefetched = past_end < 0 ? w + i + ahead : w + RN * w_stride + begin + past_end;
#pragma GCC unroll 8
      for (int c = 0; c < RN; ++c) {
        if constexpr (RM <= 2) {
          __builtin_prefetch(prefetched + c * w_stride, 0, 0);
        } else {
          __builtin_prefetch(prefetched + c * w_stride);
        }
      }
#pragma GCC unroll 4
      for (int64_t s = 0; s < line_steps; ++s) one_step(i + s * step);
    }
  }
  // Wider tiles read w parts already in L2; a narrow tile's last steps.
  for (; i + step <= end; i += step) one_step(i);
  if (i < end) {  // only the last part ends off a step
    const int count = static_cast<int>(end - i);
    typename Lanes::Vec a[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r) a[r] = Lanes::load_part(x + r * x_stride + i, count);
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) {
      const auto b = Lanes::load_part(w + c * w_stride + i, count);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r) acc[r][c] = Lanes::madd(acc[r][c], a[r], b);
    }
  }
  if (last) {
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < RN; ++c) y[r * y_stride + c] = Lanes::sum(acc[r][c]);
  } else {
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < RN; ++c) saved[r * RN + c] = acc[r][c];
  }
}

template <class Lanes, class XT, class WT>
using TileFunction = void (*)(const XT*, int64_t, const WT*, int64_t, int64_t, int64_t, bool, bool, bool,
                              typename Lanes::Acc*, float*, int64_t);

// tiles[rm - 1][rn - 1]: the tile of rm x rn, for the edges of a block.
template <class Lanes, class XT, class WT>
struct TileTable {
  TileFunction<Lanes, XT, WT> tiles[Lanes::kRows][Lanes::kCols];
  constexpr TileTable() : tiles{} { fill_rows(std::make_integer_sequence<int, Lanes::kRows>()); }
  template <int... R>
  constexpr void fill_rows(std::integer_sequence<int, R...>) {
    (fill_row<R + 1>(std::make_integer_sequence<int, Lanes::kCols>()), ...);
  }
  template <int RM, int... C>
  constexpr void fill_row(std::integer_sequence<int, C...>) {
    ((tiles[RM - 1][C] = &dot_tile<Lanes, XT, WT, RM, C + 1>), ...);
  }
};

// The loops around the tiles. Outputs go in blocks of kBlockOutputs w rows
// and rows in blocks of kBlockRows x rows; the inner dimension goes in parts
// of kPart elements (one part when it is short), each part through every
// tile of the block before the next, so that a part's x and w rows (a few
// KiB each) stay in L1 and L2 while the tiles sweep them. The block's
// partial sums wait in `scratch` between parts; each lane still sums its
// products in order, so the parts change no result.
template <class Lanes, class XT, class WT>
void run_block(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
               void* scratch) {
  static constexpr TileTable<Lanes, XT, WT> table{};
  using Acc = typename Lanes::Acc;
  constexpr int64_t kRows = Lanes::kRows, kCols = Lanes::kCols;
  constexpr int64_t kBlockRows = Lanes::kBlockRows, kBlockOutputs = Lanes::kBlockOutputs;
  static_assert(kBlockRows % kRows == 0 && kBlockOutputs % kCols == 0, "blocks are whole tiles");
  static_assert(kBlockRows * kBlockOutputs * static_cast<int64_t>(sizeof(Acc)) <= kScratchBytes,
                "the scratch holds a block's sums");
  // With one tile of x rows (decode: a row or a few) each w element is used
  // by one tile only, so there is nothing for the parts to keep in cache;
  // the whole inner dimension in one part lets each tile stream its w rows
  // from start to end, the long sequential reads the hardware prefetcher
  // needs (parts of 512 elements made them 1 KiB jumps between rows). So
  // do a few tiles of rows whose x fits in L2 (kStreamedRowsBytes): the
  // first streams a block's w rows from memory, prefetching ahead, and the
  // others find them in L2. In parts, the first tile's 1 KiB per w row was
  // too short for the prefetches to run ahead of it: 8 and 16 rows times
  // Mistral's 14336 x 4096 up projection ran at 28-36% of the peak, 1.2-1.3x
  // slower.
  const int64_t rows = row_end - row_begin;
  const bool streamed = rows <= kRows || rows * p.inner * static_cast<int64_t>(sizeof(XT)) <= kStreamedRowsBytes;
  const int64_t part = streamed || p.inner < Lanes::kPart * 3 / 2 ? p.inner : Lanes::kPart;
  Acc* saved = static_cast<Acc*>(scratch);
  const XT* x = static_cast<const XT*>(p.x);
  const WT* w = static_cast<const WT*>(p.w);
  for (int64_t o0 = out_begin; o0 < out_end; o0 += kBlockOutputs) {
    const int64_t o1 = smaller(o0 + kBlockOutputs, out_end);
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kBlockRows) {
      const int64_t r1 = smaller(r0 + kBlockRows, row_end);
      for (int64_t k0 = 0; k0 < p.inner; k0 += part) {
        const int64_t k1 = smaller(k0 + part, p.inner);
        const bool first = k0 == 0, last = k1 == p.inner;
        Acc* tile_sums = saved;
        for (int64_t r = r0; r < r1; r += kRows) {
          const int64_t rm = smaller(kRows, r1 - r);
          for (int64_t o = o0; o < o1; o += kCols) {
            const int64_t rn = smaller(kCols, o1 - o);
            table.tiles[rm - 1][rn - 1](x + r * p.x_stride, p.x_stride, w + o * p.w_stride, p.w_stride, k0, k1, first,
                                        last, streamed && r == r0, tile_sums, p.y + r * p.y_stride + o, p.y_stride);
            tile_sums += kRows * kCols;
          }
        }
      }
    }
  }
}

// The four operand pairs of a widening path (f32 or bf16 bits each).
template <class Lanes>
void run_block_any(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end,
                   void* scratch) {
  if (p.x_bf16) {
    if (p.w_bf16) run_block<Lanes, uint16_t, uint16_t>(p, row_begin, row_end, out_begin, out_end, scratch);
    else run_block<Lanes, uint16_t, float>(p, row_begin, row_end, out_begin, out_end, scratch);
  } else {
    if (p.w_bf16) run_block<Lanes, float, uint16_t>(p, row_begin, row_end, out_begin, out_end, scratch);
    else run_block<Lanes, float, float>(p, row_begin, row_end, out_begin, out_end, scratch);
  }
}

}  // namespace
}  // namespace linnet::tensor::gemm::detail
