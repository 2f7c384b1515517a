// The cards on their golden checkpoints: `forward` against the reference
// logits, and every entry each card declares, each checked against
// `forward` (or the reference's generated tokens) where it computes the
// same thing another way.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <unistd.h>

#include "linnet/nest/generate.hpp"
#include "linnet/nest/safetensors.hpp"
#include "linnet/tensor/allocator.hpp"
#include "linnet/nest/script.hpp"
#include "linnet/nest/summary.hpp"
#include "golden_cases.hpp"
#include "temp_dir.hpp"
#include "test_run_golden.hpp"

using namespace linnet;
using namespace nest_test;

namespace {

using linnet_test::GoldenCase;
using linnet_test::golden_cases;

// Columns [begin, end) of a [1, S] token tensor.
Tensor token_range(const Tensor& tokens, int64_t begin, int64_t end) {
  return tokens.slice(1, begin, end).contiguous();
}

std::vector<int32_t> flat_tokens(const Tensor& tokens) { return tokens.to_vector<int32_t>(); }

Tensor iota_i32(int64_t count, int64_t start = 0) {
  std::vector<int32_t> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(static_cast<int32_t>(start + i));
  return i32_tensor(values, {count});
}

Tensor filled_i32(int64_t count, int32_t value) {
  return i32_tensor(std::vector<int32_t>(static_cast<size_t>(count), value), {count});
}

// Row `position` of forward's [1, S, V] logits, as [1, V].
Tensor forward_row(const Tensor& logits, int64_t position) {
  return logits.select(1, position).contiguous();
}

// log_softmax(logits[p])[target[p]] in double.
std::vector<double> reference_log_probs(const Tensor& logits, const std::vector<int64_t>& targets) {
  const int64_t width = logits.extent(-1);
  const std::vector<double> values = logits.to_vector<double>();
  std::vector<double> out;
  for (size_t p = 0; p < targets.size(); ++p) {
    const double* row = values.data() + static_cast<int64_t>(p) * width;
    const double peak = *std::max_element(row, row + width);
    double total = 0;
    for (int64_t v = 0; v < width; ++v) total += std::exp(row[v] - peak);
    out.push_back(row[targets[p]] - peak - std::log(total));
  }
  return out;
}

constexpr double kAgree = 1e-4;  // two computations of the same logits in f32

// Holds a loaded card, its golden tokens and forward's logits for them.
struct GoldenRun {
  GoldenCase golden_case;
  std::unique_ptr<nest::Session> session;
  Tensor tokens;  // [1, S] i32
  Tensor logits;  // [1, S, V]
  int64_t length = 0;

  explicit GoldenRun(const GoldenCase& which, const std::vector<std::string>& extra = {})
      : golden_case(which), session(golden_session(which.card, which.golden, extra)) {
    tokens = expected_tensor(which.golden, "tokens");
    length = tokens.extent(1);
    logits = call(*session, "forward", {{"tokens", tokens}}).tensor();
  }
  bool declares(const std::string& entry) const { return session->root().entry(entry) != nullptr; }
};

}  // namespace

TEST_CASE("forward reproduces the reference logits on every golden checkpoint", "[nest][run][golden]") {
  for (const GoldenCase& golden_case : golden_cases()) {
    GoldenRun run(golden_case);
    const Tensor expected = expected_tensor(golden_case.golden, "logits_f32");
    REQUIRE(run.logits.dtype() == DType::F32);
    const double difference = max_abs_difference(run.logits, expected);
    INFO(golden_case.card << " on " << golden_case.golden << ": max |logits - logits_f32| = " << difference);
    CHECK(difference < 1e-5);  // measured: 2e-7 to 4e-7
    // The weights were widened from bf16, never narrowed: vectors into
    // copies, matrices read as f32 where they are mapped.
    CHECK(run.session->load_counts().widened > 0);
    CHECK(run.session->load_counts().widen_on_access > 0);
  }
}

