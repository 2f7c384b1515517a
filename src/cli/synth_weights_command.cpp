// `linnet synth-weights CARD --bind K=V ... [--bind-from FILE] --out DIR [--seed N] [--dtype D] [--strict]`:
// writes a checkpoint of deterministic random weights for a card at the
// bound generics (nest/synth_weights.hpp), with a matching config.json, so
// that a card can be run at its real widths without its published weights.
#include <iostream>

#include "command.hpp"
#include "linnet/nest/summary.hpp"
#include "linnet/nest/synth_weights.hpp"
#include "linnet/syntax/suggest.hpp"
#include "option_checks.hpp"
#include "run_support.hpp"

namespace linnet::cli {

namespace {

struct SynthOptions {
  std::string card;
  std::vector<std::string> binds;
  std::string out;
  uint64_t seed = 0;
  std::string dtype;  // empty: each tensor in its parameter's dtype
  std::string bind_from;
  bool strict = false;
};

int run_synth_weights(const SynthOptions& options, const CommandContext& context) {
  if (int status = check_card_path(options.card); status != 0) return status;
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  std::optional<tensor::DType> dtype;
  if (!options.dtype.empty()) dtype = options.dtype == "bf16" ? tensor::DType::BF16 : tensor::DType::F32;

  nest::SessionOptions session_options = cli::session_options(options.card, options.binds, {}, "exact", context);
  session_options.load_weights = false;  // the parameter list is all it needs
  session_options.bind_from = options.bind_from;
  session_options.strict = options.strict;
  nest::Session session(session_options);
  if (!load_session(session)) return 1;
  if (session.manifest().empty()) {
    std::cerr << "error: card `" << session.card().name << "` has no parameters to make weights for\n";
    return 1;
  }
  try {
    const nest::SynthPlan plan = nest::plan_synth_weights(session.manifest(), session.bindings(),
                                                          session.instance_generics(), dtype, session.card().name,
                                                          options.seed);
    nest::write_synth_weights(plan, options.out, options.seed);
    std::cout << "wrote " << syntax::count_of(plan.tensors.size(), "tensor", "tensors") << " (" << nest::format_bytes(static_cast<double>(plan.byte_size())) << ") to `"
              << options.out << "/model.safetensors` and its config.json, seed " << options.seed << "\n";
  } catch (const nest::SynthError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_synth_weights_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<SynthOptions>();
  CLI::App* command = app.add_subcommand(
      "synth-weights", "write a checkpoint of deterministic random weights for a card at the bound generics");
  command->add_option("card", options->card, "the card directory")->required();
  add_bind_option(*command, options->binds);
  add_bind_from_option(*command, options->bind_from);
  add_strict_option(*command, options->strict);
  command->add_option("--out", options->out, "the directory to write model.safetensors and config.json in")
      ->required()
      ->check(not_empty());
  command->add_option("--seed", options->seed, "the seed of the weights (default 0)")->check(seed_value());
  command->add_option("--dtype", options->dtype, "the stored dtype of the floating tensors (default: the parameters')")
      ->check(CLI::IsMember({"bf16", "f32"}));
  command->callback([options, &context] { context.exit_code = run_synth_weights(*options, context); });
}

}  // namespace linnet::cli
