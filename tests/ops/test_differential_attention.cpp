// Differential tests of the attention kernels against the std.nn.attention
// bodies: no mask, causal masks, sliding windows narrower and wider than
// the sequence, rows with every key hidden, grouped-query ratios 1, 2 and 8,
// sinks, and paged pools whose rows share pages and hold stale entries past
// their lengths.
//
// Under `equivalent` every variant computes in f32 and rounds once; in bf16
// each weight also enters the mix rounded to bf16, as fused attention
// operators take it, and results are held to the bound that implies
// (require_attention_agreement in test_differential_support.hpp).
//
// The `fast` bf16 kernels round the scores and probabilities to bf16, which
// the body does not; they are held to the bound that rounding implies.
// Scores: q.k and (q.k) * scale are each rounded, so a score s moves by at
// most E = 2u|s| (u = 2^-8) plus f32 noise. Softmax: moving every score by
// at most E moves each probability p_k to p_k exp(d_k - c) with |d_k - c| <=
// 2E, i.e. by at most p_k (e^{2E} - 1); rounding it adds u p_k. The mix
// then moves by at most max|v| ((1 + u) e^{2E} - 1) (the probabilities sum
// to at most 1; sinks only lower that), and both results are rounded once
// more (one ulp). With a sink the row maximum m (over the scores and the
// sink) is also subtracted in bf16, which moves each exponent s - m by at
// most u |s - m| <= u (L + max(L, |sink|)) more, L the largest |score|.
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

// mask[q, k] for Q queries aligned with the end of K keys: key k is visible
// to query q when k <= q + K - Q and k > q + K - Q - window.
std::vector<bool> window_mask(int64_t queries, int64_t keys, int64_t window) {
  std::vector<bool> mask(static_cast<size_t>(queries * keys));
  const int64_t offset = keys - queries;
  for (int64_t q = 0; q < queries; ++q)
    for (int64_t k = 0; k < keys; ++k)
      mask[static_cast<size_t>(q * keys + k)] = k <= q + offset && k > q + offset - window;
  return mask;
}

std::vector<bool> causal_mask(int64_t queries, int64_t keys) { return window_mask(queries, keys, keys + queries); }

// Hides every key of query `q` (a fully masked row).
void hide_row(std::vector<bool>& mask, int64_t keys, int64_t q) {
  for (int64_t k = 0; k < keys; ++k) mask[static_cast<size_t>(q * keys + k)] = false;
}

struct Dims {
  int64_t batch, heads, kv_heads, queries, keys, head_dim;
};

struct Inputs {
  Tensor query, key, value, sinks;
};

Inputs random_inputs(const Dims& d, DType type, uint32_t seed) {
  std::mt19937 rng(seed);
  Inputs in;
  in.query = random_tensor(rng, {d.batch, d.heads, d.queries, d.head_dim}, type);
  in.key = random_tensor(rng, {d.batch, d.kv_heads, d.keys, d.head_dim}, type);
  in.value = random_tensor(rng, {d.batch, d.kv_heads, d.keys, d.head_dim}, type);
  in.sinks = random_tensor(rng, {d.heads}, type, -2.0, 3.0);
  return in;
}

const float kScale = 0.25f;

// The per-sequence mask [B, Q, K]: sequence b sees a window of width
// windows[b] (0: causal), and sequence 0 also hides every key of query 1.
Tensor per_sequence_mask(const Dims& d, const std::vector<int64_t>& windows) {
  std::vector<bool> all;
  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t window = windows[static_cast<size_t>(b % static_cast<int64_t>(windows.size()))];
    std::vector<bool> mask = window == 0 ? causal_mask(d.queries, d.keys) : window_mask(d.queries, d.keys, window);
    if (b == 0 && d.queries > 1) hide_row(mask, d.keys, 1);
    all.insert(all.end(), mask.begin(), mask.end());
  }
  return bool_tensor(all, {d.batch, d.queries, d.keys});
}

// Every attention op takes its values third.
void check(const OpCall& call, DType type, const std::string& detail) {
  const Results results = run_both(call);
  require_attention_agreement(label(call, type, detail), results.native, results.body,
                              call.positional.at(2).tensor());
}

// --- The fast bound ------------------------------------------------------------

