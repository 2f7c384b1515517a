// Kernels for the std.nn.attention ops: attention, grouped_attention,
// attention_rows, grouped_attention_rows, sink_attention, paged_attention
// and paged_prefill_attention.
//
// Every variant is the same computation over different ways of finding a
// query's keys (stdlib/nn/attention.linnet): query head h reads key/value
// head h / (Hq / Hk); the score of a visible key is (q . k) * scale in f32,
// a hidden key's score is MASKED (-1e30, so a row with no visible key
// averages its values evenly instead of producing NaN); softmax over the
// keys in f32 with the row maximum subtracted (with sinks: the maximum also
// covers the sink, whose share joins the denominator and is then dropped);
// the values mixed in f32; one rounding to T. In bf16 each weight
// exp(s - m) enters the mix rounded to bf16 while the sum takes it
// unrounded, and the mix is divided by the sum at the end: where PyTorch's
// scaled_dot_product_attention and FlashAttention round (docs/ops.md, "What
// `equivalent` and `fast` mean here"); the body keeps the weights in f32.
//
// How (FlashAttention-2's order, as llama.cpp's CPU flash_attn_ext also
// runs it): one work item is one key/value head of one sequence with every
// query head that reads it and a tile of queries, so a key or value row is
// read once for all of them and never copied per query head. The item walks
// the keys its rows see in tiles of 64: a small product gives the tile's
// scores, an online softmax in f32 keeps each row's running maximum and sum
// (rescaling what it has mixed so far when the maximum grows), and a second
// small product mixes the tile's values. The products run in vectors chosen
// at run time (AVX-512F, AVX2 with FMA, or the x86-64 baseline; see
// attention_tiles.inc). Keys and values are read where they lie, in their
// own dtype (bf16 widened a tile at a time), so a KV cache is never
// converted or copied, and keys no row of the item sees are never read: a
// decode step over a cache of MaxSeq positions costs what its visible
// positions cost.
//
// A hidden key's weight exp(MASKED - max) is exactly zero in f32 whenever
// the row's maximum exceeds MASKED (some visible score or the sink does):
// that is every ordinary row, and those rows skip hidden keys. A row for
// which it is not (nothing visible and no sink, scores at -1e30, NaN) is
// recomputed the body's way over every key, hidden ones included. One
// difference from the body remains: a NaN or infinity stored at a hidden
// position does not reach the result (the body multiplies it by a zero
// weight, giving NaN); hidden cache positions hold zeros or stale finite
// values in practice.
//
// The `fast` kernels (bf16 only) round where bf16 reference models do in
// eager attention: the product q . k to bf16, the scaled score to bf16, and
// each probability to bf16 before the mix. They need each row's final
// maximum and sum before any probability, so they keep a row's scores and
// take two passes instead of the online one.
//
// Each item is computed by one thread, in a fixed order, so results do not
// depend on the number of threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_bf16.hpp"
#include "kernel_support.hpp"
#include "linnet/tensor/gemm.hpp"