TEST_CASE("GPT-OSS forward never makes its MXFP4 experts whole", "[nest][run][golden][mxfp4]") {
  // forward takes the card's dense expert form: dequantize_mxfp4 of every
  // expert, multiplied by `linear` (and reordered for the down projection).
  // Its result is made on access and the products decode it a tile at a
  // time, so no call holds one layer's experts dequantized.
  for (const GoldenCase& golden_case : golden_cases()) {
    if (golden_case.card != "gpt-oss-20b") continue;
    GoldenRun run(golden_case);
    const nest::SafetensorsFile file = nest::SafetensorsFile::open(golden_path(golden_case.golden) + "/model.safetensors");
    const nest::TensorRecord* blocks = file.find("model.layers.0.mlp.experts.gate_up_proj_blocks");
    REQUIRE(blocks != nullptr);
    const size_t dequantized_f32 = blocks->bytes.size() * 2 * sizeof(float);  // two values per stored byte
    tensor::reset_peak_bytes();
    const size_t before = tensor::current_bytes();
    const Tensor again = call(*run.session, "forward", {{"tokens", run.tokens}}).tensor();
    // Made whole, one layer's gate and up experts (this size), its down
    // experts (half) and their reordered copy (half) would be held at once.
    CHECK(tensor::peak_bytes() - before < 2 * dequantized_f32);
    CHECK(max_abs_difference(again, run.logits) == 0.0);
  }
}

TEST_CASE("greedy generation reproduces the reference tokens", "[nest][run][golden]") {
  for (const GoldenCase& golden_case : golden_cases()) {
    INFO(golden_case.card << " on " << golden_case.golden);
    auto session = golden_session(golden_case.card, golden_case.golden);
    const Tensor tokens = expected_tensor(golden_case.golden, "tokens");
    const std::vector<int32_t> generated = expected_tensor(golden_case.golden, "generated").to_vector<int32_t>();
    nest::GenerateOptions options;
    options.prompt = tokens.to_vector<int32_t>();
    options.max_new = static_cast<int64_t>(generated.size());
    int64_t progress_calls = 0;
    options.on_token = [&](int64_t produced, int64_t total) {
      ++progress_calls;
      CHECK(produced == progress_calls);
      CHECK(total == options.max_new);
    };
    const nest::GenerateResult result = nest::generate(*session, options);
    CHECK(result.tokens == generated);
    CHECK(result.step_seconds.size() == generated.size() - 1);
  }
}