// Checks a fast bf16 result of grouped (sink) attention against the body,
// with the bound derived at the top of this file.
void require_within_fast_bound(const std::string& what, const Tensor& fast, const Tensor& body, const Dims& d,
                               const Inputs& in, const std::vector<bool>& mask, bool with_sinks) {
  const std::vector<double> sink_values = as_doubles(in.sinks);
  const std::vector<double> q = as_doubles(in.query), k = as_doubles(in.key), val = as_doubles(in.value);
  const double u = std::ldexp(1.0, -8);
  const int64_t group = d.heads / d.kv_heads;
  std::vector<double> allowed(static_cast<size_t>(fast.numel()));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.queries; ++i) {
        const int64_t kv = h / group;
        double largest_score = 0.0, largest_value = 0.0;
        for (int64_t j = 0; j < d.keys; ++j) {
          for (int64_t x = 0; x < d.head_dim; ++x) {
            largest_value = std::max(largest_value, std::fabs(val[static_cast<size_t>(((b * d.kv_heads + kv) * d.keys + j) * d.head_dim + x)]));
          }
          if (!mask[static_cast<size_t>((b * d.queries + i) * d.keys + j)]) continue;
          double dot = 0.0;
          for (int64_t x = 0; x < d.head_dim; ++x) {
            dot += q[static_cast<size_t>(((b * d.heads + h) * d.queries + i) * d.head_dim + x)] *
                   k[static_cast<size_t>(((b * d.kv_heads + kv) * d.keys + j) * d.head_dim + x)];
          }
          largest_score = std::max(largest_score, std::fabs(dot * kScale));
        }
        double e = 2.01 * u * largest_score + 1e-6;
        if (with_sinks) {
          const double sink = std::fabs(sink_values[static_cast<size_t>(h)]);
          e += 1.01 * u * (largest_score + std::max(largest_score, sink));
        }
        const double mix = largest_value * ((1 + u) * std::exp(2 * e) - 1);
        for (int64_t x = 0; x < d.head_dim; ++x) {
          allowed[static_cast<size_t>(((b * d.heads + h) * d.queries + i) * d.head_dim + x)] = mix;
        }
      }
  const std::vector<double> a = as_doubles(fast), c = as_doubles(body);
  compare(what, fast, body, [&](size_t i, double scale) {
    return allowed[i] + bf16_ulp(std::max(std::fabs(a[i]), std::fabs(c[i]))) + 1e-5 * scale;
  });
}

}  // namespace

TEST_CASE("attention agrees with its body", "[differential][attention]") {
  const Dims d{2, 4, 4, 5, 7, 16};
  for (DType type : {DType::F32, DType::BF16}) {
    const Inputs in = random_inputs(d, type, 31);
    GenericBindings generics{{"B", dim(d.batch)}, {"H", dim(d.heads)}, {"Q", dim(d.queries)},
                             {"K", dim(d.keys)},  {"D", dim(d.head_dim)}, {"T", dtype(type)}};
    auto call_with = [&](Value mask) {
      return OpCall{"std.nn.attention::attention",
                    {v(in.query), v(in.key), v(in.value), f32_scalar(kScale), std::move(mask)},
                    generics};
    };
    check(call_with(Value::none()), type, "no mask");
    check(call_with(Value::some(v(bool_tensor(causal_mask(d.queries, d.keys), {d.queries, d.keys})))), type,
          "causal");
    check(call_with(Value::some(v(bool_tensor(window_mask(d.queries, d.keys, 3), {d.queries, d.keys})))), type,
          "window 3, narrower than the keys");
    check(call_with(Value::some(v(bool_tensor(window_mask(d.queries, d.keys, 20), {d.queries, d.keys})))), type,
          "window 20, wider than the keys");
    std::vector<bool> hidden = causal_mask(d.queries, d.keys);
    hide_row(hidden, d.keys, 2);
    check(call_with(Value::some(v(bool_tensor(hidden, {d.queries, d.keys})))), type, "query 2 fully masked");
  }
}

