// A card loaded to run: its program, its bound generics, its checkpoint, and
// one instance of its root block whose state (KV caches) lives across calls.
//
//   nest::SessionOptions options;
//   options.card = "nest/mistral-7b-instruct-v0.3";
//   options.binds = {"Layers=2", "T=f32", ...};
//   options.weights = {"golden/mistral-trunc"};
//   nest::Session session(options);
//   if (!session.load()) { std::cerr << session.render_diagnostics(); return 1; }
//   eval::Value logits = session.call("forward", session.inputs("forward", {{"tokens", "[[1, 2, 3]]"}}));
//
// load() checks everything before any tensor is read: the card, the
// program (with the static checker, as `linnet check` does), the generics
// (and their `where` clauses), and every parameter the instance needs
// against the checkpoint (all problems at once). Only then does it
// instantiate, reading the tensors it binds and no others.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linnet/dist/communicator.hpp"
#include "linnet/eval/interpreter.hpp"
#include "linnet/nest/bindings.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/nest/checkpoint.hpp"
#include "linnet/nest/device.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/nest/weights.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::nest {

struct SessionOptions {
  std::string card;                   // the card directory
  // A plain program instead of a card (then `card` is empty): a .linnet
  // file or a package directory (linnet.toml). It runs without weights
  // unless `weights` names some.
  std::string program;
  // For `program`: the block whose entries run; empty: the program's
  // module-level entries.
  std::string root;
  // Seeds `NAME=random` inputs (random_inputs.hpp).
  uint64_t seed = 0;
  std::vector<std::string> binds;     // "K=V", over nest.toml's [generics]
  std::string bind_from;              // --bind-from FILE (bind_from.hpp), before `binds`; cards only
  // Values before even those, named as coming from a file of their own
  // (validate: the golden case's meta.json); cards only.
  std::vector<std::string> preset_binds;
  std::string preset_binds_from;
  std::vector<std::string> weights;   // --weights paths; empty: the Hugging Face cache
  std::string std_dir;                // the standard library
  // `equivalent` by default, as upstream's tools run models: native
  // kernels with f32 sums, rounding where the op bodies round.
  eval::NumericsPolicy numerics = eval::NumericsPolicy::Equivalent;
  // Round checkpoint floats to the declared dtype where they are stored
  // wider (an f32 checkpoint at T = bf16); without it that is an error.
  bool cast_weights = false;
  // Which checkpoint tensors are copied into the process's memory at load
  // (--load; bindings.hpp). Nothing: the packed u8 ones on the CPU, none
  // with Device::Cuda, whose kernels read each weight from the copy
  // uploaded once to the device (a host copy would only hold memory).
  std::optional<WeightPlacement> placement;
  // Where native ops run (device.hpp); loading fails with a diagnostic when
  // the device cannot be used here.
  Device device = Device::Cpu;
  // When set, used instead of `device`'s dispatcher (tests install one over
  // a stand-in device).
  std::shared_ptr<eval::OpDispatcher> dispatcher;
  // A `while` loop past this many iterations stops with E6005; nothing:
  // the interpreter's default (eval::Options::max_loop_iterations).
  std::optional<int64_t> max_loop_iterations;
  // --strict: the card's warnings (a binding that leaves a parameter
  // silently absent, binding_audit.hpp; an unknown nest.toml key) are
  // errors instead, and the static checker's lints make load() fail.
  bool strict = false;
  // False: stop after listing the parameters (`inspect --parameters`).
  bool load_weights = true;
  // The processes the card runs across (dist::start_processes' group);
  // null: this process alone. With N > 1 processes the root needs
  // `Shards` bound to N (shards.hpp): each process binds its part of the
  // checkpoint, and std.nn.parallel's collectives communicate. Every
  // process must make the same calls in the same order.
  std::shared_ptr<dist::Communicator> communicator;
  // Told what loading and each call are doing (eval/progress.hpp), for a
  // progress display; may be null.
  std::shared_ptr<eval::ProgressObserver> progress;
};

// An entry call that failed; what() is the rendered diagnostic.
class RunError : public std::runtime_error {
 public:
  RunError(syntax::Diagnostic diagnostic, const std::string& rendered)
      : std::runtime_error(rendered), diagnostic_(std::move(diagnostic)) {}
  const syntax::Diagnostic& diagnostic() const { return diagnostic_; }

 private:
  syntax::Diagnostic diagnostic_;
};

// How long loading took, stage by stage (seconds).
struct LoadTimes {
  double program = 0;      // card, sources, generics, manifest
  double checkpoint = 0;   // locating, mapping and checking the weights
  double instantiate = 0;  // binding the tensors (widening copies included)
  double total() const { return program + checkpoint + instantiate; }
};

