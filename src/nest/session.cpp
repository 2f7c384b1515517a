// Loading a card with its checkpoint, and calling its entries.
#include "linnet/nest/session.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <new>
#include <set>
#include <stdexcept>

#include "linnet/dist/collectives.hpp"
#include "linnet/nest/binding_audit.hpp"
#include "linnet/nest/card_loader.hpp"
#include "linnet/nest/program_check.hpp"
#include "linnet/nest/random_inputs.hpp"
#include "linnet/nest/shards.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/syntax/suggest.hpp"
#include "linnet/tensor/error.hpp"

namespace linnet::nest {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

syntax::Diagnostic plain_error(const std::string& message) {
  return syntax::error("", message, syntax::Span{});
}

// An integer scalar input made at random is taken as a position: it lies
// below the smallest bound dimension, so it indexes any axis of that size.
int64_t position_limit(const eval::GenericBindings& generics) {
  int64_t limit = random_integer_bound;
  for (const auto& [name, value] : generics) {
    if (value.kind == eval::GenericValue::Kind::Dim && value.dim > 0) limit = std::min(limit, value.dim);
  }
  return limit;
}

// "tokens: Tensor[B, S; i32], pos: i32".
std::string signature(const std::vector<InputSlot>& slots) {
  std::string text;
  for (const InputSlot& slot : slots) text += (text.empty() ? "" : ", ") + slot.name + ": " + slot.declared;
  return text;
}

}  // namespace

Session::Session(SessionOptions options)
    : options_(std::move(options)), sources_(std::make_unique<syntax::SourceManager>()) {}

Session::~Session() = default;

std::string Session::render_diagnostics() const { return syntax::render_text(diagnostics_, *sources_); }

std::string Session::render_diagnostics_json() const { return syntax::render_json(diagnostics_, *sources_); }

bool Session::fail_with(const eval::EvalError& error) {
  diagnostics_.add(error.diagnostic());
  return false;
}

const eval::GenericBindings& Session::instance_generics() const {
  return instance_ ? instance_->generics : bound_.model;
}

bool Session::load() {
  if (!is_card()) return load_plain_program();
  const Clock::time_point start = Clock::now();
  report_stage("reading the card");
  if (!load_program()) return false;
  times_.program = seconds_since(start);
  if (!options_.load_weights) return true;
  report_stage("opening the checkpoint");
  const Clock::time_point weights_start = Clock::now();
  if (!load_checkpoint()) return false;
  times_.checkpoint = seconds_since(weights_start);

  source_ = make_source();
  return instantiate(*source_);
}

std::unique_ptr<CheckpointParameterSource> Session::make_source() const {
  const int64_t shards = bound_shards(bound_.model).value_or(1);
  if (shards > 1)
    return std::make_unique<ShardedParameterSource>(*checkpoint_, bindings_, rank(), shards, options_.cast_weights,
                                                    weight_placement());
  return std::make_unique<CheckpointParameterSource>(*checkpoint_, bindings_, options_.cast_weights,
                                                     weight_placement());
}

WeightPlacement Session::weight_placement() const {
  if (options_.placement) return *options_.placement;
  return options_.device == Device::Cuda ? WeightPlacement::Map : WeightPlacement::Packed;
}

namespace {

// Forwards to a source, telling the session each tensor it is asked for
// ("loading weights 12/291").
class CountingSource : public eval::ParameterSource {
 public:
  CountingSource(eval::ParameterSource& source, std::function<void(int64_t)> fetched)
      : source_(source), fetched_(std::move(fetched)) {}
  std::optional<tensor::Tensor> fetch(const eval::ParameterRequest& request) override {
    fetched_(count_++);
    return source_.fetch(request);
  }

 private:
  eval::ParameterSource& source_;
  std::function<void(int64_t)> fetched_;
  int64_t count_ = 0;
};

}  // namespace

void Session::report_stage(std::string_view what, int64_t index, int64_t count) const {
  if (options_.progress) options_.progress->stage({what, index, count, {}});
}

