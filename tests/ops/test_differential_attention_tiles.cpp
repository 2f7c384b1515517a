// The fused attention kernel at the edges of its tiles: keys in tiles of
// 64, rows in blocks of 4, query tiles of 64 / group rows, head dims padded
// to 32 -- sizes of 1, odd sizes and sizes one past a tile, key/value views
// read where they lie (a slice of a longer cache, in bf16 and f32), masks
// shared across the batch by a zero stride, windows, sinks, rows with
// nothing visible, and 1 against 2 threads bit for bit.
#include "linnet/tensor/threading.hpp"
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

const float kScale = 0.3f;

struct Case {
  int64_t batch, heads, kv_heads, queries, keys, head_dim;
};

std::vector<bool> windowed(int64_t queries, int64_t keys, int64_t window, int64_t hidden_query) {
  std::vector<bool> mask(static_cast<size_t>(queries * keys));
  const int64_t offset = keys - queries;
  for (int64_t q = 0; q < queries; ++q)
    for (int64_t k = 0; k < keys; ++k)
      mask[static_cast<size_t>(q * keys + k)] =
          q != hidden_query && k <= q + offset && (window == 0 || k > q + offset - window);
  return mask;
}

GenericBindings grouped_generics(const Case& c, DType type) {
  return {{"B", dim(c.batch)}, {"H", dim(c.heads)}, {"Hk", dim(c.kv_heads)}, {"Q", dim(c.queries)},
          {"K", dim(c.keys)},  {"D", dim(c.head_dim)}, {"T", dtype(type)}};
}

Tensor with_threads(const OpCall& call, int threads, NumericsPolicy policy) {
  const int before = linnet::tensor::num_threads();
  linnet::tensor::set_num_threads(threads);
  const Value result = run_native(call, policy);
  linnet::tensor::set_num_threads(before);
  return result.tensor();
}

}  // namespace

TEST_CASE("fused attention agrees with its body across tile edges", "[differential][attention][tiles]") {
  const std::vector<Case> cases{
      {1, 1, 1, 1, 1, 1},     // every size 1
      {1, 4, 2, 1, 65, 5},    // one decode query, keys one past a tile, odd head dim
      {2, 6, 2, 7, 64, 33},   // group 3 (rows not a multiple of 4), one full key tile, D past 32
      {1, 8, 1, 17, 130, 8},  // group 8: query tiles of 8, keys over three tiles
      {1, 2, 2, 70, 70, 3},   // plain attention, query tile of 64 plus 6
  };
  for (const Case& c : cases) {
    for (DType type : {DType::F32, DType::BF16}) {
      std::mt19937 rng(static_cast<uint32_t>(c.keys * 31 + c.head_dim));
      const Tensor query = random_tensor(rng, {c.batch, c.heads, c.queries, c.head_dim}, type);
      const Tensor key = random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, type);
      const Tensor value = random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, type);
      const std::string shape = "B" + std::to_string(c.batch) + " H" + std::to_string(c.heads) + " Hk" +
                                std::to_string(c.kv_heads) + " Q" + std::to_string(c.queries) + " K" +
                                std::to_string(c.keys) + " D" + std::to_string(c.head_dim);
      // Windows are unbroken spans of keys, which the kernel reads without
      // testing each key's mask byte; "holes" hides every fifth key inside
      // the causal span, which it must test key by key.
      for (int64_t window : {0, 5, -1}) {
        std::vector<bool> visible = windowed(c.queries, c.keys, window < 0 ? 0 : window, c.queries > 2 ? 2 : -1);
        if (window < 0) {
          for (size_t at = 0; at < visible.size(); ++at) visible[at] = visible[at] && (at % c.keys) % 5 != 4;
        }
        const Tensor mask = bool_tensor(visible, {c.queries, c.keys});
        const OpCall call{"std.nn.attention::grouped_attention",
                          {v(query), v(key), v(value), f32_scalar(kScale), Value::some(v(mask))},
                          grouped_generics(c, type)};
        const Results results = run_both(call);
        require_attention_agreement(
            label(call, type, shape + (window < 0 ? ", holes" : ", window " + std::to_string(window))),
            results.native, results.body, value);
      }
      const OpCall unmasked{"std.nn.attention::grouped_attention",
                            {v(query), v(key), v(value), f32_scalar(kScale), Value::none()},
                            grouped_generics(c, type)};
      const Results results = run_both(unmasked);
      require_attention_agreement(label(unmasked, type, shape + ", no mask"), results.native, results.body, value);
    }
  }
}

