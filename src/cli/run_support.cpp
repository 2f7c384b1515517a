// Shared pieces of the commands that load a card (see run_support.hpp).
#include "run_support.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <vector>

#include "linnet/syntax/file_reading.hpp"
#include "linnet/nest/summary.hpp"
#include "linnet/tensor/allocator.hpp"
#include "linnet/tensor/npz.hpp"
#include "linnet/tensor/threading.hpp"
#include "option_checks.hpp"
#include "processes.hpp"

namespace linnet::cli {

namespace {

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
  return buffer;
}

// A call's time to the microsecond: a decode step of a few tens of
// milliseconds, or a tiny model's forward of about a millisecond, would
// lose several percent to a millisecond's rounding (scripts/bench divides
// both).
std::string call_seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", seconds);
  return buffer;
}

}  // namespace

void add_bind_option(CLI::App& command, std::vector<std::string>& binds) {
  command.add_option("--bind", binds, "a generic's value, NAME=VALUE (dtypes by name, packs S=2,3); repeatable")
      ->allow_extra_args(false);
}

void add_model_options(CLI::App& command, std::vector<std::string>& binds, std::vector<std::string>& weights,
                       std::string& numerics, bool& cast_weights, std::string& load) {
  add_bind_option(command, binds);
  command
      .add_option("--weights", weights,
                  "the checkpoint: a directory, or .safetensors files (repeat --weights for each); "
                  "default: the Hugging Face cache")
      ->allow_extra_args(false);
  add_numerics_option(command, numerics);
  add_cast_weights_option(command, cast_weights);
  add_load_option(command, load);
}

void add_numerics_option(CLI::App& command, std::string& numerics) {
  command
      .add_option("--numerics", numerics,
                  "equivalent (default: native kernels, f32 sums, rounding where the op bodies round), "
                  "exact (the op bodies as written) or fast (also rounding attention where PyTorch's eager bf16 does)")
      ->check(CLI::IsMember({"exact", "equivalent", "fast"}));
}

void add_cast_weights_option(CLI::App& command, bool& cast_weights) {
  command.add_flag("--cast-weights", cast_weights,
                   "round checkpoint floats stored wider than the declared dtype (f32 at T = bf16) to nearest even, "
                   "as transformers' from_pretrained(dtype=...) does; without it that is an error");
}

void add_load_option(CLI::App& command, std::string& load) {
  command
      .add_option("--load", load,
                  "which checkpoint tensors are copied into memory at load: packed (the default on the CPU: the "
                  "packed u8 tensors, MXFP4 experts, which a prompt reads whole; the rest is read in place from the "
                  "file), map (none, the default with --device cuda: the quickest start and the least memory) or "
                  "copy (all: the steadiest products, the most memory)")
      ->check(CLI::IsMember({"map", "packed", "copy"}));
}

void add_bind_from_option(CLI::App& command, std::string& path) {
  command.add_option("--bind-from", path,
                     "take generics from a golden case's meta.json (linnet_generics) or a checkpoint's config.json; "
                     "--bind values win")
      ->check(not_empty());
}

int check_bind_from_path(const std::string& path) {
  const std::string problem = path.empty() ? "" : syntax::path_problem_text(syntax::path_problem(path));
  if (!problem.empty()) {
    std::cerr << "error: --bind-from `" << path << "` " << problem << "\n";
    return 2;
  }
  return 0;
}

void add_strict_option(CLI::App& command, bool& strict) {
  command.add_flag("--strict", strict,
                   "fail on warnings too: a bindings.json key or a checkpoint tensor that no parameter reads, an "
                   "unknown nest.toml key, the static checker's lints");
}

void add_progress_option(CLI::App& command, bool& no_progress) {
  command.add_flag("--no-progress", no_progress,
                   "never show the progress line (shown on a terminal's stderr once a run takes over a second)");
}

int progress_rank(const CommandContext& context) {
  return context.communicator ? context.communicator->rank() : 0;
}

void add_loop_limit_option(CLI::App& command, std::optional<int64_t>& limit) {
  command
      .add_option("--max-loop-iterations", limit,
                  "stop a `while` loop after this many iterations with E6005 (default 10000000)")
      ->check(integer_from(1, std::numeric_limits<int64_t>::max()));
}

nest::SessionOptions session_options(const std::string& card, const std::vector<std::string>& binds,
                                     const std::vector<std::string>& weights, const std::string& numerics,
                                     const CommandContext& context) {
  nest::SessionOptions options;
  options.card = card;
  options.binds = binds;
  options.weights = weights;
  options.std_dir = context.std_dir;
  options.communicator = context.communicator;
  options.numerics = numerics == "fast"         ? eval::NumericsPolicy::Fast
                     : numerics == "equivalent" ? eval::NumericsPolicy::Equivalent
                                                : eval::NumericsPolicy::Exact;
  return options;
}

int check_card_path(const std::string& card) {
  const std::string problem = syntax::path_problem_text(syntax::path_problem(card, syntax::PathUse::Directory));
  if (!problem.empty()) {
    std::cerr << "error: `" << card << "` " << problem << "; a card is a directory holding nest.toml\n";
    return 2;
  }
  return 0;
}

int check_bind_arguments(const std::vector<std::string>& binds) {
  for (const std::string& bind : binds) {
    if (!nest::parse_bind_argument(bind)) {
      std::cerr << "error: `--bind " << bind << "` is not of the form NAME=VALUE\n";
      return 2;
    }
  }
  return 0;
}

bool load_session(nest::Session& session, ProgressLine* progress) {
  const bool loaded = session.load();
  if (progress != nullptr) progress->clear();
  const syntax::Diagnostics& diagnostics = session.diagnostics();
  if (!diagnostics.all().empty()) std::cerr << session.render_diagnostics();
  return loaded;
}

