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
// pair (bf16) per step; the inner dimension goes in parts, and a part's
// weight rows are decoded a block of rows at a time, each block multiplied
// by all the panels while it is in L1; the partial sums wait in the
// caller's buffer between parts (which changes no result). So an output's
// bits depend on its input row and weight row only: not on how many rows
// the expert has, where the row sits among them, the tile shapes, or the
// thread.
#include <immintrin.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "linnet/tensor/bf16_round_avx512.hpp"
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

// How far ahead of the decode a row's part is asked into L1. A part decodes
// in some 25-50 cycles (4 groups in f32, 8 in bf16), so 16 rows cover a miss
// to L2, where the parts already are: the first part of every row is asked
// into L2 at the item's start, each later part one part ahead
// (tile_product); 16 rows would be too short a lead for memory.
constexpr int64_t kRowsAhead = 16;

// The rows decoded at a time: a multiple of every tile's rows (16, 12, 8,
// 6), so that only a tile's last block has a narrower tile; 48 rows of a
// bf16 part are 24 KiB, which stay in L1 while the tiles use them.
constexpr int64_t kDecodeRows = 48;

// Asks for `groups` packed groups of a row from group `first` on (16 bytes
// each, a prefetch per cache line and one for the last byte) and for the
// first group's scale, into the cache level `Hint` names.
template <auto Hint>
void prefetch_groups(const GroupedTile& tile, int64_t first, int64_t groups) {
  const uint8_t* bytes = tile.blocks + first * 16;
  for (int64_t byte = 0; byte < groups * 16; byte += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(bytes + byte), Hint);
  }
  _mm_prefetch(reinterpret_cast<const char*>(bytes + groups * 16 - 1), Hint);
  _mm_prefetch(reinterpret_cast<const char*>(tile.scales + first), Hint);
}

// One item: the tile's weight rows times the expert's panels, a part of
// the inner dimension at a time; each part's rows decoded kDecodeRows at a
// time into `part` (kDecodeRows x part_length values) and multiplied by
// every panel before the next block is decoded. (Until 2026-12-02 all 128
// rows of a part were decoded first, 64 KiB: the decode's stores then went
// to L2 and the tiles read them back from there; measured, the decode took
// twice as long.)
template <class T>
void tile_product(const Tiles<T>& tiles, int64_t part_length, const GroupedTile& tile, T* part, float* c) {
  const int64_t c_stride = tile.panel_count * kGroupedPanelRows;
  const int64_t length = tile.groups * 32;
  const int64_t panel_stride = length * kGroupedPanelRows;
  const T* const panels = static_cast<const T*>(tile.panels);
  const float* const f32_values = mxfp4_value_table_f32();
  const uint16_t* const bf16_values = mxfp4_value_table_bf16();
  // The first part of every row, asked for before any is decoded (the
  // first kRowsAhead rows into L1, the rest into L2): they come from memory,
  // and the prefetch kRowsAhead rows on (below) is too short a lead for
  // that, a row's part decoding in some 25 cycles. Measured on the bench's
  // GPT-OSS prefill with the weights in 2 MiB pages, the first part took
  // 150-300 cycles per row before, 120-135 after (docs/performance.md).
  const int64_t first_groups = smaller(part_length, length) / 32;
  for (int64_t row = 0; row < tile.outputs; ++row) {
    if (row < kRowsAhead) {
      prefetch_groups<_MM_HINT_T0>(tile, row * tile.groups, first_groups);
    } else {
      prefetch_groups<_MM_HINT_T1>(tile, row * tile.groups, first_groups);
    }
  }
  for (int64_t begin = 0; begin < length; begin += part_length) {
    const int64_t count = smaller(length - begin, part_length);
    const bool last = begin + part_length >= length;
    for (int64_t block = 0; block < tile.outputs; block += kDecodeRows) {
      const int64_t block_rows = smaller(kDecodeRows, tile.outputs - block);
      for (int64_t row = block; row < block + block_rows; ++row) {
        const int64_t group = row * tile.groups + begin / 32;
        // This part of a row kRowsAhead rows on, into L1: the first part of
        // an item was asked into L2 only at the item's start (above), the
        // later parts one part ahead (below); the hardware prefetchers stop
        // at page boundaries and do not follow these short runs.
        if (row + kRowsAhead < tile.outputs) {
          prefetch_groups<_MM_HINT_T0>(tile, group + kRowsAhead * tile.groups, count / 32);
        }
        T* const to = part + (row - block) * count;
        if constexpr (std::is_same_v<T, float>) {
          decode_groups_f32(tile.blocks + group * 16, tile.scales + group, count / 32, f32_values, to);
        } else {
          decode_groups_bf16(tile.blocks + group * 16, tile.scales + group, count / 32, bf16_values, to);
        }
        // The row's next part, into L2 while this part is multiplied: a
        // short run per row, which the hardware prefetcher does not follow.
        if (!last) prefetch_groups<_MM_HINT_T1>(tile, group + part_length / 32, part_length / 32);
      }
      // The block's rows times every panel, while its decoded weights are
      // fresh in L1.
      for (int64_t panel = 0; panel < tile.panel_count;) {
        const int runs = panels_in_run(tile.panel_count - panel);
        const int rows = kWeightRows[runs];
        for (int64_t first_output = block; first_output < block + block_rows; first_output += rows) {
          const auto nr = static_cast<int>(smaller(rows, block + block_rows - first_output));
          tiles.table[runs - 1][nr - 1](part + (first_output - block) * count, count,
                                        panels + panel * panel_stride + begin * kGroupedPanelRows, panel_stride, count,
                                        c + first_output * c_stride + panel * kGroupedPanelRows, c_stride, begin == 0);
        }
        panel += runs;
      }
    }
  }
}

