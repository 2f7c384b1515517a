// The grouped MXFP4 product's own AVX-512 kernels (see mxfp4_grouped.hpp):
// one decoded tile of an expert's weight rows times that expert's gathered
// inputs. Compiled with -mavx512f -mavx512bw -mavx512vl -mfma
// -mavx512bf16; the bf16 entry is called only when the CPU has
// AVX512-BF16, the f32 one when it has AVX-512F (mxfp4_grouped.cpp).
//
// Both are outer-product register tiles, as oneDNN's brgemm and OpenBLAS's
// kernels are, and both decode a part of the inner dimension for a block
// of weight rows at a time, multiply that block by all the expert's inputs
// while it is in L1, and keep the partial sums in the caller's buffer
// between parts (which changes no result). Each accumulator lane is one
// output's sum, walked over the inner index in increasing order from zero,
// one fused multiply-add (f32) or one vdpbf16ps pair (bf16) per step, so
// an output's bits depend on its input row and weight row only: not on how
// many rows the expert has, where the row sits among them, the tile shapes,
// or the thread. They differ in which operand fills the vector lanes:
//
// - f32: the inputs. A panel holds 16 inputs' values of one index i in one
//   zmm register, and the broadcast operand is the decoded weights, read in
//   place in their row-major block; a tile of NR weight rows by MV panels
//   keeps NR * MV accumulators (up to 24 of the 32 zmm registers) and per
//   index loads MV panel vectors and broadcasts NR weights.
// - bf16: the weights. A register holds one pair (values i, i + 1) of 16
//   weight rows, as vdpbf16ps takes its pairs, and the broadcast operand is
//   one token's pair, read from the expert's gathered bf16 rows as they lie;
//   a tile of MT tokens by NV vectors of 16 rows keeps MT * NV accumulators.
//   The decode writes a block's rows in that layout: each row's group
//   decoded into a register, 16 rows' registers transposed. So a token
//   costs only its own multiply-adds; with the tokens in the lanes, an
//   expert's last panel of 16 was padded with zero rows, and those were
//   10-13% of a GPT-OSS prompt's expert work (docs/performance.md).
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_*()` (the unmasked forms never read it), which
// -Wuninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>
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

using TileFunction = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t, bool);

// tiles[mv - 1][nr - 1]: the tile of nr weight rows by mv panels (a tile's
// last rows take a narrower one).
struct Tiles {
  TileFunction table[kMaxPanels][16] = {};

  template <int MV, int... N>
  void fill(std::integer_sequence<int, N...>) {
    ((table[MV - 1][N] = &tile_f32<N + 1, MV>), ...);
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
// in some 25-50 cycles (4 groups), so 16 rows cover a miss to L2, where the
// parts already are: the first part of every row is asked into L2 at the
// item's start, each later part one part ahead (tile_product); 16 rows
// would be too short a lead for memory.
constexpr int64_t kRowsAhead = 16;

// The rows decoded at a time: a multiple of every f32 tile's rows (16, 12,
// 8, 6) and three bf16 vectors of 16, so that only a tile's last block has
// a narrower tile; 48 rows of a part are 24 KiB in f32 and 12 KiB in bf16,
// which stay in L1 while the tiles use them.
constexpr int64_t kDecodeRows = 48;

// Asks for `groups` packed groups of a row from group `first` on (16 bytes
// each, a prefetch per cache line and one for the last byte) and for the
// first group's scale, into the cache level `Hint` names.
template <auto Hint>
void prefetch_groups(const uint8_t* blocks, const uint8_t* scales, int64_t first, int64_t groups) {
  const uint8_t* bytes = blocks + first * 16;
  for (int64_t byte = 0; byte < groups * 16; byte += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(bytes + byte), Hint);
  }
  _mm_prefetch(reinterpret_cast<const char*>(bytes + groups * 16 - 1), Hint);
  _mm_prefetch(reinterpret_cast<const char*>(scales + first), Hint);
}

// The first part (`groups` groups) of each of a tile's `rows` rows, asked
// for before any is decoded (the first kRowsAhead rows into L1, the rest
// into L2): they come from memory, and the prefetch kRowsAhead rows on is
// too short a lead for that, a row's part decoding in some 25 cycles.
// Measured on the bench's GPT-OSS prefill with the weights in 2 MiB pages,
// the first part took 150-300 cycles per row before, 120-135 after
// (docs/performance.md).
void prefetch_first_parts(const uint8_t* blocks, const uint8_t* scales, int64_t row_groups, int64_t rows,
                          int64_t groups) {
  for (int64_t row = 0; row < rows; ++row) {
    if (row < kRowsAhead) {
      prefetch_groups<_MM_HINT_T0>(blocks, scales, row * row_groups, groups);
    } else {
      prefetch_groups<_MM_HINT_T1>(blocks, scales, row * row_groups, groups);
    }
  }
}

// One f32 item: the tile's weight rows times the expert's panels, a part
// of the inner dimension at a time; each part's rows decoded kDecodeRows at
// a time into `part` (kDecodeRows x kGroupedPartF32 values) and multiplied
// by every panel before the next block is decoded. (Until 2026-12-02 all
// 128 rows of a part were decoded first, 64 KiB: the decode's stores then
// went to L2 and the tiles read them back from there; measured, the decode
// took twice as long.)
void tile_product(const GroupedTile& tile, float* part, float* c) {
  static const Tiles tiles;
  constexpr int64_t part_length = kGroupedPartF32;
  const int64_t c_stride = tile.panel_count * kGroupedPanelRows;
  const int64_t length = tile.groups * 32;
  const int64_t panel_stride = length * kGroupedPanelRows;
  const auto* const panels = static_cast<const float*>(tile.panels);
  const float* const f32_values = mxfp4_value_table_f32();
  prefetch_first_parts(tile.blocks, tile.scales, tile.groups, tile.outputs, smaller(part_length, length) / 32);
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
          prefetch_groups<_MM_HINT_T0>(tile.blocks, tile.scales, group + kRowsAhead * tile.groups, count / 32);
        }
        decode_groups_f32(tile.blocks + group * 16, tile.scales + group, count / 32, f32_values,
                          part + (row - block) * count);
        // The row's next part, into L2 while this part is multiplied: a
        // short run per row, which the hardware prefetcher does not follow.
        if (!last) prefetch_groups<_MM_HINT_T1>(tile.blocks, tile.scales, group + part_length / 32, part_length / 32);
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

// --- bf16: 16 weight rows per register --------------------------------------

constexpr int kRowTileTokens = 8;   // MT at most
constexpr int kRowTileVectors = 3;  // NV at most: kDecodeRows / 16

// c[t * c_stride + 16 * v + lane] += sum over pairs p < pairs of weight
// row 16 v + lane's pair p times token t's pair p, for t < MT, v < NV,
// starting from zero when `first`. `vnni` holds vector v's pair p at
// vnni[(v * pairs + p) * 16 ...] (a dword per row: values 2p, 2p + 1);
// token t's row starts at x + t * x_stride, at the part's first value.
template <int MT, int NV>
void rows_tile(const uint32_t* vnni, const uint16_t* x, int64_t x_stride, int64_t pairs, float* c, int64_t c_stride,
               bool first) {
  __m512 acc[MT][NV];
#pragma GCC unroll 8
  for (int t = 0; t < MT; ++t)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[t][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + t * c_stride + 16 * v);
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh weights[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) weights[v] = (__m512bh)_mm512_loadu_si512(vnni + (v * pairs + p) * 16);
#pragma GCC unroll 8
    for (int t = 0; t < MT; ++t) {
      int32_t pair;
      __builtin_memcpy(&pair, x + t * x_stride + 2 * p, sizeof pair);
      const __m512bh input = (__m512bh)_mm512_set1_epi32(pair);
      // The weights first, as the token-lane kernel had them (both
      // products are exact either way).
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], weights[v], input);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < MT; ++t)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + t * c_stride + 16 * v, acc[t][v]);
}

using RowsTileFunction = void (*)(const uint32_t*, const uint16_t*, int64_t, int64_t, float*, int64_t, bool);

// table[nv - 1][mt - 1]: the tile of mt tokens by nv vectors (a block's
// last tokens, and a tile's last rows, take narrower ones).
struct RowsTiles {
  RowsTileFunction table[kRowTileVectors][kRowTileTokens] = {};

  template <int NV, int... T>
  void fill(std::integer_sequence<int, T...>) {
    ((table[NV - 1][T] = &rows_tile<T + 1, NV>), ...);
  }
  RowsTiles() {
    fill<1>(std::make_integer_sequence<int, kRowTileTokens>());
    fill<2>(std::make_integer_sequence<int, kRowTileTokens>());
    fill<3>(std::make_integer_sequence<int, kRowTileTokens>());
  }
};

// Decodes groups [first_group, first_group + groups) of the tile's rows
// [first_row, first_row + rows) (at most kDecodeRows) into `vnni`, in
// rows_tile's layout with pairs = 16 * groups. The lanes of a last vector
// past `rows` repeat its last row: their outputs land in the item's buffer
// past `outputs`, which nothing reads. Asks for each row's next
// `next_groups` groups into L2 as it goes, and for the next vector's rows
// of this part into L1.
void decode_block_vnni(const GroupedRowsTile& tile, int64_t first_row, int64_t rows, int64_t first_group,
                       int64_t groups, int64_t next_groups, uint32_t* vnni) {
  const uint16_t* const table = mxfp4_value_table_bf16();
  const int64_t pairs = groups * 16;
  for (int64_t v = 0; v * 16 < rows; ++v) {
    const int64_t vector_rows = smaller(16, rows - v * 16);
    const int64_t next_vector = first_row + (v + 1) * 16;
    for (int64_t row = next_vector; row < smaller(next_vector + 16, tile.outputs); ++row) {
      prefetch_groups<_MM_HINT_T0>(tile.blocks, tile.scales, row * tile.groups + first_group, groups);
    }
    // Each lane's row, from the part's first group: the rows are a fixed
    // stride apart, but sixteen offsets kept here spare the loop below the
    // multiplications (it has no registers left to hold them).
    int64_t at[16];
    for (int k = 0; k < 16; ++k) at[k] = (first_row + v * 16 + smaller(k, vector_rows - 1)) * tile.groups + first_group;
    for (int64_t g = 0; g < groups; ++g) {
      __m512i lanes[16];
#pragma GCC unroll 16
      for (int k = 0; k < 16; ++k) {
        lanes[k] = decode_group_bf16(tile.blocks + (at[k] + g) * 16, tile.scales[at[k] + g], table);
      }
      transpose_16x16(lanes);
#pragma GCC unroll 16
      for (int k = 0; k < 16; ++k) _mm512_storeu_si512(vnni + (v * pairs + g * 16 + k) * 16, lanes[k]);
    }
    if (next_groups > 0) {
      for (int64_t k = 0; k < vector_rows; ++k) {
        prefetch_groups<_MM_HINT_T1>(tile.blocks, tile.scales, at[k] + groups, next_groups);
      }
    }
  }
}

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
  tile_product(tile, static_cast<float*>(part), c);
}

void grouped_rows_avx512bf16(const GroupedRowsTile& tile, void* part, float* c) {
  static const RowsTiles tiles;
  auto* const vnni = static_cast<uint32_t*>(part);
  const int64_t length = tile.groups * 32;
  constexpr int64_t part_groups = kGroupedPartBf16 / 32;
  prefetch_first_parts(tile.blocks, tile.scales, tile.groups, tile.outputs, smaller(part_groups, tile.groups));
  for (int64_t first_group = 0; first_group < tile.groups; first_group += part_groups) {
    const int64_t groups = smaller(part_groups, tile.groups - first_group);
    const int64_t next_groups = smaller(part_groups, tile.groups - first_group - groups);
    const int64_t pairs = groups * 16;
    for (int64_t block = 0; block < tile.outputs; block += kDecodeRows) {
      const int64_t block_rows = smaller(kDecodeRows, tile.outputs - block);
      decode_block_vnni(tile, block, block_rows, first_group, groups, next_groups, vnni);
      // The block's rows times every token, while they are fresh in L1.
      const auto vectors = static_cast<int>((block_rows + 15) / 16);
      for (int64_t token = 0; token < tile.tokens; token += kRowTileTokens) {
        const auto tokens = static_cast<int>(smaller(kRowTileTokens, tile.tokens - token));
        tiles.table[vectors - 1][tokens - 1](vnni, tile.inputs + token * length + first_group * 32, length, pairs,
                                             c + token * kGroupedTileOutputs + block, kGroupedTileOutputs,
                                             first_group == 0);
      }
    }
  }
}

void grouped_gather_bf16(const float* input, int64_t length, uint16_t* row) {
  // The caller checked that every input is a bf16 value: its upper half.
  for (int64_t at = 0; at < length; at += 16) {
    const __m512i bits = _mm512_srli_epi32(_mm512_loadu_si512(input + at), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + at), _mm512_cvtepi32_epi16(bits));
  }
}

void grouped_store_rows_avx512(const float* c, int64_t outputs, const int64_t* offsets, int64_t count,
                               ProductsOut y) {
  for (int64_t token = 0; token < count; ++token) {
    const float* from = c + token * kGroupedTileOutputs;
    const int64_t at = offsets[token];
    for (int64_t o = 0; o < outputs; o += 16) {
      const int64_t left = outputs - o;
      const auto lanes = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
      const __m512 values = _mm512_maskz_loadu_ps(lanes, from + o);
      if (y.bf16 != nullptr) {
        _mm256_mask_storeu_epi16(y.bf16 + at + o, lanes, tensor::avx512::round_to_bf16_bits(values));
      } else {
        _mm512_mask_storeu_ps(y.f32 + at + o, lanes, values);
      }
    }
  }
}

}  // namespace linnet::ops::detail