namespace linnet::ops::detail {

namespace {

constexpr float kMasked = -1e30f;  // std.nn.attention's MASKED

// One work item for attention_tiles.inc: where its keys and values are and
// what each of its rows sees.
struct TileItem {
  int64_t rows = 0;                // M: query rows (heads of the group x queries)
  int64_t rows_padded = 0;         // a multiple of 4
  int64_t head_dim = 0;            // D
  int64_t dim_padded = 0;          // a multiple of 32
  const float* queries = nullptr;  // [rows_padded, D] f32; rows past `rows` zero
  // Key k of the head: key + (slots ? slots[k] : k) * key_stride elements
  // (value alike), D contiguous elements of f32 or bf16.
  const void* key = nullptr;
  const void* value = nullptr;
  int64_t key_stride = 0;
  int64_t value_stride = 0;
  bool bf16 = false;
  const int32_t* slots = nullptr;
  // Row m sees keys first[m] ..= last[m] (none when first > last) where
  // mask[m][k] is nonzero (mask null, or mask[m] null: all of them).
  const int64_t* first = nullptr;
  const int64_t* last = nullptr;
  const uint8_t* const* mask = nullptr;
  int64_t begin = 0, end = 0;  // every key a row sees lies in [begin, end)
  float scale = 1.0f;
  const float* sinks = nullptr;  // per row, or null
  bool fast = false;             // bf16 `fast`: rounded scores and probabilities
  bool weights_in_bf16 = false;  // bf16 `equivalent`: exp(s - m) rounded as it enters the mix
  // bf16 `equivalent` with bf16 keys and values on a CPU with AVX512-BF16:
  // the two products by vdpbf16ps (attention_bf16.hpp).
  bool dot_bf16 = false;
};

// Scratch space for one item at a time (sizes in attention_tiles.inc).
struct TileScratch {
  float* key_panel;
  float* value_tile;
  float* scores;
  float* out;
  float* row_max;
  float* row_sum;
  uint8_t* row_nan;
  float* all_scores;
  uint32_t* query_pairs;   // dot_bf16 only: [rows_padded, (D + 1) / 2]
  uint32_t* weight_pairs;  // dot_bf16 only: [rows_padded, kTileKeys / 2]
};

constexpr int64_t kTileKeys = 64;
constexpr int64_t kRowBlock = 4;
static_assert(kTileKeys == kAttentionBf16TileKeys, "the vdpbf16ps products work on the same key tiles");

}  // namespace

// The vector code, compiled once per instruction set. Everything it defines
// has internal linkage (an unnamed namespace), and the standard headers it
// could use were included above, outside the target regions.
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
namespace {
namespace avx512 {
#define LINNET_VECTOR_WIDTH 16
#include "attention_tiles.inc"
#undef LINNET_VECTOR_WIDTH
}  // namespace avx512
}  // namespace
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace {
namespace avx2 {
#define LINNET_VECTOR_WIDTH 8
#include "attention_tiles.inc"
#undef LINNET_VECTOR_WIDTH
}  // namespace avx2
}  // namespace
#pragma GCC pop_options

namespace {
namespace baseline {
#define LINNET_VECTOR_WIDTH 4
#include "attention_tiles.inc"
#undef LINNET_VECTOR_WIDTH
}  // namespace baseline

using ItemFunction = void (*)(const TileItem&, const TileScratch&);

// The widest of the three the CPU runs.
ItemFunction item_function() {
  static const ItemFunction chosen = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &avx512::attend_item;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &avx2::attend_item;
    return &baseline::attend_item;
  }();
  return chosen;
}

struct Geometry {
  int64_t batch = 0;        // B (or P for paged prefill: one row per token)
  int64_t query_heads = 0;  // Hq
  int64_t kv_heads = 0;     // Hk
  int64_t queries = 0;      // Q
  int64_t keys = 0;         // K (Pages * Size for paged)
  int64_t head_dim = 0;     // D
};

struct Numerics {
  float scale = 1.0f;
  const float* sinks = nullptr;  // [Hq] in f32, or null
  bool fast = false;
  bool weights_in_bf16 = false;  // T = bf16 under `equivalent` (see the file comment)
  Rounding round = &no_rounding;
};

// Keys or values [B, Hk, K, D] where they lie: element strides of the first
// three axes, the last contiguous.
struct HeadRows {
  const std::byte* data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, key_stride = 0;
  Tensor keep;  // the tensor (or its contiguous copy) the pointer is into
};

HeadRows head_rows(const Tensor& x_in) {
  HeadRows rows;
  rows.keep = x_in.rank() == 4 && x_in.strides()[3] == 1 ? x_in : x_in.contiguous();
  rows.data = static_cast<const std::byte*>(rows.keep.raw_data());
  rows.batch_stride = rows.keep.strides()[0];
  rows.head_stride = rows.keep.strides()[1];
  rows.key_stride = rows.keep.strides()[2];
  return rows;
}

// Which keys row (b, q) sees: a mask row (null: every key) and the span of
// its visible keys.
struct Visibility {
  std::vector<int64_t> first, last;      // [B, Q] (or [1, Q] when shared)
  std::vector<const uint8_t*> mask_row;  // [B, Q] or [1, Q]; null entries: no mask
  bool per_batch = false;
  Tensor keep;
  size_t index(int64_t b, int64_t q, int64_t Q) const { return static_cast<size_t>((per_batch ? b : 0) * Q + q); }
};

// First and last nonzero byte of `length` bytes, or {length, -1}.
std::pair<int64_t, int64_t> visible_span(const uint8_t* row, int64_t length) {
  int64_t first = 0;
  while (first < length && row[first] == 0) ++first;
  if (first == length) return {length, -1};
  int64_t last = length - 1;
  while (row[last] == 0) --last;
  return {first, last};
}

// From a mask [B, Q, K] (per_sequence) or [Q, K], or none.
Visibility visibility(const std::optional<Tensor>& mask, const Geometry& g, bool per_sequence) {
  Visibility seen;
  if (!mask) {
    seen.first.assign(static_cast<size_t>(g.queries), 0);
    seen.last.assign(static_cast<size_t>(g.queries), g.keys - 1);
    seen.mask_row.assign(static_cast<size_t>(g.queries), nullptr);
    return seen;
  }
  Tensor bools = mask->to(DType::Bool);
  if (bools.strides().back() != 1 && bools.extent(-1) > 1) bools = bools.contiguous();
  seen.keep = bools;
  const int rank = bools.rank();
  const int64_t batch_stride = per_sequence ? bools.strides()[0] : 0;
  const int64_t query_stride = bools.strides()[rank - 2];
  seen.per_batch = per_sequence && batch_stride != 0 && g.batch > 1;
  const int64_t rows = seen.per_batch ? g.batch : 1;
  const auto* base = static_cast<const uint8_t*>(bools.raw_data());
  seen.first.resize(static_cast<size_t>(rows * g.queries));
  seen.last.resize(seen.first.size());
  seen.mask_row.resize(seen.first.size());
  for (int64_t b = 0; b < rows; ++b) {
    for (int64_t q = 0; q < g.queries; ++q) {
      const uint8_t* row = base + b * batch_stride + q * query_stride;
      const auto [first, last] = visible_span(row, g.keys);
      const size_t at = static_cast<size_t>(b * g.queries + q);
      seen.first[at] = first;
      seen.last[at] = last;
      // A row whose visible keys are one unbroken span (a causal or a
      // sliding-window mask) is said by the span alone; the kernel then
      // need not test each key's byte.
      const bool unbroken =
          first > last || std::memchr(row + first, 0, static_cast<size_t>(last - first + 1)) == nullptr;
      seen.mask_row[at] = unbroken ? nullptr : row;
    }
  }
  return seen;
}

// How a call's rows find their keys: dense heads with a visibility, or a
// paged pool (slots per row, rows see positions 0 ..= their position).
struct KeySource {
  HeadRows key, value;
  bool bf16 = false;
  // Dense: rows see what `seen` says.
  const Visibility* seen = nullptr;
  // Paged: row b's position s lives at slots[b * keys + s]; row b sees
  // 0 ..= last_position[b].
  const std::vector<int32_t>* slots = nullptr;
  const std::vector<int64_t>* last_position = nullptr;
};

// The body's computation of one row over all K keys, hidden ones included:
// for the rows the tiles cannot do exactly (see the file comment).
template <class KeyAt, class ValueAt, class Visible>
void exact_row(const float* query, int64_t keys, int64_t D, const Numerics& n, float sink, bool has_sink,
               KeyAt key_at, ValueAt value_at, Visible visible, bool bf16, float* out, std::vector<float>& scores,
               std::vector<float>& widened) {
  auto widen = [&](const std::byte* row) {
    for (int64_t d = 0; d < D; ++d) {
      widened[static_cast<size_t>(d)] = bf16 ? tensor::bf16_bits_to_float(reinterpret_cast<const uint16_t*>(row)[d])
                                             : reinterpret_cast<const float*>(row)[d];
    }
    return widened.data();
  };
  scores.resize(static_cast<size_t>(keys));
  widened.resize(static_cast<size_t>(D));
  for (int64_t k = 0; k < keys; ++k) {
    if (!visible(k)) {
      scores[k] = kMasked;
      continue;
    }
    const float* key = widen(key_at(k));
    float dot = 0.0f;
    for (int64_t d = 0; d < D; ++d) dot += query[d] * key[d];
    scores[k] = n.fast ? n.round(n.round(dot) * n.scale) : dot * n.scale;
  }
  float peak = scores[0];
  for (int64_t k = 1; k < keys; ++k) peak = max_propagating_nan(peak, scores[k]);
  if (has_sink) peak = max_propagating_nan(peak, sink);
  float total = 0.0f;
  for (int64_t k = 0; k < keys; ++k) {
    scores[k] = std::exp(scores[k] - peak);
    total += scores[k];
  }
  if (has_sink) total = std::exp(sink - peak) + total;
  for (int64_t d = 0; d < D; ++d) out[d] = 0.0f;
  for (int64_t k = 0; k < keys; ++k) {
    float weight = scores[k] / total;
    if (n.fast) weight = n.round(weight);
    const float* value = widen(value_at(k));
    for (int64_t d = 0; d < D; ++d) out[d] += weight * value[d];
  }
}

// Attention of every row: query [batch, Hq, Q, D] f32 (query_row locates a
// row), out likewise. Work items: (b, key/value head, tile of queries).
template <class QueryRow, class OutRow>
void attend(const Geometry& g, const Numerics& n, const KeySource& source, QueryRow query_row, OutRow out_row) {
  const int64_t group = g.query_heads / g.kv_heads;
  const int64_t D = g.head_dim;
  const int64_t Dp = (D + 31) / 32 * 32;
  const int64_t query_tile = std::max<int64_t>(1, std::min<int64_t>(g.queries, 64 / std::max<int64_t>(group, 1)));
  const int64_t query_tiles = (g.queries + query_tile - 1) / query_tile;
  const int64_t items = g.batch * g.kv_heads * query_tiles;
  const int64_t max_rows = group * query_tile;
  const int64_t rows_padded_max = (max_rows + kRowBlock - 1) / kRowBlock * kRowBlock;
  const int64_t keys_padded = (g.keys + kTileKeys - 1) / kTileKeys * kTileKeys;
  const size_t element = source.bf16 ? 2 : 4;
  const ItemFunction run_item = item_function();
  // The kernels' path (tensor::gemm's, which tests may override), as the
  // bf16 products of `linear` and the experts choose theirs.
  const bool dot_bf16 =
      n.weights_in_bf16 && source.bf16 && tensor::gemm::active_isa() == tensor::gemm::Isa::Avx512Bf16;

#pragma omp parallel if (tensor::worth_threads(g.batch * g.query_heads * g.queries * g.keys * D * 2))
  {
    std::vector<float> key_panel(static_cast<size_t>(D * kTileKeys));
    std::vector<float> value_tile(static_cast<size_t>(std::max(kTileKeys * Dp, D)));
    std::vector<float> scores(static_cast<size_t>(rows_padded_max * kTileKeys));
    std::vector<float> out(static_cast<size_t>(rows_padded_max * Dp));
    std::vector<float> row_max(static_cast<size_t>(rows_padded_max)), row_sum(row_max.size());
    std::vector<uint8_t> row_nan(row_max.size());
    std::vector<float> all_scores(n.fast ? static_cast<size_t>(rows_padded_max * keys_padded) : 0);
    std::vector<float> queries(static_cast<size_t>(rows_padded_max * D));
    std::vector<int64_t> first(row_max.size()), last(row_max.size());
    std::vector<const uint8_t*> masks(row_max.size());
    std::vector<float> sinks(row_max.size());
    std::vector<float> exact_scores, exact_widened;
    std::vector<uint32_t> query_pairs(dot_bf16 ? static_cast<size_t>(rows_padded_max * ((D + 1) / 2)) : 0);
    std::vector<uint32_t> weight_pairs(dot_bf16 ? static_cast<size_t>(rows_padded_max * kTileKeys / 2) : 0);
    const TileScratch scratch{key_panel.data(),   value_tile.data(),  scores.data(),       out.data(),
                              row_max.data(),     row_sum.data(),     row_nan.data(),      all_scores.data(),
                              query_pairs.data(), weight_pairs.data()};
#pragma omp for schedule(dynamic, 1)
    for (int64_t item_index = 0; item_index < items; ++item_index) {
      const int64_t b = item_index / (g.kv_heads * query_tiles);
      const int64_t kv = (item_index / query_tiles) % g.kv_heads;
      const int64_t q0 = (item_index % query_tiles) * query_tile;
      const int64_t tile_queries = std::min(query_tile, g.queries - q0);
      TileItem item;
      item.rows = group * tile_queries;
      item.rows_padded = (item.rows + kRowBlock - 1) / kRowBlock * kRowBlock;
      item.head_dim = D;
      item.dim_padded = Dp;
      item.bf16 = source.bf16;
      item.scale = n.scale;
      item.fast = n.fast;
      item.weights_in_bf16 = n.weights_in_bf16;
      item.dot_bf16 = dot_bf16;
      item.key = source.key.data + (b * source.key.batch_stride + kv * source.key.head_stride) * element;
      item.value = source.value.data + (b * source.value.batch_stride + kv * source.value.head_stride) * element;
      item.key_stride = source.key.key_stride;
      item.value_stride = source.value.key_stride;
      if (source.slots != nullptr) item.slots = source.slots->data() + b * g.keys;
      int64_t begin = g.keys, end = 0;
      for (int64_t m = 0; m < item.rows_padded; ++m) {
        float* query = queries.data() + m * D;
        if (m >= item.rows) {
          std::fill(query, query + D, 0.0f);
          first[m] = 0;
          last[m] = -1;
          masks[m] = nullptr;
          continue;
        }
        const int64_t h = kv * group + m / tile_queries, q = q0 + m % tile_queries;
        std::memcpy(query, query_row(b, h, q), static_cast<size_t>(D) * sizeof(float));
        if (source.seen != nullptr) {
          const size_t at = source.seen->index(b, q, g.queries);
          first[m] = source.seen->first[at];
          last[m] = source.seen->last[at];
          masks[m] = source.seen->mask_row[at];
        } else {
          first[m] = 0;
          last[m] = std::min((*source.last_position)[static_cast<size_t>(b)], g.keys - 1);
          masks[m] = nullptr;
        }
        if (n.sinks != nullptr) sinks[m] = n.sinks[h];
        if (first[m] <= last[m]) {
          begin = std::min(begin, first[m]);
          end = std::max(end, last[m] + 1);
        }
      }
      item.queries = queries.data();
      item.first = first.data();
      item.last = last.data();
      item.mask = masks.data();
      item.begin = begin < end ? begin : 0;
      item.end = begin < end ? end : 0;
      item.sinks = n.sinks != nullptr ? sinks.data() : nullptr;
      run_item(item, scratch);

      for (int64_t m = 0; m < item.rows; ++m) {
        const int64_t h = kv * group + m / tile_queries, q = q0 + m % tile_queries;
        float* target = out_row(b, h, q);
        const float peak = row_max[m], total = row_sum[m];
        if (!row_nan[m] && peak > kMasked && total == total) {
          const float* mixed = out.data() + m * Dp;
          if (n.fast) {
            std::memcpy(target, mixed, static_cast<size_t>(D) * sizeof(float));
          } else {
            for (int64_t d = 0; d < D; ++d) target[d] = mixed[d] / total;
          }
          continue;
        }
        // Nothing visible without a sink, scores at MASKED, or NaN: every
        // key, as the body computes it.
        const std::byte* key_base = static_cast<const std::byte*>(item.key);
        const std::byte* value_base = static_cast<const std::byte*>(item.value);
        auto slot = [&](int64_t k) { return item.slots ? item.slots[k] : k; };
        auto key_at = [&](int64_t k) { return key_base + slot(k) * item.key_stride * element; };
        auto value_at = [&](int64_t k) { return value_base + slot(k) * item.value_stride * element; };
        const uint8_t* mask = masks[m];
        const int64_t row_first = first[m], row_last = last[m];
        auto visible = [&](int64_t k) {
          return k >= row_first && k <= row_last && (mask == nullptr || mask[k] != 0);
        };
        exact_row(query_row(b, h, q), g.keys, D, n, n.sinks ? n.sinks[h] : 0.0f, n.sinks != nullptr, key_at,
                  value_at, visible, source.bf16, target, exact_scores, exact_widened);
      }
    }
  }
}

Numerics read_numerics(const eval::NativeCall& call, bool fast) {
  Numerics numerics;
  numerics.scale = static_cast<float>(float_argument(call, "scale"));
  numerics.fast = fast;
  numerics.weights_in_bf16 = !fast && dtype_generic(call, "T") == DType::BF16;
  numerics.round = rounding_for(dtype_generic(call, "T"));
  return numerics;
}

// Keys and values in their own dtype, or nothing when it is neither f32 nor
// bf16 or the two differ (the body runs).
std::optional<KeySource> key_source(const eval::NativeCall& call) {
  const Tensor& key = tensor_argument(call, "key");
  const Tensor& value = tensor_argument(call, "value");
  if (key.dtype() != value.dtype() || (key.dtype() != DType::F32 && key.dtype() != DType::BF16)) return std::nullopt;
  if (key.rank() != 4 || value.rank() != 4) return std::nullopt;
  KeySource source;
  source.key = head_rows(key);
  source.value = head_rows(value);
  source.bf16 = key.dtype() == DType::BF16;
  return source;
}

// Attention over dense [B, Hk, K, D] keys and values with a per-sequence
// mask ([B, Q, K]), a shared one ([Q, K]) or none.
std::optional<eval::Value> dense_attention(const eval::NativeCall& call, const Geometry& g, Numerics numerics,
                                           const std::optional<Tensor>& mask, bool per_sequence) {
  if (g.keys == 0 || g.kv_heads <= 0) return std::nullopt;  // the body reports these
  std::optional<KeySource> source = key_source(call);
  if (!source) return std::nullopt;
  const Tensor query = contiguous_f32(tensor_argument(call, "query"));
  Tensor out = Tensor::empty(DType::F32, {g.batch, g.query_heads, g.queries, g.head_dim});
  const Visibility seen = visibility(mask, g, per_sequence);
  source->seen = &seen;
  const int64_t D = g.head_dim, Q = g.queries;
  const float* q = query.data<float>();
  float* o = out.mutable_data<float>();
  attend(
      g, numerics, *source, [&](int64_t b, int64_t h, int64_t i) { return q + ((b * g.query_heads + h) * Q + i) * D; },
      [&](int64_t b, int64_t h, int64_t i) { return o + ((b * g.query_heads + h) * Q + i) * D; });
  return eval::Value::from_tensor(to_dtype(out, dtype_generic(call, "T")));
}

template <bool Fast>
std::optional<eval::Value> run_attention(const eval::NativeCall& call) {
  const int64_t heads = dim_generic(call, "H");
  const Geometry g{dim_generic(call, "B"), heads, heads, dim_generic(call, "Q"), dim_generic(call, "K"),
                   dim_generic(call, "D")};
  return dense_attention(call, g, read_numerics(call, Fast), optional_tensor_argument(call, "mask"), false);
}

template <bool Fast>
std::optional<eval::Value> run_grouped_attention(const eval::NativeCall& call) {
  const Geometry g{dim_generic(call, "B"), dim_generic(call, "H"), dim_generic(call, "Hk"),
                   dim_generic(call, "Q"), dim_generic(call, "K"), dim_generic(call, "D")};
  return dense_attention(call, g, read_numerics(call, Fast), optional_tensor_argument(call, "mask"), false);
}

template <bool Fast>
std::optional<eval::Value> run_attention_rows(const eval::NativeCall& call) {
  const int64_t heads = dim_generic(call, "H");
  const Geometry g{dim_generic(call, "B"), heads, heads, dim_generic(call, "Q"), dim_generic(call, "K"),
                   dim_generic(call, "D")};
  return dense_attention(call, g, read_numerics(call, Fast), tensor_argument(call, "mask"), true);
}

template <bool Fast>
std::optional<eval::Value> run_grouped_attention_rows(const eval::NativeCall& call) {
  const Geometry g{dim_generic(call, "B"), dim_generic(call, "H"), dim_generic(call, "Hk"),
                   dim_generic(call, "Q"), dim_generic(call, "K"), dim_generic(call, "D")};
  return dense_attention(call, g, read_numerics(call, Fast), tensor_argument(call, "mask"), true);
}

template <bool Fast>
std::optional<eval::Value> run_sink_attention(const eval::NativeCall& call) {
  const Geometry g{dim_generic(call, "B"), dim_generic(call, "Hq"), dim_generic(call, "Hk"),
                   dim_generic(call, "Q"), dim_generic(call, "K"), dim_generic(call, "D")};
  Numerics numerics = read_numerics(call, Fast);
  const Tensor sinks = contiguous_f32(tensor_argument(call, "sinks"));
  numerics.sinks = sinks.data<float>();
  return dense_attention(call, g, numerics, tensor_argument(call, "mask"), true);
}

// Where each row's positions lie in a paged pool, as paged_attention's body
// finds them: position s of row b is seen when s <= positions[b], and then
// lives at slot table[r, s / Size] * Size + s % Size (i32 arithmetic, r the
// row's table row); an unseen position reads slot 0. Nothing when a seen
// position's slot is outside the pool (the body's gather reports it).
struct PagedSlots {
  std::vector<int32_t> slot;  // [rows, Pages * Size]
};

std::optional<PagedSlots> paged_slots(const Tensor& table, const std::vector<int64_t>& table_rows,
                                      const Tensor& positions, int64_t pages, int64_t size, int64_t pool) {
  const int64_t length = pages * size;
  if (size <= 0 || pool <= 0 || length > std::numeric_limits<int32_t>::max()) return std::nullopt;
  const Tensor entries = table.to(DType::I32).contiguous();
  const Tensor ends = positions.to(DType::I32).contiguous();
  const int32_t* page_of = entries.data<int32_t>();
  const int32_t* last = ends.data<int32_t>();
  const int32_t size32 = static_cast<int32_t>(size);
  PagedSlots slots;
  slots.slot.assign(table_rows.size() * static_cast<size_t>(length), 0);
  for (size_t b = 0; b < table_rows.size(); ++b) {
    for (int32_t s = 0; s < static_cast<int32_t>(length); ++s) {
      if (s > last[b]) continue;
      const int32_t page = page_of[table_rows[b] * pages + s / size32];
      const int32_t slot = wrapping_add_i32(wrapping_mul_i32(page, size32), s % size32);
      if (slot < 0 || slot >= pool) return std::nullopt;
      slots.slot[b * static_cast<size_t>(length) + static_cast<size_t>(s)] = slot;
    }
  }
  return slots;
}

// Paged attention of `rows` single queries (query_row/out_row locate query
// and output row b, head h) over the pool key/value [1, Hk, N, D].
template <class QueryRow, class OutRow>
std::optional<eval::Value> paged_attend(const eval::NativeCall& call, const Geometry& g, bool fast,
                                        const PagedSlots& slots, const Tensor& positions, QueryRow query_row,
                                        OutRow out_row, const Shape& out_shape) {
  std::optional<KeySource> source = key_source(call);
  if (!source) return std::nullopt;
  source->slots = &slots.slot;
  // One pool for every row: row b reads the pool's only sequence.
  source->key.batch_stride = 0;
  source->value.batch_stride = 0;
  const Tensor ends = positions.to(DType::I64).contiguous();
  std::vector<int64_t> last(ends.data<int64_t>(), ends.data<int64_t>() + g.batch);
  source->last_position = &last;
  Tensor out = Tensor::empty(DType::F32, out_shape);
  const Tensor query = contiguous_f32(tensor_argument(call, "query"));
  const float* q = query.data<float>();
  float* o = out.mutable_data<float>();
  attend(
      g, read_numerics(call, fast), *source,
      [&](int64_t b, int64_t h, int64_t) { return query_row(q, b, h); },
      [&](int64_t b, int64_t h, int64_t) { return out_row(o, b, h); });
  return eval::Value::from_tensor(to_dtype(out, dtype_generic(call, "T")));
}

template <bool Fast>
std::optional<eval::Value> run_paged_attention(const eval::NativeCall& call) {
  const int64_t B = dim_generic(call, "B"), Hq = dim_generic(call, "Hq"), Hk = dim_generic(call, "Hk");
  const int64_t N = dim_generic(call, "N"), pages = dim_generic(call, "Pages"), size = dim_generic(call, "Size");
  const int64_t D = dim_generic(call, "D");
  if (Hk <= 0 || pages * size == 0) return std::nullopt;
  std::vector<int64_t> table_rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) table_rows[static_cast<size_t>(b)] = b;
  const Tensor& positions = tensor_argument(call, "positions");
  const std::optional<PagedSlots> slots =
      paged_slots(tensor_argument(call, "table"), table_rows, positions, pages, size, N);
  if (!slots) return std::nullopt;
  const Geometry g{B, Hq, Hk, 1, pages * size, D};
  return paged_attend(
      call, g, Fast, *slots, positions, [&](const float* q, int64_t b, int64_t h) { return q + (b * Hq + h) * D; },
      [&](float* o, int64_t b, int64_t h) { return o + (b * Hq + h) * D; }, {B, Hq, 1, D});
}

