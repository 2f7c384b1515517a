// `linnet generate CARD --tokens 1,2,3 --max-new N`: the prompt through the
// card's `prefill`, then `decode` one token at a time on the same instance,
// greedily or sampled (--temperature, --seed). Prints the new token ids on
// stdout, one line, space-separated; a progress line goes to stderr when
// it is a terminal (progress_line.hpp). With `--prompt TEXT` or `--chat MESSAGE` the prompt is
// text (generate_text.hpp) and the new tokens stream out as text, stopping
// at the tokenizer's end-of-sequence ids.
//
// Exit status: 0 success; 1 a problem with the card, the weights, the
// prompt, or the run; 2 a bad command line.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

#include "command.hpp"
#include "linnet/eval/error.hpp"
#include "linnet/nest/generate.hpp"
#include "linnet/nest/summary.hpp"
#include "generate_text.hpp"
#include "device_option.hpp"
#include "run_support.hpp"
#include "text_stream.hpp"
#include "option_checks.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::cli {

namespace {

// The middle value (the mean of the two middle ones for an even count).
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

struct GenerateCommandOptions {
  std::string card;
  std::string tokens;
  std::string prompt;  // --prompt TEXT
  std::string chat;    // --chat MESSAGE or a JSON list of messages
  bool ignore_eos = false;
  int64_t max_new = 16;
  double temperature = 0;
  uint64_t seed = 0;
  int32_t eos = -1;  // -1: none
  std::vector<std::string> binds;
  std::vector<std::string> weights;
  std::string numerics = "equivalent";
  bool cast_weights = false;
  std::string load;  // --load; empty: the device's default
  std::string device = "cpu";
  std::string out;
  bool stats = false;
  std::optional<int64_t> max_loop_iterations;
  bool strict = false;
  std::string bind_from;
  bool no_progress = false;
};

int run_generate(const GenerateCommandOptions& options, const CommandContext& context) {
  if (int status = check_card_path(options.card); status != 0) return status;
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  if (int status = check_output_path(options.out); status != 0) return status;
  const int prompt_kinds = !options.tokens.empty() + !options.prompt.empty() + !options.chat.empty();
  if (prompt_kinds != 1) {
    std::cerr << "error: give the prompt as one of --tokens IDS, --prompt TEXT or --chat MESSAGE\n";
    return 2;
  }
  if (options.max_new < 1) {
    std::cerr << "error: --max-new must be at least 1\n";
    return 2;
  }
  if (int status = check_temperature(options.temperature); status != 0) return status;
  if (int status = check_loop_limit(options.max_loop_iterations); status != 0) return status;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  if (int status = check_weights_paths(options.weights); status != 0) return status;
  std::optional<TextModel> text_model;
  std::optional<std::vector<int32_t>> prompt;
  if (!options.tokens.empty()) {
    prompt = parse_token_list(options.tokens);
    if (!prompt || prompt->empty()) {
      std::cerr << "error: --tokens `" << options.tokens << "` is not a list of token ids such as 1,2,3\n";
      return 2;
    }
  } else {
    text_model = load_card_text_model(options.card, options.weights);
    if (!text_model) return 1;
    prompt = text_prompt(*text_model, options.prompt, options.chat);
    if (!prompt) return 1;
  }

  const std::optional<nest::Device> device = usable_device(options.device);
  if (!device) return 1;
  nest::SessionOptions load_options =
      session_options(options.card, options.binds, options.weights, options.numerics, context);
  load_options.cast_weights = options.cast_weights;
  load_options.placement = nest::weight_placement_from_name(options.load);  // empty: the device's default
  load_options.device = *device;
  load_options.max_loop_iterations = options.max_loop_iterations;
  load_options.strict = options.strict;
  load_options.bind_from = options.bind_from;
  // The status line on a terminal, but not over streamed text.
  const bool streams = text_model.has_value();
  const std::shared_ptr<ProgressLine> progress =
      make_progress_line(!options.no_progress, progress_rank(context));
  const auto quiet = [&progress] {
    if (progress) progress->clear();
  };
  load_options.progress = progress;
  nest::Session session(load_options);
  if (!load_session(session, progress.get())) return 1;
  std::cerr << nest::describe_load(session);

  nest::GenerateOptions generate;
  generate.prompt = *prompt;
  generate.max_new = options.max_new;
  generate.temperature = options.temperature;
  generate.seed = options.seed;
  if (options.eos >= 0) generate.eos = options.eos;
  std::optional<TextStream> stream;
  if (text_model) {
    if (!options.ignore_eos) generate.stop_tokens = text_model->eos_ids;
    stream.emplace(text_model->tokenizer, stdout);
    generate.on_new_token = [&stream](int32_t token) { stream->push(token); };
  }
  if (progress && !streams) {
    progress->stage({"generating", 0, options.max_new, {}});
    generate.on_token = [&progress](int64_t produced, int64_t total) {
      progress->stage({"generating", produced, total, {}});
    };
  }
  // From here on text streams to stdout: no line under it.
  if (progress && streams) progress->stop();
  nest::GenerateResult result;
  try {
    result = nest::generate(session, generate);
  } catch (const nest::InputError& failure) {
    // An input (or script) that cannot be read or does not fit: E6004, as
    // the exit-status table of docs/commands.md says.
    quiet();
    std::cerr << "error " << eval::codes::bad_input << ": " << syntax::printable(failure.what()) << '\n';
    return 1;
  } catch (const nest::RunError& failure) {
    quiet();
    std::cerr << failure.what();
    return 1;
  } catch (const text::TokenizerError& failure) {
    quiet();
    std::cerr << "\nerror: " << syntax::printable(failure.what()) << '\n';
    return 1;
  }
  quiet();

  if (stream) {
    stream->finish();
    std::fputc('\n', stdout);
    std::fflush(stdout);
  } else {
    std::string line;
    for (int32_t token : result.tokens) line += (line.empty() ? "" : " ") + std::to_string(token);
    std::cout << line << '\n';
  }

  if (!options.out.empty()) {
    const int64_t count = static_cast<int64_t>(result.tokens.size());
    std::vector<std::pair<std::string, tensor::Tensor>> outputs{
        {"tokens", tensor::Tensor::from_vector(result.tokens, tensor::Shape{1, count})}};
    if (int status = write_outputs(options.out, outputs); status != 0) return status;
  }
  if (options.stats) {
    double decode_total = 0;
    for (double seconds : result.step_seconds) decode_total += seconds;
    std::vector<std::pair<std::string, double>> calls{{"prefill", result.prefill_seconds}};
    if (!result.step_seconds.empty()) {
      calls.emplace_back("decode (mean of " + std::to_string(result.step_seconds.size()) + ")",
                         decode_total / static_cast<double>(result.step_seconds.size()));
      // Medians: a burst of other work on a shared machine moves a mean,
      // seldom the median step. CPU time (every thread of the process) is
      // what scripts/bench_maxseq compares between two MaxSeq.
      calls.emplace_back("decode (median of " + std::to_string(result.step_seconds.size()) + ")",
                         median_of(result.step_seconds));
      calls.emplace_back("decode CPU time (median of " + std::to_string(result.step_cpu_seconds.size()) + ")",
                         median_of(result.step_cpu_seconds));
    }
    std::cerr << describe_stats(session, calls) << describe_transfers(*device);
  }
  return 0;
}

}  // namespace

