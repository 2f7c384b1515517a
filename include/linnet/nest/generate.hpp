// Text generation on a card's instance: `prefill` the prompt into the KV
// caches, then `decode` one token at a time, choosing each next token on
// the host, greedily (argmax) or by sampling.
//
// Sampling follows the cards' own `sample` entry, so that the same seed
// gives the same tokens: the key is [seed >> 32, seed & 0xFFFFFFFF] (as
// jax.random.PRNGKey), split into one key per new token (`split<N>`), and
// token i is `categorical(keys[i], f32(logits) / temperature)`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "linnet/nest/session.hpp"

namespace linnet::nest {

struct GenerateOptions {
  std::vector<int32_t> prompt;
  int64_t max_new = 16;
  double temperature = 0;        // 0: greedy
  uint64_t seed = 0;
  std::optional<int32_t> eos;    // stop after producing this token
  std::vector<int32_t> stop_tokens;  // also stop after any of these (a tokenizer's end-of-sequence ids)
  // Called with each new token as it is chosen (streaming its text).
  std::function<void(int32_t token)> on_new_token;
  // Called after each new token (for a progress line).
  std::function<void(int64_t produced, int64_t total)> on_token;
};

struct GenerateResult {
  std::vector<int32_t> tokens;       // the new tokens only
  double prefill_seconds = 0;
  std::vector<double> step_seconds;  // one per `decode` call
  // CPU time of the process (all threads) over each `decode` call: what a
  // benchmark on a shared machine reads, less moved by other work than
  // wall time (scripts/bench_maxseq).
  std::vector<double> step_cpu_seconds;
};

// Resets the instance's state, then generates. Throws InputError when the
// card lacks `prefill`/`decode`, the prompt is empty, Batch is not 1, or the
// prompt and the new tokens do not fit MaxSeq; RunError when a call fails.
GenerateResult generate(Session& session, const GenerateOptions& options);

}  // namespace linnet::nest
