// The AVX-512 forms of the exact bf16 sums' steps and packing
// (exact_sum_internal.hpp): 64 outputs in four zmm registers, the bf16
// rounding done on the f32 bits exactly as float_to_bf16_bits does it
// (nearest even; NaN kept, made quiet: linnet/tensor/bf16_round_avx512.hpp).
// Compiled with -mavx512f/bw/vl; called only when the CPU has them.
// g++ 12's AVX-512 intrinsics trip -Wuninitialized in their own header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <bit>
#include <cmath>

#include "exact_sum_internal.hpp"
#include "linnet/tensor/bf16_round_avx512.hpp"

namespace linnet::tensor::detail {
namespace {

// The same rounding for a value that is not NaN, or is x86's default NaN
// 0xFFC00000 (whose low half is zero, so adding 0x7FFF changes nothing
// kept): bits + 0x7FFF, plus one more where the lowest kept bit is set,
// truncated. Four instructions instead of nine.
inline __m512 round_to_bf16_no_nan(__m512 value) {
  const __m512i bits = _mm512_castps_si512(value);
  const __mmask16 odd = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x10000));
  __m512i rounded = _mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF));
  rounded = _mm512_mask_add_epi32(rounded, odd, rounded, _mm512_set1_epi32(1));
  return _mm512_castsi512_ps(_mm512_and_si512(rounded, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

inline __m512 broadcast_bf16(uint16_t bits) {
  return _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(bits) << 16)));
}

// 16 bf16 values (bits) widened to f32.
inline __m512 widen16(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }

// rows[i] := column i of the 16 x 16 matrix whose row r is rows[r].
inline void transpose16(__m512 rows[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // Per 128-bit lane L, u[4g + e] holds element 4L + e of rows 4g..4g+3.
  __m512 u[16];
  for (int g = 0; g < 4; ++g) {
    const __m512 lo_a = t[4 * g], hi_a = t[4 * g + 1], lo_b = t[4 * g + 2], hi_b = t[4 * g + 3];
    u[4 * g + 0] = _mm512_shuffle_ps(lo_a, lo_b, _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm512_shuffle_ps(lo_a, lo_b, _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm512_shuffle_ps(hi_a, hi_b, _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm512_shuffle_ps(hi_a, hi_b, _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Gather the lanes: first lanes 0 and 2 / 1 and 3 of groups (0, 1) and
  // (2, 3), then the same again, which lines up the four groups of a column.
  for (int e = 0; e < 4; ++e) {
    t[e] = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);
    t[4 + e] = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);
    t[8 + e] = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
    t[12 + e] = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
  }
  for (int e = 0; e < 8; ++e) {
    rows[e] = _mm512_shuffle_f32x4(t[e], t[8 + e], 0x88);
    rows[8 + e] = _mm512_shuffle_f32x4(t[e], t[8 + e], 0xDD);
  }
}

// The steps of both entry points below, with the rounding they use.
template <__m512 (*Round)(__m512)>
inline void exact_steps(float* acc, const uint16_t* a, const float* tile, int64_t count) {
  __m512 sums[4];
  for (int v = 0; v < 4; ++v) sums[v] = _mm512_loadu_ps(acc + 16 * v);
  for (int64_t k = 0; k < count; ++k) {
    const __m512 weight = broadcast_bf16(a[k]);
    const float* row = tile + k * kExactTileOutputs;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const __m512 product = Round(_mm512_mul_ps(weight, _mm512_loadu_ps(row + 16 * v)));
      sums[v] = Round(_mm512_add_ps(sums[v], product));
    }
  }
  for (int v = 0; v < 4; ++v) _mm512_storeu_ps(acc + 16 * v, sums[v]);
}

}  // namespace

void exact_steps_avx512(float* acc, const uint16_t* a, const float* tile, int64_t count) {
  static_assert(kExactTileOutputs == 64, "four registers of 16 outputs");
  exact_steps<avx512::round_to_bf16>(acc, a, tile, count);
}

void exact_steps_avx512_no_nan(float* acc, const uint16_t* a, const float* tile, int64_t count) {
  exact_steps<round_to_bf16_no_nan>(acc, a, tile, count);
}

bool exact_pack_avx512(float* tile, const uint16_t* source, int64_t term_stride, int64_t output_stride, int64_t width,
                       int64_t count) {
  constexpr int64_t kTile = kExactTileOutputs;
  if (output_stride == 1) {
    // Each term's outputs are contiguous: widen them row by row.
    __mmask16 nan = 0;
    for (int64_t t = 0; t < count; ++t) {
      const uint16_t* line = source + t * term_stride;
      float* target = tile + t * kTile;
      for (int64_t j = 0; j < kTile; j += 16) {
        const int64_t left = width - j;
        const __mmask16 keep = left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
        const __m512 values = widen16(_mm256_maskz_loadu_epi16(keep, line + j));
        nan |= _mm512_cmp_ps_mask(values, values, _CMP_UNORD_Q);
        _mm512_storeu_ps(target + j, values);
      }
    }
    return nan != 0;
  }
  if (term_stride != 1) return exact_pack_scalar(tile, source, term_stride, output_stride, width, count);

  // Each output's terms are contiguous (a weight stored [Out, In]): load 16
  // outputs x 16 terms, transpose in registers, store 16 terms x 16 outputs.
  bool nan = false;
  __mmask16 nan_lanes = 0;
  const int64_t full_width = width / 16 * 16, full_count = count / 16 * 16;
  for (int64_t j0 = 0; j0 < full_width; j0 += 16) {
    for (int64_t t0 = 0; t0 < full_count; t0 += 16) {
      __m512 block[16];
      for (int r = 0; r < 16; ++r) {
        const __m256i bits =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(source + (j0 + r) * output_stride + t0));
        block[r] = widen16(bits);
        nan_lanes |= _mm512_cmp_ps_mask(block[r], block[r], _CMP_UNORD_Q);
      }
      transpose16(block);
      for (int c = 0; c < 16; ++c) _mm512_storeu_ps(tile + (t0 + c) * kTile + j0, block[c]);
    }
  }
  // The edges one value at a time: terms past the last 16 for the full
  // outputs, then every term of the outputs past the last 16, then zeros.
  auto one = [&](int64_t t, int64_t j) {
    const float value = std::bit_cast<float>(static_cast<uint32_t>(source[j * output_stride + t]) << 16);
    nan = nan || std::isnan(value);
    tile[t * kTile + j] = value;
  };
  for (int64_t j = 0; j < full_width; ++j) {
    for (int64_t t = full_count; t < count; ++t) one(t, j);
  }
  for (int64_t j = full_width; j < width; ++j) {
    for (int64_t t = 0; t < count; ++t) one(t, j);
  }
  for (int64_t t = 0; t < count; ++t) {
    for (int64_t j = width; j < kTile; ++j) tile[t * kTile + j] = 0.0f;
  }
  return nan || nan_lanes != 0;
}

}  // namespace linnet::tensor::detail