bool Session::instantiate(eval::ParameterSource& source) {
  const Clock::time_point start = Clock::now();
  int64_t tensors = 0;  // what the instance will ask the source for
  for (const eval::ParameterInfo& info : manifest_) tensors += info.kind != eval::ParameterKind::State;
  CountingSource counted(source, [&](int64_t index) { report_stage("loading weights", index, tensors); });
  try {
    instance_ = interpreter_->instantiate(root_->qualified_name, bound_.model, counted);
  } catch (const eval::EvalError& error) {
    return fail_with(error);
  } catch (const std::bad_alloc&) {
    diagnostics_.error(eval::codes::resource_limit,
                       "out of memory binding the weights of `" + root_->qualified_name + "`", syntax::Span{});
    return false;
  } catch (const tensor::TensorError& failure) {
    diagnostics_.error(failure.kind() == tensor::ErrorKind::ResourceLimit ? eval::codes::resource_limit
                                                                          : eval::codes::parameter_binding,
                       std::string("cannot bind the weights: ") + failure.what(), syntax::Span{});
    return false;
  } catch (const std::exception& failure) {
    // A checkpoint problem found while reading a tensor (CheckpointError).
    diagnostics_.error(eval::codes::malformed_file, std::string("cannot bind the weights: ") + failure.what(),
                       syntax::Span{});
    return false;
  }
  times_.instantiate = seconds_since(start);
  return true;
}

bool Session::read_sources(const std::string& path) {
  syntax::LoadOptions load_options;
  load_options.inputs = {path};
  load_options.std_dir = options_.std_dir;
  program_ = syntax::load_program(*sources_, load_options, diagnostics_);
  return program_ && !diagnostics_.has_errors();
}

bool Session::load_program() {
  // The card reader every command shares (card_loader.hpp).
  std::optional<CardFiles> files = read_card_files(options_.card, *sources_, diagnostics_, options_.strict);
  if (!files) return false;
  card_ = std::move(files->card);
  bindings_ = std::move(files->bindings);
  if (!read_sources(options_.card)) return false;
  std::optional<ResolvedCard> resolved =
      resolve_card(*card_, *program_, options_.binds, diagnostics_, "", "", options_.bind_from,
                   PresetBinds{options_.preset_binds, options_.preset_binds_from}, options_.strict);
  if (!resolved) return false;
  root_ = std::move(resolved->root);
  bound_ = std::move(resolved->generics);
  if (!check_statically(options_.card, "", resolved->bind_texts, resolved->bind_origins)) return false;
  if (!make_interpreter_and_list()) return false;
  // bindings.json keys that name no parameter: warnings, errors under --strict.
  for (syntax::Diagnostic& finding :
       audit_card_binding_paths(*card_, bindings_, *root_, bound_.model, *interpreter_, &manifest_, options_.strict)) {
    diagnostics_.add(std::move(finding));
  }
  return !diagnostics_.has_errors();
}

// Binds the generics (the card's and --bind), makes the interpreter and
// lists the root block's parameters, which checks its `where` clauses.
bool Session::bind_and_list(const Card& card) {
  std::vector<BindArgument> binds;
  for (const std::string& text : options_.binds) {
    std::optional<BindArgument> bind = parse_bind_argument(text);
    if (!bind) {
      diagnostics_.error(eval::codes::bad_generic_arguments, "`--bind " + text + "` is not of the form NAME=VALUE",
                         syntax::Span{});
      continue;
    }
    binds.push_back(*bind);
  }
  std::optional<BoundGenerics> bound = bind_generics(*root_, card, binds, diagnostics_);
  if (!bound || diagnostics_.has_errors()) return false;
  bound_ = std::move(*bound);
  // With --root the block is instantiated at --bind's values, as by `check
  // PROGRAM --root B --bind ...`; module-level entries instantiate no block,
  // so the program is checked generically, as by `check PROGRAM` (their
  // --bind values are entry generics, which the checker has no block for).
  if (!check_statically(options_.program, options_.root,
                        options_.root.empty() ? std::vector<std::string>{} : options_.binds)) {
    return false;
  }
  return make_interpreter_and_list();
}

bool Session::check_statically(const std::string& target, const std::string& root,
                               const std::vector<std::string>& binds,
                               const std::vector<std::string>& binds_origins) {
  report_stage("checking the program");
  ProgramCheckRequest request;
  request.target = target;
  request.root = root;
  request.binds = binds;
  request.binds_origins = binds_origins;
  request.strict = options_.strict;
  switch (check_program(*program_, *sources_, diagnostics_, request)) {
    case ProgramCheck::Passed:
      return true;
    case ProgramCheck::Failed:
      return false;
    case ProgramCheck::BadRequest:
      // (The checker has said why on stderr.)
      diagnostics_.add(plain_error("the static checker could not read the generics given"));
      return false;
  }
  return false;
}

