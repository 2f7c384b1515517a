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
// the values mixed in f32; one rounding to T.
//
// The `fast` kernels (bf16 only) round where bf16 reference models do in
// eager attention: the product q . k to bf16, the scaled score to bf16, and
// each probability to bf16 before the mix. Everything else is as above.
//
// Each output row (b, h, q) is computed by one thread, in a fixed order, so
// results do not depend on the thread count. Hidden keys' scores are never
// computed (the body discards them), but their values still enter the mix
// with weight zero, as in the body (a NaN there would show, as it does there).
#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

constexpr float kMasked = -1e30f;  // std.nn.attention's MASKED

using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;

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
  Rounding round = &no_rounding;
};

// The attention of every row. The accessors give pointers to D contiguous
// f32 values: query_row(b, h, q), key_row(b, kv, k), value_row(b, kv, k),
// out_row(b, h, q); visible(b, q, k) says whether the mask shows key k.
template <class QueryRow, class KeyRow, class ValueRow, class Visible, class OutRow>
void attend(const Geometry& g, const Numerics& n, QueryRow query_row, KeyRow key_row, ValueRow value_row,
            Visible visible, OutRow out_row) {
  const int64_t group = g.query_heads / g.kv_heads;
  const int64_t rows = g.batch * g.query_heads * g.queries;
  const int64_t d_count = g.head_dim;
#pragma omp parallel if (tensor::worth_threads(rows * g.keys * d_count * 2))
  {
    std::vector<float> scores(static_cast<size_t>(g.keys));
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t b = row / (g.query_heads * g.queries);
      const int64_t h = (row / g.queries) % g.query_heads;
      const int64_t q = row % g.queries;
      const int64_t kv = h / group;
      const ConstVectorMap query(query_row(b, h, q), d_count);

      for (int64_t k = 0; k < g.keys; ++k) {
        if (!visible(b, q, k)) {
          scores[k] = kMasked;
          continue;
        }
        const float dot = query.dot(ConstVectorMap(key_row(b, kv, k), d_count));
        scores[k] = n.fast ? n.round(n.round(dot) * n.scale) : dot * n.scale;
      }

      float peak = scores[0];
      for (int64_t k = 1; k < g.keys; ++k) peak = max_propagating_nan(peak, scores[k]);
      float sink = 0.0f;
      if (n.sinks != nullptr) {
        sink = n.sinks[h];
        peak = max_propagating_nan(peak, sink);
      }
      float total = 0.0f;
      for (int64_t k = 0; k < g.keys; ++k) {
        scores[k] = std::exp(scores[k] - peak);
        total += scores[k];
      }
      if (n.sinks != nullptr) total = std::exp(sink - peak) + total;

      float* out = out_row(b, h, q);
      for (int64_t d = 0; d < d_count; ++d) out[d] = 0.0f;
      for (int64_t k = 0; k < g.keys; ++k) {
        float weight = scores[k] / total;
        if (n.fast) weight = n.round(weight);
        const float* value = value_row(b, kv, k);
        for (int64_t d = 0; d < d_count; ++d) out[d] += weight * value[d];
      }
    }
  }
}

// The contiguous f32 copies (or views) of an op's tensors and its output.
struct Operands {
  Tensor query, key, value, out;
  const float* q() const { return query.data<float>(); }
  const float* k() const { return key.data<float>(); }
  const float* v() const { return value.data<float>(); }
  float* o() { return out.mutable_data<float>(); }
};

Operands read_operands(const eval::NativeCall& call, const Shape& out_shape) {
  return {contiguous_f32(tensor_argument(call, "query")), contiguous_f32(tensor_argument(call, "key")),
          contiguous_f32(tensor_argument(call, "value")), Tensor::empty(DType::F32, out_shape)};
}

Numerics read_numerics(const eval::NativeCall& call, bool fast) {
  Numerics numerics;
  numerics.scale = static_cast<float>(float_argument(call, "scale"));
  numerics.fast = fast;
  numerics.round = rounding_for(dtype_generic(call, "T"));
  return numerics;
}

