// The MXFP4 row kernels on AVX-512 (F + VL, and BW for the decoder): eight
// f32 lanes in ymm registers (the documented order has eight lanes), the 16
// values of a group's scale looked up with one two-table permutation
// (vpermt2ps); and, where the CPU has AVX512-VBMI, two rows' eight lanes per
// zmm register for a decode step's few inputs (below).
// Compiled with -mavx512f -mavx512vl -mavx512bw -mavx2 -ffp-contract=off; called only
// when the CPU has AVX-512 (mxfp4_experts.cpp).
// g++ 12's AVX-512 intrinsics seed unused lanes with a self-initialised
// `_mm512_undefined_*()`, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "mxfp4_rows.hpp"

namespace linnet::ops::detail {
namespace {

struct Lookup {
  // Lane l: table[codes[l] & 15]; vpermt2ps reads the low four index bits only.
  static __m256 values(__m256i codes, const float* table) {
    return _mm256_permutex2var_ps(_mm256_loadu_ps(table), codes, _mm256_loadu_ps(table + 8));
  }
};

#include "mxfp4_rows.inc"

// --- two rows per zmm register, for a decode step's few inputs --------------
//
// The eight-lane kernel above spends, per eight values of a row, a
// broadcast, a shift and a table permutation before its multiplication and
// addition. Here a zmm register holds two rows' eight lanes, row r in lanes
// 0-7 and row r + 1 in lanes 8-15: each lane still sums its own row's
// values at i mod 8 in order, with a multiplication then an addition, so
// every sum keeps its bits; but a step costs a shift, one table
// permutation and the multiplications and additions for sixteen values,
// about half the instructions (Zen 5 runs zmm instructions at full width).
//
// Per group, the two rows' 16-byte blocks are split once into 64 code
// bytes (`nibbles`): bytes 0-15 row r's low nibbles (its even values),
// 16-31 row r + 1's low nibbles, 32-47 and 48-63 the high nibbles (odd
// values). Row r + 1's codes carry bit 4, so that one vpermt2ps over the
// two rows' 16-entry tables (row r's the first operand, row r + 1's the
// second) reads each lane's value from its own row's table. One byte
// permutation then puts the four parts' codes of every lane in that
// lane's four bytes (`codes`, group_indices below), and each part shifts
// its byte down. (Until 2026-12-02 each part had its own zero-masked byte
// permutation: two permutations per sixteen values; one fewer measured
// 1.02-1.04x faster, so the permutations are not what bounds the kernel.)

// Byte v / 2 (+ 32 when v is odd) of the codes holds value v's code.
constexpr int code_byte(int value) { return value / 2 + (value % 2) * 32; }

// The vpermb indices of a group: dword lane l takes, in its byte `part`,
// the code of row r's value 8 * part + l, and lane 8 + l row r + 1's (16
// bytes on), so one byte permutation per group places all four parts'
// codes; part p's lane codes are then the dwords shifted right by 8 * p
// (vpermt2ps reads only an index's low five bits, so the bytes above need
// no clearing). A shift is cheaper than the byte permutation per part it
// replaces.
inline __m512i group_indices() {
  alignas(64) int8_t bytes[64] = {};
  for (int part = 0; part < 4; ++part)
    for (int l = 0; l < 8; ++l) {
      bytes[4 * l + part] = static_cast<int8_t>(code_byte(8 * part + l));
      bytes[4 * (8 + l) + part] = static_cast<int8_t>(16 + code_byte(8 * part + l));
    }
  return _mm512_load_si512(bytes);
}

// The byte permutation (vpermb) is AVX512-VBMI: these functions carry it as
// their own target, and run only where the CPU has it (mxfp4_rows_avx512).
#define LINNET_VBMI __attribute__((target("avx512vbmi")))

// A tile further on: its first row, and how many of its `tile_rows` rows
// the run may read (none past the expert: `rows_after`; no std::min: see
// mxfp4_rows.hpp).
struct RowsAhead {
  int64_t first = 0, count = 0;
};
inline RowsAhead rows_ahead(const Mxfp4Rows& p, int64_t first_row, int64_t tile_rows) {
  const int64_t rows_left = p.rows + p.rows_after - first_row;
  return {first_row, rows_left < tile_rows ? rows_left : tile_rows};
}

// The rows `ahead`, a cache line (four groups) of each per four groups of
// this tile, and their scales every 64 groups: the rows of a tile lie one
// after another, so the hardware sees no single stream to run ahead on
// (without this, the tile waits on memory for most of its time). The code
// lines go to L2 (locality hint 2): a tile asks for eight rows' lines at
// once, and with the vdpbf16ps tiles two ahead that measured as fast as or
// faster than into L1 (1.56 against 1.64 ms per gate-up call, five
// alternated runs).
inline void prefetch_rows_ahead(const Mxfp4Rows& p, RowsAhead ahead, int64_t group) {
  if (ahead.count <= 0) return;
  const int64_t row_bytes = p.groups * 16;
  if (group % 4 == 0) {
    for (int r = 0; r < ahead.count; ++r)
      __builtin_prefetch(p.blocks + (ahead.first + r) * row_bytes + group * 16, 0, 2);
  }
  if (group % 64 == 0) {
    for (int r = 0; r < ahead.count; ++r) __builtin_prefetch(p.scales + (ahead.first + r) * p.groups + group);
  }
}

// The code bytes of group `group` of rows `row` and `row + 1` (see above):
// bytes 0-15 row's low nibbles, 16-31 row + 1's, 32-47 and 48-63 their high
// nibbles, with `second_row`'s bit set on row + 1's.
inline __m512i pair_codes(const Mxfp4Rows& p, int64_t row, int64_t group, __m512i second_row) {
  const int64_t row_bytes = p.groups * 16;
  const uint8_t* first_block = p.blocks + row * row_bytes + group * 16;
  const __m256i bytes = _mm256_setr_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first_block)),
                                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(first_block + row_bytes)));
  const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(bytes), _mm256_srli_epi16(bytes, 4), 1);
  // (both & low_nibbles) | second_row, in vpternlog's truth-table form.
  return _mm512_ternarylogic_epi32(both, _mm512_set1_epi8(0x0F), second_row, (0xF0 & 0xCC) | 0xAA);
}