bool Session::make_interpreter_and_list() {
  eval::Options interpreter_options;
  interpreter_options.numerics = options_.numerics;
  interpreter_options.progress = options_.progress;
  if (options_.max_loop_iterations) interpreter_options.max_loop_iterations = *options_.max_loop_iterations;
  // Native kernels stand in for op bodies where the policy allows (never under exact).
  try {
    interpreter_options.dispatcher = options_.dispatcher ? options_.dispatcher : make_dispatcher(options_.device);
  } catch (const DeviceUnavailable& error) {
    diagnostics_.error(eval::codes::resource_limit, error.what(), syntax::Span{});
    return false;
  }
  // Across processes, std.nn.parallel's collectives communicate, under every policy.
  if (processes() > 1) {
    interpreter_options.dispatcher =
        std::make_shared<dist::CollectiveDispatcher>(interpreter_options.dispatcher, options_.communicator);
  }
  // A `Shards` that does not match the processes is refused before anything
  // is read (`inspect --parameters` may list one process's part alone).
  if ((options_.load_weights || processes() > 1) &&
      !check_process_count(*root_, bound_.model, processes(), diagnostics_)) {
    return false;
  }
  interpreter_ = std::make_unique<eval::Interpreter>(*program_, *sources_, interpreter_options);
  if (root_->block == nullptr) return true;  // module-level entries: no instance
  try {
    // Checks the `where` clauses of the root and of every sub-block.
    manifest_ = interpreter_->parameters(root_->qualified_name, bound_.model);
  } catch (const eval::EvalError& error) {
    return fail_with(error);
  } catch (const std::bad_alloc&) {
    diagnostics_.error(eval::codes::resource_limit,
                       "out of memory listing the parameters of `" + root_->qualified_name + "`", syntax::Span{});
    return false;
  }
  return true;
}

bool Session::load_plain_program() {
  const Clock::time_point start = Clock::now();
  // A card without settings stands in for messages and --weights.
  Card card;
  const std::filesystem::path program_path(options_.program);
  std::error_code ec;
  card.directory = std::filesystem::is_directory(program_path, ec) ? program_path.string()
                                                                   : program_path.parent_path().string();
  card.name = options_.program;
  card.root = options_.root;
  card_ = std::move(card);
  report_stage("reading the program");
  if (!read_sources(options_.program)) return false;

  std::string why;
  root_ = options_.root.empty() ? find_module_entries(*program_, why) : find_root_block(*program_, options_.root, why);
  if (!root_) {
    syntax::Diagnostic& error = diagnostics_.add(plain_error(why));
    if (!options_.root.empty()) error.note("--root names the block whose entries run");
    return false;
  }
  if (!bind_and_list(*card_)) return false;
  times_.program = seconds_since(start);

  if (root_->block == nullptr) {
    if (!options_.weights.empty()) {
      diagnostics_.add(plain_error("module-level entries take no weights"))
          .note("--weights goes with --root BLOCK, the block whose parameters they hold");
      return false;
    }
    return true;
  }
  if (options_.weights.empty()) {
    // Without weights the block can have only optional parameters (absent)
    // and state (zeros); a required `param` or `buffer` has no source.
    std::vector<std::string> required;
    for (const eval::ParameterInfo& info : manifest_) {
      if (info.kind == eval::ParameterKind::State || info.optional) continue;
      required.push_back(std::string(eval::parameter_kind_name(info.kind)) + " `" + info.path + "`: " +
                         std::string(tensor::dtype_name(info.dtype)) + tensor::shape_to_string(info.shape));
    }
    if (!required.empty()) {
      syntax::Diagnostic& error = diagnostics_.error(
          eval::codes::parameter_binding,
          "`" + root_->qualified_name + "` needs weights for " + std::to_string(required.size()) +
              (required.size() == 1 ? " tensor" : " tensors") + ", and no --weights were given",
          syntax::Span{});
      for (const std::string& line : required) error.note("needs " + line);
      error.with_help("pass --weights DIR or --weights FILE.safetensors holding them by these paths");
      return false;
    }
    eval::MapParameterSource no_weights;
    return instantiate(no_weights);
  }
  report_stage("opening the checkpoint");
  const Clock::time_point weights_start = Clock::now();
  if (!load_checkpoint()) return false;
  times_.checkpoint = seconds_since(weights_start);
  source_ = make_source();
  return instantiate(*source_);
}