TEST_CASE("every entry of every card runs and agrees with forward", "[nest][run][golden][entries]") {
  for (const GoldenCase& golden_case : golden_cases()) {
    if (golden_case.golden == "mistral-trunc") continue;  // the same card as mistral-a
    GoldenRun run(golden_case);
    nest::Session& session = *run.session;
    const int64_t S = run.length;
    const int64_t vocab = run.logits.extent(-1);
    const Tensor prompt = token_range(run.tokens, 0, S - 1);  // all but the last token
    const Tensor last_token = token_range(run.tokens, S - 1, S);
    const Tensor before_last = forward_row(run.logits, S - 2);
    const Tensor at_last = forward_row(run.logits, S - 1);
    std::set<std::string> checked{"forward"};
    INFO(golden_case.card);

    {
      const Tensor next = call(session, "next_token", {{"tokens", run.tokens}}).tensor();
      CHECK(max_abs_difference(next, at_last) < kAgree);
      checked.insert("next_token");
    }
    {
      session.reset_state();
      const Tensor first = call(session, "prefill", {{"tokens", prompt}, {"pos", i32_scalar(0)}}).tensor();
      CHECK(max_abs_difference(first, before_last) < kAgree);
      const Tensor next = call(session, "decode", {{"token", last_token}, {"pos", i32_scalar(S - 1)}}).tensor();
      CHECK(max_abs_difference(next, at_last) < kAgree);
      checked.insert({"prefill", "decode"});
    }
    {
      session.reset_state();
      const Tensor first = call(session, "prefill_slots",
                                {{"tokens", prompt}, {"slots", i32_tensor({0}, {1})}, {"lengths", i32_tensor({int32_t(S - 1)}, {1})}})
                               .tensor();
      CHECK(max_abs_difference(first, before_last) < kAgree);
      const Tensor next =
          call(session, "decode_rows", {{"tokens", last_token}, {"positions", i32_tensor({int32_t(S - 1)}, {1})}})
              .tensor();
      CHECK(max_abs_difference(next, at_last) < kAgree);
      checked.insert({"prefill_slots", "decode_rows"});
    }
    const Tensor packed_prompt = prompt.reshape({S - 1});
    {
      session.reset_state();
      const Tensor first = call(session, "prefill_packed",
                                {{"tokens", packed_prompt},
                                 {"rows", filled_i32(S - 1, 0)},
                                 {"positions", iota_i32(S - 1)},
                                 {"segments", filled_i32(S - 1, 0)},
                                 {"last", i32_tensor({int32_t(S - 2)}, {1})}})
                               .tensor();
      CHECK(max_abs_difference(first, before_last) < kAgree);
      checked.insert("prefill_packed");
    }
    {
      // The prompt and a step of the (only) row in one pass: the prompt's
      // logits come first.
      session.reset_state();
      const Tensor both = call(session, "step_packed",
                               {{"tokens", packed_prompt},
                                {"rows", filled_i32(S - 1, 0)},
                                {"positions", iota_i32(S - 1)},
                                {"segments", filled_i32(S - 1, 0)},
                                {"last", i32_tensor({int32_t(S - 2)}, {1})},
                                {"step_tokens", last_token},
                                {"step_positions", i32_tensor({63}, {1})}})
                              .tensor();
      REQUIRE(both.shape() == Shape{2, vocab});
      CHECK(max_abs_difference(both.slice(0, 0, 1).contiguous(), before_last) < kAgree);
      checked.insert("step_packed");
    }
    if (run.declares("decode_paged")) {
      // One request in a pool of MaxSeq positions, one page of 64.
      const Tensor table = i32_tensor({0}, {1, 1});
      session.reset_state();
      const Tensor first = call(session, "prefill_paged",
                                {{"tokens", packed_prompt},
                                 {"positions", iota_i32(S - 1)},
                                 {"rows", filled_i32(S - 1, 0)},
                                 {"slots", iota_i32(S - 1)},
                                 {"last", i32_tensor({int32_t(S - 2)}, {1})},
                                 {"table", table}})
                               .tensor();
      CHECK(max_abs_difference(first, before_last) < kAgree);
      const Tensor next = call(session, "decode_paged",
                               {{"tokens", last_token}, {"positions", i32_tensor({int32_t(S - 1)}, {1})}, {"table", table}})
                              .tensor();
      CHECK(max_abs_difference(next, at_last) < kAgree);

      // The prompt but its last token, then that token and a step of the
      // row together: the prompt's logits first.
      session.reset_state();
      call(session, "prefill_paged",
           {{"tokens", token_range(run.tokens, 0, S - 2).reshape({S - 2})},
            {"positions", iota_i32(S - 2)},
            {"rows", filled_i32(S - 2, 0)},
            {"slots", iota_i32(S - 2)},
            {"last", i32_tensor({int32_t(S - 3)}, {1})},
            {"table", table}});
      const Tensor both = call(session, "step_paged",
                               {{"tokens", token_range(run.tokens, S - 2, S - 1).reshape({1})},
                                {"positions", i32_tensor({int32_t(S - 2)}, {1})},
                                {"rows", i32_tensor({0}, {1})},
                                {"slots", i32_tensor({int32_t(S - 2)}, {1})},
                                {"last", i32_tensor({0}, {1})},
                                {"step_tokens", last_token},
                                {"step_positions", i32_tensor({63}, {1})},
                                {"table", table}})
                              .tensor();
      REQUIRE(both.shape() == Shape{2, vocab});
      CHECK(max_abs_difference(both.slice(0, 0, 1).contiguous(), before_last) < kAgree);
      checked.insert({"prefill_paged", "decode_paged", "step_paged"});
    }
    if (run.declares("generate")) {
      const Tensor expected = expected_tensor(golden_case.golden, "generated");
      const int64_t steps = expected.extent(1);
      session.reset_state();
      call(session, "prefill", {{"tokens", prompt}, {"pos", i32_scalar(0)}});
      const Tensor produced = call(session, "generate", {{"token", last_token}, {"pos", i32_scalar(S - 1)}},
                                   {{"Steps", eval::GenericValue::of_dim(steps)}})
                                  .tensor();
      CHECK(produced.to_vector<int32_t>() == expected.to_vector<int32_t>());

      // Stopping at the fourth reference token.
      const std::vector<int32_t> reference = expected.to_vector<int32_t>();
      const int32_t eos = reference[3];
      const int64_t stop = std::find(reference.begin(), reference.end(), eos) - reference.begin() + 1;
      session.reset_state();
      call(session, "prefill", {{"tokens", prompt}, {"pos", i32_scalar(0)}});
      const eval::Value until = call(session, "generate_until",
                                     {{"token", last_token}, {"pos", i32_scalar(S - 1)}, {"eos", i32_scalar(eos)}},
                                     {{"MaxNew", eval::GenericValue::of_dim(steps)}});
      const auto parts = nest::flatten_outputs("until", until);
      REQUIRE(parts.size() == 2);
      const std::vector<int32_t> until_tokens = parts[0].second.to_vector<int32_t>();
      CHECK(parts[1].second.item().to<int64_t>() == stop);
      std::vector<int32_t> expected_until(reference.begin(), reference.begin() + stop);
      expected_until.resize(reference.size(), 0);
      CHECK(until_tokens == expected_until);

      // Sampling: the card's `sample` and the host's sampler draw the same tokens.
      const int64_t draws = 4;
      const float temperature = 0.8f;
      session.reset_state();
      call(session, "prefill", {{"tokens", prompt}, {"pos", i32_scalar(0)}});
      const Tensor key = Tensor::from_vector(std::vector<int64_t>{0, 7}, {2});
      const Tensor sampled = call(session, "sample",
                                  {{"token", last_token},
                                   {"pos", i32_scalar(S - 1)},
                                   {"key", key},
                                   {"temperature", Tensor::scalar(DType::F32, temperature)}},
                                  {{"Steps", eval::GenericValue::of_dim(draws)}})
                                 .tensor();
      nest::GenerateOptions options;
      options.prompt = flat_tokens(run.tokens);
      options.max_new = draws;
      options.temperature = temperature;
      options.seed = 7;
      CHECK(nest::generate(session, options).tokens == sampled.to_vector<int32_t>());
      checked.insert({"generate", "generate_until", "sample"});
    }
    if (run.declares("log_probs_packed")) {
      const Tensor packed = run.tokens.reshape({S});
      std::vector<int64_t> targets;
      for (int64_t p = 0; p < S; ++p) targets.push_back(flat_tokens(run.tokens)[(p + 1) % S]);
      const Tensor target_tensor = Tensor::from_vector(targets, {S});
      const std::map<std::string, Tensor> packing{
          {"tokens", packed}, {"positions", iota_i32(S)}, {"segments", filled_i32(S, 0)}};
      std::map<std::string, Tensor> with_targets = packing;
      with_targets["targets"] = target_tensor;
      const std::vector<double> log_probs = call(session, "log_probs_packed", with_targets).tensor().to_vector<double>();
      const std::vector<double> reference = reference_log_probs(run.logits.reshape({S, vocab}), targets);
      REQUIRE(log_probs.size() == reference.size());
      double worst = 0;
      for (size_t p = 0; p < reference.size(); ++p) worst = std::max(worst, std::abs(log_probs[p] - reference[p]));
      CHECK(worst < kAgree);

      // The loss weighs each position; the last target wraps around, so leave it out.
      std::vector<float> weights(static_cast<size_t>(S), 1.0f);
      weights.back() = 0.0f;
      with_targets["weights"] = Tensor::from_vector(weights, {S});
      const double loss = call(session, "loss_packed", with_targets).tensor().item().to<double>();
      double expected_loss = 0;
      for (int64_t p = 0; p + 1 < S; ++p) expected_loss -= reference[p];
      CHECK(std::abs(loss - expected_loss) < 1e-3);

      // Two sequences packed together do not see each other.
      const int64_t split = S / 2;
      std::vector<int32_t> positions, segments;
      for (int64_t p = 0; p < S; ++p) {
        positions.push_back(static_cast<int32_t>(p < split ? p : p - split));
        segments.push_back(p < split ? 0 : 1);
      }
      const Tensor together = call(session, "hidden_packed",
                                   {{"tokens", packed},
                                    {"positions", i32_tensor(positions, {S})},
                                    {"segments", i32_tensor(segments, {S})}})
                                  .tensor();
      REQUIRE(together.shape() == Shape{S, session.instance_generics().at("H").dim});
      const Tensor alone = call(session, "hidden_packed",
                                {{"tokens", token_range(run.tokens, split, S).reshape({S - split})},
                                 {"positions", iota_i32(S - split)},
                                 {"segments", filled_i32(S - split, 0)}})
                               .tensor();
      CHECK(max_abs_difference(together.slice(0, split, S).contiguous(), alone) < kAgree);
      checked.insert({"log_probs_packed", "loss_packed", "hidden_packed"});
    }
    if (run.declares("states")) {
      const Tensor states = call(session, "states", {{"tokens", run.tokens}}).tensor();
      CHECK(states.shape() == Shape{1, S, session.instance_generics().at("H").dim});
      double largest = 0;
      for (double value : states.to_vector<double>()) largest = std::max(largest, std::abs(value));
      CHECK(std::isfinite(largest));
      CHECK(largest > 0);
      checked.insert("states");
    }
    // Nothing the card declares went untested.
    for (const std::string& entry : session.root().entry_names()) {
      INFO("entry " << entry);
      CHECK(checked.count(entry) == 1);
    }
  }
}

