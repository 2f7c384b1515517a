// The grouped MXFP4 product's own AVX-512 kernel (see mxfp4_grouped.hpp):
// one decoded tile of an expert's weight rows times that expert's gathered
// inputs, packed in panels of 16 rows. Compiled with -mavx512f -mavx512bw
// -mavx512vl -mfma -mavx512bf16; the bf16 entry is called only when the CPU
// has AVX512-BF16, the f32 one when it has AVX-512F (mxfp4_grouped.cpp).
//
// An outer-product register tile, as oneDNN's brgemm and OpenBLAS's kernels
// are, but turned around: the vector operand is the inputs (a panel holds
// 16 inputs' values of one index i in one zmm register, or of indices i and
// i + 1 interleaved for bf16 pairs), and the broadcast operand is the
// decoded weights, read in place in their row-major tile. So the weights
// need no packing (the decode writes them row by row, as they lie in the
// checkpoint) and the inputs are packed once per call, in the gather that
// copies them anyway; each input panel then serves every tile of its
// expert. A tile of NR weight rows by MV panels keeps NR * MV accumulators
// (up to 24 of the 32 zmm registers); per index it loads MV panel vectors
// and broadcasts NR weights for NR * MV multiply-adds.
//
// Each accumulator lane is one output's sum, walked over the inner index in
// increasing order from zero, one fused multiply-add (f32) or one vdpbf16ps
// pair (bf16) per step; the inner dimension goes in parts that keep a
// part's panels in L1 while the tiles sweep the weight rows, the partial
// sums waiting in the caller's buffer between parts (which changes no
// result). So an output's bits depend on its input row and weight row
// only: not on how many rows the expert has, where the row sits among
// them, the tile shapes, or the thread.
#include <immintrin.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "mxfp4_grouped.hpp"
#include "mxfp4_rows.hpp"

// No standard-library function templates here: an inline one instantiated
// in this file (compiled for AVX-512) could be the copy the linker keeps for
// the whole program (see mxfp4_rows.hpp).
namespace linnet::ops::detail {
namespace {

int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

#include "mxfp4_decode_avx512.inc"

// The weight rows of a tile for MV panels: NR * MV accumulators, at most 24,
// and NR + MV loads per NR * MV multiply-adds.
constexpr int kMaxPanels = 4;
constexpr int kWeightRows[kMaxPanels + 1] = {0, 16, 12, 8, 6};

// c[n * c_stride + 16 * j + lane] += sum over i < count of
// w[n * w_stride + i] * panel_j[i][lane] for n < NR, j < MV (f32), starting
// from zero when `first` (a part of the inner dimension: `w` and `panels`
// point at its first index).
template <int NR, int MV>
void tile_f32(const float* w, int64_t w_stride, const float* panels, int64_t panel_stride, int64_t count, float* c,
              int64_t c_stride, bool first) {
  __m512 acc[NR][MV];
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) acc[n][j] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + n * c_stride + 16 * j);
  for (int64_t i = 0; i < count; ++i) {
    __m512 inputs[MV];
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) inputs[j] = _mm512_loadu_ps(panels + j * panel_stride + i * 16);
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n) {
      const __m512 weight = _mm512_set1_ps(w[n * w_stride + i]);
#pragma GCC unroll 4
      for (int j = 0; j < MV; ++j) acc[n][j] = _mm512_fmadd_ps(weight, inputs[j], acc[n][j]);
    }
  }
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) _mm512_storeu_ps(c + n * c_stride + 16 * j, acc[n][j]);
}

// The same over bf16 pairs: panel_j holds, per pair p = i / 2, 16 rows'
// (value i, value i + 1) as 32 bf16; the weight pair is one dword of the
// row. One vdpbf16ps per pair: both products exact, added into the sum.
template <int NR, int MV>
void tile_bf16(const uint16_t* w, int64_t w_stride, const uint16_t* panels, int64_t panel_stride, int64_t count,
               float* c, int64_t c_stride, bool first) {
  __m512 acc[NR][MV];
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) acc[n][j] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + n * c_stride + 16 * j);
  for (int64_t i = 0; i < count; i += 2) {
    __m512bh inputs[MV];
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) inputs[j] = (__m512bh)_mm512_loadu_si512(panels + j * panel_stride + i * 16);
#pragma GCC unroll 16
    for (int n = 0; n < NR; ++n) {
      int32_t pair;
      __builtin_memcpy(&pair, w + n * w_stride + i, sizeof pair);
      const __m512bh weight = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 4
      for (int j = 0; j < MV; ++j) acc[n][j] = _mm512_dpbf16_ps(acc[n][j], weight, inputs[j]);
    }
  }