bool Session::load_checkpoint() {
  try {
    weights_location_ = locate_weights(*card_, options_.weights);
    checkpoint_ = std::make_unique<Checkpoint>(weights_location_.files.empty()
                                                   ? Checkpoint::open(weights_location_.directory)
                                                   : Checkpoint::open_files(weights_location_.files));
  } catch (const std::exception& failure) {
    // No checkpoint where one is named, or a file of it malformed.
    diagnostics_.error(eval::codes::malformed_file, failure.what(), syntax::Span{});
    return false;
  }

  const std::string config_path = (std::filesystem::path(weights_location_.directory) / "config.json").string();
  std::error_code ec;
  if (std::filesystem::is_regular_file(config_path, ec)) {
    std::string why;
    config_ = read_model_config(config_path, why);
    if (!config_) {
      diagnostics_.add(
          syntax::warning(eval::codes::malformed_file, "ignoring the checkpoint's config: " + why, syntax::Span{}));
    } else {
      ConfigComparison comparison = compare_config(*config_, bound_.model);
      for (const std::string& warning : comparison.warnings) {
        diagnostics_.add(syntax::warning("", warning, syntax::Span{}));
      }
      for (std::string& note : comparison.notes) notes_.push_back(std::move(note));
    }
  }

  const int64_t shards = bound_shards(bound_.model).value_or(1);
  std::vector<syntax::Diagnostic> problems =
      shards > 1 ? check_sharded_parameters(manifest_, *checkpoint_, bindings_, shards, options_.cast_weights)
                 : check_parameters(manifest_, *checkpoint_, bindings_, options_.cast_weights);
  if (!problems.empty()) {
    for (syntax::Diagnostic& problem : problems) diagnostics_.add(std::move(problem));
    diagnostics_.add(plain_error(std::to_string(problems.size()) +
                                 (problems.size() == 1 ? " parameter" : " parameters") + " of `" +
                                 root_->qualified_name + (problems.size() == 1 ? "` does" : "` do") +
                                 " not bind to the checkpoint `" +
                                 checkpoint_->source() + "`"))
        .note("generics: " + eval::describe_bindings(bound_.model));
    return false;
  }
  // Bindings that would otherwise be silent: warnings, errors under --strict.
  for (syntax::Diagnostic& finding : audit_bindings(manifest_, *checkpoint_, bindings_, options_.strict)) {
    diagnostics_.add(std::move(finding));
  }
  if (diagnostics_.has_errors()) return false;
  unbound_ = nest::unbound_tensors(manifest_, *checkpoint_, bindings_);
  return true;
}

std::vector<InputSlot> Session::slots(const std::string& entry) const {
  const syntax::ast::FunctionItem* item = root_->entry(entry);
  if (item == nullptr) {
    std::string message = "`" + root_->qualified_name + "` has no entry `" + entry + "`" +
                          syntax::did_you_mean_or_list(entry, root_->entry_names(), "entry", "entries");
    if (!is_card() && root_->block == nullptr) message += " (a block's entry runs with --root BLOCK)";
    throw InputError(message);
  }
  return input_slots(*item, slot_generics(), *sources_);
}

eval::GenericBindings Session::slot_generics() const {
  eval::GenericBindings generics = instance_generics();
  for (const auto& [name, value] : bound_.entry) generics.emplace(name, value);
  return generics;
}