TEST_CASE("bf16 weights run at T=bf16 as stored, from the mapping or copied as they are", "[nest][run][golden]") {
  for (const GoldenCase& golden_case : golden_cases()) {
    if (golden_case.golden == "mistral-trunc") continue;
    INFO(golden_case.card);
    GoldenRun run(golden_case, {"T=bf16"});
    const nest::LoadCounts& counts = run.session->load_counts();
    CHECK(counts.widened == 0);
    CHECK(counts.copied == 0);
    // Every tensor as stored: mapped, or for the packed u8 ones (the
    // MXFP4 experts) copied into memory (--load packed, the default).
    CHECK(counts.borrowed + counts.placed == run.session->checkpoint().touched().size());
    REQUIRE(run.logits.dtype() == DType::BF16);
    // Exact bf16 arithmetic is not PyTorch's (which accumulates in f32), so
    // this is no numerical check; the validation suite compares policies.
    const Tensor reference = expected_tensor(golden_case.golden, "logits_bf16");
    const double difference = max_abs_difference(run.logits, reference);
    INFO("max |logits - logits_bf16| = " << difference);
    CHECK(std::isfinite(difference));
  }
}

TEST_CASE("a script of calls runs on one instance, outputs named by position", "[nest][run][golden]") {
  auto session = golden_session("mistral-7b-instruct-v0.3", "mistral-a");
  const std::string script = R"([
    {"entry": "prefill", "inputs": {"tokens": [[5, 9, 2]], "pos": 0}},
    {"entry": "decode", "inputs": {"token": [[7]], "pos": 3}},
    {"reset": true},
    {"entry": "forward", "inputs": {"tokens": [5, 9, 2, 7]}, "bind": {"S": 4}}
  ])";
  const std::vector<nest::ScriptCall> calls = nest::parse_script(script, "", *session);
  REQUIRE(calls.size() == 4);
  const std::vector<nest::ScriptStep> steps = nest::run_script(*session, calls);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].outputs.front().first == "0_prefill");
  CHECK(steps[1].outputs.front().first == "1_decode");
  CHECK(steps[2].outputs.front().first == "3_forward");
  const Tensor logits = steps[2].outputs.front().second;
  CHECK(max_abs_difference(steps[0].outputs.front().second, logits.select(1, 2).contiguous()) < kAgree);
  CHECK(max_abs_difference(steps[1].outputs.front().second, logits.select(1, 3).contiguous()) < kAgree);

  // Mistakes are found before anything runs.
  CHECK_THROWS_WITH(nest::parse_script(R"([{"entry": "prefil"}])", "", *session),
                    Catch::Contains("has no entry `prefil`"));
  CHECK_THROWS_WITH(nest::parse_script(R"([{"entry": "decode", "inputs": {"token": [[7]]}}])", "", *session),
                    Catch::Contains("needs input pos"));
  CHECK_THROWS_WITH(nest::parse_script(R"([{"entry": "decode", "inputs": {"tok": 1, "pos": 0}}])", "", *session),
                    Catch::Contains("has no parameter `tok`"));
  CHECK_THROWS_WITH(nest::parse_script(R"([{"entry": "forward", "bind": {"Q": 1}, "inputs": {"tokens": [1]}}])", "",
                                       *session),
                    Catch::Contains("has no generic `Q`"));
  CHECK_THROWS_WITH(nest::parse_script(R"({"calls": []})", "", *session), Catch::Contains("no calls"));
}