void add_generate_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<GenerateCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "generate", "generate tokens with a nest card: prefill the prompt, then decode one token at a time");
  command->add_option("card", options->card, "the card directory (holding nest.toml)")->required();
  command->add_option("--tokens", options->tokens, "the prompt's token ids, e.g. 1,2,3");
  command->add_option("--prompt", options->prompt,
                      "the prompt as text, encoded with the checkpoint's tokenizer.json; the output streams as text");
  command->add_option("--chat", options->chat,
                      "a user message (or a JSON list of {role, content}) rendered with the chat template");
  command->add_flag("--ignore-eos", options->ignore_eos,
                    "with --prompt/--chat: do not stop at the tokenizer's end-of-sequence ids");
  command->add_option("--max-new", options->max_new, "how many tokens to generate (default 16)")
      ->check(integer_from(1, std::numeric_limits<int64_t>::max()));
  command->add_option("--temperature", options->temperature, "0 (default) for greedy, else sample at this temperature")
      ->check(number_value());
  command->add_option("--seed", options->seed, "the sampling seed (default 0)")->check(seed_value());
  command->add_option("--eos", options->eos, "stop after generating this token id")
      ->check(integer_from(0, std::numeric_limits<int32_t>::max()));
  add_model_options(*command, options->binds, options->weights, options->numerics, options->cast_weights,
                    options->load);
  add_device_option(*command, options->device);
  add_loop_limit_option(*command, options->max_loop_iterations);
  add_strict_option(*command, options->strict);
  add_bind_from_option(*command, options->bind_from);
  command->add_option("--out", options->out, "also write the tokens to FILE.npz (as `tokens`) or FILE.npy")
      ->check(not_empty());
  command->add_flag("--stats", options->stats, "report load time, time per call and peak memory");
  add_progress_option(*command, options->no_progress);
  command->callback([options, &context] { context.exit_code = run_generate(*options, context); });
}

}  // namespace linnet::cli