TEST_CASE("grouped attention agrees with its body at ratios 1, 2 and 8", "[differential][attention]") {
  for (int64_t kv_heads : {8, 4, 1}) {
    const Dims d{2, 8, kv_heads, 4, 6, 8};
    for (DType type : {DType::F32, DType::BF16}) {
      const Inputs in = random_inputs(d, type, static_cast<uint32_t>(40 + kv_heads));
      const std::string ratio = "ratio " + std::to_string(8 / kv_heads);
      GenericBindings generics{{"B", dim(d.batch)}, {"H", dim(d.heads)}, {"Hk", dim(kv_heads)},
                               {"Q", dim(d.queries)}, {"K", dim(d.keys)}, {"D", dim(d.head_dim)},
                               {"T", dtype(type)}};
      std::vector<bool> shared = window_mask(d.queries, d.keys, 2);
      hide_row(shared, d.keys, 0);
      check(OpCall{"std.nn.attention::grouped_attention",
                   {v(in.query), v(in.key), v(in.value), f32_scalar(kScale),
                    Value::some(v(bool_tensor(shared, {d.queries, d.keys})))},
                   generics},
            type, ratio + ", window 2, query 0 fully masked");
      check(OpCall{"std.nn.attention::grouped_attention",
                   {v(in.query), v(in.key), v(in.value), f32_scalar(kScale), Value::none()}, generics},
            type, ratio + ", no mask");
      const Tensor rows_mask = per_sequence_mask(d, {0, 3});
      check(OpCall{"std.nn.attention::grouped_attention_rows",
                   {v(in.query), v(in.key), v(in.value), f32_scalar(kScale), v(rows_mask)}, generics},
            type, ratio + ", per-sequence causal and window 3");
    }
  }
}

TEST_CASE("attention_rows agrees with its body", "[differential][attention]") {
  const Dims d{3, 2, 2, 3, 9, 12};
  for (DType type : {DType::F32, DType::BF16}) {
    const Inputs in = random_inputs(d, type, 51);
    const Tensor mask = per_sequence_mask(d, {0, 4, 50});
    check(OpCall{"std.nn.attention::attention_rows",
                 {v(in.query), v(in.key), v(in.value), f32_scalar(kScale), v(mask)},
                 {{"B", dim(d.batch)}, {"H", dim(d.heads)}, {"Q", dim(d.queries)}, {"K", dim(d.keys)},
                  {"D", dim(d.head_dim)}, {"T", dtype(type)}}},
          type, "causal, window 4, window 50; one fully masked row");
  }
}

TEST_CASE("sink attention agrees with its body", "[differential][attention]") {
  for (int64_t kv_heads : {8, 4, 1}) {
    const Dims d{2, 8, kv_heads, 4, 10, 8};
    for (DType type : {DType::F32, DType::BF16}) {
      const Inputs in = random_inputs(d, type, static_cast<uint32_t>(60 + kv_heads));
      const Tensor mask = per_sequence_mask(d, {3, 0});
      check(OpCall{"std.nn.attention::sink_attention",
                   {v(in.query), v(in.key), v(in.value), v(in.sinks), f32_scalar(kScale), v(mask)},
                   {{"B", dim(d.batch)}, {"Hq", dim(d.heads)}, {"Hk", dim(kv_heads)}, {"Q", dim(d.queries)},
                    {"K", dim(d.keys)}, {"D", dim(d.head_dim)}, {"T", dtype(type)}}},
            type, "ratio " + std::to_string(8 / kv_heads) + ", window 3 and causal, one fully masked row");
    }
  }
}

namespace {

// A pool of 6 pages of 4 positions. Rows 0 and 1 share their first two
// pages (a common prefix); row 2 has seen only its first page, and its
// later table entries are stale (out of the pool) and must never be read.
struct PagedPool {
  static constexpr int64_t kPages = 3, kSize = 4, kPool = 6 * 4;
  Tensor table = i32_tensor({0, 1, 2, 0, 1, 3, 5, -7, 99}, {3, kPages});
  Tensor positions = i32_tensor({9, 6, 2}, {3});
};

}  // namespace

TEST_CASE("paged attention agrees with its body over shared pages", "[differential][attention]") {
  const PagedPool pool;
  for (int64_t kv_heads : {4, 2, 1}) {
    for (DType type : {DType::F32, DType::BF16}) {
      std::mt19937 rng(static_cast<uint32_t>(70 + kv_heads));
      const int64_t batch = 3, heads = 4, head_dim = 8;
      const Tensor query = random_tensor(rng, {batch, heads, 1, head_dim}, type);
      const Tensor key = random_tensor(rng, {1, kv_heads, pool.kPool, head_dim}, type);
      const Tensor value = random_tensor(rng, {1, kv_heads, pool.kPool, head_dim}, type);
      check(OpCall{"std.nn.attention::paged_attention",
                   {v(query), v(key), v(value), v(pool.table), v(pool.positions), f32_scalar(kScale)},
                   {{"B", dim(batch)}, {"Hq", dim(heads)}, {"Hk", dim(kv_heads)}, {"N", dim(pool.kPool)},
                    {"Pages", dim(pool.kPages)}, {"Size", dim(pool.kSize)}, {"D", dim(head_dim)},
                    {"T", dtype(type)}}},
            type, "ratio " + std::to_string(heads / kv_heads));
    }
  }
}

