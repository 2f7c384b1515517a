// The public interpreter API: loading a program, instantiating a root
// block, listing its parameters, and calling entries and module functions.
#include "linnet/eval/interpreter.hpp"

#include <algorithm>
#include <functional>

#include "evaluator.hpp"

namespace linnet::eval {

const char* numerics_policy_name(NumericsPolicy policy) {
  switch (policy) {
    case NumericsPolicy::Exact: return "exact";
    case NumericsPolicy::Equivalent: return "equivalent";
    case NumericsPolicy::Fast: return "fast";
  }
  return "exact";
}

std::unique_ptr<LoadedProgram> load_program(const std::vector<std::string>& inputs, const std::string& std_dir,
                                            syntax::Diagnostics& diagnostics) {
  auto loaded = std::make_unique<LoadedProgram>();
  loaded->sources = std::make_unique<syntax::SourceManager>();
  syntax::LoadOptions options;
  options.inputs = inputs;
  options.std_dir = std_dir;
  loaded->program = syntax::load_program(*loaded->sources, options, diagnostics);
  if (!loaded->program || diagnostics.has_errors()) return nullptr;
  return loaded;
}

// ---------------------------------------------------------------- Evaluator entry points

namespace {

CallArgs arguments_of(const EntryInputs& inputs) {
  CallArgs args;
  args.positional = inputs.positional;
  for (const auto& [name, value] : inputs.named) args.named.push_back({name, value});
  return args;
}

// "[0, 2]": the position of flat element `flat` in `shape`.
std::string position_text(int64_t flat, const tensor::Shape& shape) {
  std::vector<int64_t> position(shape.size());
  for (size_t axis = shape.size(); axis-- > 0;) {
    position[axis] = shape[axis] == 0 ? 0 : flat % shape[axis];
    flat = shape[axis] == 0 ? 0 : flat / shape[axis];
  }
  std::string text = "[";
  for (size_t axis = 0; axis < position.size(); ++axis) text += (axis ? ", " : "") + std::to_string(position[axis]);
  return text + "]";
}

// Where `value` holds `index`: "" for a scalar equal to it, "[0, 2]" for
// the first such element of a tensor, nothing when it does not hold it.
std::optional<std::string> find_index(const Value& value, int64_t index) {
  if (value.kind() == Value::Kind::Int) {
    return value.int_value() == index ? std::optional<std::string>("") : std::nullopt;
  }
  if (!value.is_tensor() || !tensor::is_integer(value.tensor().dtype())) return std::nullopt;
  const tensor::Tensor& held = value.tensor();
  const std::vector<int64_t> elements = held.to_vector<int64_t>();
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i] != index) continue;
    if (held.rank() == 0) return "";
    return position_text(static_cast<int64_t>(i), held.shape());
  }
  return std::nullopt;
}

// ", given by `--input tokens=1,2,3`", when the caller said where the input came from.
std::string given_by(const EntryInputs& inputs, const std::string& name) {
  auto origin = inputs.origins.find(name);
  return origin == inputs.origins.end() ? "" : ", given by `" + origin->second + "`";
}

// A note of the call stack Evaluator::diagnostic appends ("in `f`, called at ...").
bool is_stack_note(const std::string& note) {
  return note.starts_with("in `") && note.find("`, called at ") != std::string::npos;
}

// Adds notes naming the entry inputs a failed call was about: the one an
// argument error concerns, and those holding an out-of-range index (the
// index may also have been computed; the note says only what holds it).
// They go before the call-stack notes.
void note_input_origins(EvalError& error, const std::vector<ast::Param>& params, const EntryInputs& inputs) {
  std::vector<std::string> notes;
  if (error.argument_of == &params && inputs.origins.count(error.argument)) {
    notes.push_back("`" + error.argument + "` was given by `" + inputs.origins.at(error.argument) + "`");
  }
  if (error.index_value) {
    std::vector<std::pair<std::string, const Value*>> values;
    for (size_t i = 0; i < inputs.positional.size() && i < params.size(); ++i) {
      values.emplace_back(params[i].name.text, &inputs.positional[i]);
    }
    for (const auto& [name, value] : inputs.named) values.emplace_back(name, &value);
    const std::string index = std::to_string(*error.index_value);
    for (const auto& [name, value] : values) {
      const std::optional<std::string> at = find_index(*value, *error.index_value);
      if (!at) continue;
      notes.push_back(at->empty() ? "the value " + index + " is the input `" + name + "`" + given_by(inputs, name)
                                  : "the value " + index + " is in the input `" + name + "` at " + *at +
                                        given_by(inputs, name));
    }
  }
  // An empty input (`--input tokens=[]`) fails far from the command line,
  // often in a reduction over the empty axis: name it.
  std::vector<std::pair<std::string, const Value*>> inputs_by_name;
  for (size_t i = 0; i < inputs.positional.size() && i < params.size(); ++i) {
    inputs_by_name.emplace_back(params[i].name.text, &inputs.positional[i]);
  }
  for (const auto& [name, value] : inputs.named) inputs_by_name.emplace_back(name, &value);
  for (const auto& [name, value] : inputs_by_name) {
    if (!value->is_tensor() || value->tensor().numel() != 0) continue;
    notes.push_back("the input `" + name + "` has no elements (shape " + tensor::shape_to_string(value->tensor().shape()) +
                    ")" + given_by(inputs, name));
  }
  std::vector<std::string>& all = error.diagnostic().notes;
  const auto stack = std::find_if(all.begin(), all.end(), is_stack_note);
  all.insert(stack, notes.begin(), notes.end());
}

}  // namespace