// Pairs of rows (2 * Pairs rows from first_row) by Inputs inputs.
template <int Pairs, int Inputs>
LINNET_VBMI void paired_tile(const Mxfp4Rows& p, int64_t first_row, int64_t first_input) {
  const __m512i indices = group_indices();
  // Bit 4 on the second row's bytes (16-31 and 48-63).
  const __m512i second_row = _mm512_maskz_set1_epi8(0xFFFF0000FFFF0000ull, 0x10);
  const float* inputs[Inputs];
  for (int s = 0; s < Inputs; ++s) inputs[s] = p.inputs[first_input + s];
  const RowsAhead next_tile = rows_ahead(p, first_row + 2 * Pairs, 2 * Pairs);
  __m512 sums[Pairs][Inputs];
  for (int q = 0; q < Pairs; ++q)
    for (int s = 0; s < Inputs; ++s) sums[q][s] = _mm512_setzero_ps();
  for (int64_t group = 0; group < p.groups; ++group) {
    prefetch_rows_ahead(p, next_tile, group);
    __m512i codes[Pairs];
    __m512 first_table[Pairs], second_table[Pairs];
    for (int q = 0; q < Pairs; ++q) {
      const int64_t row = first_row + 2 * q;
      codes[q] = _mm512_permutexvar_epi8(indices, pair_codes(p, row, group, second_row));
      first_table[q] = _mm512_loadu_ps(p.value_table + p.scales[row * p.groups + group] * 16);
      second_table[q] = _mm512_loadu_ps(p.value_table + p.scales[(row + 1) * p.groups + group] * 16);
    }
    for (int part = 0; part < 4; ++part) {
      const int64_t at = group * 32 + part * 8;
      __m512 x[Inputs];
      for (int s = 0; s < Inputs; ++s)
        x[s] = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(inputs[s] + at))));
      for (int q = 0; q < Pairs; ++q) {
        const __m512i lane_codes = _mm512_srli_epi32(codes[q], 8 * part);
        const __m512 values = _mm512_permutex2var_ps(first_table[q], lane_codes, second_table[q]);
        for (int s = 0; s < Inputs; ++s) sums[q][s] = _mm512_add_ps(sums[q][s], _mm512_mul_ps(values, x[s]));
      }
    }
  }
  for (int q = 0; q < Pairs; ++q)
    for (int s = 0; s < Inputs; ++s) {
      float* out = p.outputs[first_input + s] + first_row + 2 * q;
      out[0] = combine_lanes(_mm512_castps512_ps256(sums[q][s]));
      out[1] = combine_lanes(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sums[q][s]), 1)));
    }
}

