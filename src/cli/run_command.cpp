// `linnet run CARD`: loads a card with its checkpoint, checks every
// parameter before anything runs, calls one entry (or a script of calls on
// one instance), prints a summary of the outputs and writes them to .npy or
// .npz. docs/commands.md describes the options.
//
// Exit status: 0 success; 1 a problem with the card, the weights, the
// inputs, or the run itself; 2 a bad command line.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>

#include "command.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/nest/script.hpp"
#include "linnet/nest/session.hpp"
#include "linnet/nest/summary.hpp"
#include "run_support.hpp"

namespace linnet::cli {

namespace {

struct RunOptions {
  std::string card;
  std::string entry;
  std::vector<std::string> binds;
  std::vector<std::string> weights;
  std::vector<std::string> inputs;
  std::string script;
  std::string out;
  std::string numerics = "exact";
  bool stats = false;
};

int run_run(const RunOptions& options, const CommandContext& context) {
  if (int status = check_card_path(options.card); status != 0) return status;
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  if (int status = check_output_path(options.out); status != 0) return status;
  if (!options.script.empty() && !options.inputs.empty()) {
    std::cerr << "error: --script gives each call its inputs; --input goes with a single entry call\n";
    return 2;
  }
  if (!options.script.empty() && !options.entry.empty()) {
    std::cerr << "error: --script names the entry of each call; drop --entry\n";
    return 2;
  }
  if (!options.script.empty() && options.out.ends_with(".npy")) {
    std::cerr << "error: a script's outputs go to one .npz file (--out FILE.npz)\n";
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& text : options.inputs) {
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      std::cerr << "error: `--input " << text << "` is not of the form NAME=VALUE or NAME=@FILE.npy\n";
      return 2;
    }
    inputs.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }

  nest::Session session(session_options(options.card, options.binds, options.weights, options.numerics, context));
  if (!load_session(session)) return 1;

  const std::string entry = options.entry.empty() ? session.card().entry : options.entry;
  if (options.script.empty() && entry.empty()) {
    std::cerr << "error: nest.toml names no [source] entry; pass --entry NAME\n";
    return 1;
  }
  std::cout << nest::describe_load(session);

  nest::SummaryOptions summary;
  summary.vocab = bound_vocab(session);
  std::vector<std::pair<std::string, tensor::Tensor>> outputs;
  std::vector<std::pair<std::string, double>> call_seconds;
  try {
    if (!options.script.empty()) {
      const std::vector<nest::ScriptCall> calls = nest::read_script(options.script, session);
      nest::run_script(session, calls, [&](const nest::ScriptStep& step) {
        for (const auto& [name, tensor] : step.outputs) std::cout << nest::describe_output(name, tensor, summary);
        for (const auto& output : step.outputs) outputs.push_back(output);
        call_seconds.emplace_back(std::to_string(step.index) + "_" + step.entry, step.seconds);
      });
    } else {
      const eval::EntryInputs entry_inputs = session.inputs(entry, inputs);
      const auto start = std::chrono::steady_clock::now();
      const eval::Value result = session.call(entry, entry_inputs);
      call_seconds.emplace_back(entry, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      outputs = nest::flatten_outputs(entry, result);
      for (const auto& [name, tensor] : outputs) std::cout << nest::describe_output(name, tensor, summary);
    }
  } catch (const nest::InputError& failure) {
    std::cerr << "error: " << failure.what() << '\n';
    return 1;
  } catch (const nest::RunError& failure) {
    std::cerr << failure.what();
    return 1;
  }

  if (!options.out.empty()) {
    if (int status = write_outputs(options.out, outputs); status != 0) return status;
    std::cout << "wrote " << outputs.size() << (outputs.size() == 1 ? " array" : " arrays") << " to " << options.out
              << '\n';
  }
  if (options.stats) std::cout << describe_stats(session, call_seconds);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "run an entry of a nest card on its checkpoint, every parameter checked before anything runs");
  command->add_option("card", options->card, "the card directory (holding nest.toml)")->required();
  command->add_option("--entry", options->entry, "the entry to call (default: nest.toml's [source] entry)");
  add_model_options(*command, options->binds, options->weights, options->numerics);
  command->add_option("--input", options->inputs,
                      "an entry input, NAME=VALUE: a number, nested lists like [[1,2,3]], or @FILE.npy; repeatable")
      ->allow_extra_args(false);
  command->add_option("--script", options->script,
                      "a JSON list of entry calls to run in order on one instance (see docs/commands.md)");
  command->add_option("--out", options->out, "write the outputs to FILE.npz (or a single one to FILE.npy)");
  command->add_flag("--stats", options->stats,
                    "report load time, time per call, peak resident memory and peak tensor memory");
  command->callback([options, &context] { context.exit_code = run_run(*options, context); });
}

}  // namespace linnet::cli