Value Evaluator::call_with_origins(const std::vector<ast::Param>& params, const EntryInputs& inputs,
                                   std::string_view name, const std::function<Value()>& call) {
  if (options.progress) options.progress->call_started(name);
  try {
    return call();
  } catch (EvalError& error) {
    note_input_origins(error, params, inputs);
    throw;
  }
}

std::shared_ptr<BlockInstance> Evaluator::instantiate(std::string_view block, const GenericBindings& generics,
                                                      ParameterSource& source) {
  const ResolvedItem found = find_named(block, {ast::ItemKind::Block});
  const auto& item = found.item->cast<ast::BlockItem>();
  return instantiate_block(found.module, item, root_generics(found.module, item, generics), "", &source, nullptr, false,
                           item.name.span);
}

std::vector<ParameterInfo> Evaluator::parameters(std::string_view block, const GenericBindings& generics) {
  const ResolvedItem found = find_named(block, {ast::ItemKind::Block});
  const auto& item = found.item->cast<ast::BlockItem>();
  std::vector<ParameterInfo> manifest;
  instantiate_block(found.module, item, root_generics(found.module, item, generics), "", nullptr, &manifest, false,
                    item.name.span);
  return manifest;
}

Value Evaluator::call_entry(BlockInstance& instance, std::string_view entry, const EntryInputs& inputs) {
  const std::string name(entry);
  auto method = instance.methods.find(name);
  if (method == instance.methods.end()) {
    fail(codes::unknown_member, "block `" + instance.item->name.text + "` has no entry `" + name + "`",
         instance.item->name.span);
  }
  const ast::FunctionItem& function = *method->second;
  if (function.function != ast::FunctionKind::Entry) {
    fail(codes::wrong_symbol_kind, "`" + name + "` is a `" + ast::function_kind_spelling(function.function) +
                                       "`, not an `entry`", function.name.span);
  }
  for (const auto& [generic, value] : inputs.generics) {
    bool declared = false;
    for (const ast::GenericParam& param : function.generics) declared = declared || param.name.text == generic;
    if (!declared) fail(codes::bad_input, "entry `" + name + "` has no generic `" + generic + "`", function.name.span);
  }
  return call_with_origins(function.params, inputs, name, [&] {
    return invoke(instance.module, function, &instance, inputs.generics, arguments_of(inputs), function.name.span,
                  false);
  });
}

Value Evaluator::call_function(std::string_view function_name, const EntryInputs& inputs) {
  const ResolvedItem found = find_named(function_name, {ast::ItemKind::Function, ast::ItemKind::Kernel});
  const auto& generics_of = [&]() -> const std::vector<ast::GenericParam>& {
    if (const auto* kernel = found.item->as<ast::KernelItem>()) return kernel->generics;
    return found.item->cast<ast::FunctionItem>().generics;
  };
  for (const auto& [generic, value] : inputs.generics) {
    bool declared = false;
    for (const ast::GenericParam& param : generics_of()) declared = declared || param.name.text == generic;
    if (!declared) {
      const std::string callee(function_name);
      fail(codes::bad_input, std::string("`") + callee + "` has no generic `" + generic + "`", found.item->name.span);
    }
  }
  if (const auto* kernel = found.item->as<ast::KernelItem>()) {
    return call_with_origins(kernel->params, inputs, function_name, [&] {
      return run_kernel(found.module, *kernel, inputs.generics, arguments_of(inputs), kernel->name.span);
    });
  }
  const auto& function = found.item->cast<ast::FunctionItem>();
  return call_with_origins(function.params, inputs, function_name, [&] {
    return invoke(found.module, function, nullptr, inputs.generics, arguments_of(inputs), function.name.span, false);
  });
}

// ---------------------------------------------------------------- Interpreter

Interpreter::Interpreter(const syntax::Program& program, const syntax::SourceManager& sources, Options options)
    : evaluator_(std::make_unique<Evaluator>(program, sources, std::move(options))) {}

Interpreter::Interpreter(const LoadedProgram& loaded, Options options)
    : Interpreter(*loaded.program, *loaded.sources, std::move(options)) {}

Interpreter::~Interpreter() = default;

const Options& Interpreter::options() const { return evaluator_->options; }

void Interpreter::set_numerics(NumericsPolicy policy) { evaluator_->options.numerics = policy; }

std::shared_ptr<BlockInstance> Interpreter::instantiate(std::string_view block, const GenericBindings& generics,
                                                        ParameterSource& source) {
  return evaluator_->instantiate(block, generics, source);
}

std::vector<ParameterInfo> Interpreter::parameters(std::string_view block, const GenericBindings& generics) {
  return evaluator_->parameters(block, generics);
}

Value Interpreter::call(BlockInstance& instance, std::string_view entry, const EntryInputs& inputs) {
  return evaluator_->call_entry(instance, entry, inputs);
}

Value Interpreter::call_function(std::string_view function, const EntryInputs& inputs) {
  return evaluator_->call_function(function, inputs);
}

const ExecutionStats& Interpreter::stats() const { return evaluator_->stats; }

void Interpreter::clear_stats() { evaluator_->stats.clear(); }

std::string Interpreter::render(const EvalError& error) const {
  return syntax::render_text(error.diagnostic(), evaluator_->sources);
}

}  // namespace linnet::eval