template <int Pairs>
LINNET_VBMI void paired_rows(const Mxfp4Rows& p, int64_t first_row) {
  int64_t input = 0;
  for (; input + kTileInputs <= p.input_count; input += kTileInputs)
    paired_tile<Pairs, kTileInputs>(p, first_row, input);
  switch (p.input_count - input) {
    case 2: paired_tile<Pairs, 2>(p, first_row, input); break;
    case 1: paired_tile<Pairs, 1>(p, first_row, input); break;
    default: break;
  }
}

// --- two rows per zmm register, multiplied by vdpbf16ps ---------------------
//
// For one bf16 input (a T = bf16 decode step), on CPUs with AVX512-BF16:
// the same two rows per register, but the 32 values of a group are looked
// up as bf16 (the table's values have at most two significant bits, so
// their bf16 bits are exact) and multiplied in pairs by vdpbf16ps, which
// per lane adds its odd word's product and then its even word's, each
// addition rounded to f32 (checked on Zen 5: docs/performance.md). The
// input's pairs (mxfp4_bf16_pairs) put value j of each half-group in lane
// j's odd word and value j + 8 in its even word, so lane j still adds the
// values at i = j mod 8 in increasing order: the eight-lane order, with the
// same bits, since every product of a bf16 and an MXFP4 value is exact in
// f32. Half the instructions per value of the f32 kernel above.
//
// vdpbf16ps treats subnormal inputs as zero and flushes subnormal results,
// so it is used only where nothing is subnormal: scale bytes in
// [kDotScaleLow, kDotScaleHigh] (table values zero or of magnitude in
// [2^-28, 6 * 2^27]) and inputs zero or of magnitude in [2^-60, 2^60]
// (mxfp4_bf16_pairs_safe). Every nonzero product then lies in [2^-88,
// 2^90) with at most ten significant bits, a multiple of 2^-97; so is every
// partial sum (a sum of such multiples, rounded to f32, stays one while its
// magnitude needs an ulp above 2^-97, and is exact below), which is thus
// zero or at least 2^-97, never subnormal, and below 2^103, never infinite.
// A tile whose rows have a scale byte outside the range runs paired_tile.
constexpr uint8_t kDotScaleLow = 100, kDotScaleHigh = 154;

#define LINNET_VBMI_BF16 __attribute__((target("avx512vbmi,avx512bf16")))

// vpermb indices of half h of a group: word 2j + 1 of row r's lanes takes
// the code of value 16h + j, word 2j that of value 16h + j + 8; row r + 1's
// lanes (words 16-31) the same from its code bytes (16 on), with bit 5
// (set there) choosing its table in the word permutation. Only the low
// byte of each word is set; the high bytes are zeroed by the mask.
inline __m512i half_indices(int half) {
  alignas(64) int8_t bytes[64] = {};
  for (int j = 0; j < 8; ++j) {
    bytes[2 * (2 * j + 1)] = static_cast<int8_t>(code_byte(16 * half + j));
    bytes[2 * (2 * j)] = static_cast<int8_t>(code_byte(16 * half + j + 8));
    bytes[2 * (16 + 2 * j + 1)] = static_cast<int8_t>(16 + code_byte(16 * half + j));
    bytes[2 * (16 + 2 * j)] = static_cast<int8_t>(16 + code_byte(16 * half + j + 8));
  }
  return _mm512_load_si512(bytes);
}