#pragma GCC unroll 16
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < MV; ++j) _mm512_storeu_ps(c + n * c_stride + 16 * j, acc[n][j]);
}

template <class T>
using TileFunction = void (*)(const T*, int64_t, const T*, int64_t, int64_t, float*, int64_t, bool);

// tiles[mv - 1][nr - 1]: the tile of nr weight rows by mv panels (a tile's
// last rows take a narrower one).
template <class T>
struct Tiles {
  TileFunction<T> table[kMaxPanels][16] = {};

  template <int MV, int... N>
  void fill(std::integer_sequence<int, N...>) {
    if constexpr (std::is_same_v<T, float>) {
      ((table[MV - 1][N] = &tile_f32<N + 1, MV>), ...);
    } else {
      ((table[MV - 1][N] = &tile_bf16<N + 1, MV>), ...);
    }
  }
  Tiles() {
    fill<1>(std::make_integer_sequence<int, kWeightRows[1]>());
    fill<2>(std::make_integer_sequence<int, kWeightRows[2]>());
    fill<3>(std::make_integer_sequence<int, kWeightRows[3]>());
    fill<4>(std::make_integer_sequence<int, kWeightRows[4]>());
  }
};

// How many panels the next run of tiles takes when `left` remain: four,
// except that five go as three and two (two runs of good tiles rather than
// four and a lone panel).
int panels_in_run(int64_t left) {
  if (left == 5) return 3;
  return static_cast<int>(smaller(left, kMaxPanels));
}

// One item: the tile's weight rows, decoded a part at a time into `part`
// (outputs x part_length values, so the part's weights are fresh in L2 when
// the tiles broadcast them), times the expert's panels.
template <class T>
void tile_product(const Tiles<T>& tiles, int64_t part_length, const GroupedTile& tile, T* part, float* c) {
  const int64_t c_stride = tile.panel_count * kGroupedPanelRows;
  const int64_t length = tile.groups * 32;
  const int64_t panel_stride = length * kGroupedPanelRows;
  const T* const panels = static_cast<const T*>(tile.panels);
  const float* const f32_values = mxfp4_value_table_f32();
  const uint16_t* const bf16_values = mxfp4_value_table_bf16();
  for (int64_t begin = 0; begin < length; begin += part_length) {
    const int64_t count = smaller(length - begin, part_length);
    const bool last = begin + part_length >= length;
    for (int64_t row = 0; row < tile.outputs; ++row) {
      const int64_t group = row * tile.groups + begin / 32;
      if constexpr (std::is_same_v<T, float>) {
        decode_groups_f32(tile.blocks + group * 16, tile.scales + group, count / 32, f32_values, part + row * count);
      } else {
        decode_groups_bf16(tile.blocks + group * 16, tile.scales + group, count / 32, bf16_values, part + row * count);
      }
      // The packed bytes come from memory, a short run per row: the
      // hardware prefetcher does not follow 128 such runs, so the row's next
      // part is fetched by hand while this part is multiplied.
      if (!last) {
        const uint8_t* next = tile.blocks + (group + part_length / 32) * 16;
        for (int64_t byte = 0; byte < part_length / 2; byte += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(next + byte), _MM_HINT_T1);
        }
        _mm_prefetch(reinterpret_cast<const char*>(next + part_length / 2 - 1), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(tile.scales + group + part_length / 32), _MM_HINT_T1);
      }
    }
    for (int64_t panel = 0; panel < tile.panel_count;) {
      const int runs = panels_in_run(tile.panel_count - panel);
      const int rows = kWeightRows[runs];
      for (int64_t first_output = 0; first_output < tile.outputs; first_output += rows) {
        const auto nr = static_cast<int>(smaller(rows, tile.outputs - first_output));
        tiles.table[runs - 1][nr - 1](
            part + first_output * count, count, panels + panel * panel_stride + begin * kGroupedPanelRows, panel_stride,
            count, c + first_output * c_stride + panel * kGroupedPanelRows, c_stride, begin == 0);
      }
      panel += runs;
    }
  }
}

}  // namespace

void grouped_tile_avx512_f32(const GroupedTile& tile, void* part, float* c) {
  static const Tiles<float> tiles;
  tile_product(tiles, kGroupedPartF32, tile, static_cast<float*>(part), c);
}

void grouped_tile_avx512bf16(const GroupedTile& tile, void* part, float* c) {
  static const Tiles<uint16_t> tiles;
  tile_product(tiles, kGroupedPartBf16, tile, static_cast<uint16_t*>(part), c);
}

}  // namespace linnet::ops::detail