TEST_CASE("inputs: literals, shapes from the declaration, .npy files", "[nest][run][inputs]") {
  nest::InputSlot tokens{"tokens", DType::I32, 2, "Tensor[B, S; i32]"};
  CHECK(nest::input_from_text("[[1, 2, 3]]", tokens).shape() == Shape{1, 3});
  const Tensor flat = nest::input_from_text("1,2,3", tokens);
  CHECK(flat.shape() == Shape{1, 3});
  CHECK(flat.dtype() == DType::I32);
  CHECK(flat.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3});
  CHECK_THROWS_WITH(nest::input_from_text("[[1, 2], [3]]", tokens), Catch::Contains("not rectangular"));
  CHECK_THROWS_WITH(nest::input_from_text("[[[1]]]", tokens), Catch::Contains("more axes"));
  CHECK_THROWS_WITH(nest::input_from_text("1.5", tokens), Catch::Contains("takes integers"));
  CHECK_THROWS_WITH(nest::input_from_text("3000000000", tokens), Catch::Contains("does not fit i32"));
  CHECK_THROWS_WITH(nest::input_from_text("[1, 2", tokens), Catch::Contains("is not a value"));

  nest::InputSlot temperature{"temperature", DType::F32, 0, "f32"};
  const Tensor scalar = nest::input_from_text("0.7", temperature);
  CHECK(scalar.rank() == 0);
  CHECK(scalar.item().to<float>() == 0.7f);
  nest::InputSlot weights{"w", DType::BF16, 1, "Tensor[P; T]"};
  CHECK(nest::input_from_text("1, 0.5", weights).dtype() == DType::BF16);

  // A .npy of int64 token ids (NumPy's default) converts to i32 when they fit.
  const linnet_test::TempDir dir("linnet-run-tokens");
  const std::string path = dir.file("tokens.npy");
  tensor::write_npy(path, nest::npy_from_tensor(Tensor::from_vector(std::vector<int64_t>{4, 5, 6}, {3})));
  const Tensor loaded = nest::input_from_text("@" + path, tokens);
  CHECK(loaded.dtype() == DType::I32);
  CHECK(loaded.shape() == Shape{1, 3});
  tensor::write_npy(path, nest::npy_from_tensor(Tensor::from_vector(std::vector<float>{1.0f}, {1})));
  CHECK_THROWS_WITH(nest::input_from_text("@" + path, tokens), Catch::Contains("holds f32"));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(nest::input_from_text("@" + path, tokens), Catch::Contains("input `tokens`"));
}

