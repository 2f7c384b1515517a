// Every entry of the cards, run on small generics with random weights and
// checked against `forward`: whatever route an entry takes through the KV
// caches (rows, slots, packed prompts, pages), a token's logits must be the
// ones the whole-sequence forward pass gives at its position.
#include <algorithm>
#include <cmath>

#include "card_test_util.hpp"

using namespace eval_test;

namespace {

constexpr double kTolerance = 1e-4;

Tensor tokens_of(const std::vector<int32_t>& ids, const Shape& shape) { return i32(ids, shape); }

// forward<1, S>(ids)[0]: [S, Vocab].
Tensor forward_one(Interpreter& interpreter, BlockInstance& model, const std::vector<int32_t>& ids) {
  const int64_t length = static_cast<int64_t>(ids.size());
  Tensor logits = entry(interpreter, model, "forward", {v(tokens_of(ids, {1, length}))},
                        {{"B", dim(1)}, {"S", dim(length)}})
                      .tensor();
  return logits.select(0, 0);
}

int32_t argmax(const Tensor& row) {
  const auto x = values(row);
  return static_cast<int32_t>(std::max_element(x.begin(), x.end()) - x.begin());
}

std::vector<double> log_softmax(const Tensor& row) {
  const auto x = values(row);
  const double peak = *std::max_element(x.begin(), x.end());
  double total = 0;
  for (double value : x) total += std::exp(value - peak);
  std::vector<double> out;
  for (double value : x) out.push_back(value - peak - std::log(total));
  return out;
}

std::vector<int32_t> concat_ids(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

GenericBindings with(GenericBindings base, GenericBindings extra) {
  for (auto& [name, value] : extra) base[name] = value;
  return base;
}

const std::vector<int32_t> kPromptA{5, 17, 42};
const std::vector<int32_t> kPromptB{9, 33};

// Entries that serve many requests through the caches (decode_rows,
// prefill_slots, prefill_packed, step_packed), on a model with two cache rows.
void check_batched_entries(Interpreter& interpreter, BlockInstance& model) {
  const int32_t next_a = 7;
  const int32_t next_b = 60;
  const Tensor after_a = forward_one(interpreter, model, concat_ids(kPromptA, {next_a}));
  const Tensor after_b = forward_one(interpreter, model, concat_ids(kPromptB, {next_b}));

  SECTION("decode_rows: each row at its own position") {
    model.reset_state();
    Tensor first = entry(interpreter, model, "decode_rows",
                         {v(tokens_of({kPromptA[0], kPromptB[0]}, {2, 1})), v(i32({0, 0}, {2}))})
                       .tensor();
    Tensor second = entry(interpreter, model, "decode_rows",
                          {v(tokens_of({kPromptA[1], kPromptB[1]}, {2, 1})), v(i32({1, 1}, {2}))})
                        .tensor();
    const Tensor a = forward_one(interpreter, model, kPromptA);
    const Tensor b = forward_one(interpreter, model, kPromptB);
    CHECK(max_abs_difference(first.select(0, 0), a.select(0, 0)) < kTolerance);
    CHECK(max_abs_difference(first.select(0, 1), b.select(0, 0)) < kTolerance);
    CHECK(max_abs_difference(second.select(0, 0), a.select(0, 1)) < kTolerance);
    CHECK(max_abs_difference(second.select(0, 1), b.select(0, 1)) < kTolerance);
    // Row 0 goes on alone; row 1 idles at the last position, unread.
    Tensor third = entry(interpreter, model, "decode_rows",
                         {v(tokens_of({kPromptA[2], 0}, {2, 1})), v(i32({2, 15}, {2}))})
                       .tensor();
    CHECK(max_abs_difference(third.select(0, 0), a.select(0, 2)) < kTolerance);
  }

  SECTION("prefill_slots, then decode_rows continues each slot") {
    model.reset_state();
    // Request 0 (prompt A) goes to slot 1, request 1 (prompt B, padded) to slot 0.
    Tensor prompts = tokens_of(concat_ids(kPromptA, concat_ids(kPromptB, {0})), {2, 3});
    Tensor last = entry(interpreter, model, "prefill_slots", {v(prompts), v(i32({1, 0}, {2})), v(i32({3, 2}, {2}))},
                        {{"M", dim(2)}, {"S", dim(3)}})
                      .tensor();
    CHECK(max_abs_difference(last.select(0, 0), forward_one(interpreter, model, kPromptA).select(0, 2)) < kTolerance);
    CHECK(max_abs_difference(last.select(0, 1), forward_one(interpreter, model, kPromptB).select(0, 1)) < kTolerance);
    Tensor step = entry(interpreter, model, "decode_rows",
                        {v(tokens_of({next_b, next_a}, {2, 1})), v(i32({2, 3}, {2}))})
                      .tensor();
    CHECK(max_abs_difference(step.select(0, 0), after_b.select(0, 2)) < kTolerance);
    CHECK(max_abs_difference(step.select(0, 1), after_a.select(0, 3)) < kTolerance);
  }

  SECTION("prefill_packed: prompts end to end, then decode_rows") {
    model.reset_state();
    Tensor packed = tokens_of(concat_ids(kPromptA, kPromptB), {5});
    Tensor logits = entry(interpreter, model, "prefill_packed",
                          {v(packed), v(i32({0, 0, 0, 1, 1}, {5})), v(i32({0, 1, 2, 0, 1}, {5})),
                           v(i32({0, 0, 0, 1, 1}, {5})), v(i32({2, 4}, {2}))},
                          {{"P", dim(5)}})
                        .tensor();
    CHECK(max_abs_difference(logits.select(0, 0), forward_one(interpreter, model, kPromptA).select(0, 2)) <
          kTolerance);
    CHECK(max_abs_difference(logits.select(0, 1), forward_one(interpreter, model, kPromptB).select(0, 1)) <
          kTolerance);
    Tensor step = entry(interpreter, model, "decode_rows",
                        {v(tokens_of({next_a, next_b}, {2, 1})), v(i32({3, 2}, {2}))})
                      .tensor();
    CHECK(max_abs_difference(step.select(0, 0), after_a.select(0, 3)) < kTolerance);
    CHECK(max_abs_difference(step.select(0, 1), after_b.select(0, 2)) < kTolerance);
  }

  SECTION("step_packed: a prompt and every row's step in one pass") {
    model.reset_state();
    // Prompt A into row 0; in the same pass row 0 steps with `next_a` at
    // position 3 and row 1 idles at the last position.
    Tensor both = entry(interpreter, model, "step_packed",
                        {v(tokens_of(kPromptA, {3})), v(i32({0, 0, 0}, {3})), v(i32({0, 1, 2}, {3})),
                         v(i32({0, 0, 0}, {3})), v(i32({2, 2}, {2})), v(tokens_of({next_a, 0}, {2, 1})),
                         v(i32({3, 15}, {2}))},
                        {{"P", dim(3)}})
                      .tensor();
    REQUIRE(both.shape()[0] == 4);
    CHECK(max_abs_difference(both.select(0, 0), forward_one(interpreter, model, kPromptA).select(0, 2)) < kTolerance);
    CHECK(max_abs_difference(both.select(0, 2), after_a.select(0, 3)) < kTolerance);
  }
}

// The Llama-family entries beyond the batched ones: next_token, generation,
// sampling, paged serving and the training entries, on a one-row model.
void check_llama_single_entries(Interpreter& interpreter, BlockInstance& model, int64_t vocab, int64_t hidden) {
  const std::vector<int32_t> sequence{3, 14, 15, 9, 26};
  const Tensor logits = forward_one(interpreter, model, sequence);

  SECTION("next_token is forward's last position") {
    Tensor last = entry(interpreter, model, "next_token", {v(tokens_of(sequence, {1, 5}))},
                        {{"B", dim(1)}, {"S", dim(5)}})
                      .tensor();
    CHECK(max_abs_difference(last.select(0, 0), logits.select(0, 4)) < kTolerance);
  }

  SECTION("generate and generate_until follow greedy decoding") {
    model.reset_state();
    std::vector<int32_t> greedy;
    int32_t current = sequence[0];
    for (int i = 0; i < 3; ++i) {
      Tensor step = entry(interpreter, model, "decode", {v(tokens_of({current}, {1, 1})), scalar_i32(i)}).tensor();
      current = argmax(step.select(0, 0));
      greedy.push_back(current);
    }
    model.reset_state();
    Tensor produced = entry(interpreter, model, "generate", {v(tokens_of({sequence[0]}, {1, 1})), scalar_i32(0)},
                            {{"Steps", dim(3)}})
                          .tensor();
    CHECK(values(produced) == std::vector<double>(greedy.begin(), greedy.end()));

    model.reset_state();
    const int32_t eos = greedy[1];
    Value until = entry(interpreter, model, "generate_until",
                        {v(tokens_of({sequence[0]}, {1, 1})), scalar_i32(0), scalar_i32(eos)}, {{"MaxNew", dim(4)}});
    const int64_t count = std::find(greedy.begin(), greedy.end(), eos) - greedy.begin() + 1;
    CHECK(until.elements()[1].tensor().item().to<int64_t>() == count);
    const auto got = values(until.elements()[0].tensor());
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(got[static_cast<size_t>(i)] == (i < count ? greedy[static_cast<size_t>(i)] : 0));
    }
  }

  SECTION("sample draws tokens from the vocabulary") {
    model.reset_state();
    Tensor drawn = entry(interpreter, model, "sample",
                         {v(tokens_of({sequence[0]}, {1, 1})), scalar_i32(0), v(i64({0, 42}, {2})), scalar_f32(1.0f)},
                         {{"Steps", dim(2)}})
                       .tensor();
    REQUIRE(drawn.shape() == Shape{1, 2});
    for (double token : values(drawn)) CHECK((token >= 0 && token < vocab));
  }

  SECTION("paged prefill and decode over a page table") {
    model.reset_state();
    // Pages of 4 positions; row 0 owns pages 2 then 0, row 1 pages 1 then 3.
    Tensor table = i32({2, 0, 1, 3}, {2, 2});
    Tensor logits_paged = entry(interpreter, model, "prefill_paged",
                                {v(tokens_of(concat_ids(kPromptA, kPromptB), {5})), v(i32({0, 1, 2, 0, 1}, {5})),
                                 v(i32({0, 0, 0, 1, 1}, {5})), v(i32({8, 9, 10, 4, 5}, {5})), v(i32({2, 4}, {2})),
                                 v(table)},
                                {{"P", dim(5)}, {"Rows", dim(2)}, {"Pages", dim(2)}})
                              .tensor();
    CHECK(max_abs_difference(logits_paged.select(0, 0), forward_one(interpreter, model, kPromptA).select(0, 2)) <
          kTolerance);
    CHECK(max_abs_difference(logits_paged.select(0, 1), forward_one(interpreter, model, kPromptB).select(0, 1)) <
          kTolerance);
    Tensor step = entry(interpreter, model, "decode_paged",
                        {v(tokens_of({7, 60}, {2, 1})), v(i32({3, 2}, {2})), v(table)},
                        {{"Rows", dim(2)}, {"Pages", dim(2)}})
                      .tensor();
    CHECK(max_abs_difference(step.select(0, 0),
                             forward_one(interpreter, model, concat_ids(kPromptA, {7})).select(0, 3)) < kTolerance);
    CHECK(max_abs_difference(step.select(0, 1),
                             forward_one(interpreter, model, concat_ids(kPromptB, {60})).select(0, 2)) < kTolerance);
    // In one pass: a prompt chunk for row 1 (token 11 at position 3, slot
    // 7 in page 1), then a step for every row at position 4, the first
    // position of each row's second page (slots 0 and 12).
    Tensor both = entry(interpreter, model, "step_paged",
                        {v(tokens_of({11}, {1})), v(i32({3}, {1})), v(i32({1}, {1})), v(i32({7}, {1})),
                         v(i32({0, 0}, {2})), v(tokens_of({21, 12}, {2, 1})), v(i32({4, 4}, {2})), v(table)},
                        {{"P", dim(1)}, {"Rows", dim(2)}, {"Pages", dim(2)}})
                      .tensor();
    REQUIRE(both.shape() == Shape{4, vocab});
    CHECK(max_abs_difference(both.select(0, 0),
                             forward_one(interpreter, model, concat_ids(kPromptB, {60, 11})).select(0, 3)) < kTolerance);
    CHECK(max_abs_difference(both.select(0, 2),
                             forward_one(interpreter, model, concat_ids(kPromptA, {7, 21})).select(0, 4)) < kTolerance);
    CHECK(max_abs_difference(both.select(0, 3),
                             forward_one(interpreter, model, concat_ids(kPromptB, {60, 11, 12})).select(0, 4)) <
          kTolerance);
  }

  SECTION("training entries over packed sequences") {
    Tensor packed = tokens_of(concat_ids(kPromptA, kPromptB), {5});
    Tensor positions = i32({0, 1, 2, 0, 1}, {5});
    Tensor segments = i32({0, 0, 0, 1, 1}, {5});
    Tensor targets = i64({17, 42, 3, 33, 8}, {5});
    Tensor weights = f32({1, 1, 0.5f, 1, 0}, {5});
    Tensor log_probs = entry(interpreter, model, "log_probs_packed", {v(packed), v(positions), v(segments), v(targets)},
                             {{"P", dim(5)}})
                           .tensor();
    const Tensor a = forward_one(interpreter, model, kPromptA);
    const Tensor b = forward_one(interpreter, model, kPromptB);
    const std::vector<std::pair<Tensor, int64_t>> rows{{a, 0}, {a, 1}, {a, 2}, {b, 0}, {b, 1}};
    double expected_loss = 0;
    for (size_t p = 0; p < rows.size(); ++p) {
      const double expected = log_softmax(rows[p].first.select(0, rows[p].second))[static_cast<size_t>(
          targets.at<int64_t>({static_cast<int64_t>(p)}))];
      CHECK(values(log_probs)[p] == Approx(expected).margin(1e-4));
      expected_loss -= weights.at<double>({static_cast<int64_t>(p)}) * expected;
    }
    Tensor loss = entry(interpreter, model, "loss_packed", {v(packed), v(positions), v(segments), v(targets), v(weights)},
                        {{"P", dim(5)}})
                      .tensor();
    CHECK(loss.rank() == 0);
    CHECK(loss.item().to<double>() == Approx(expected_loss).margin(1e-3));
    Tensor hidden_states =
        entry(interpreter, model, "hidden_packed", {v(packed), v(positions), v(segments)}, {{"P", dim(5)}}).tensor();
    CHECK(hidden_states.shape() == Shape{5, hidden});
  }
}

GenericBindings llama_generics() {
  return {{"Vocab", dim(64)}, {"H", dim(32)}, {"Heads", dim(4)}, {"KvHeads", dim(2)}, {"Inner", dim(64)},
          {"Layers", dim(2)}, {"MaxSeq", dim(16)}, {"PageSize", dim(4)}, {"T", dtype(DType::F32)}};
}

}  // namespace