// Transposes a 16 x 16 block of 32-bit elements held in 16 registers:
// afterwards lane j of rows[i] holds what lane i of rows[j] held.
// (GCC 12 reports the unpack and shuffle intrinsics' own `__Y = __Y`
// placeholder operand, which the unmasked forms never read, as used
// uninitialized once they are inlined here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
[[gnu::always_inline]] inline void transpose_16x16(__m512i rows[16]) {
  __m512i t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(rows[i], rows[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(rows[i], rows[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    rows[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    rows[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    rows[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    rows[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // rows[4q + k] now holds, in its 128-bit lane L, element 4L + k of rows
  // 4q..4q+3: two rounds of 128-bit shuffles put those four lanes together.
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_i32x4(rows[k], rows[k + 4], 0x88);
    t[k + 4] = _mm512_shuffle_i32x4(rows[k], rows[k + 4], 0xDD);
    t[k + 8] = _mm512_shuffle_i32x4(rows[k + 8], rows[k + 12], 0x88);
    t[k + 12] = _mm512_shuffle_i32x4(rows[k + 8], rows[k + 12], 0xDD);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    rows[k] = _mm512_shuffle_i32x4(t[k], t[k + 8], 0x88);
    rows[k + 8] = _mm512_shuffle_i32x4(t[k], t[k + 8], 0xDD);
    rows[k + 4] = _mm512_shuffle_i32x4(t[k + 4], t[k + 12], 0x88);
    rows[k + 12] = _mm512_shuffle_i32x4(t[k + 4], t[k + 12], 0xDD);
  }
}
#pragma GCC diagnostic pop

}  // namespace

void grouped_pack_panel_f32(const float* const inputs[kGroupedPanelRows], int64_t length, float* panel) {
  for (int64_t at = 0; at < length; at += 16) {
    __m512i rows[16];
#pragma GCC unroll 16
    for (int row = 0; row < 16; ++row) {
      rows[row] = inputs[row] ? _mm512_loadu_si512(inputs[row] + at) : _mm512_setzero_si512();
    }
    transpose_16x16(rows);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) _mm512_storeu_si512(panel + (at + i) * 16, rows[i]);
  }
}

void grouped_pack_panel_bf16(const float* const inputs[kGroupedPanelRows], int64_t length, uint16_t* panel) {
  // Word k of the result: word 2k + 1 of the two loads, the upper half of
  // value k (a bf16 value: the caller checked). Dword p then holds values
  // 2p and 2p + 1, the pair layout.
  const __m512i upper_halves = _mm512_setr_epi32(
      0x00030001, 0x00070005, 0x000B0009, 0x000F000D, 0x00130011, 0x00170015, 0x001B0019, 0x001F001D, 0x00230021,
      0x00270025, 0x002B0029, 0x002F002D, 0x00330031, 0x00370035, 0x003B0039, 0x003F003D);
  for (int64_t at = 0; at < length; at += 32) {
    __m512i rows[16];
#pragma GCC unroll 16
    for (int row = 0; row < 16; ++row) {
      rows[row] = inputs[row] ? _mm512_permutex2var_epi16(_mm512_loadu_si512(inputs[row] + at), upper_halves,
                                                          _mm512_loadu_si512(inputs[row] + at + 16))
                              : _mm512_setzero_si512();
    }
    transpose_16x16(rows);
#pragma GCC unroll 16
    for (int pair = 0; pair < 16; ++pair) _mm512_storeu_si512(panel + (at + 2 * pair) * 16, rows[pair]);
  }
}

void grouped_scatter_avx512(const float* c, int64_t c_stride, int64_t outputs, const int64_t* offsets, int64_t count,
                            ProductsOut y) {
  const int64_t whole = outputs / 16 * 16;
  for (int64_t first = 0; first < count; first += 16) {
    const int64_t rows = smaller(16, count - first);
    for (int64_t o = 0; o < whole; o += 16) {
      __m512i block[16];
#pragma GCC unroll 16
      for (int k = 0; k < 16; ++k) block[k] = _mm512_loadu_si512(c + (o + k) * c_stride + first);
      transpose_16x16(block);
      // Unrolled, so that the block stays in registers.
#pragma GCC unroll 16
      for (int row = 0; row < 16; ++row) {
        if (row >= rows) break;
        const int64_t at = offsets[first + row] + o;
        if (y.bf16 != nullptr) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(y.bf16 + at),
                              tensor::avx512::round_to_bf16_bits(_mm512_castsi512_ps(block[row])));
        } else {
          _mm512_storeu_si512(y.f32 + at, block[row]);
        }
      }
    }
    // The last outputs of a tile whose row count is no multiple of 16.
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t at = offsets[first + row];
      for (int64_t o = whole; o < outputs; ++o) {
        const float value = c[o * c_stride + first + row];
        if (y.bf16 != nullptr) {
          y.bf16[at + o] = _mm256_extract_epi16(tensor::avx512::round_to_bf16_bits(_mm512_set1_ps(value)), 0);
        } else {
          y.f32[at + o] = value;
        }
      }
    }
  }
}

void grouped_tile_avx512_f32(const GroupedTile& tile, void* part, float* c) {
  static const Tiles<float> tiles;
  tile_product(tiles, kGroupedPartF32, tile, static_cast<float*>(part), c);
}

void grouped_tile_avx512bf16(const GroupedTile& tile, void* part, float* c) {
  static const Tiles<uint16_t> tiles;
  tile_product(tiles, kGroupedPartBf16, tile, static_cast<uint16_t*>(part), c);
}

}  // namespace linnet::ops::detail