TEST_CASE("outputs are written to .npy and .npz from their tensors' storage, with npy_from_tensor's bytes",
          "[nest][run][outputs]") {
  const Tensor logits = Tensor::from_vector(std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, 7.0f, -0.5f}, {2, 3});
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{4, 5, 6}, {3});
  // A contiguous f32 or integer tensor is written from its own bytes.
  for (const Tensor& tensor : {logits, ids}) {
    const Tensor ready = nest::npy_ready(tensor);
    CHECK(ready.shares_storage_with(tensor));
    CHECK(nest::npy_view(ready).data.data() == tensor.raw_data());
  }
  // bf16 is widened and a transposed view made contiguous: copies of their own.
  const Tensor widened = nest::npy_ready(logits.to(DType::BF16));
  CHECK(widened.dtype() == DType::F32);
  CHECK(nest::npy_ready(logits.permute({1, 0})).is_contiguous());
  CHECK(nest::npy_view(nest::npy_ready(Tensor::zeros(DType::F32, {0, 3}))).data.empty());

  // The files hold what npy_from_tensor's arrays give, bit for bit.
  const std::vector<Tensor> tensors{logits, ids, logits.permute({1, 0}), logits.to(DType::BF16), widened.reshape({6})};
  std::map<std::string, tensor::NpyArray> arrays;
  std::map<std::string, tensor::NpyView> views;
  std::vector<Tensor> ready;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = "out_" + std::to_string(i);
    arrays[name] = nest::npy_from_tensor(tensors[i]);
    ready.push_back(nest::npy_ready(tensors[i]));
  }
  for (size_t i = 0; i < tensors.size(); ++i) views["out_" + std::to_string(i)] = nest::npy_view(ready[i]);
  const linnet_test::TempDir dir("linnet-run-outputs");
  auto file_bytes = [](const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  };
  tensor::write_npz(dir.file("views.npz"), views);
  tensor::write_npz(dir.file("arrays.npz"), arrays);
  CHECK(file_bytes(dir.file("views.npz")) == file_bytes(dir.file("arrays.npz")));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = "out_" + std::to_string(i);
    tensor::write_npy(dir.file("view.npy"), views[name]);
    tensor::write_npy(dir.file("array.npy"), arrays[name]);
    INFO(name);
    CHECK(file_bytes(dir.file("view.npy")) == file_bytes(dir.file("array.npy")));
  }
}