TEST_CASE("paged prefill attention agrees with its body", "[differential][attention]") {
  const PagedPool pool;
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(81);
    const int64_t tokens = 5, heads = 4, kv_heads = 2, head_dim = 8;
    const Tensor query = random_tensor(rng, {1, heads, tokens, head_dim}, type);
    const Tensor key = random_tensor(rng, {1, kv_heads, pool.kPool, head_dim}, type);
    const Tensor value = random_tensor(rng, {1, kv_heads, pool.kPool, head_dim}, type);
    // Tokens of rows 0, 0, 1, 1, 2 at their positions (row 2 at position 0).
    const Tensor rows = i32_tensor({0, 0, 1, 1, 2}, {tokens});
    const Tensor positions = i32_tensor({3, 9, 5, 6, 0}, {tokens});
    check(OpCall{"std.nn.attention::paged_prefill_attention",
                 {v(query), v(key), v(value), v(pool.table), v(rows), v(positions), f32_scalar(kScale)},
                 {{"P", dim(tokens)}, {"Hq", dim(heads)}, {"Hk", dim(kv_heads)}, {"N", dim(pool.kPool)},
                  {"Rows", dim(3)}, {"Pages", dim(pool.kPages)}, {"Size", dim(pool.kSize)}, {"D", dim(head_dim)},
                  {"T", dtype(type)}}},
          type, "rows sharing pages");
  }
}

TEST_CASE("paged attention leaves a slot outside the pool to the body", "[differential][attention]") {
  std::mt19937 rng(91);
  const Tensor query = random_tensor(rng, {1, 2, 1, 4}, DType::F32);
  const Tensor key = random_tensor(rng, {1, 2, 8, 4}, DType::F32);
  const Tensor value = random_tensor(rng, {1, 2, 8, 4}, DType::F32);
  // Position 5 is seen and lies on page 7, past the pool of 2 pages.
  const Tensor table = i32_tensor({0, 7}, {1, 2});
  const Tensor positions = i32_tensor({5}, {1});
  linnet::eval::Options options;
  options.numerics = NumericsPolicy::Equivalent;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = {v(query), v(key), v(value), v(table), v(positions), f32_scalar(kScale)};
  inputs.generics = {{"B", dim(1)}, {"Hq", dim(2)}, {"Hk", dim(2)}, {"N", dim(8)}, {"Pages", dim(2)},
                     {"Size", dim(4)}, {"D", dim(4)}, {"T", dtype(DType::F32)}};
  REQUIRE_THROWS_AS(interpreter.call_function("std.nn.attention::paged_attention", inputs),
                    linnet::eval::EvalError);
  CHECK(interpreter.stats().at("std.nn.attention::paged_attention").native == 0);
}

