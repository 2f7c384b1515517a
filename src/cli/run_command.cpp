// `linnet run CARD`: loads a card with its checkpoint, checks every
// parameter before anything runs, calls one entry (or a script of calls on
// one instance), prints a summary of the outputs and writes them to .npy or
// .npz. `linnet run PROGRAM` does the same for a plain program (a .linnet
// file or a package directory) without a checkpoint: a module-level entry,
// or with --root an entry of a block that needs no weights (or is given
// --weights). docs/commands.md describes the options.
//
// Exit status: 0 success; 1 a problem with the card, the weights, the
// inputs, or the run itself; 2 a bad command line.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>

#include "command.hpp"
#include "linnet/eval/error.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/nest/script.hpp"
#include "linnet/nest/session.hpp"
#include "linnet/nest/summary.hpp"
#include "generate_text.hpp"
#include "device_option.hpp"
#include "linnet/syntax/suggest.hpp"
#include "run_support.hpp"
#include "option_checks.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::cli {

namespace {

struct RunOptions {
  std::string card;  // a card directory, or a plain program
  std::string entry;
  std::string root;   // plain programs: the block whose entry runs
  uint64_t seed = 0;  // for NAME=random inputs
  bool random_inputs = false;
  std::vector<std::string> binds;
  std::vector<std::string> weights;
  std::vector<std::string> inputs;
  std::string script;
  std::string out;
  std::string numerics = "equivalent";
  bool cast_weights = false;
  std::string load;  // --load; empty: the device's default
  std::string device = "cpu";
  bool stats = false;
  std::optional<int64_t> max_loop_iterations;
  bool strict = false;
  std::string bind_from;
  bool no_progress = false;
};

enum class RunTarget { Card, Program, Neither };

// A card is a directory with nest.toml; a plain program is a .linnet file
// or a package directory (linnet.toml).
RunTarget run_target(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "nest.toml", ec)) return RunTarget::Card;  // the card reader says if it is no file
    if (fs::is_regular_file(fs::path(path) / "linnet.toml", ec)) return RunTarget::Program;
    return RunTarget::Neither;
  }
  if (fs::is_regular_file(path, ec) && path.ends_with(".linnet")) return RunTarget::Program;
  return RunTarget::Neither;
}

// "`prog` has entries `a` and `b`; pass --entry NAME".
std::string entries_hint(const nest::Session& session) {
  const std::vector<std::string> names = session.root().entry_names();
  if (names.size() == 1) {
    return "`" + session.root().qualified_name + "` has one entry, `" + names.front() + "`; pass --entry " +
           names.front();
  }
  return "`" + session.root().qualified_name + "` has entries " + syntax::quoted_list(names) + "; pass --entry NAME";
}

// The flag that gave input `name`, as typed (a long value cut short):
// `--input tokens=1,2,3`, or `--random-inputs` for one it made.
std::string input_origin(const RunOptions& options, const std::string& name) {
  for (const std::string& text : options.inputs) {
    if (!text.starts_with(name + "=")) continue;
    constexpr size_t longest = 60;
    if (text.size() <= longest) return "--input " + text;
    size_t end = longest - 3;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 character
    return "--input " + text.substr(0, end) + "...";
  }
  return "--random-inputs";
}

