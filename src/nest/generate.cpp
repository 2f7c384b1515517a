// Prefill, then decode token by token, choosing tokens on the host.
#include "linnet/nest/generate.hpp"

#include <algorithm>

#include <chrono>
#include <ctime>

#include "linnet/nest/summary.hpp"
#include "linnet/ops/threefry.hpp"

namespace linnet::nest {

namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds of the whole process (every thread) so far.
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

std::optional<int64_t> bound_dim(const eval::GenericBindings& generics, const char* name) {
  auto found = generics.find(name);
  if (found == generics.end() || found->second.kind != eval::GenericValue::Kind::Dim) return std::nullopt;
  return found->second.dim;
}

// The next token from logits of shape [1, Vocab].
int32_t choose(const tensor::Tensor& logits, const GenerateOptions& options, const std::vector<uint32_t>& keys,
               int64_t step) {
  if (options.temperature <= 0) return static_cast<int32_t>(argmax_rows(logits).front());
  // As the cards' `sample`: cast to f32, divide by the temperature in f32.
  std::vector<float> scaled = logits.to(tensor::DType::F32).to_vector<float>();
  const float temperature = static_cast<float>(options.temperature);
  for (float& value : scaled) value /= temperature;
  const ops::RandomKey key{keys[2 * step], keys[2 * step + 1]};
  int32_t token = 0;
  ops::random_categorical(key, scaled, static_cast<int64_t>(scaled.size()), std::span<int32_t>(&token, 1));
  return token;
}

tensor::Tensor scalar_i32(int64_t value) { return tensor::Tensor::scalar(tensor::DType::I32, value); }

}  // namespace

GenerateResult generate(Session& session, const GenerateOptions& options) {
  // prefill(tokens[Batch, S], pos) and decode(token[Batch, 1], pos), by position.
  std::vector<std::string> prefill_names, decode_names;
  for (const char* entry : {"prefill", "decode"}) {
    if (session.root().entry(entry) == nullptr) {
      throw InputError("`linnet generate` needs the card's `prefill` and `decode` entries; `" +
                       session.root().qualified_name + "` has no `" + entry + "`");
    }
    std::vector<std::string>& names = std::string(entry) == "prefill" ? prefill_names : decode_names;
    for (const InputSlot& slot : session.slots(entry)) names.push_back(slot.name);
    if (names.size() != 2) {
      throw InputError("`linnet generate` needs `" + std::string(entry) + "(tokens, pos)`; the card's takes " +
                       std::to_string(names.size()) + " inputs");
    }
  }
  if (options.prompt.empty()) throw InputError("the prompt is empty: give at least one token with --tokens");
  if (options.max_new < 1) throw InputError("--max-new must be at least 1");
  const eval::GenericBindings& generics = session.instance_generics();
  if (std::optional<int64_t> batch = bound_dim(generics, "Batch"); batch && *batch != 1) {
    throw InputError("`linnet generate` runs one sequence, but Batch is bound to " + std::to_string(*batch) +
                     "; bind Batch=1");
  }
  const int64_t prompt_length = static_cast<int64_t>(options.prompt.size());
  // The last new token is never decoded, so the caches need one position less.
  // (Checked: --max-new may be as large as 2^63 - 1, and a wrapped sum would pass.)
  int64_t positions = 0;
  const bool past_int64 = __builtin_add_overflow(prompt_length, options.max_new - 1, &positions);
  if (std::optional<int64_t> max_seq = bound_dim(generics, "MaxSeq"); max_seq && (past_int64 || positions > *max_seq)) {
    throw InputError("the prompt (" + std::to_string(prompt_length) + " tokens) and " + std::to_string(options.max_new) +
                     " new tokens need " + (past_int64 ? "more than 2^63" : std::to_string(positions)) +
                     " cache positions, but MaxSeq is bound to " + std::to_string(*max_seq));
  }
  if (std::optional<int64_t> vocab = bound_dim(generics, "Vocab")) {
    for (int32_t token : options.prompt) {
      if (token < 0 || token >= *vocab) {
        throw InputError("prompt token " + std::to_string(token) + " is outside the vocabulary [0, " +
                         std::to_string(*vocab) + ")");
      }
    }
  }

  std::vector<uint32_t> keys;
  if (options.temperature > 0) {
    const ops::RandomKey key = ops::random_key_from_words(static_cast<int64_t>(options.seed >> 32),
                                                          static_cast<int64_t>(options.seed & 0xFFFFFFFFu));
    keys.resize(static_cast<size_t>(2 * options.max_new));
    ops::random_split(key, keys);
  }

  session.reset_state();
  GenerateResult result;
  const tensor::Tensor prompt =
      tensor::Tensor::from_vector(options.prompt, tensor::Shape{1, prompt_length});
  eval::EntryInputs prefill_inputs = session.inputs("prefill", {{prefill_names[0], prompt}, {prefill_names[1], scalar_i32(0)}});
  Clock::time_point start = Clock::now();
  tensor::Tensor logits = session.call("prefill", prefill_inputs).tensor();
  result.prefill_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  for (int64_t step = 0; step < options.max_new; ++step) {
    if (step > 0) {
      const tensor::Tensor token = tensor::Tensor::from_vector(std::vector<int32_t>{result.tokens.back()}, {1, 1});
      eval::EntryInputs decode_inputs =
          session.inputs("decode", {{decode_names[0], token}, {decode_names[1], scalar_i32(prompt_length + step - 1)}});
      const double cpu_start = process_cpu_seconds();
      start = Clock::now();
      logits = session.call("decode", decode_inputs).tensor();
      result.step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      result.step_cpu_seconds.push_back(process_cpu_seconds() - cpu_start);
    }
    result.tokens.push_back(choose(logits, options, keys, step));
    if (options.on_token) options.on_token(step + 1, options.max_new);
    if (options.on_new_token) options.on_new_token(result.tokens.back());
    if (options.eos && result.tokens.back() == *options.eos) break;
    if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), result.tokens.back()) !=
        options.stop_tokens.end()) {
      break;
    }
  }
  return result;
}

}  // namespace linnet::nest