// Pins where `equivalent` rounds a bf16 attention: each weight w = exp(s - m)
// enters the mix rounded to bf16, the sum l takes it unrounded, and the mix
// is divided by l and rounded once (PyTorch's CPU scaled_dot_product_attention
// and FlashAttention-2 compute it so; docs/ops.md). Two keys with scores 0
// and c and values 0 and 1 give round(round_bf16(e) / (1 + e)), e = exp(c).
// The body gives round(e / (1 + e)); rounding the weight in the sum as well
// would give round(round_bf16(e) / (1 + round_bf16(e))). The score c is
// chosen where the three differ and no rounding is near a tie, so a
// last-bit difference in exp cannot decide the test.
TEST_CASE("bf16 equivalent attention rounds each weight as it enters the mix", "[differential][attention]") {
  using linnet::tensor::round_to_bf16;
  auto clear_of_ties = [](float x) {
    return round_to_bf16(x * (1.0f + 1e-5f)) == round_to_bf16(x) && round_to_bf16(x * (1.0f - 1e-5f)) == round_to_bf16(x);
  };
  float score = 0.0f, expected = 0.0f, body_value = 0.0f;
  bool found = false;
  for (int i = 2; i < 400 && !found; ++i) {
    const float c = round_to_bf16(-0.01f * static_cast<float>(i));
    const float e = std::exp(c);
    const float weight = round_to_bf16(e);
    const float in_mix = weight / (1.0f + e);
    const float body = e / (1.0f + e);
    const float rounded_in_sum = weight / (1.0f + weight);
    if (!clear_of_ties(e) || !clear_of_ties(in_mix) || !clear_of_ties(body) || !clear_of_ties(rounded_in_sum)) continue;
    if (round_to_bf16(in_mix) == round_to_bf16(body) || round_to_bf16(in_mix) == round_to_bf16(rounded_in_sum)) continue;
    score = c;
    expected = round_to_bf16(in_mix);
    body_value = round_to_bf16(body);
    found = true;
  }
  REQUIRE(found);
  const Tensor query = Tensor::from_vector(std::vector<float>{1.0f}, {1, 1, 1, 1}, DType::BF16);
  const Tensor key = Tensor::from_vector(std::vector<float>{0.0f, score}, {1, 1, 2, 1}, DType::BF16);
  const Tensor value = Tensor::from_vector(std::vector<float>{0.0f, 1.0f}, {1, 1, 2, 1}, DType::BF16);
  const OpCall call{"std.nn.attention::grouped_attention",
                    {v(query), v(key), v(value), f32_scalar(1.0f), Value::none()},
                    {{"B", dim(1)}, {"H", dim(1)}, {"Hk", dim(1)}, {"Q", dim(1)}, {"K", dim(2)}, {"D", dim(1)},
                     {"T", dtype(DType::BF16)}}};
  const Results results = run_both(call);
  INFO("score " << score);
  CHECK(as_doubles(results.native).at(0) == static_cast<double>(expected));
  CHECK(as_doubles(results.body).at(0) == static_cast<double>(body_value));
  // In f32 the kernel keeps the body's weights (rounding to f32 is nothing).
  const OpCall wide{call.op,
                    {v(query.to(DType::F32)), v(key.to(DType::F32)), v(value.to(DType::F32)), f32_scalar(1.0f),
                     Value::none()},
                    {{"B", dim(1)}, {"H", dim(1)}, {"Hk", dim(1)}, {"Q", dim(1)}, {"K", dim(2)}, {"D", dim(1)},
                     {"T", dtype(DType::F32)}}};
  const Results f32 = run_both(wide);
  CHECK(std::fabs(as_doubles(f32.native).at(0) - as_doubles(f32.body).at(0)) <= 1e-6);
}

TEST_CASE("fast bf16 attention stays within the bound its roundings imply", "[differential][attention][fast]") {
  for (int64_t kv_heads : {8, 2}) {
    const Dims d{2, 8, kv_heads, 4, 12, 16};
    const Inputs in = random_inputs(d, DType::BF16, static_cast<uint32_t>(100 + kv_heads));
    const Tensor mask_tensor = per_sequence_mask(d, {0, 5});
    const std::vector<bool> mask = mask_tensor.to_vector<bool>();
    const std::string ratio = "ratio " + std::to_string(8 / kv_heads);

    OpCall rows{"std.nn.attention::grouped_attention_rows",
                {v(in.query), v(in.key), v(in.value), f32_scalar(kScale), v(mask_tensor)},
                {{"B", dim(d.batch)}, {"H", dim(d.heads)}, {"Hk", dim(kv_heads)}, {"Q", dim(d.queries)},
                 {"K", dim(d.keys)}, {"D", dim(d.head_dim)}, {"T", dtype(DType::BF16)}}};
    const Results plain = run_both(rows, NumericsPolicy::Fast);
    require_within_fast_bound(label(rows, DType::BF16, "fast, " + ratio), plain.native, plain.body, d, in, mask,
                              false);

    OpCall sinks{"std.nn.attention::sink_attention",
                 {v(in.query), v(in.key), v(in.value), v(in.sinks), f32_scalar(kScale), v(mask_tensor)},
                 {{"B", dim(d.batch)}, {"Hq", dim(d.heads)}, {"Hk", dim(kv_heads)}, {"Q", dim(d.queries)},
                  {"K", dim(d.keys)}, {"D", dim(d.head_dim)}, {"T", dtype(DType::BF16)}}};
    const Results sunk = run_both(sinks, NumericsPolicy::Fast);
    require_within_fast_bound(label(sinks, DType::BF16, "fast, " + ratio), sunk.native, sunk.body, d, in, mask,
                              true);

    // The fast kernel really rounds differently from the equivalent one.
    const Value equivalent = run_native(sinks, NumericsPolicy::Equivalent);
    CHECK(as_doubles(equivalent.tensor()) != as_doubles(sunk.native));
  }
}