// Whether rows [first_row, first_row + count) have every scale byte in
// [kDotScaleLow, kDotScaleHigh].
inline bool dot_scales_in_range(const Mxfp4Rows& p, int64_t first_row, int64_t count) {
  const uint8_t* scales = p.scales + first_row * p.groups;
  const int64_t bytes = count * p.groups;
  const __m512i low = _mm512_set1_epi8(static_cast<char>(kDotScaleLow));
  const __m512i high = _mm512_set1_epi8(static_cast<char>(kDotScaleHigh));
  for (int64_t at = 0; at < bytes; at += 64) {
    const int64_t left = bytes - at;
    const __mmask64 lanes = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
    const __m512i values = _mm512_maskz_loadu_epi8(lanes, scales + at);
    const __mmask64 inside =
        _mm512_mask_cmpge_epu8_mask(lanes, values, low) & _mm512_mask_cmple_epu8_mask(lanes, values, high);
    if (inside != lanes) return false;
  }
  return true;
}

template <int Pairs>
LINNET_VBMI_BF16 void dot_paired_tile(const Mxfp4Rows& p, int64_t first_row) {
  const __m512i indices[2] = {half_indices(0), half_indices(1)};
  // Bit 5 on the second row's code bytes (16-31 and 48-63): its table, the
  // word permutation's second operand (32 words each, the table in the low 16).
  const __m512i second_row = _mm512_maskz_set1_epi8(0xFFFF0000FFFF0000ull, 0x20);
  constexpr __mmask64 kLowBytes = 0x5555555555555555ull;
  const uint16_t* const table = mxfp4_value_table_bf16();
  // The tile after next: a tile here takes about half a microsecond, and
  // one tile ahead left the loads of a decode step's rows waiting on memory
  // (its expert calls 1.80 and 0.92 ms per layer against 1.63 and 0.86 two
  // tiles ahead, means of five alternated runs; three or four tiles ahead
  // no faster than one).
  const RowsAhead tile_after_next = rows_ahead(p, first_row + 4 * Pairs, 2 * Pairs);
  __m512 sums[Pairs];
  for (int q = 0; q < Pairs; ++q) sums[q] = _mm512_setzero_ps();
  for (int64_t group = 0; group < p.groups; ++group) {
    prefetch_rows_ahead(p, tile_after_next, group);
    const __m512bh x[2] = {(__m512bh)_mm512_loadu_si512(p.input_pairs + group * 64),
                           (__m512bh)_mm512_loadu_si512(p.input_pairs + group * 64 + 32)};
    for (int q = 0; q < Pairs; ++q) {
      const int64_t row = first_row + 2 * q;
      const __m512i nibbles = pair_codes(p, row, group, second_row);
      // The two rows' 16-entry bf16 tables, in the low halves.
      const __m512i first_table = _mm512_castsi256_si512(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + p.scales[row * p.groups + group] * 16)));
      const __m512i second_table = _mm512_castsi256_si512(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + p.scales[(row + 1) * p.groups + group] * 16)));
      for (int half = 0; half < 2; ++half) {
        // vpermt2w reads index bits 0-5: the code, and bit 5 the table.
        const __m512i codes = _mm512_maskz_permutexvar_epi8(kLowBytes, indices[half], nibbles);
        const __m512i values = _mm512_permutex2var_epi16(first_table, codes, second_table);
        sums[q] = _mm512_dpbf16_ps(sums[q], x[half], (__m512bh)values);
      }
    }
  }
  for (int q = 0; q < Pairs; ++q) {
    float* out = p.outputs[0] + first_row + 2 * q;
    out[0] = combine_lanes(_mm512_castps512_ps256(sums[q]));
    out[1] = combine_lanes(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sums[q]), 1)));
  }
}

