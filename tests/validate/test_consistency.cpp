// Cross-entry consistency on the golden checkpoints, in f32: every entry a
// card declares computes logits (or tokens, or log-probabilities) that
// `forward` also gives, by another route through the KV caches. Each check
// below feeds an entry the tokens of a few sequences and compares what it
// returns with `forward` on those sequences at the same positions, or with
// the host's own computation from `forward`'s logits, to 1e-5.
//
// The references are the card's own `forward`; the golden logits themselves
// are the validate suite's business (test_validate.cpp).
//
// Set LINNET_CONSISTENCY_REPORT=1 to print the largest difference of every
// check, card by card.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "linnet/nest/generate.hpp"
#include "linnet/nest/script.hpp"
#include "nest/test_run_golden.hpp"

using namespace linnet;
using nest_test::call;
using nest_test::golden_binds;
using nest_test::golden_session;
using nest_test::i32_scalar;
using tensor::DType;
using tensor::Shape;
using tensor::Tensor;

namespace {

constexpr double kTolerance = 1e-5;

struct CardCase {
  std::string card;    // under nest/
  std::string golden;  // under golden/
};

const std::vector<CardCase>& card_cases() {
  static const std::vector<CardCase> cases = {
      {"mistral-7b-instruct-v0.3", "mistral-a"},
      {"qwen3-8b", "qwen3-a"},
      {"gpt-oss-20b", "gptoss-a"},
  };
  return cases;
}

using Ids = std::vector<int32_t>;
using Row = std::vector<double>;  // one position's logits (or hidden state)

Ids span_of(const Ids& ids, size_t begin, size_t end) { return Ids(ids.begin() + begin, ids.begin() + end); }

Ids joined(Ids first, const Ids& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

Tensor ids_tensor(const Ids& ids, const Shape& shape) { return Tensor::from_vector(ids, shape); }
Tensor ids_tensor(const Ids& ids) { return ids_tensor(ids, {static_cast<int64_t>(ids.size())}); }

Ids iota_ids(int64_t count, int64_t start = 0) {
  Ids ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(static_cast<int32_t>(start + i));
  return ids;
}

// The rows of a rank-2 result, in double.
std::vector<Row> rows_of(const Tensor& matrix) {
  REQUIRE(matrix.rank() == 2);
  const int64_t width = matrix.extent(1);
  const std::vector<double> values = matrix.to_vector<double>();
  std::vector<Row> rows;
  for (int64_t r = 0; r < matrix.extent(0); ++r) rows.emplace_back(values.begin() + r * width, values.begin() + (r + 1) * width);
  return rows;
}

double max_difference(const Row& a, const Row& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double difference = std::abs(a[i] - b[i]);
    if (std::isnan(difference)) return INFINITY;
    worst = std::max(worst, difference);
  }
  return worst;
}

Row log_softmax(const Row& logits) {
  const double peak = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (double value : logits) total += std::exp(value - peak);
  const double log_total = std::log(total);
  Row out;
  for (double value : logits) out.push_back(value - peak - log_total);
  return out;
}

int32_t argmax(const Row& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// `forward` on equally long sequences: logits[r][p] is sequence r's row at position p.
struct ForwardLogits {
  std::vector<std::vector<Row>> logits;
  const Row& at(size_t sequence, int64_t position) const { return logits.at(sequence).at(static_cast<size_t>(position)); }
};

ForwardLogits run_forward(nest::Session& session, const std::vector<Ids>& sequences) {
  const int64_t count = static_cast<int64_t>(sequences.size());
  const int64_t length = static_cast<int64_t>(sequences.front().size());
  Ids flat;
  for (const Ids& sequence : sequences) {
    REQUIRE(static_cast<int64_t>(sequence.size()) == length);
    flat = joined(flat, sequence);
  }
  const Tensor logits = call(session, "forward", {{"tokens", ids_tensor(flat, {count, length})}}).tensor();
  REQUIRE(logits.dtype() == DType::F32);
  const std::vector<Row> rows = rows_of(logits.reshape({count * length, logits.extent(2)}));
  ForwardLogits out;
  for (int64_t r = 0; r < count; ++r) out.logits.emplace_back(rows.begin() + r * length, rows.begin() + (r + 1) * length);
  return out;
}

// A parameter of the loaded instance by its member path ("lm_head", "weight").
const Tensor& parameter(nest::Session& session, const std::string& block, const std::string& name) {
  const eval::BlockInstance& sub = *session.instance().members.at(block).value.block();
  return sub.members.at(name).value.tensor();
}

// The largest difference of each check and the entries that ran, for one card.
class Ledger {
 public:
  explicit Ledger(std::string card) : card_(std::move(card)) {}

  void record(const std::string& check, double difference, double tolerance = kTolerance) {
    auto [place, fresh] = worst_.try_emplace(check, difference);
    if (!fresh) place->second = std::max(place->second, difference);
    if (fresh) order_.push_back(check);
    INFO(card_ << ": " << check << ": max |difference| = " << difference << " (tolerance " << tolerance << ")");
    CHECK(difference <= tolerance);
  }
  void ran(std::initializer_list<std::string> entries) { ran_.insert(entries); }
  bool has_run(const std::string& entry) const { return ran_.count(entry) == 1; }

  void print() const {
    const char* wanted = std::getenv("LINNET_CONSISTENCY_REPORT");
    if (wanted == nullptr || std::string(wanted).empty()) return;
    std::cout << "consistency, " << card_ << ":\n";
    for (const std::string& check : order_) {
      std::cout << "  " << std::left << std::setw(84) << check << std::scientific << std::setprecision(2) << worst_.at(check)
                << "\n";
    }
    std::cout << std::defaultfloat;
  }

 private:
  std::string card_;
  std::map<std::string, double> worst_;
  std::vector<std::string> order_;
  std::set<std::string> ran_;
};

// The three sequences every check draws from: the golden prompt, the same
// tokens reversed, and the prompt with every token moved along the
// vocabulary. Equal lengths, so one `forward` call covers them all.
std::vector<Ids> test_sequences(const Ids& golden, int64_t vocab) {
  Ids reversed(golden.rbegin(), golden.rend());
  Ids shifted;
  for (int32_t token : golden) shifted.push_back(static_cast<int32_t>((token * 7 + 3) % vocab));
  return {golden, reversed, shifted};
}

// decode, prefill, chunked prefill, next_token: one cache row (Batch 1).
void check_single_row(nest::Session& session, const std::vector<Ids>& sequences, const ForwardLogits& forward,
                      std::vector<std::vector<Row>>& decoded, Ledger& ledger) {
  const Ids& prompt = sequences[0];
  const int64_t length = static_cast<int64_t>(prompt.size());

  const Tensor next = call(session, "next_token", {{"tokens", ids_tensor(prompt, {1, length})}}).tensor();
  ledger.record("next_token = forward[last]", max_difference(rows_of(next)[0], forward.at(0, length - 1)));

  // Every sequence decoded token by token from an empty cache; the rows are
  // kept for decode_rows, which must give the same logits row by row.
  for (size_t s = 0; s < sequences.size(); ++s) {
    session.reset_state();
    decoded.emplace_back();
    for (int64_t p = 0; p < length; ++p) {
      const Tensor step = call(session, "decode", {{"token", ids_tensor({sequences[s][p]}, {1, 1})}, {"pos", i32_scalar(p)}})
                              .tensor();
      decoded[s].push_back(rows_of(step)[0]);
      ledger.record("decode from an empty cache = forward, every position", max_difference(decoded[s].back(), forward.at(s, p)));
    }
  }

  session.reset_state();
  const Tensor whole =
      call(session, "prefill", {{"tokens", ids_tensor(prompt, {1, length})}, {"pos", i32_scalar(0)}}).tensor();
  ledger.record("prefill(whole prompt) = forward[last]", max_difference(rows_of(whole)[0], forward.at(0, length - 1)));

  // The prompt in two chunks (the second attends over the first through the
  // cache), then decoded to its end. The chunks straddle gpt-oss's window of 8.
  const int64_t first_end = 5;
  const int64_t second_end = length - 4;
  session.reset_state();
  const Tensor first = call(session, "prefill",
                            {{"tokens", ids_tensor(span_of(prompt, 0, first_end), {1, first_end})}, {"pos", i32_scalar(0)}})
                           .tensor();
  ledger.record("prefill(chunk 1) = forward", max_difference(rows_of(first)[0], forward.at(0, first_end - 1)));
  const Tensor second =
      call(session, "prefill",
           {{"tokens", ids_tensor(span_of(prompt, first_end, second_end), {1, second_end - first_end})},
            {"pos", i32_scalar(first_end)}})
          .tensor();
  ledger.record("prefill(chunk 2 after chunk 1) = forward", max_difference(rows_of(second)[0], forward.at(0, second_end - 1)));
  for (int64_t p = second_end; p < length; ++p) {
    const Tensor step =
        call(session, "decode", {{"token", ids_tensor({prompt[p]}, {1, 1})}, {"pos", i32_scalar(p)}}).tensor();
    ledger.record("decode after a chunked prefill = forward", max_difference(rows_of(step)[0], forward.at(0, p)));
  }
  ledger.ran({"next_token", "decode", "prefill"});
}

// generate, generate_until and sample against the host's loop (nest::generate).
void check_generation(nest::Session& session, const Ids& prompt, Ledger& ledger) {
  const int64_t length = static_cast<int64_t>(prompt.size());
  const int64_t steps = 12;
  const Tensor head = ids_tensor(span_of(prompt, 0, length - 1), {1, length - 1});
  const Tensor last_token = ids_tensor({prompt.back()}, {1, 1});
  auto prefill_head = [&] {
    session.reset_state();
    call(session, "prefill", {{"tokens", head}, {"pos", i32_scalar(0)}});
  };

  nest::GenerateOptions greedy;
  greedy.prompt = prompt;
  greedy.max_new = steps;
  const Ids host = nest::generate(session, greedy).tokens;
  REQUIRE(static_cast<int64_t>(host.size()) == steps);
  // The same loop with no cache at all: forward on the growing sequence.
  Ids uncached;
  for (Ids text = prompt; static_cast<int64_t>(uncached.size()) < steps; text.push_back(uncached.back())) {
    uncached.push_back(argmax(run_forward(session, {text}).logits[0].back()));
  }
  INFO("the host's greedy loop vs argmax of forward on the growing sequence");
  CHECK(host == uncached);

  prefill_head();
  const Tensor produced = call(session, "generate", {{"token", last_token}, {"pos", i32_scalar(length - 1)}},
                               {{"Steps", eval::GenericValue::of_dim(steps)}})
                              .tensor();
  INFO("generate vs the host's greedy loop");
  CHECK(produced.to_vector<int32_t>() == host);

  // Stopping at the fourth token, and (with an eos never produced) not stopping.
  int32_t absent = 0;
  while (std::find(host.begin(), host.end(), absent) != host.end()) ++absent;
  for (const int32_t eos : {host[3], absent}) {
    const int64_t stop = std::min<int64_t>(std::find(host.begin(), host.end(), eos) - host.begin() + 1, steps);
    prefill_head();
    const eval::Value until = call(session, "generate_until",
                                   {{"token", last_token}, {"pos", i32_scalar(length - 1)}, {"eos", i32_scalar(eos)}},
                                   {{"MaxNew", eval::GenericValue::of_dim(steps)}});
    const auto parts = nest::flatten_outputs("until", until);
    REQUIRE(parts.size() == 2);
    Ids expected(host.begin(), host.begin() + stop);
    expected.resize(host.size(), 0);
    INFO("generate_until with eos " << eos);
    CHECK(parts[1].second.item().to<int64_t>() == stop);
    CHECK(parts[0].second.to_vector<int32_t>() == expected);
  }

  // The card's sampler and the host's draw the same tokens from one seed.
  const int64_t draws = 4;
  const float temperature = 0.8f;
  const uint64_t seed = 7;
  prefill_head();
  const Tensor sampled = call(session, "sample",
                              {{"token", last_token},
                               {"pos", i32_scalar(length - 1)},
                               {"key", Tensor::from_vector(std::vector<int64_t>{0, int64_t(seed)}, {2})},
                               {"temperature", Tensor::scalar(DType::F32, temperature)}},
                              {{"Steps", eval::GenericValue::of_dim(draws)}})
                             .tensor();
  nest::GenerateOptions sampling;
  sampling.prompt = prompt;
  sampling.max_new = draws;
  sampling.temperature = temperature;
  sampling.seed = seed;
  INFO("sample vs the host's sampler");
  CHECK(nest::generate(session, sampling).tokens == sampled.to_vector<int32_t>());
  ledger.ran({"generate", "generate_until", "sample"});
}

// The output head on the host, in double: logits[v] = sum_h state[h] * weight[v, h].
Row host_head(const Row& state, const std::vector<double>& weight, const Row& bias) {
  const size_t width = state.size();
  Row logits(weight.size() / width, 0.0);
  for (size_t v = 0; v < logits.size(); ++v) {
    double total = bias.empty() ? 0.0 : bias[v];
    for (size_t h = 0; h < width; ++h) total += state[h] * weight[v * width + h];
    logits[v] = total;
  }
  return logits;
}

Row head_bias(nest::Session& session) {
  const eval::BlockInstance& head = *session.instance().members.at("lm_head").value.block();
  const eval::Value& bias = head.members.at("bias").value;
  if (!bias.has_value()) return {};
  return bias.inner().tensor().to_vector<double>();
}

// log_probs_packed, loss_packed and hidden_packed on two sequences packed
// into one pass, against forward's logits (log-softmax taken on the host).
void check_packed_training(nest::Session& session, const std::vector<Ids>& sequences, const ForwardLogits& forward,
                           Ledger& ledger) {
  const int64_t length = static_cast<int64_t>(sequences[0].size());
  const int64_t total = 2 * length;
  const Ids tokens = joined(sequences[0], sequences[1]);
  const Ids positions = joined(iota_ids(length), iota_ids(length));
  Ids segments(static_cast<size_t>(total), 0);
  std::fill(segments.begin() + length, segments.end(), 1);
  // Each position's target is the next token of its own sequence; the last
  // position of each has none, so it asks for token 0 and weighs nothing.
  std::vector<int64_t> targets;
  std::vector<float> weights;
  for (size_t s = 0; s < 2; ++s) {
    for (int64_t p = 0; p < length; ++p) {
      const bool has_next = p + 1 < length;
      targets.push_back(has_next ? sequences[s][p + 1] : 0);
      weights.push_back(has_next ? 1.0f : 0.0f);
    }
  }
  std::map<std::string, Tensor> inputs{{"tokens", ids_tensor(tokens)},
                                       {"positions", ids_tensor(positions)},
                                       {"segments", ids_tensor(segments)},
                                       {"targets", Tensor::from_vector(targets, {total})}};

  const std::vector<double> log_probs = call(session, "log_probs_packed", inputs).tensor().to_vector<double>();
  REQUIRE(static_cast<int64_t>(log_probs.size()) == total);
  double expected_loss = 0;
  for (int64_t i = 0; i < total; ++i) {
    const size_t s = static_cast<size_t>(i / length);
    const double reference = log_softmax(forward.at(s, i % length))[static_cast<size_t>(targets[i])];
    ledger.record("log_probs_packed = log_softmax(forward)[target]", std::abs(log_probs[i] - reference));
    expected_loss -= weights[i] * reference;
  }

  inputs["weights"] = Tensor::from_vector(weights, {total});
  const double loss = call(session, "loss_packed", inputs).tensor().item().to<double>();
  // A sum of 2(S - 1) terms of about 6 each, accumulated in f32: measured
  // relative to the loss.
  ledger.record("loss_packed = -sum log_softmax(forward)[target] (relative)", std::abs(loss - expected_loss) / expected_loss);

  inputs.erase("targets");
  inputs.erase("weights");
  const std::vector<Row> states = rows_of(call(session, "hidden_packed", inputs).tensor());
  const std::vector<double> weight = parameter(session, "lm_head", "weight").to_vector<double>();
  const Row bias = head_bias(session);
  for (int64_t i = 0; i < total; ++i) {
    const Row logits = host_head(states[static_cast<size_t>(i)], weight, bias);
    const Row& expected = forward.at(static_cast<size_t>(i / length), i % length);
    ledger.record("lm_head(hidden_packed) on the host = forward", max_difference(logits, expected));
  }
  ledger.ran({"log_probs_packed", "loss_packed", "hidden_packed"});
}

// `states` (before the final norm) through the card's RmsNorm and head on the host.
void check_states(nest::Session& session, const std::vector<Ids>& sequences, const ForwardLogits& forward, Ledger& ledger) {
  const int64_t count = static_cast<int64_t>(sequences.size());
  const int64_t length = static_cast<int64_t>(sequences[0].size());
  Ids flat;
  for (const Ids& sequence : sequences) flat = joined(flat, sequence);
  const Tensor states = call(session, "states", {{"tokens", ids_tensor(flat, {count, length})}}).tensor();
  const int64_t width = states.extent(2);
  const std::vector<Row> rows = rows_of(states.reshape({count * length, width}));
  const std::vector<double> norm_weight = parameter(session, "norm", "weight").to_vector<double>();
  const std::vector<double> head_weight = parameter(session, "lm_head", "weight").to_vector<double>();
  const Row bias = head_bias(session);
  // std.nn.norm::RmsNorm's epsilon, as the card uses it (config.json's rms_norm_eps too).
  const double eps = 1e-5;
  for (int64_t i = 0; i < count * length; ++i) {
    const Row& state = rows[static_cast<size_t>(i)];
    double squares = 0;
    for (double value : state) squares += value * value;
    const double inverse_rms = 1.0 / std::sqrt(squares / static_cast<double>(width) + eps);
    Row normed;
    for (int64_t h = 0; h < width; ++h) normed.push_back(state[h] * inverse_rms * norm_weight[h]);
    ledger.record("lm_head(norm(states)) on the host = forward",
                  max_difference(host_head(normed, head_weight, bias), forward.at(static_cast<size_t>(i / length), i % length)));
  }
  ledger.ran({"states"});
}

// The entries that serve several requests through the caches' rows, on a
// session with three rows (Batch 3). Sequence s has a prompt of lengths[s]
// tokens and then continues with its own next tokens.
void check_rows(nest::Session& session, const std::vector<Ids>& sequences, const ForwardLogits& forward,
                const std::vector<std::vector<Row>>& decoded, Ledger& ledger) {
  const int64_t length = static_cast<int64_t>(sequences[0].size());
  const int64_t max_seq = session.instance_generics().at("MaxSeq").dim;
  const std::vector<int64_t> lengths = {length - 7, length - 4, length - 9};
  // Sequence s lives in cache row slot[s] (deliberately not s).
  const std::vector<int32_t> slot = {2, 0, 1};

  // decode_rows with each row at its own position, `steps` times; compared
  // with sequence s decoded alone, and with forward.
  auto decode_rows_from = [&](std::vector<int64_t> at, int64_t steps, const std::string& after) {
    for (int64_t j = 0; j < steps; ++j) {
      Ids tokens(3), positions(3);
      for (size_t s = 0; s < 3; ++s) {
        tokens[slot[s]] = sequences[s][at[s]];
        positions[slot[s]] = static_cast<int32_t>(at[s]);
      }
      const std::vector<Row> out =
          rows_of(call(session, "decode_rows", {{"tokens", ids_tensor(tokens, {3, 1})}, {"positions", ids_tensor(positions)}})
                      .tensor());
      for (size_t s = 0; s < 3; ++s) {
        ledger.record("decode_rows (rows at different positions) = decode row by row, " + after,
                      max_difference(out[slot[s]], decoded[s][at[s]]));
        ledger.record("decode_rows = forward, " + after, max_difference(out[slot[s]], forward.at(s, at[s])));
        ++at[s];
      }
    }
  };

  // prefill_slots: two prompts join together, then a third; padding is zeros.
  session.reset_state();
  auto prefill_slots = [&](const std::vector<size_t>& which) {
    int64_t width = 0;
    for (size_t s : which) width = std::max(width, lengths[s]);
    Ids tokens, slots, prompt_lengths;
    for (size_t s : which) {
      Ids padded = span_of(sequences[s], 0, static_cast<size_t>(lengths[s]));
      padded.resize(static_cast<size_t>(width), 0);
      tokens = joined(tokens, padded);
      slots.push_back(slot[s]);
      prompt_lengths.push_back(static_cast<int32_t>(lengths[s]));
    }
    const int64_t m = static_cast<int64_t>(which.size());
    const std::vector<Row> out = rows_of(call(session, "prefill_slots",
                                              {{"tokens", ids_tensor(tokens, {m, width})},
                                               {"slots", ids_tensor(slots)},
                                               {"lengths", ids_tensor(prompt_lengths)}})
                                             .tensor());
    for (size_t i = 0; i < which.size(); ++i) {
      ledger.record("prefill_slots = forward[prompt end]", max_difference(out[i], forward.at(which[i], lengths[which[i]] - 1)));
    }
  };
  prefill_slots({0, 1});
  prefill_slots({2});
  decode_rows_from(lengths, 4, "after prefill_slots");

  // prefill_packed: the three prompts end to end, then one padding token at
  // MaxSeq - 1 with a segment of its own.
  Ids tokens, rows, positions, segments, last(3);
  for (size_t s = 0; s < 3; ++s) {
    tokens = joined(tokens, span_of(sequences[s], 0, static_cast<size_t>(lengths[s])));
    for (int64_t p = 0; p < lengths[s]; ++p) {
      rows.push_back(slot[s]);
      positions.push_back(static_cast<int32_t>(p));
      segments.push_back(static_cast<int32_t>(s));
    }
    last[slot[s]] = static_cast<int32_t>(tokens.size() - 1);
  }
  tokens.push_back(0);
  rows.push_back(0);
  positions.push_back(static_cast<int32_t>(max_seq - 1));
  segments.push_back(3);
  session.reset_state();
  const std::vector<Row> packed_ends = rows_of(call(session, "prefill_packed",
                                                    {{"tokens", ids_tensor(tokens)},
                                                     {"rows", ids_tensor(rows)},
                                                     {"positions", ids_tensor(positions)},
                                                     {"segments", ids_tensor(segments)},
                                                     {"last", ids_tensor(last)}})
                                                   .tensor());
  for (size_t s = 0; s < 3; ++s) {
    ledger.record("prefill_packed = forward[prompt end]", max_difference(packed_ends[slot[s]], forward.at(s, lengths[s] - 1)));
  }
  decode_rows_from(lengths, 2, "after prefill_packed");

  // step_packed: sequences 0 and 1 are decoding when sequence 2's prompt
  // arrives; its row steps along at MaxSeq - 1, where nobody reads.
  Ids first_tokens, first_rows, first_positions, first_segments, first_last(3);
  for (size_t s = 0; s < 2; ++s) {
    first_tokens = joined(first_tokens, span_of(sequences[s], 0, static_cast<size_t>(lengths[s])));
    for (int64_t p = 0; p < lengths[s]; ++p) {
      first_rows.push_back(slot[s]);
      first_positions.push_back(static_cast<int32_t>(p));
      first_segments.push_back(static_cast<int32_t>(s));
    }
  }
  std::fill(first_last.begin(), first_last.end(), static_cast<int32_t>(first_tokens.size() - 1));
  session.reset_state();
  call(session, "prefill_packed",
       {{"tokens", ids_tensor(first_tokens)},
        {"rows", ids_tensor(first_rows)},
        {"positions", ids_tensor(first_positions)},
        {"segments", ids_tensor(first_segments)},
        {"last", ids_tensor(first_last)}});
  const Ids arriving = span_of(sequences[2], 0, static_cast<size_t>(lengths[2]));
  Ids step_tokens(3), step_positions(3);
  for (size_t s = 0; s < 2; ++s) {
    step_tokens[slot[s]] = sequences[s][lengths[s]];
    step_positions[slot[s]] = static_cast<int32_t>(lengths[s]);
  }
  step_tokens[slot[2]] = 0;
  step_positions[slot[2]] = static_cast<int32_t>(max_seq - 1);
  const std::vector<Row> both =
      rows_of(call(session, "step_packed",
                   {{"tokens", ids_tensor(arriving)},
                    {"rows", ids_tensor(Ids(arriving.size(), slot[2]))},
                    {"positions", ids_tensor(iota_ids(lengths[2]))},
                    {"segments", ids_tensor(Ids(arriving.size(), 0))},
                    {"last", ids_tensor(Ids(3, static_cast<int32_t>(lengths[2] - 1)))},
                    {"step_tokens", ids_tensor(step_tokens, {3, 1})},
                    {"step_positions", ids_tensor(step_positions)}})
                  .tensor());
  REQUIRE(both.size() == 6);
  ledger.record("step_packed: the arriving prompt = forward[prompt end]", max_difference(both[0], forward.at(2, lengths[2] - 1)));
  for (size_t s = 0; s < 2; ++s) {
    ledger.record("step_packed: the decoding rows' steps = forward", max_difference(both[3 + slot[s]], forward.at(s, lengths[s])));
  }
  decode_rows_from({lengths[0] + 1, lengths[1] + 1, lengths[2]}, 2, "after step_packed");
  ledger.ran({"decode_rows", "prefill_slots", "prefill_packed", "step_packed"});
}

// The paged entries on a pool of pages of 8 (Batch 1, PageSize 8). Request A
// is the golden prompt; request B shares A's first page (the same first 8
// tokens) and goes on differently, so B's logits depend on keys and values
// only A wrote. A's prompt arrives in two chunks.
void check_paged(nest::Session& session, const Ids& golden, nest::Session& reference_session, Ledger& ledger) {
  const int64_t page = session.instance_generics().at("PageSize").dim;
  REQUIRE(page == 8);
  const int64_t length = static_cast<int64_t>(golden.size());
  REQUIRE(length >= 2 * page);
  const Ids request_a = golden;
  const Ids request_b = joined(span_of(golden, 0, page), Ids(golden.rbegin(), golden.rbegin() + (length - page)));
  const ForwardLogits forward = run_forward(reference_session, {request_a, request_b});
  // Page 0 is where padding goes; A holds pages 1 and 2, B pages 1 and 3.
  const std::vector<Ids> table = {{1, 2}, {1, 3}};
  const Tensor table_tensor = ids_tensor(joined(table[0], table[1]), {2, 2});
  auto slot_of = [&](size_t row, int64_t position) {
    return static_cast<int32_t>(table[row][position / page] * page + position % page);
  };
  // One request's tokens [begin, end) as a packed pass: tokens, positions, rows, slots.
  struct Pass {
    Ids tokens, positions, rows, slots;
  };
  auto pass_of = [&](size_t row, const Ids& request, int64_t begin, int64_t end) {
    Pass pass;
    for (int64_t p = begin; p < end; ++p) {
      pass.tokens.push_back(request[p]);
      pass.positions.push_back(static_cast<int32_t>(p));
      pass.rows.push_back(static_cast<int32_t>(row));
      pass.slots.push_back(slot_of(row, p));
    }
    return pass;
  };
  auto prefill_paged = [&](const Pass& pass) {
    const Ids last(2, static_cast<int32_t>(pass.tokens.size() - 1));
    return rows_of(call(session, "prefill_paged",
                        {{"tokens", ids_tensor(pass.tokens)},
                         {"positions", ids_tensor(pass.positions)},
                         {"rows", ids_tensor(pass.rows)},
                         {"slots", ids_tensor(pass.slots)},
                         {"last", ids_tensor(last)},
                         {"table", table_tensor}})
                       .tensor());
  };

  session.reset_state();
  const int64_t chunk = 5;
  const int64_t a_prompt = length - 5;
  ledger.record("prefill_paged(chunk 1) = forward", max_difference(prefill_paged(pass_of(0, request_a, 0, chunk))[0], forward.at(0, chunk - 1)));
  ledger.record("prefill_paged(chunk 2 after chunk 1) = forward",
                max_difference(prefill_paged(pass_of(0, request_a, chunk, a_prompt))[0], forward.at(0, a_prompt - 1)));

  // B's prompt from its second page on, with A's step; B's own step writes
  // at its last position in its pages, which it overwrites before reading.
  const int64_t b_prompt = length - 3;
  const Pass b_pass = pass_of(1, request_b, page, b_prompt);
  const Ids step_tokens = {request_a[a_prompt], 0};
  const Ids step_positions = {static_cast<int32_t>(a_prompt), static_cast<int32_t>(length - 1)};
  const std::vector<Row> both = rows_of(call(session, "step_paged",
                                             {{"tokens", ids_tensor(b_pass.tokens)},
                                              {"positions", ids_tensor(b_pass.positions)},
                                              {"rows", ids_tensor(b_pass.rows)},
                                              {"slots", ids_tensor(b_pass.slots)},
                                              {"last", ids_tensor(Ids(2, static_cast<int32_t>(b_pass.tokens.size() - 1)))},
                                              {"step_tokens", ids_tensor(step_tokens, {2, 1})},
                                              {"step_positions", ids_tensor(step_positions)},
                                              {"table", table_tensor}})
                                            .tensor());
  REQUIRE(both.size() == 4);
  ledger.record("step_paged: a prompt on a shared page = forward", max_difference(both[0], forward.at(1, b_prompt - 1)));
  ledger.record("step_paged: the decoding row's step = forward", max_difference(both[2], forward.at(0, a_prompt)));

  for (int64_t j = 0; j < 2; ++j) {
    const int64_t a_at = a_prompt + 1 + j;
    const int64_t b_at = b_prompt + j;
    const std::vector<Row> out = rows_of(call(session, "decode_paged",
                                              {{"tokens", ids_tensor({request_a[a_at], request_b[b_at]}, {2, 1})},
                                               {"positions", ids_tensor({static_cast<int32_t>(a_at), static_cast<int32_t>(b_at)})},
                                               {"table", table_tensor}})
                                             .tensor());
    ledger.record("decode_paged (shared first page) = forward", std::max(max_difference(out[0], forward.at(0, a_at)),
                                                                         max_difference(out[1], forward.at(1, b_at))));
  }
  ledger.ran({"prefill_paged", "step_paged", "decode_paged"});
}

}  // namespace

TEST_CASE("every entry of every card agrees with forward on its golden checkpoint", "[validate][consistency]") {
  for (const CardCase& card_case : card_cases()) {
    INFO(card_case.card << " on golden/" << card_case.golden);
    Ledger ledger(card_case.card);
    auto session = golden_session(card_case.card, card_case.golden);
    REQUIRE(session->instance_generics().at("T").dtype == DType::F32);
    REQUIRE(session->instance_generics().at("Batch").dim == 1);
    const auto declares = [&](const std::string& entry) { return session->root().entry(entry) != nullptr; };

    const Ids golden = nest_test::expected_tensor(card_case.golden, "tokens").to_vector<int32_t>();
    const int64_t vocab = session->instance_generics().at("Vocab").dim;
    const std::vector<Ids> sequences = test_sequences(golden, vocab);
    const ForwardLogits forward = run_forward(*session, sequences);
    // A batch of three gives each row what it gives alone.
    const ForwardLogits alone = run_forward(*session, {sequences[1]});
    for (int64_t p = 0; p < static_cast<int64_t>(golden.size()); ++p) {
      ledger.record("forward: a row of a batch = the row alone", max_difference(alone.at(0, p), forward.at(1, p)));
    }
    ledger.ran({"forward"});

    std::vector<std::vector<Row>> decoded;
    check_single_row(*session, sequences, forward, decoded, ledger);
    if (declares("generate")) check_generation(*session, golden, ledger);
    if (declares("log_probs_packed")) check_packed_training(*session, sequences, forward, ledger);
    if (declares("states")) check_states(*session, sequences, forward, ledger);

    {
      auto rows_session = golden_session(card_case.card, card_case.golden, {"Batch=3"});
      check_rows(*rows_session, sequences, forward, decoded, ledger);
    }
    if (declares("decode_paged")) {
      auto paged_session = golden_session(card_case.card, card_case.golden, {"PageSize=8"});
      check_paged(*paged_session, golden, *session, ledger);
    }

    // Nothing the card declares went unchecked.
    for (const std::string& entry : session->root().entry_names()) {
      INFO("entry `" << entry << "` was not exercised");
      CHECK(ledger.has_run(entry));
    }
    ledger.print();
  }
}