// Attention over dense [B, Hk, K, D] keys and values with a per-sequence
// mask ([B, Q, K]), a shared one ([Q, K]) or none.
std::optional<eval::Value> dense_attention(const eval::NativeCall& call, const Geometry& g, Numerics numerics,
                                           const std::optional<Tensor>& mask, bool per_sequence) {
  if (g.keys == 0 || g.kv_heads <= 0) return std::nullopt;  // the body reports these
  Operands operands = read_operands(call, {g.batch, g.query_heads, g.queries, g.head_dim});
  const int64_t D = g.head_dim, Q = g.queries, K = g.keys;
  const float* q = operands.q();
  const float* k = operands.k();
  const float* v = operands.v();
  float* o = operands.o();
  auto query_row = [&](int64_t b, int64_t h, int64_t i) { return q + ((b * g.query_heads + h) * Q + i) * D; };
  auto key_row = [&](int64_t b, int64_t kv, int64_t j) { return k + ((b * g.kv_heads + kv) * K + j) * D; };
  auto value_row = [&](int64_t b, int64_t kv, int64_t j) { return v + ((b * g.kv_heads + kv) * K + j) * D; };
  auto out_row = [&](int64_t b, int64_t h, int64_t i) { return o + ((b * g.query_heads + h) * Q + i) * D; };
  const DType dtype = dtype_generic(call, "T");
  if (!mask) {
    attend(g, numerics, query_row, key_row, value_row, [](int64_t, int64_t, int64_t) { return true; }, out_row);
  } else {
    const Tensor shown = contiguous_bool(*mask);
    const bool* m = shown.data<bool>();
    if (per_sequence) {
      attend(g, numerics, query_row, key_row, value_row,
             [&](int64_t b, int64_t i, int64_t j) { return m[(b * Q + i) * K + j]; }, out_row);
    } else {
      attend(g, numerics, query_row, key_row, value_row,
             [&](int64_t, int64_t i, int64_t j) { return m[i * K + j]; }, out_row);
    }
  }
  return eval::Value::from_tensor(to_dtype(operands.out, dtype));
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
  std::vector<bool> seen;     // [rows, Pages * Size]
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
  slots.seen.assign(table_rows.size() * static_cast<size_t>(length), false);
  for (size_t b = 0; b < table_rows.size(); ++b) {
    for (int32_t s = 0; s < static_cast<int32_t>(length); ++s) {
      if (s > last[b]) continue;
      const int32_t page = page_of[table_rows[b] * pages + s / size32];
      const int32_t slot = wrapping_add_i32(wrapping_mul_i32(page, size32), s % size32);
      if (slot < 0 || slot >= pool) return std::nullopt;
      slots.slot[b * static_cast<size_t>(length) + static_cast<size_t>(s)] = slot;
      slots.seen[b * static_cast<size_t>(length) + static_cast<size_t>(s)] = true;
    }
  }
  return slots;
}

// Paged attention of `rows` single queries; query_row/out_row locate query
// and output row b, head h.
template <class QueryRow, class OutRow>
void paged_attend(const Geometry& g, const Numerics& numerics, const PagedSlots& slots, int64_t pool,
                  const float* key, const float* value, QueryRow query_row, OutRow out_row) {
  const int64_t D = g.head_dim, length = g.keys;
  auto key_row = [&](int64_t b, int64_t kv, int64_t s) {
    return key + (kv * pool + slots.slot[static_cast<size_t>(b * length + s)]) * D;
  };
  auto value_row = [&](int64_t b, int64_t kv, int64_t s) {
    return value + (kv * pool + slots.slot[static_cast<size_t>(b * length + s)]) * D;
  };
  auto visible = [&](int64_t b, int64_t, int64_t s) { return bool(slots.seen[static_cast<size_t>(b * length + s)]); };
  attend(g, numerics, [&](int64_t b, int64_t h, int64_t) { return query_row(b, h); }, key_row, value_row, visible,
         [&](int64_t b, int64_t h, int64_t) { return out_row(b, h); });
}

template <bool Fast>
std::optional<eval::Value> run_paged_attention(const eval::NativeCall& call) {
  const int64_t B = dim_generic(call, "B"), Hq = dim_generic(call, "Hq"), Hk = dim_generic(call, "Hk");
  const int64_t N = dim_generic(call, "N"), pages = dim_generic(call, "Pages"), size = dim_generic(call, "Size");
  const int64_t D = dim_generic(call, "D");
  if (Hk <= 0 || pages * size == 0) return std::nullopt;
  std::vector<int64_t> table_rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) table_rows[static_cast<size_t>(b)] = b;
  const std::optional<PagedSlots> slots = paged_slots(tensor_argument(call, "table"), table_rows,
                                                      tensor_argument(call, "positions"), pages, size, N);
  if (!slots) return std::nullopt;
  Operands operands = read_operands(call, {B, Hq, 1, D});
  const float* q = operands.q();
  float* o = operands.o();
  const Geometry g{B, Hq, Hk, 1, pages * size, D};
  paged_attend(g, read_numerics(call, Fast), *slots, N, operands.k(), operands.v(),
               [&](int64_t b, int64_t h) { return q + (b * Hq + h) * D; },
               [&](int64_t b, int64_t h) { return o + (b * Hq + h) * D; });
  return eval::Value::from_tensor(to_dtype(operands.out, dtype_generic(call, "T")));
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
  const std::optional<PagedSlots> slots = paged_slots(tensor_argument(call, "table"), table_rows,
                                                      tensor_argument(call, "positions"), pages, size, N);
  if (!slots) return std::nullopt;
  Operands operands = read_operands(call, {1, Hq, P, D});
  const float* q = operands.q();
  float* o = operands.o();
  const Geometry g{P, Hq, Hk, 1, pages * size, D};
  paged_attend(g, read_numerics(call, Fast), *slots, N, operands.k(), operands.v(),
               [&](int64_t p, int64_t h) { return q + (h * P + p) * D; },
               [&](int64_t p, int64_t h) { return o + (h * P + p) * D; });
  return eval::Value::from_tensor(to_dtype(operands.out, dtype_generic(call, "T")));
}

void register_variant(RegistryOpTable& table, const std::string& op, KernelFunction equivalent,
                      KernelFunction fast) {
  register_f32_bf16(table, op, eval::NumericsPolicy::Equivalent,
                    "scores, softmax and mix in f32", "scores, softmax and mix in f32, rounded to bf16 once",
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