// Tiles of kTilePairs pairs of rows, then a pair, then an odd last row in
// the eight-lane kernel.
constexpr int kTilePairs = 2;  // 4 pairs: 1.1x in cache, no faster from memory

// The vdpbf16ps tiles take twice as many pairs. Each sum there is one
// chain of dependent vdpbf16ps (two per group, in the documented order),
// so two pairs kept two chains in flight and the kernel waited on their
// latency; four pairs: 1.41x in cache and 1.33x from memory
// (bench_mxfp4_rows, 18.2 -> 25.8 and 15.8 -> 21.1 GB/s per thread), and a
// GPT-OSS decode step's experts 4.9 -> 4.1 ms. (The f32 paired tile gains
// nothing from four: its multiplications and additions are not waiting on
// one another but on the vector pipes.)
constexpr int kDotTilePairs = 4;
static_assert(kDotTilePairs % kTilePairs == 0, "a vdpbf16ps tile falls back to whole f32 tiles");

// A tile of pairs by vdpbf16ps where its scales allow, else the f32 paired
// kernel's own tiles.
template <int Pairs>
LINNET_VBMI_BF16 void dot_paired_rows(const Mxfp4Rows& p, int64_t first_row) {
  if (dot_scales_in_range(p, first_row, 2 * Pairs)) {
    dot_paired_tile<Pairs>(p, first_row);
  } else if constexpr (Pairs > kTilePairs) {
    for (int q = 0; q < Pairs; q += kTilePairs) paired_tile<kTilePairs, 1>(p, first_row + 2 * q, 0);
  } else {
    paired_tile<Pairs, 1>(p, first_row, 0);
  }
}

LINNET_VBMI void run_rows_paired(const Mxfp4Rows& p) {
  int64_t row = 0;
  for (; row + 2 * kTilePairs <= p.rows; row += 2 * kTilePairs) paired_rows<kTilePairs>(p, row);
  for (; row + 2 <= p.rows; row += 2) paired_rows<1>(p, row);
  if (row < p.rows) dot_rows<1, false>(p, row);
}

LINNET_VBMI_BF16 void run_rows_dot_paired(const Mxfp4Rows& p) {
  int64_t row = 0;
  for (; row + 2 * kDotTilePairs <= p.rows; row += 2 * kDotTilePairs) dot_paired_rows<kDotTilePairs>(p, row);
  for (; row + 2 * kTilePairs <= p.rows; row += 2 * kTilePairs) dot_paired_rows<kTilePairs>(p, row);
  for (; row + 2 <= p.rows; row += 2) dot_paired_rows<1>(p, row);
  if (row < p.rows) dot_rows<1, false>(p, row);
}

#include "mxfp4_decode_avx512.inc"

}  // namespace

void mxfp4_rows_avx512_eight_lanes(const Mxfp4Rows& problem) { run_rows(problem); }

void mxfp4_rows_avx512(const Mxfp4Rows& problem) {
  static const bool has_vbmi = __builtin_cpu_supports("avx512vbmi");
  static const bool has_bf16 = has_vbmi && __builtin_cpu_supports("avx512bf16");
  if (!has_vbmi || (problem.panel != nullptr && problem.input_count >= kPanelInputs)) {
    run_rows(problem);  // the eight-lane kernel, or rows decoded once into the panel
  } else if (has_bf16 && problem.input_pairs != nullptr && problem.input_count == 1) {
    run_rows_dot_paired(problem);
  } else {
    run_rows_paired(problem);
  }
}

void mxfp4_decode_avx512(const uint8_t* blocks, const uint8_t* scales, int64_t values, const float* value_table,
                     bool bf16, void* out) {
  if (bf16) {
    decode_groups_bf16(blocks, scales, values / 32, mxfp4_value_table_bf16(), static_cast<uint16_t*>(out));
  } else {
    decode_groups_f32(blocks, scales, values / 32, value_table, static_cast<float*>(out));
  }
}

}  // namespace linnet::ops::detail