TEST_CASE("the best token of a row is the first of its full ranking, in every float dtype and layout",
          "[nest][run][summary]") {
  // Ties, NaN (ranks last) and infinities, dense rows and strided ones; the argmax
  // (k = 1) takes a single pass, k > 1 ranks the row: they must agree.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values{nan, 2.0f, -inf, 2.0f, 1.0f, nan, nan, nan, -1.0f, -inf, -1.0f, inf};
  const Tensor f32 = Tensor::from_vector(values, {3, 4});
  for (const Tensor& logits : {f32, f32.to(DType::BF16), f32.to(DType::F16), f32.to(DType::F64),
                               f32.reshape({4, 3}).permute({1, 0})}) {
    INFO(logits.describe());
    const auto best = nest::top_k_rows(logits, 1);
    const auto ranked = nest::top_k_rows(logits, 4);
    REQUIRE(best.size() == 3);
    for (size_t row = 0; row < best.size(); ++row) {
      REQUIRE(best[row].size() == 1);
      CHECK(best[row][0].token == ranked[row][0].token);
      CHECK((best[row][0].value == ranked[row][0].value ||
             (std::isnan(best[row][0].value) && std::isnan(ranked[row][0].value))));
    }
  }
  CHECK(nest::argmax_rows(f32) == std::vector<int64_t>{1, 0, 3});
}

TEST_CASE("output summaries name the top tokens of logits", "[nest][run][summary]") {
  const Tensor logits = Tensor::from_vector(std::vector<float>{0.1f, 0.9f, 0.5f, 0.9f, 3.0f, 1.0f, 2.0f, 0.0f}, {2, 4});
  const auto rows = nest::top_k_rows(logits, 2);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][0].token == 1);  // ties go to the lower index
  CHECK(rows[0][1].token == 3);
  CHECK(rows[1][0].token == 0);
  CHECK(nest::argmax_rows(logits) == std::vector<int64_t>{1, 0});
  nest::SummaryOptions options;
  options.vocab = 4;
  options.top_k = 2;
  const std::string text = nest::describe_output("forward", logits, options);
  CHECK(text.find("forward: f32[2, 4]") != std::string::npos);
  CHECK(text.find("[1] top-2: 0 (3) 2 (2)") != std::string::npos);
  const std::string ids = nest::describe_output("generate", Tensor::from_vector(std::vector<int32_t>{3, 1}, {1, 2}), options);
  CHECK(ids.find("3 1") != std::string::npos);
}