class Session {
 public:
  explicit Session(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Loads as described above. False when anything failed: diagnostics()
  // says what. Call once. A plain program loads its sources and binds its
  // generics the same way; its root block is instantiated from the weights
  // when `weights` names some, else with none, which fails (listing them)
  // when the block requires any `param` or `buffer`.
  bool load();

  // False for a plain program (SessionOptions::program).
  bool is_card() const { return options_.program.empty(); }
  // How many processes the card runs across, and this one's rank.
  int processes() const { return options_.communicator ? options_.communicator->size() : 1; }
  int rank() const { return options_.communicator ? options_.communicator->rank() : 0; }
  // Whether a checkpoint was loaded (a card's, or a program's --weights).
  bool has_checkpoint() const { return checkpoint_ != nullptr; }

  const syntax::Diagnostics& diagnostics() const { return diagnostics_; }
  std::string render_diagnostics() const;
  std::string render_diagnostics_json() const;
  // Notes for the summary ("running 2 of the checkpoint's 4 layers").
  const std::vector<std::string>& notes() const { return notes_; }

  const SessionOptions& options() const { return options_; }
  // For a plain program, a card with no settings named after the program.
  const Card& card() const { return *card_; }
  const RootBlock& root() const { return *root_; }
  // The root block's generics as given (defaults are the interpreter's).
  const eval::GenericBindings& generics() const { return bound_.model; }
  // --bind values for entry generics.
  const eval::GenericBindings& entry_generics() const { return bound_.entry; }
  // The root's generics with defaults applied, as the instance has them.
  const eval::GenericBindings& instance_generics() const;
  const std::vector<eval::ParameterInfo>& manifest() const { return manifest_; }
  const Bindings& bindings() const { return bindings_; }
  const Checkpoint& checkpoint() const { return *checkpoint_; }
  const WeightsLocation& weights_location() const { return weights_location_; }
  const std::optional<ModelConfig>& config() const { return config_; }
  const LoadCounts& load_counts() const { return source_->counts(); }
  // SessionOptions::placement, or the device's default.
  WeightPlacement weight_placement() const;
  // Checkpoint tensors no parameter binds (layers past a truncation, ...).
  const std::vector<std::string>& unbound_tensors() const { return unbound_; }
  const LoadTimes& load_times() const { return times_; }

  eval::Interpreter& interpreter() { return *interpreter_; }
  const eval::Interpreter& interpreter() const { return *interpreter_; }
  eval::BlockInstance& instance() { return *instance_; }
  const syntax::SourceManager& sources() const { return *sources_; }

  // The entry's parameters; throws InputError for an entry the root lacks.
  std::vector<InputSlot> slots(const std::string& entry) const;
  // Inputs for `entry` from `name -> text` values (input_from_text, or
  // `random` for a random value, random_inputs.hpp); each parameter needs
  // one, and names must be the entry's. --bind values for the entry's
  // generics are added. Throws InputError.
  eval::EntryInputs inputs(const std::string& entry, const std::vector<std::pair<std::string, std::string>>& values) const;
  // The same from tensors already built, in any order.
  eval::EntryInputs inputs(const std::string& entry, const std::map<std::string, tensor::Tensor>& values) const;

  // Calls `entry` on the instance; throws RunError (rendered) on failure.
  eval::Value call(const std::string& entry, const eval::EntryInputs& inputs);
  // Zeroes every state (the KV caches).
  void reset_state();

 private:
  bool fail_with(const eval::EvalError& error);
  bool load_program();
  bool load_plain_program();
  bool read_sources(const std::string& path);
  bool bind_and_list(const Card& card);
  // The static checker as `linnet check` runs it (program_check.hpp), at
  // the generics `binds` give: false when it refuses the program.
  bool check_statically(const std::string& target, const std::string& root, const std::vector<std::string>& binds,
                        const std::vector<std::string>& binds_origins = {});
  // Makes the interpreter and lists the root block's parameters (which
  // checks its `where` clauses).
  bool make_interpreter_and_list();
  bool load_checkpoint();
  bool instantiate(eval::ParameterSource& source);
  // Tells SessionOptions::progress the stage loading has reached.
  void report_stage(std::string_view what, int64_t index = 0, int64_t count = 0) const;
  // The checkpoint source: this process's part of it when split (shards.hpp).
  std::unique_ptr<CheckpointParameterSource> make_source() const;
  // The bound generics of the root and of the entries (for input slots).
  eval::GenericBindings slot_generics() const;

  SessionOptions options_;
  std::unique_ptr<syntax::SourceManager> sources_;
  syntax::Diagnostics diagnostics_;
  std::vector<std::string> notes_;
  std::optional<Card> card_;
  std::unique_ptr<syntax::Program> program_;
  std::optional<RootBlock> root_;
  BoundGenerics bound_;
  std::unique_ptr<eval::Interpreter> interpreter_;
  std::vector<eval::ParameterInfo> manifest_;
  Bindings bindings_;
  WeightsLocation weights_location_;
  std::unique_ptr<Checkpoint> checkpoint_;
  std::optional<ModelConfig> config_;
  std::unique_ptr<CheckpointParameterSource> source_;
  std::vector<std::string> unbound_;
  std::shared_ptr<eval::BlockInstance> instance_;
  LoadTimes times_;
};

}  // namespace linnet::nest