TEST_CASE("mistral: every entry agrees with forward", "[cards][entries]") {
  auto program = load_inputs({card("mistral-7b-instruct-v0.3")});
  auto pair = random_model(*program, with(llama_generics(), {{"Batch", dim(2)}}), false);
  check_batched_entries(*program, *pair);
  auto single = random_model(*program, with(llama_generics(), {{"Batch", dim(1)}}), false);
  check_llama_single_entries(*program, *single, 64, 32);
}

TEST_CASE("qwen3: every entry agrees with forward", "[cards][entries]") {
  auto program = load_inputs({card("qwen3-8b")});
  const GenericBindings generics = with(llama_generics(), {{"HeadDim", dim(8)}});
  auto pair = random_model(*program, with(generics, {{"Batch", dim(2)}}), false);
  check_batched_entries(*program, *pair);
  auto single = random_model(*program, with(generics, {{"Batch", dim(1)}}), false);
  check_llama_single_entries(*program, *single, 64, 32);
}

TEST_CASE("gpt-oss: the batched entries agree with forward", "[cards][entries]") {
  auto program = load_inputs({card("gpt-oss-20b")});
  GenericBindings generics{{"Vocab", dim(64)},   {"H", dim(64)},     {"Heads", dim(4)},   {"KvHeads", dim(2)},
                           {"HeadDim", dim(16)}, {"Inner", dim(64)}, {"Experts", dim(4)}, {"TopK", dim(2)},
                           {"Layers", dim(2)},   {"Window", dim(2)}, {"Batch", dim(2)},   {"MaxSeq", dim(16)},
                           {"T", dtype(DType::F32)}};
  auto model = random_model(*program, generics, true, random_mxfp4);
  check_batched_entries(*program, *model);
  SECTION("next_token and states") {
    const std::vector<int32_t> sequence{3, 14, 15, 9};
    const Tensor logits = forward_one(*program, *model, sequence);
    Tensor last = entry(*program, *model, "next_token", {v(tokens_of(sequence, {1, 4}))},
                        {{"B", dim(1)}, {"S", dim(4)}})
                      .tensor();
    CHECK(max_abs_difference(last.select(0, 0), logits.select(0, 3)) < kTolerance);
    Tensor states = entry(*program, *model, "states", {v(tokens_of(sequence, {1, 4}))}, {{"B", dim(1)}, {"S", dim(4)}})
                        .tensor();
    CHECK(states.shape() == Shape{1, 4, 64});
  }
}