TEST_CASE("fused attention reads a slice of a longer cache and a broadcast mask in place",
          "[differential][attention][tiles]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(5);
    const int64_t batch = 2, heads = 4, kv_heads = 2, positions = 200, keys = 90, head_dim = 16;
    const Tensor query = random_tensor(rng, {batch, heads, 1, head_dim}, type);
    // The first 90 positions of caches of 200: strided views, not copies.
    const Tensor key = random_tensor(rng, {batch, kv_heads, positions, head_dim}, type).slice(2, 0, keys);
    const Tensor value = random_tensor(rng, {batch, kv_heads, positions, head_dim}, type).slice(2, 0, keys);
    REQUIRE_FALSE(key.is_contiguous());
    // Sequence 0 has seen 40 positions, sequence 1 all 90: a per-sequence mask;
    // then a decode mask shared by the batch through a zero stride.
    std::vector<bool> rows;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < keys; ++k) rows.push_back(k < (b == 0 ? 40 : keys));
    const Tensor per_row = bool_tensor(rows, {batch, 1, keys});
    std::vector<bool> shared;
    for (int64_t k = 0; k < keys; ++k) shared.push_back(k % 7 != 3 && k < 77);
    const Tensor broadcast = bool_tensor(shared, {1, 1, keys}).broadcast_to({batch, 1, keys});
    for (const Tensor& mask : {per_row, broadcast}) {
      const OpCall call{"std.nn.attention::grouped_attention_rows",
                        {v(query), v(key), v(value), f32_scalar(kScale), v(mask)},
                        {{"B", dim(batch)}, {"H", dim(heads)}, {"Hk", dim(kv_heads)}, {"Q", dim(1)},
                         {"K", dim(keys)}, {"D", dim(head_dim)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_attention_agreement(label(call, type, "cache slice"), results.native, results.body, value);
    }
  }
}

TEST_CASE("fused sink attention over tiles, with rows that see nothing", "[differential][attention][tiles]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(9);
    const int64_t batch = 1, heads = 8, kv_heads = 2, queries = 9, keys = 100, head_dim = 12;
    const Tensor query = random_tensor(rng, {batch, heads, queries, head_dim}, type, -3.0, 3.0);
    const Tensor key = random_tensor(rng, {batch, kv_heads, keys, head_dim}, type, -3.0, 3.0);
    const Tensor value = random_tensor(rng, {batch, kv_heads, keys, head_dim}, type);
    const Tensor sinks = random_tensor(rng, {heads}, type, -2.0, 3.0);
    const Tensor mask = bool_tensor(windowed(queries, keys, 70, 4), {batch, queries, keys});
    const OpCall call{"std.nn.attention::sink_attention",
                      {v(query), v(key), v(value), v(sinks), f32_scalar(kScale), v(mask)},
                      {{"B", dim(batch)}, {"Hq", dim(heads)}, {"Hk", dim(kv_heads)}, {"Q", dim(queries)},
                       {"K", dim(keys)}, {"D", dim(head_dim)}, {"T", dtype(type)}}};
    const Results results = run_both(call);
    require_attention_agreement(label(call, type, "window 70 over 100 keys, query 4 sees nothing"), results.native,
                                results.body, value);
  }
}

