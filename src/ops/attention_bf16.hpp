// The fused attention kernel's two small products by vdpbf16ps, for bf16
// keys and values at T = bf16 under `equivalent` on CPUs with AVX512-BF16
// (attention_bf16_avx512.cpp; the rest of the item is attention_tiles.inc).
//
// vdpbf16ps multiplies bf16 pairs exactly and adds each lane's two products
// to its f32 sum, so each score and each mixed value is the same sum of the
// same exact products as the f32 kernel's, added in another order (in
// pairs): what `equivalent` allows, as in the bf16 matrix products. Like
// those, it treats subnormal bf16 inputs as zero and flushes subnormal sums.
// The operands must be bf16 values: a T = bf16 query, bf16 keys and values,
// and the weights exp(s - m) that online_step has already rounded to bf16.
//
// Operands are laid out as the instruction takes them: a dword holds a pair
// of bf16 values, the first in its low half.
#pragma once

#include <cstdint>

namespace linnet::ops::detail {

// Keys per tile of the fused kernel (kTileKeys in kernels_attention.cpp).
constexpr int64_t kAttentionBf16TileKeys = 64;

// pairs[m * pairs_per_row + j] = (q[m][2j], q[m][2j + 1]) as bf16 for rows
// m < rows of `queries` ([rows, D] f32, each a bf16 value); pairs_per_row
// is (D + 1) / 2, an odd D's last pair padded with zero.
void attention_query_pairs(const float* queries, int64_t rows, int64_t head_dim, uint32_t* pairs);

// The keys [k0, k0 + count) of a head (bf16 rows `stride` elements apart,
// key k at row slots ? slots[k] : k) as panel[j * 64 + n] = (key n's
// values 2j, 2j + 1); keys past `count` zero.
void attention_key_pairs(const uint16_t* key, int64_t stride, const int32_t* slots, int64_t k0, int64_t count,
                         int64_t head_dim, uint32_t* panel);

// The values [k0, k0 + count) likewise as panel[i * dim_padded + d] =
// (value 2i's d, value 2i + 1's d), for i < (count + 1) / 2; a missing
// value and d past head_dim zero.
void attention_value_pairs(const uint16_t* value, int64_t stride, const int32_t* slots, int64_t k0, int64_t count,
                           int64_t head_dim, int64_t dim_padded, uint32_t* panel);

// scores[m * 64 + n] = sum over j < pairs_per_row of query m's pair j times
// key n's, for m < rows_padded (a multiple of 4) and n < count rounded up to
// a multiple of 32 (the panel's zero keys past `count` give zero there);
// the columns past those are left as they were.
void attention_scores_bf16(const uint32_t* query_pairs, const uint32_t* key_panel, int64_t pairs_per_row,
                           int64_t rows_padded, int64_t count, float* scores);

// out[m * dim_padded + d] += sum over n < count of weights[m * 64 + n] *
// value n's d, for m < rows_padded (a multiple of 4) and d < dim_padded (a
// multiple of 32). The weights are f32 holding bf16 values; weight_pairs
// is scratch for rows_padded * 32 dwords.
void attention_mix_bf16(const float* weights, int64_t rows_padded, const uint32_t* value_panel, int64_t count,
                        int64_t dim_padded, uint32_t* weight_pairs, float* out);

}  // namespace linnet::ops::detail