eval::EntryInputs Session::inputs(const std::string& entry, const std::map<std::string, tensor::Tensor>& values) const {
  const std::vector<InputSlot> entry_slots = slots(entry);
  std::set<std::string> names;
  for (const InputSlot& slot : entry_slots) names.insert(slot.name);
  for (const auto& [name, value] : values) {
    if (names.count(name) == 0) {
      throw InputError("entry `" + entry + "` has no parameter `" + name + "`; it takes (" + signature(entry_slots) +
                       ")");
    }
  }
  eval::EntryInputs inputs;
  std::vector<std::string> missing;
  for (const InputSlot& slot : entry_slots) {
    auto found = values.find(slot.name);
    if (found == values.end()) {
      missing.push_back(slot.name);
      continue;
    }
    inputs.positional.push_back(eval::Value::from_tensor(found->second));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing) list += (list.empty() ? "" : ", ") + name;
    throw InputError("entry `" + entry + "` needs " + (missing.size() == 1 ? "input " : "inputs ") + list +
                     "; it takes (" + signature(entry_slots) + "); give each as --input NAME=VALUE");
  }
  // --bind values for this entry's own generics.
  const syntax::ast::FunctionItem* item = root_->entry(entry);
  for (const syntax::ast::GenericParam& generic : item->generics) {
    auto bound = bound_.entry.find(generic.name.text);
    if (bound != bound_.entry.end()) inputs.generics[generic.name.text] = bound->second;
  }
  return inputs;
}

eval::EntryInputs Session::inputs(const std::string& entry,
                                  const std::vector<std::pair<std::string, std::string>>& values) const {
  const std::vector<InputSlot> entry_slots = slots(entry);
  std::map<std::string, tensor::Tensor> tensors;
  for (const auto& [name, text] : values) {
    const InputSlot* slot = nullptr;
    for (const InputSlot& candidate : entry_slots) {
      if (candidate.name == name) slot = &candidate;
    }
    if (slot == nullptr) {
      throw InputError("entry `" + entry + "` has no parameter `" + name + "`; it takes (" + signature(entry_slots) +
                       ")");
    }
    tensor::Tensor value = text == "random" ? random_input(*slot, options_.seed, position_limit(slot_generics()))
                                            : input_from_text(text, *slot);
    if (!tensors.emplace(name, std::move(value)).second) {
      throw InputError("input `" + name + "` is given twice");
    }
  }
  return inputs(entry, tensors);
}

eval::Value Session::call(const std::string& entry, const eval::EntryInputs& inputs) {
  try {
    if (root_->block == nullptr) {
      for (size_t i = 0; i < root_->entries.size(); ++i) {
        if (root_->entries[i]->name.text == entry) return interpreter_->call_function(root_->entry_functions[i], inputs);
      }
    }
    return interpreter_->call(*instance_, entry, inputs);
  } catch (const eval::EvalError& error) {
    throw RunError(error.diagnostic(), interpreter_->render(error));
  } catch (const RunError&) {
    throw;
  } catch (const std::bad_alloc&) {
    const syntax::Diagnostic diagnostic =
        syntax::error(eval::codes::resource_limit, "entry `" + entry + "` ran out of memory", syntax::Span{});
    throw RunError(diagnostic, syntax::render_text(diagnostic, *sources_));
  } catch (const tensor::TensorError& failure) {
    // Kernels report inside expressions, which name the span; one that
    // escapes (a kernel called outside any expression) still gets a code.
    const syntax::Diagnostic diagnostic =
        syntax::error(failure.kind() == tensor::ErrorKind::ResourceLimit ? eval::codes::resource_limit
                                                                         : eval::codes::invalid_operand,
                      "entry `" + entry + "` failed: " + failure.what(), syntax::Span{});
    throw RunError(diagnostic, syntax::render_text(diagnostic, *sources_));
  } catch (const std::length_error&) {
    // A container asked for more elements than it can hold: a size past any memory.
    const syntax::Diagnostic diagnostic = syntax::error(
        eval::codes::resource_limit, "entry `" + entry + "` needs more memory than can be addressed", syntax::Span{});
    throw RunError(diagnostic, syntax::render_text(diagnostic, *sources_));
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& failure) {
    // The last resort: a failure no layer below turned into a diagnostic.
    const syntax::Diagnostic diagnostic =
        syntax::error(eval::codes::invalid_operand, "entry `" + entry + "` failed: " + failure.what(), syntax::Span{});
    throw RunError(diagnostic, syntax::render_text(diagnostic, *sources_));
  }
}

void Session::reset_state() {
  if (instance_) instance_->reset_state();
}

}  // namespace linnet::nest