template <bool Fast>
std::optional<eval::Value> run_paged_prefill_attention(const eval::NativeCall& call) {
  const int64_t P = dim_generic(call, "P"), Hq = dim_generic(call, "Hq"), Hk = dim_generic(call, "Hk");
  const int64_t N = dim_generic(call, "N"), table_height = dim_generic(call, "Rows");
  const int64_t pages = dim_generic(call, "Pages"), size = dim_generic(call, "Size"), D = dim_generic(call, "D");
  if (Hk <= 0 || pages * size == 0) return std::nullopt;
  // Token p reads the page list of its row rows[p].
  const Tensor rows = tensor_argument(call, "rows").to(DType::I64).contiguous();
  std::vector<int64_t> table_rows(rows.data<int64_t>(), rows.data<int64_t>() + P);
  for (int64_t row : table_rows) {
    if (row < 0 || row >= table_height) return std::nullopt;
  }
  const Tensor& positions = tensor_argument(call, "positions");
  const std::optional<PagedSlots> slots =
      paged_slots(tensor_argument(call, "table"), table_rows, positions, pages, size, N);
  if (!slots) return std::nullopt;
  const Geometry g{P, Hq, Hk, 1, pages * size, D};
  return paged_attend(
      call, g, Fast, *slots, positions, [&](const float* q, int64_t p, int64_t h) { return q + (h * P + p) * D; },
      [&](float* o, int64_t p, int64_t h) { return o + (h * P + p) * D; }, {1, Hq, P, D});
}