int run_run(const RunOptions& options, const CommandContext& context) {
  const RunTarget target = run_target(options.card);
  if (target == RunTarget::Neither) {
    std::cerr << "error: `" << options.card
              << "` is neither a card directory (holding nest.toml) nor a program (a .linnet file, or a package "
                 "directory holding linnet.toml)\n";
    return 2;
  }
  if (target == RunTarget::Card && !options.root.empty()) {
    std::cerr << "error: --root is for plain programs; a card names its root block in nest.toml\n";
    return 2;
  }
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  if (int status = check_output_path(options.out); status != 0) return status;
  if (int status = check_loop_limit(options.max_loop_iterations); status != 0) return status;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  if (!options.script.empty()) {
    // A missing script or a directory is a command-line mistake (exit 2), as
    // every path docs/commands.md names; its contents are checked later (1).
    const std::string problem = syntax::path_problem_text(syntax::path_problem(options.script));
    if (!problem.empty()) {
      std::cerr << "error: --script `" << options.script << "` " << problem << "\n";
      return 2;
    }
  }
  if (!options.script.empty() && !options.inputs.empty()) {
    std::cerr << "error: --script gives each call its inputs; --input goes with a single entry call\n";
    return 2;
  }
  if (!options.script.empty() && options.random_inputs) {
    std::cerr << "error: --script gives each call its inputs; --random-inputs goes with a single entry call\n";
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
    const std::string name = text.substr(0, equals);
    for (const auto& given : inputs) {
      if (given.first == name) {
        std::cerr << "error: input `" << name << "` is given twice (--input " << name << "=...)\n";
        return 2;
      }
    }
    inputs.emplace_back(name, text.substr(equals + 1));
  }
  if (int status = check_weights_paths(options.weights); status != 0) return status;
  // NAME=text:... becomes the text's token ids under the card's tokenizer.
  if (int status = encode_text_inputs(inputs, target == RunTarget::Card ? options.card : "", options.weights);
      status != 0) {
    return status;
  }

  nest::SessionOptions load_options =
      session_options(target == RunTarget::Card ? options.card : "", options.binds, options.weights, options.numerics,
                      context);
  if (target == RunTarget::Program) {
    load_options.program = options.card;
    load_options.root = options.root;
  }
  load_options.seed = options.seed;
  load_options.cast_weights = options.cast_weights;
  load_options.placement = nest::weight_placement_from_name(options.load);  // empty: the device's default
  const std::optional<nest::Device> device = usable_device(options.device);
  if (!device) return 1;
  load_options.device = *device;
  load_options.max_loop_iterations = options.max_loop_iterations;
  load_options.strict = options.strict;
  load_options.bind_from = options.bind_from;
  // The status line on a terminal; erased (quiet()) before anything else is printed.
  const std::shared_ptr<ProgressLine> progress = make_progress_line(!options.no_progress, progress_rank(context));
  const auto quiet = [&progress] {
    if (progress) progress->clear();
  };
  load_options.progress = progress;
  nest::Session session(load_options);
  if (!load_session(session, progress.get())) return 1;

  const std::string entry = options.entry.empty() ? session.card().entry : options.entry;
  if (options.script.empty() && entry.empty()) {
    if (session.is_card()) {
      std::cerr << "error: nest.toml names no [source] entry; pass --entry NAME\n";
    } else {
      std::cerr << "error: " << entries_hint(session) << '\n';
    }
    return 1;
  }
  if (options.script.empty() && session.root().entry(entry) == nullptr) {
    // An entry named on the command line that the root lacks is a command-line mistake.
    std::cerr << "error: --entry `" << entry << "`: `" << session.root().qualified_name << "` has no entry `" << entry
              << "`" << syntax::did_you_mean_or_list(entry, session.root().entry_names(), "entry", "entries") << '\n';
    return 2;
  }
  std::cout << nest::describe_load(session);

  nest::SummaryOptions summary;
  summary.vocab = bound_vocab(session);
  std::vector<std::pair<std::string, tensor::Tensor>> outputs;
  std::vector<std::pair<std::string, double>> call_seconds;
  try {
    if (!options.script.empty()) {
      const std::vector<nest::ScriptCall> calls = nest::read_script(options.script, session);
      const int64_t call_count = static_cast<int64_t>(calls.size());
      if (progress) progress->stage({"script call", 0, call_count, {}});
      nest::run_script(session, calls, [&](const nest::ScriptStep& step) {
        quiet();
        if (progress) progress->stage({"script call", static_cast<int64_t>(step.index) + 1, call_count, {}});
        for (const auto& [name, tensor] : step.outputs) std::cout << nest::describe_output(name, tensor, summary);
        // Kept only to be written (a prompt's logits are hundreds of MB).
        if (!options.out.empty())
          for (const auto& output : step.outputs) outputs.push_back(output);
        call_seconds.emplace_back(std::to_string(step.index) + "_" + step.entry, step.seconds);
      });
    } else {
      // A name the entry does not take is a command-line mistake.
      const std::vector<nest::InputSlot> slots = session.slots(entry);
      for (const auto& [name, text] : inputs) {
        bool known = false;
        for (const nest::InputSlot& slot : slots) known = known || slot.name == name;
        if (!known) {
          std::string taken;
          for (const nest::InputSlot& slot : slots) taken += (taken.empty() ? "" : ", ") + slot.name;
          std::vector<std::string> names;
          for (const nest::InputSlot& slot : slots) names.push_back(slot.name);
          std::cerr << "error: `--input " << name << "=...`: entry `" << entry << "` has no parameter `" << name
                    << "`" << syntax::did_you_mean(name, names) << "; it takes " << (taken.empty() ? "no inputs" : taken)
                    << '\n';
          return 2;
        }
      }
      if (options.random_inputs) {
        // Every input not given explicitly.
        for (const nest::InputSlot& slot : slots) {
          bool given = false;
          for (const auto& input : inputs) given = given || input.first == slot.name;
          if (!given) inputs.emplace_back(slot.name, "random");
        }
      }
      eval::EntryInputs entry_inputs = session.inputs(entry, inputs);
      // An error about an input's value names the flag that gave it.
      for (const auto& input : inputs) entry_inputs.origins[input.first] = input_origin(options, input.first);
      if (progress) progress->stage({"running", 0, 0, {}});
      const auto start = std::chrono::steady_clock::now();
      const eval::Value result = session.call(entry, entry_inputs);
      call_seconds.emplace_back(entry, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      quiet();
      outputs = nest::flatten_outputs(entry, result);
      for (const auto& [name, tensor] : outputs) std::cout << nest::describe_output(name, tensor, summary);
    }
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
  }
  quiet();

  if (!options.out.empty()) {
    if (int status = write_outputs(options.out, outputs); status != 0) return status;
    std::cout << "wrote " << outputs.size() << (outputs.size() == 1 ? " array" : " arrays") << " to " << options.out
              << '\n';
  }
  if (options.stats) std::cout << describe_stats(session, call_seconds) << describe_transfers(*device);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "run an entry of a nest card on its checkpoint (every parameter checked before anything runs), or an "
             "entry of a plain program");
  command
      ->add_option("card", options->card,
                   "a card directory (holding nest.toml), or a plain program: a .linnet file or a package directory "
                   "(holding linnet.toml)")
      ->required();
  command->add_option("--entry", options->entry, "the entry to call (default: nest.toml's [source] entry)")
      ->check(not_empty());
  command->add_option("--root", options->root,
                      "plain programs: the block whose entry runs (default: a module-level entry)")
      ->check(not_empty());
  add_model_options(*command, options->binds, options->weights, options->numerics, options->cast_weights,
                    options->load);
  add_device_option(*command, options->device);
  add_loop_limit_option(*command, options->max_loop_iterations);
  add_strict_option(*command, options->strict);
  add_bind_from_option(*command, options->bind_from);
  command->add_option("--input", options->inputs,
                      "an entry input, NAME=VALUE: a number, nested lists like [[1,2,3]], @FILE.npy, or `random`; "
                      "repeatable")
      ->allow_extra_args(false);
  command->add_flag("--random-inputs", options->random_inputs,
                    "make every input not given by --input random (as NAME=random)");
  command->add_option("--seed", options->seed, "the seed of random inputs (default 0)")->check(seed_value());
  command->add_option("--script", options->script,
                      "a JSON list of entry calls to run in order on one instance (see docs/commands.md)")
      ->check(not_empty());
  command->add_option("--out", options->out, "write the outputs to FILE.npz (or a single one to FILE.npy)")
      ->check(not_empty());
  command->add_flag("--stats", options->stats,
                    "report load time, time per call, peak resident memory and peak tensor memory");
  add_progress_option(*command, options->no_progress);
  command->callback([options, &context] { context.exit_code = run_run(*options, context); });
}

}  // namespace linnet::cli
