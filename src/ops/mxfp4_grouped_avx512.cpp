// The grouped MXFP4 product's own AVX-512 kernel (see mxfp4_grouped.hpp):
// one decoded tile of an expert's weight rows times that expert's gathered
// inputs. Compiled with -mavx512f -mavx512bw -mavx512vl -mfma
// -mavx512bf16; the bf16 entry is called only when the CPU has
// AVX512-BF16, the f32 one when it has AVX-512F (mxfp4_grouped.cpp).
//
// An outer-product register tile, as oneDNN's brgemm and OpenBLAS's
// kernels are, with the weights as the vector operand: a zmm register
// holds one step of the inner dimension for 16 weight rows (one value in
// f32, one pair of values as vdpbf16ps takes them in bf16), and the
// broadcast operand is one token's value (or pair), read from the expert's
// gathered input rows as they lie. A tile of MT tokens by NV vectors keeps
// MT * NV accumulators (at most 24 of the 32 zmm registers) and per step
// loads NV weight vectors and broadcasts MT inputs. The decode writes a
// block's rows in that layout: each row's group decoded into registers as
// the row kernels decode it, 16 rows' registers transposed. So a token
// costs only its own multiply-adds; until 2026-12-03 the tokens were the
// vector operand, an expert's last panel of 16 padded with zero rows, and
// those were 10-13% of a GPT-OSS prompt's expert work (docs/performance.md,
// "Chains, padding and the allocator").
//
// The inner dimension goes in parts: a part's rows are decoded a block of
// kBlockRows at a time, each block multiplied by every token while it is in
// L1, and the partial sums wait in the item's buffer between parts (which
// changes no result). Each accumulator lane is one output's sum, walked
// over the inner index in increasing order from zero, one fused
// multiply-add (f32) or one vdpbf16ps pair (bf16) per step, so an output's
// bits depend on its input row and weight row only: not on how many rows
// the expert has, where the row sits among them, the tile shapes, or the
// thread.
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_*()` (the unmasked forms never read it), which
// -Wuninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstddef>
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

constexpr int kTileTokens = 8;                         // MT at most
constexpr int kTileVectors = 3;                        // NV at most
constexpr int64_t kBlockRows = 16 * kTileVectors;      // rows decoded at a time
// How far ahead of the decode a row's first part is asked into L1 at an
// item's start (the rest into L2): see prefetch_first_parts.
constexpr int64_t kRowsAhead = 16;

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
// into L2): they come from memory, and the decode asks for the next
// vector's rows only 16 rows ahead. Measured on the bench's GPT-OSS prefill
// with the weights in 2 MiB pages, the first part took 150-300 cycles per
// row before, 120-135 after (docs/performance.md).
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

// --- register tiles ----------------------------------------------------------
//
// c[t * c_stride + 16 * v + lane] += sum over steps s < steps of weight row
// 16 v + lane's step s times token t's step s, for t < MT, v < NV, starting
// from zero when `first`. `weights` holds vector v's step s at
// weights[(v * steps + s) * 16 ...]; token t's row starts at
// x + t * x_stride (in values), at the part's first value.

// f32: a step is one value; one fused multiply-add.
struct F32Steps {
  using Row = __m512;
  static Row row(const void* weights, int64_t at) { return _mm512_loadu_ps(static_cast<const float*>(weights) + at); }
  static Row input(const void* x, int64_t at) { return _mm512_set1_ps(static_cast<const float*>(x)[at]); }
  static __m512 madd(__m512 acc, Row row, Row input) { return _mm512_fmadd_ps(row, input, acc); }
};

// bf16: a step is a pair of values (a dword per row: values 2s, 2s + 1);
// one vdpbf16ps, the weights its first operand as the token-lane kernel
// had them (both products are exact either way).
struct Bf16Steps {
  using Row = __m512bh;
  static Row row(const void* weights, int64_t at) {
    return (__m512bh)_mm512_loadu_si512(static_cast<const uint32_t*>(weights) + at);
  }
  static Row input(const void* x, int64_t at) {
    int32_t pair;
    __builtin_memcpy(&pair, static_cast<const uint16_t*>(x) + 2 * at, sizeof pair);
    return (__m512bh)_mm512_set1_epi32(pair);
  }
  static __m512 madd(__m512 acc, Row row, Row input) { return _mm512_dpbf16_ps(acc, row, input); }
};

template <class Steps, int MT, int NV>
void tile(const void* weights, const void* x, int64_t x_stride, int64_t steps, float* c, int64_t c_stride,
          bool first) {
  // Token t's step s is step t * x_stride / (values per step) + s of x.
  const int64_t token_steps = x_stride / (std::is_same_v<Steps, Bf16Steps> ? 2 : 1);
  __m512 acc[MT][NV];
#pragma GCC unroll 8
  for (int t = 0; t < MT; ++t)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[t][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + t * c_stride + 16 * v);
  for (int64_t s = 0; s < steps; ++s) {
    typename Steps::Row rows[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) rows[v] = Steps::row(weights, (v * steps + s) * 16);
#pragma GCC unroll 8
    for (int t = 0; t < MT; ++t) {
      const typename Steps::Row input = Steps::input(x, t * token_steps + s);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[t][v] = Steps::madd(acc[t][v], rows[v], input);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < MT; ++t)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + t * c_stride + 16 * v, acc[t][v]);
}

using TileFunction = void (*)(const void*, const void*, int64_t, int64_t, float*, int64_t, bool);

// table[nv - 1][mt - 1]: the tile of mt tokens by nv vectors (a block's
// last tokens, and a tile's last rows, take narrower ones).
template <bool Bf16>
struct Tiles {
  TileFunction table[kTileVectors][kTileTokens] = {};

  template <int NV, int... T>
  void fill(std::integer_sequence<int, T...>) {
    ((table[NV - 1][T] = &tile<std::conditional_t<Bf16, Bf16Steps, F32Steps>, T + 1, NV>), ...);
  }
  Tiles() {
    fill<1>(std::make_integer_sequence<int, kTileTokens>());
    fill<2>(std::make_integer_sequence<int, kTileTokens>());
    fill<3>(std::make_integer_sequence<int, kTileTokens>());
  }
};

// --- the decode into the tiles' layout -----------------------------------------

// Decodes groups [first_group, first_group + groups) of the tile's rows
// [first_row, first_row + rows) (at most kBlockRows) into `weights`, in the
// tiles' layout (steps = 32 * groups in f32, 16 * groups in bf16). The
// lanes of a last vector past `rows` repeat its last row: their outputs
// land in the item's buffer past `outputs`, which nothing reads. Asks for
// the next vector's rows of this part into L1, and for each row's next
// `next_groups` groups into L2, as it goes.
template <bool Bf16>
void decode_block(const GroupedRowsTile& tile, int64_t first_row, int64_t rows, int64_t first_group, int64_t groups,
                  int64_t next_groups, void* weights) {
  const int64_t steps = Bf16 ? groups * 16 : groups * 32;
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
      if constexpr (Bf16) {
        const uint16_t* const table = mxfp4_value_table_bf16();
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) {
          lanes[k] = decode_group_bf16(tile.blocks + (at[k] + g) * 16, tile.scales[at[k] + g], table);
        }
        transpose_16x16(lanes);
        auto* const to = static_cast<uint32_t*>(weights) + (v * steps + g * 16) * 16;
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) _mm512_storeu_si512(to + k * 16, lanes[k]);
      } else {
        const float* const table = mxfp4_value_table_f32();
        for (int half = 0; half < 2; ++half) {
#pragma GCC unroll 16
          for (int k = 0; k < 16; ++k) {
            lanes[k] = _mm512_castps_si512(
                decode_group_f32_half(tile.blocks + (at[k] + g) * 16, tile.scales[at[k] + g], table, half));
          }
          transpose_16x16(lanes);
          auto* const to = static_cast<float*>(weights) + (v * steps + g * 32 + half * 16) * 16;
#pragma GCC unroll 16
          for (int k = 0; k < 16; ++k) _mm512_storeu_si512(to + k * 16, lanes[k]);
        }
      }
    }
    if (next_groups > 0) {
      for (int64_t k = 0; k < vector_rows; ++k) {
        prefetch_groups<_MM_HINT_T1>(tile.blocks, tile.scales, at[k] + groups, next_groups);
      }
    }
  }
}

// One item: the tile's weight rows times every token of the expert, a part
// of the inner dimension at a time.
template <bool Bf16>
void tile_product(const GroupedRowsTile& tile, void* part, float* c) {
  static const Tiles<Bf16> tiles;
  const int64_t length = tile.groups * 32;
  const int64_t element = Bf16 ? 2 : 4;
  constexpr int64_t part_groups = (Bf16 ? kGroupedPartBf16 : kGroupedPartF32) / 32;
  prefetch_first_parts(tile.blocks, tile.scales, tile.groups, tile.outputs, smaller(part_groups, tile.groups));
  for (int64_t first_group = 0; first_group < tile.groups; first_group += part_groups) {
    const int64_t groups = smaller(part_groups, tile.groups - first_group);
    const int64_t next_groups = smaller(part_groups, tile.groups - first_group - groups);
    const int64_t steps = Bf16 ? groups * 16 : groups * 32;
    for (int64_t block = 0; block < tile.outputs; block += kBlockRows) {
      const int64_t block_rows = smaller(kBlockRows, tile.outputs - block);
      decode_block<Bf16>(tile, block, block_rows, first_group, groups, next_groups, part);
      // The block's rows times every token, while they are fresh in L1.
      const auto vectors = static_cast<int>((block_rows + 15) / 16);
      for (int64_t token = 0; token < tile.tokens; token += kTileTokens) {
        const auto tokens = static_cast<int>(smaller(kTileTokens, tile.tokens - token));
        const auto* const x =
            static_cast<const std::byte*>(tile.inputs) + (token * length + first_group * 32) * element;
        tiles.table[vectors - 1][tokens - 1](part, x, length, steps, c + token * kGroupedTileOutputs + block,
                                             kGroupedTileOutputs, first_group == 0);
      }
    }
  }
}

}  // namespace

void grouped_rows_avx512_f32(const GroupedRowsTile& tile, void* part, float* c) { tile_product<false>(tile, part, c); }

void grouped_rows_avx512bf16(const GroupedRowsTile& tile, void* part, float* c) { tile_product<true>(tile, part, c); }

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