void register_variant(RegistryOpTable& table, const std::string& op, KernelFunction equivalent,
                      KernelFunction fast) {
  register_f32_bf16(table, op, eval::NumericsPolicy::Equivalent,
                    "scores, softmax and mix in f32",
                    "scores, softmax and mix in f32, each weight rounded to bf16 as it enters the mix (as fused "
                    "attention operators take it), rounded to bf16 once",
                    equivalent);
  table.register_kernel({op, DType::BF16, eval::NumericsPolicy::Fast,
                         "scores and probabilities rounded to bf16, as bf16 eager attention does", fast});
}

}  // namespace

void register_attention_kernels(RegistryOpTable& table) {
  const std::string module = "std.nn.attention::";
  register_variant(table, module + "attention", &run_attention<false>, &run_attention<true>);
  register_variant(table, module + "grouped_attention", &run_grouped_attention<false>,
                   &run_grouped_attention<true>);
  register_variant(table, module + "attention_rows", &run_attention_rows<false>, &run_attention_rows<true>);
  register_variant(table, module + "grouped_attention_rows", &run_grouped_attention_rows<false>,
                   &run_grouped_attention_rows<true>);
  register_variant(table, module + "sink_attention", &run_sink_attention<false>, &run_sink_attention<true>);
  register_variant(table, module + "paged_attention", &run_paged_attention<false>, &run_paged_attention<true>);
  register_variant(table, module + "paged_prefill_attention", &run_paged_prefill_attention<false>,
                   &run_paged_prefill_attention<true>);
}

}  // namespace linnet::ops::detail
