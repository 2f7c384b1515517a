// What `linnet run`, `linnet generate` and `linnet inspect --parameters`
// share: the options that choose a model (--bind, --weights, --numerics),
// loading a session with its diagnostics printed, writing outputs, and the
// --stats report.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"
#include "option_checks.hpp"
#include "progress_line.hpp"
#include "linnet/nest/session.hpp"

namespace linnet::cli {

// --bind (repeatable), --weights (repeatable), --numerics, --cast-weights and --load.
void add_model_options(CLI::App& command, std::vector<std::string>& binds, std::vector<std::string>& weights,
                       std::string& numerics, bool& cast_weights, std::string& load);
// --numerics alone: exact, equivalent (the default of every command that runs a model) or fast.
void add_numerics_option(CLI::App& command, std::string& numerics);
// --cast-weights alone.
void add_cast_weights_option(CLI::App& command, bool& cast_weights);
// --load alone: map, packed or copy (nest::weight_placement_from_name);
// not given (empty), the device's default (nest::SessionOptions::placement).
void add_load_option(CLI::App& command, std::string& load);
// --bind alone (inspect --parameters reads no weights).
void add_bind_option(CLI::App& command, std::vector<std::string>& binds);
// --bind-from FILE (SessionOptions::bind_from), and its check (a file: else 2).
void add_bind_from_option(CLI::App& command, std::string& path);
int check_bind_from_path(const std::string& path);
// --strict (SessionOptions::strict).
void add_strict_option(CLI::App& command, bool& strict);
// --no-progress: no progress line (progress_line.hpp) even on a terminal.
void add_progress_option(CLI::App& command, bool& no_progress);
// This process's rank, for make_progress_line (only the first process draws).
int progress_rank(const CommandContext& context);
// --max-loop-iterations (see option_checks.hpp's check_loop_limit).
void add_loop_limit_option(CLI::App& command, std::optional<int64_t>& limit);

nest::SessionOptions session_options(const std::string& card, const std::vector<std::string>& binds,
                                     const std::vector<std::string>& weights, const std::string& numerics,
                                     const CommandContext& context);

// 0 when `card` is a directory; else prints an error and returns 2.
int check_card_path(const std::string& card);
// 0 when every --bind is NAME=VALUE; else prints an error and returns 2.
int check_bind_arguments(const std::vector<std::string>& binds);

// Loads the session; prints its diagnostics (warnings too) to stderr,
// after erasing `progress`'s line. False when loading failed.
bool load_session(nest::Session& session, ProgressLine* progress = nullptr);

// The bound `Vocab`, for the top-k of logits.
std::optional<int64_t> bound_vocab(const nest::Session& session);

// Writes outputs to a .npz, or the single one to a .npy. Returns 0, or 1
// after printing an error.
int write_outputs(const std::string& path, const std::vector<std::pair<std::string, tensor::Tensor>>& outputs);

// The --stats lines: load time by stage, time per call, peak resident
// memory (ru_maxrss) and peak tensor memory (the allocator's).
std::string describe_stats(const nest::Session& session, const std::vector<std::pair<std::string, double>>& calls);

}  // namespace linnet::cli
