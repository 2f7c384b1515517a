// The three model cards, truncated to small generics, run with random
// weights. Besides running without error, each decoder must agree with
// itself: decoding a prompt token by token through the KV caches gives, at
// every position, the logits the whole-sequence `forward` gives there.
#include "card_test_util.hpp"

using namespace eval_test;

namespace {

// Checks decode (token by token) against forward (whole sequence) and
// prefill (whole prompt through the caches), for a decoder card whose
// `decode(token, pos)` and `forward<B, S>(tokens)` follow the zoo's shapes.
void check_decoder(const std::string& card_name, GenericBindings generics, bool with_biases,
                   const std::function<Tensor(const ParameterInfo&, std::mt19937&)>& special = {},
                   double tolerance = 1e-4, linnet::eval::Options options = {}) {
  auto program = load_inputs({card(card_name)}, options);
  Interpreter& interpreter = *program;
  const int64_t vocab = generics.at("Vocab").dim;
  auto model = random_model(interpreter, generics, with_biases, special);
  REQUIRE(model != nullptr);

  const int64_t steps = 5;
  std::mt19937 rng(99);
  const Tensor tokens = random_integers(rng, {1, steps}, DType::I32, 0, vocab - 1);
  const Tensor logits =
      entry(interpreter, *model, "forward", {v(tokens)}, {{"B", dim(1)}, {"S", dim(steps)}}).tensor();
  REQUIRE(logits.shape() == Shape{1, steps, vocab});
  REQUIRE(all_finite(logits));
  // The weights and the positions make a difference.
  CHECK(max_abs_difference(logits.select(1, 0), logits.select(1, 1)) > 1e-3);

  // Token by token through the caches.
  for (int64_t position = 0; position < steps; ++position) {
    const Tensor token = tokens.slice(1, position, position + 1).contiguous();
    const Tensor step = entry(interpreter, *model, "decode", {v(token), scalar_i32(static_cast<int32_t>(position))}).tensor();
    REQUIRE(step.shape() == Shape{1, vocab});
    const Tensor expected = logits.select(1, position);
    INFO("position " << position);
    CHECK(max_abs_difference(step, expected) < tolerance);
  }

  // The same prompt as one prefill on a fresh cache.
  model->reset_state();
  const Tensor last = entry(interpreter, *model, "prefill", {v(tokens), scalar_i32(0)}, {{"S", dim(steps)}}).tensor();
  CHECK(max_abs_difference(last, logits.select(1, steps - 1)) < tolerance);
}

}  // namespace

TEST_CASE("mistral card runs with random weights and decode agrees with forward", "[cards]") {
  GenericBindings generics{{"Vocab", dim(64)}, {"H", dim(32)},     {"Heads", dim(4)},  {"KvHeads", dim(2)},
                           {"Inner", dim(64)}, {"Layers", dim(2)}, {"Batch", dim(1)}, {"MaxSeq", dim(16)},
                           {"T", dtype(DType::F32)}};
  check_decoder("mistral-7b-instruct-v0.3", generics, false);
}

TEST_CASE("qwen3 card runs with random weights and decode agrees with forward", "[cards]") {
  GenericBindings generics{{"Vocab", dim(64)},   {"H", dim(32)},     {"Heads", dim(4)},  {"KvHeads", dim(2)},
                           {"HeadDim", dim(8)},  {"Inner", dim(64)}, {"Layers", dim(2)}, {"Batch", dim(1)},
                           {"MaxSeq", dim(16)},  {"T", dtype(DType::F32)}};
  check_decoder("qwen3-8b", generics, false);
}

TEST_CASE("gpt-oss card runs with random MXFP4 experts and decode agrees with forward", "[cards]") {
  GenericBindings generics{{"Vocab", dim(64)},   {"H", dim(64)},      {"Heads", dim(4)},   {"KvHeads", dim(2)},
                           {"HeadDim", dim(16)}, {"Inner", dim(64)},  {"Experts", dim(4)}, {"TopK", dim(2)},
                           {"Layers", dim(2)},   {"Window", dim(3)},  {"Batch", dim(1)},   {"MaxSeq", dim(16)},
                           {"T", dtype(DType::F32)}};
  check_decoder("gpt-oss-20b", generics, true, random_mxfp4);
}

TEST_CASE("the cards run in bf16 under both numerics policies", "[cards][bf16]") {
  // In bf16 the cached and the whole-sequence routes may round differently,
  // so they agree to bf16 resolution rather than exactly (logits here are
  // up to about 3, where a bf16 step is 1/64). GPT-OSS differs more: its
  // `forward` runs every expert through one dense `linear` whose 256-term
  // sums, under `exact`, round every partial sum to bf16, while `decode`
  // takes the top-k route, which accumulates in f32.
  GenericBindings mistral{{"Vocab", dim(64)}, {"H", dim(32)},     {"Heads", dim(4)},  {"KvHeads", dim(2)},
                          {"Inner", dim(64)}, {"Layers", dim(2)}, {"Batch", dim(1)}, {"MaxSeq", dim(16)},
                          {"T", dtype(DType::BF16)}};
  GenericBindings gpt_oss{{"Vocab", dim(64)},   {"H", dim(64)},     {"Heads", dim(4)},   {"KvHeads", dim(2)},
                          {"HeadDim", dim(16)}, {"Inner", dim(64)}, {"Experts", dim(4)}, {"TopK", dim(2)},
                          {"Layers", dim(2)},   {"Window", dim(3)}, {"Batch", dim(1)},   {"MaxSeq", dim(16)},
                          {"T", dtype(DType::BF16)}};
  for (auto policy : {linnet::eval::NumericsPolicy::Exact, linnet::eval::NumericsPolicy::Equivalent}) {
    linnet::eval::Options options;
    options.numerics = policy;
    INFO("numerics " << linnet::eval::numerics_policy_name(policy));
    check_decoder("mistral-7b-instruct-v0.3", mistral, false, {}, 0.05, options);
    const bool exact = policy == linnet::eval::NumericsPolicy::Exact;
    check_decoder("gpt-oss-20b", gpt_oss, true, random_mxfp4, exact ? 0.3 : 0.1, options);
  }
}
