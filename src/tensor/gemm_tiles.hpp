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

template <class Lanes, class XT, class WT, int RM, int RN>
void dot_tile(const XT* x, int64_t x_stride, const WT* w, int64_t w_stride, int64_t inner, float* y,
              int64_t y_stride) {
  using Acc = typename Lanes::Acc;
  Acc acc[RM][RN];
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) acc[r][c] = Lanes::zero();
  constexpr int64_t step = Lanes::kStep;
  int64_t i = 0;
  for (; i + step <= inner; i += step) {
    typename Lanes::Vec a[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r) a[r] = Lanes::load(x + r * x_stride + i);
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) {
      const auto b = Lanes::load(w + c * w_stride + i);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r) acc[r][c] = Lanes::madd(acc[r][c], a[r], b);
    }
  }
  if (i < inner) {
    const int count = static_cast<int>(inner - i);
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
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < RN; ++c) y[r * y_stride + c] = Lanes::sum(acc[r][c]);
}

template <class XT, class WT>
using TileFunction = void (*)(const XT*, int64_t, const WT*, int64_t, int64_t, float*, int64_t);

// tiles[rm - 1][rn - 1]: the tile of rm x rn, for the edges of a block.
template <class Lanes, class XT, class WT>
struct TileTable {
  TileFunction<XT, WT> tiles[Lanes::kRows][Lanes::kCols];
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

// The w rows a block keeps in L2 while the x rows walk them: about 384 KiB.
inline int64_t block_outputs(int64_t inner, int64_t element_bytes, int64_t cols) {
  const int64_t fit = (int64_t{384} * 1024) / (inner * element_bytes > 0 ? inner * element_bytes : 1);
  return fit < cols ? cols : fit / cols * cols;
}

template <class Lanes, class XT, class WT>
void run_block(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end) {
  static constexpr TileTable<Lanes, XT, WT> table{};
  const XT* x = static_cast<const XT*>(p.x);
  const WT* w = static_cast<const WT*>(p.w);
  const int64_t block = block_outputs(p.inner, sizeof(WT), Lanes::kCols);
  for (int64_t o0 = out_begin; o0 < out_end; o0 += block) {
    const int64_t o1 = smaller(o0 + block, out_end);
    for (int64_t r = row_begin; r < row_end; r += Lanes::kRows) {
      const int64_t rm = smaller(Lanes::kRows, row_end - r);
      for (int64_t o = o0; o < o1; o += Lanes::kCols) {
        const int64_t rn = smaller(Lanes::kCols, o1 - o);
        table.tiles[rm - 1][rn - 1](x + r * p.x_stride, p.x_stride, w + o * p.w_stride, p.w_stride, p.inner,
                                    p.y + r * p.y_stride + o, p.y_stride);
      }
    }
  }
}

// The four operand pairs of a widening path (f32 or bf16 bits each).
template <class Lanes>
void run_block_any(const Problem& p, int64_t row_begin, int64_t row_end, int64_t out_begin, int64_t out_end) {
  if (p.x_bf16) {
    if (p.w_bf16) run_block<Lanes, uint16_t, uint16_t>(p, row_begin, row_end, out_begin, out_end);
    else run_block<Lanes, uint16_t, float>(p, row_begin, row_end, out_begin, out_end);
  } else {
    if (p.w_bf16) run_block<Lanes, float, uint16_t>(p, row_begin, row_end, out_begin, out_end);
    else run_block<Lanes, float, float>(p, row_begin, row_end, out_begin, out_end);
  }
}

}  // namespace
}  // namespace linnet::tensor::gemm::detail