std::optional<int64_t> bound_vocab(const nest::Session& session) {
  auto found = session.instance_generics().find("Vocab");
  if (found == session.instance_generics().end() || found->second.kind != eval::GenericValue::Kind::Dim) {
    return std::nullopt;
  }
  return found->second.dim;
}

int write_outputs(const std::string& path, const std::vector<std::pair<std::string, tensor::Tensor>>& outputs) {
  if (!writes_outputs()) return 0;  // across processes, rank 0 writes (every rank has the same outputs)
  try {
    if (path.ends_with(".npy")) {
      if (outputs.size() != 1) {
        std::cerr << "error: the call returned " << outputs.size()
                  << " arrays; a .npy file holds one (write a .npz instead)\n";
        return 1;
      }
      const tensor::Tensor ready = nest::npy_ready(outputs.front().second);
      tensor::write_npy(path, nest::npy_view(ready));
      return 0;
    }
    // Each array written from its tensor's storage (no copy of its bytes).
    std::vector<tensor::Tensor> ready;
    ready.reserve(outputs.size());
    std::map<std::string, tensor::NpyView> arrays;
    for (const auto& [name, tensor] : outputs) {
      ready.push_back(nest::npy_ready(tensor));
      arrays[name] = nest::npy_view(ready.back());
    }
    // Stored, not deflated (as numpy.savez): deflating float outputs costs
    // seconds per 64 MB of logits for half the bytes.
    tensor::write_npz(path, arrays, /*compress=*/false);
  } catch (const std::exception& failure) {
    std::cerr << "error: cannot write `" << path << "`: " << failure.what() << '\n';
    return 1;
  }
  return 0;
}

namespace {

// Where the calls' time went: the wall time of each op's native kernels
// over every call so far, the largest first (what is left of the calls'
// time is the interpreter, op bodies and the work between kernels).
std::string describe_kernel_time(const eval::ExecutionStats& stats) {
  std::vector<std::pair<std::string, eval::OpCounts>> ops;
  double kernel_seconds = 0;
  for (const auto& [name, counts] : stats) {
    if (counts.native == 0) continue;
    ops.emplace_back(name, counts);
    kernel_seconds += counts.native_seconds;
  }
  if (ops.empty()) return "";
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.native_seconds > b.second.native_seconds; });
  std::string text = "  native kernel time " + call_seconds_text(kernel_seconds) + " s over all calls, by op:\n";
  for (const auto& [name, counts] : ops) {
    text += "    " + name + " " + call_seconds_text(counts.native_seconds) + " s in " + std::to_string(counts.native) +
            (counts.native == 1 ? " call\n" : " calls\n");
  }
  return text;
}

}  // namespace

std::string describe_stats(const nest::Session& session, const std::vector<std::pair<std::string, double>>& calls) {
  const nest::LoadTimes& times = session.load_times();
  std::string text = "stats:\n";
  text += "  load " + seconds_text(times.total()) + " s (program " + seconds_text(times.program) + ", checkpoint " +
          seconds_text(times.checkpoint) + ", instantiate " + seconds_text(times.instantiate) + ")\n";
  for (const auto& [name, seconds] : calls) text += "  call " + name + " " + call_seconds_text(seconds) + " s\n";
  // Op calls over every call so far; with the call times they bound the
  // interpreter's own cost per op (scripts/bench: a tiny model, where
  // kernel time is negligible).
  int64_t native_calls = 0;
  int64_t body_calls = 0;
  for (const auto& [name, counts] : session.interpreter().stats()) {
    native_calls += counts.native;
    body_calls += counts.body;
  }
  text += "  op calls " + std::to_string(native_calls + body_calls) + " (" + std::to_string(native_calls) +
          " native, " + std::to_string(body_calls) + " bodies)\n";
  const int cpus = tensor::cpus_in_reach();
  text += "  threads " + std::to_string(tensor::num_threads()) + " on " + std::to_string(cpus) +
          (cpus == 1 ? " CPU\n" : " CPUs\n");
  text += describe_kernel_time(session.interpreter().stats());
  const size_t resident = nest::peak_resident_bytes();
  const size_t tensors = tensor::peak_bytes();
  text += "  peak resident memory " + nest::format_bytes(static_cast<double>(resident)) + " (" +
          std::to_string(resident) + " bytes, ru_maxrss)\n";
  text += "  peak tensor memory " + nest::format_bytes(static_cast<double>(tensors)) + " (" + std::to_string(tensors) +
          " bytes, owned tensors)\n";
  if (session.processes() > 1) {
    // Every process's own peak, gathered (each holds its part of the weights).
    const uint64_t own = resident;
    std::vector<uint64_t> peaks(static_cast<size_t>(session.processes()));
    session.options().communicator->all_gather(&own, sizeof own, peaks.data());
    text += "  processes " + std::to_string(peaks.size()) + " over " + session.options().communicator->transport() +
            "; peak resident memory by rank:";
    for (size_t r = 0; r < peaks.size(); ++r) {
      text += (r == 0 ? " " : ", ") + std::to_string(r) + ": " + nest::format_bytes(static_cast<double>(peaks[r])) +
              " (" + std::to_string(peaks[r]) + " bytes)";
    }
    text += "\n";
  }
  if (session.has_checkpoint()) {
    uint64_t checkpoint_bytes = 0;
    for (const auto& file : session.checkpoint().files()) checkpoint_bytes += file->file_size();
    text += "  checkpoint size " + nest::format_bytes(static_cast<double>(checkpoint_bytes)) + " (" +
            std::to_string(checkpoint_bytes) + " bytes)\n";
  }
  return text;
}

}  // namespace linnet::cli