TEST_CASE("fused attention gives the same bits with 1 and 2 threads", "[differential][attention][tiles][threads]") {
  std::mt19937 rng(13);
  const Case c{2, 8, 2, 33, 150, 24};
  const Tensor query = random_tensor(rng, {c.batch, c.heads, c.queries, c.head_dim}, DType::BF16);
  const Tensor key = random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, DType::BF16);
  const Tensor value = random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, DType::BF16);
  const Tensor sinks = random_tensor(rng, {c.heads}, DType::BF16);
  const Tensor mask = bool_tensor(windowed(c.queries, c.keys, 40, 3), {c.queries, c.keys});
  std::vector<bool> rows;
  for (int64_t b = 0; b < c.batch; ++b) {
    const std::vector<bool> one = windowed(c.queries, c.keys, b == 0 ? 0 : 9, -1);
    rows.insert(rows.end(), one.begin(), one.end());
  }
  const Tensor row_mask = bool_tensor(rows, {c.batch, c.queries, c.keys});
  const std::vector<OpCall> calls{
      {"std.nn.attention::grouped_attention",
       {v(query), v(key), v(value), f32_scalar(kScale), Value::some(v(mask))},
       grouped_generics(c, DType::BF16)},
      {"std.nn.attention::sink_attention",
       {v(query), v(key), v(value), v(sinks), f32_scalar(kScale), v(row_mask)},
       {{"B", dim(c.batch)}, {"Hq", dim(c.heads)}, {"Hk", dim(c.kv_heads)}, {"Q", dim(c.queries)},
        {"K", dim(c.keys)}, {"D", dim(c.head_dim)}, {"T", dtype(DType::BF16)}}},
  };
  for (const OpCall& call : calls) {
    for (NumericsPolicy policy : {NumericsPolicy::Equivalent, NumericsPolicy::Fast}) {
      INFO(call.op << " " << linnet::eval::numerics_policy_name(policy));
      require_identical(call.op + " with 1 and 2 threads", with_threads(call, 2, policy),
                        with_threads(call, 1, policy));
    }
  }
  // Paged: rows sharing pages of a pool.
  const Tensor pool_key = random_tensor(rng, {1, 2, 96, 16}, DType::F32);
  const Tensor pool_value = random_tensor(rng, {1, 2, 96, 16}, DType::F32);
  const Tensor paged_query = random_tensor(rng, {3, 4, 1, 16}, DType::F32);
  const OpCall paged{"std.nn.attention::paged_attention",
                     {v(paged_query), v(pool_key), v(pool_value), v(i32_tensor({0, 1, 2, 0, 1, 2, 2, 1, 0}, {3, 3})),
                      v(i32_tensor({40, 37, 70}, {3})), f32_scalar(kScale)},
                     {{"B", dim(3)}, {"Hq", dim(4)}, {"Hk", dim(2)}, {"N", dim(96)}, {"Pages", dim(3)},
                      {"Size", dim(32)}, {"D", dim(16)}, {"T", dtype(DType::F32)}}};
  require_identical("paged_attention with 1 and 2 threads", with_threads(paged, 2, NumericsPolicy::Equivalent),
                    with_threads(paged, 1, NumericsPolicy::Equivalent));
  const Results results = run_both(paged);
  require_attention_agreement("paged_attention over pages of 32 shared by rows 0 and 1", results.native, results.body,
                              pool_value);
}

TEST_CASE("fused attention keeps the body's rows when a key is NaN, seen or hidden", "[differential][attention][tiles]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(17);
    const Case c{1, 4, 2, 5, 70, 8};
    const Tensor query = random_tensor(rng, {c.batch, c.heads, c.queries, c.head_dim}, type);
    std::vector<double> key_values = as_doubles(random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, type));
    // Key 67 of the first key/value head is NaN: past the first tile of 64,
    // seen by queries 2-4 (causal, the queries at the end of the keys),
    // hidden from queries 0 and 1, whose rows must stay numbers.
    key_values[static_cast<size_t>(67 * c.head_dim + 3)] = std::nan("");
    const std::vector<float> key_floats(key_values.begin(), key_values.end());
    const Tensor key = Tensor::from_vector(key_floats, {c.batch, c.kv_heads, c.keys, c.head_dim}).to(type);
    const Tensor value = random_tensor(rng, {c.batch, c.kv_heads, c.keys, c.head_dim}, type);
    const Tensor mask = bool_tensor(windowed(c.queries, c.keys, 0, -1), {c.queries, c.keys});
    for (const Value& masking : {Value::some(v(mask)), Value::none()}) {
      const OpCall call{"std.nn.attention::grouped_attention",
                        {v(query), v(key), v(value), f32_scalar(kScale), masking}, grouped_generics(c, type)};
      const Results results = run_both(call);
      require_attention_agreement(label(call, type, "a NaN key"), results.native, results.body, value);
    }
  }
}
