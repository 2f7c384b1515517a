// The fused attention kernel's small products by vdpbf16ps (see
// attention_bf16.hpp). Compiled with -mavx512f -mavx512bw -mavx512vl -mfma
// -mavx512bf16; called only when tensor::gemm's path is AVX512-BF16.
//
// Register tiles of 8 (or 4) rows by 2 vectors of 16 lanes, the lanes the
// keys (scores) or the head dimension (mix), the broadcast operand a row's
// pair. A step covers two of the inner dimension where the f32 kernel's
// (attention_tiles.inc) covers one.
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_*()`, which -Wuninitialized reports wherever they are
// inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "attention_bf16.hpp"

namespace linnet::ops::detail {

namespace {

constexpr int64_t kKeys = kAttentionBf16TileKeys;

uint32_t bf16_bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits >> 16;  // the value is a bf16 value: its low half is zero
}

const uint16_t* row_of(const uint16_t* base, int64_t stride, const int32_t* slots, int64_t k) {
  return base + (slots != nullptr ? slots[k] : k) * stride;
}

__m512bh as_pairs(__m512i bits) { return (__m512bh)bits; }

}  // namespace

void attention_query_pairs(const float* queries, int64_t rows, int64_t head_dim, uint32_t* pairs) {
  const int64_t per_row = (head_dim + 1) / 2;
  for (int64_t m = 0; m < rows; ++m) {
    const float* query = queries + m * head_dim;
    for (int64_t j = 0; j < per_row; ++j) {
      const uint32_t low = bf16_bits_of(query[2 * j]);
      const uint32_t high = 2 * j + 1 < head_dim ? bf16_bits_of(query[2 * j + 1]) : 0;
      pairs[m * per_row + j] = low | high << 16;
    }
  }
}

void attention_key_pairs(const uint16_t* key, int64_t stride, const int32_t* slots, int64_t k0, int64_t count,
                         int64_t head_dim, uint32_t* panel) {
  const int64_t per_row = (head_dim + 1) / 2;
  const int64_t whole = head_dim / 2;  // pairs that lie wholly in the row
  for (int64_t n = 0; n < kKeys; ++n) {
    if (n >= count) {
      for (int64_t j = 0; j < per_row; ++j) panel[j * kKeys + n] = 0;
      continue;
    }
    const uint16_t* row = row_of(key, stride, slots, k0 + n);
    for (int64_t j = 0; j < whole; ++j) {
      uint32_t pair;
      std::memcpy(&pair, row + 2 * j, sizeof pair);
      panel[j * kKeys + n] = pair;
    }
    if (whole < per_row) panel[whole * kKeys + n] = row[2 * whole];
  }
}

void attention_value_pairs(const uint16_t* value, int64_t stride, const int32_t* slots, int64_t k0, int64_t count,
                           int64_t head_dim, int64_t dim_padded, uint32_t* panel) {
  for (int64_t i = 0; 2 * i < count; ++i) {
    const uint16_t* first = row_of(value, stride, slots, k0 + 2 * i);
    const uint16_t* second = 2 * i + 1 < count ? row_of(value, stride, slots, k0 + 2 * i + 1) : nullptr;
    uint32_t* out = panel + i * dim_padded;
    for (int64_t d = 0; d < dim_padded; d += 32) {
      const int64_t left = head_dim - d;
      const __mmask32 lanes =
          left <= 0 ? 0 : left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << left) - 1);
      const __m512i low = _mm512_maskz_loadu_epi16(lanes, first + d);
      const __m512i high = second != nullptr ? _mm512_maskz_loadu_epi16(lanes, second + d) : _mm512_setzero_si512();
      // Word d of `low` and of `high` side by side in dword d: unpack
      // within 128-bit lanes, then put the lanes back in order.
      const __m512i even = _mm512_unpacklo_epi16(low, high);  // d 0-3, 8-11, 16-19, 24-27 of each 128-bit half
      const __m512i odd = _mm512_unpackhi_epi16(low, high);   // d 4-7, 12-15, ...
      const __m512i first_half = _mm512_permutex2var_epi64(even, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), odd);
      const __m512i second_half =
          _mm512_permutex2var_epi64(even, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), odd);
      _mm512_storeu_si512(out + d, first_half);
      _mm512_storeu_si512(out + d + 16, second_half);
    }
  }
}

namespace {

// The register tiles: Rows rows by 2 vectors of 16 lanes (2 * Rows
// accumulators). Rows = 8 where the item's padded rows allow it: per step
// two loads and eight broadcasts for sixteen vdpbf16ps, against two and
// four for eight.
template <int Rows>
void scores_block(const uint32_t* q, const uint32_t* key_panel, int64_t pairs_per_row, int64_t n0, float* scores) {
  __m512 acc[Rows][2];
  for (int r = 0; r < Rows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t j = 0; j < pairs_per_row; ++j) {
    const __m512bh k0 = as_pairs(_mm512_loadu_si512(key_panel + j * kKeys + n0));
    const __m512bh k1 = as_pairs(_mm512_loadu_si512(key_panel + j * kKeys + n0 + 16));
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const __m512bh x = as_pairs(_mm512_set1_epi32(static_cast<int>(q[r * pairs_per_row + j])));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, k0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, k1);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    _mm512_storeu_ps(scores + r * kKeys + n0, acc[r][0]);
    _mm512_storeu_ps(scores + r * kKeys + n0 + 16, acc[r][1]);
  }
}

template <int Rows>
void mix_block(const uint32_t* p, const uint32_t* value_panel, int64_t pairs, int64_t dim_padded, int64_t d0,
               float* out) {
  __m512 acc[Rows][2];
  for (int r = 0; r < Rows; ++r) {
    acc[r][0] = _mm512_loadu_ps(out + r * dim_padded + d0);
    acc[r][1] = _mm512_loadu_ps(out + r * dim_padded + d0 + 16);
  }
  for (int64_t i = 0; i < pairs; ++i) {
    const __m512bh v0 = as_pairs(_mm512_loadu_si512(value_panel + i * dim_padded + d0));
    const __m512bh v1 = as_pairs(_mm512_loadu_si512(value_panel + i * dim_padded + d0 + 16));
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const __m512bh x = as_pairs(_mm512_set1_epi32(static_cast<int>(p[r * (kKeys / 2) + i])));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, v0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, v1);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    _mm512_storeu_ps(out + r * dim_padded + d0, acc[r][0]);
    _mm512_storeu_ps(out + r * dim_padded + d0 + 16, acc[r][1]);
  }
}

}  // namespace

void attention_scores_bf16(const uint32_t* query_pairs, const uint32_t* key_panel, int64_t pairs_per_row,
                           int64_t rows_padded, int64_t count, float* scores) {
  const int64_t columns = (count + 31) / 32 * 32;  // whole tiles of 2 vectors of keys
  int64_t m0 = 0;
  for (; m0 + 8 <= rows_padded; m0 += 8)
    for (int64_t n0 = 0; n0 < columns; n0 += 32)
      scores_block<8>(query_pairs + m0 * pairs_per_row, key_panel, pairs_per_row, n0, scores + m0 * kKeys);
  for (; m0 < rows_padded; m0 += 4)
    for (int64_t n0 = 0; n0 < columns; n0 += 32)
      scores_block<4>(query_pairs + m0 * pairs_per_row, key_panel, pairs_per_row, n0, scores + m0 * kKeys);
}

void attention_mix_bf16(const float* weights, int64_t rows_padded, const uint32_t* value_panel, int64_t count,
                        int64_t dim_padded, uint32_t* weight_pairs, float* out) {
  const int64_t pairs = (count + 1) / 2;
  // Each row's 64 weights as 32 pairs: their bf16 bits are the f32 bits'
  // upper halves, the odd words of the two registers, which one word
  // permutation gathers in order. (A weight past `count` is zero, and its
  // value too: the value panel zeroes a missing odd value.)
  __m512i upper_words;
  {
    alignas(64) uint16_t indices[32];
    for (int k = 0; k < 32; ++k) indices[k] = static_cast<uint16_t>(2 * k + 1);
    upper_words = _mm512_load_si512(indices);
  }
  for (int64_t m = 0; m < rows_padded; ++m) {
    const float* row = weights + m * kKeys;
    for (int64_t n = 0; n < kKeys; n += 32) {
      const __m512i first = _mm512_castps_si512(_mm512_loadu_ps(row + n));
      const __m512i second = _mm512_castps_si512(_mm512_loadu_ps(row + n + 16));
      _mm512_storeu_si512(weight_pairs + m * (kKeys / 2) + n / 2, _mm512_permutex2var_epi16(first, upper_words, second));
    }
  }
  int64_t m0 = 0;
  for (; m0 + 8 <= rows_padded; m0 += 8)
    for (int64_t d0 = 0; d0 < dim_padded; d0 += 32)
      mix_block<8>(weight_pairs + m0 * (kKeys / 2), value_panel, pairs, dim_padded, d0, out + m0 * dim_padded);
  for (; m0 < rows_padded; m0 += 4)
    for (int64_t d0 = 0; d0 < dim_padded; d0 += 32)
      mix_block<4>(weight_pairs + m0 * (kKeys / 2), value_panel, pairs, dim_padded, d0, out + m0 * dim_padded);
}

}  // namespace linnet::ops::detail
