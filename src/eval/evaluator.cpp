// The Evaluator's shared services: diagnostics with the call stack attached,
// source locations, module-level name resolution, constants and locals.
#include "evaluator.hpp"

#include <algorithm>

namespace linnet::eval {

Evaluator::Evaluator(const syntax::Program& program_in, const syntax::SourceManager& sources_in, Options options_in)
    : options(std::move(options_in)), program(program_in), sources(sources_in) {}

// ---------------------------------------------------------------- errors

std::string Evaluator::location(Span span) const {
  if (!span.valid() || span.file >= sources.size()) return "<unknown>";
  const syntax::SourceFile& file = sources.file(span.file);
  const syntax::LineColumn at = file.line_column(span.begin);
  return file.path() + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

std::string Evaluator::source_text(Span span) const {
  if (!span.valid() || span.file >= sources.size()) return "";
  const std::string& text = sources.file(span.file).text();
  if (span.begin > span.end || span.end > text.size()) return "";
  return text.substr(span.begin, span.end - span.begin);
}

syntax::Diagnostic Evaluator::diagnostic(const char* code, std::string message, Span span,
                                         std::vector<std::string> notes) const {
  syntax::Diagnostic result = syntax::error(code, std::move(message), span);
  for (std::string& note : notes) result.note(std::move(note));
  // Innermost call first, as a stack trace reads.
  for (auto frame = calls.rbegin(); frame != calls.rend(); ++frame) {
    result.note("in `" + frame->name + "`, called at " + location(frame->call_site));
  }
  return result;
}

void Evaluator::fail(const char* code, std::string message, Span span, std::vector<std::string> notes) const {
  throw EvalError(diagnostic(code, std::move(message), span, std::move(notes)));
}

void Evaluator::fail_index(std::string message, Span span, std::vector<std::string> notes,
                           std::optional<int64_t> index) const {
  EvalError error(diagnostic(codes::runtime_index, std::move(message), span, std::move(notes)));
  error.index_value = index;
  throw error;
}

void Evaluator::fail_tensor(const tensor::TensorError& error, Span span) const {
  using tensor::ErrorKind;
  std::vector<std::string> notes;
  if (error.axis()) notes.push_back("axis " + std::to_string(*error.axis()));
  if (error.value()) notes.push_back("value " + std::to_string(*error.value()));
  if (error.extent()) notes.push_back("extent " + std::to_string(*error.extent()));
  const std::string expression = source_text(span);
  const std::string where = expression.size() <= 80 && !expression.empty() ? " in `" + expression + "`" : "";
  switch (error.kind()) {
    case ErrorKind::IndexOutOfRange:
      fail_index(std::string("index out of range") + where + ": " + error.what(), span, notes, error.value());
    case ErrorKind::DivisionByZero:
      fail(codes::division_by_zero, "integer division by zero" + where, span, notes);
    case ErrorKind::DTypeMismatch:
      fail(codes::dtype_mismatch, std::string("tensor dtypes do not match") + where + ": " + error.what(), span,
           notes);
    case ErrorKind::ShapeMismatch:
      fail(codes::broadcast_mismatch, std::string("tensor shapes do not fit") + where + ": " + error.what(), span,
           notes);
    case ErrorKind::UnsupportedDType:
      fail(codes::invalid_operand, std::string("operation not defined for this dtype") + where + ": " + error.what(),
           span, notes);
    case ErrorKind::InvalidAxis:
      fail(codes::invalid_axis, std::string("invalid axis") + where + ": " + error.what(), span, notes);
    case ErrorKind::ResourceLimit:
      fail(codes::resource_limit, std::string("resource limit") + where + ": " + error.what(), span, notes);
    case ErrorKind::ReadOnly:
    case ErrorKind::InvalidArgument:
      break;
  }
  fail(codes::invalid_operand, std::string("invalid operation") + where + ": " + error.what(), span, notes);
}

CallScope::CallScope(const Evaluator& evaluator, std::vector<Evaluator::CallRecord>& calls, std::string name,
                     Span site, int max_depth)
    : calls_(calls) {
  if (static_cast<int>(calls.size()) >= max_depth) {
    evaluator.fail(codes::recursion,
                   "calls nest deeper than " + std::to_string(max_depth) + " levels (Linnet has no recursion)",
                   site);
  }
  calls_.push_back({std::move(name), site});
}

CallScope::~CallScope() { calls_.pop_back(); }

LoopProgress::LoopProgress(Evaluator& evaluator, std::string_view label, int64_t count)
    : evaluator_(evaluator), observer_(evaluator.options.progress.get()), label_(label), count_(count) {
  depth_ = evaluator_.loop_depth++;
}

LoopProgress::~LoopProgress() {
  --evaluator_.loop_depth;
  if (observer_ != nullptr) observer_->loop_finished(depth_);
}

// ---------------------------------------------------------------- names

const Module* Evaluator::module_at(int index) const {
  if (index < 0 || index >= static_cast<int>(program.modules().size())) return nullptr;
  return program.modules()[static_cast<size_t>(index)].get();
}

std::optional<ResolvedItem> Evaluator::find_item(const Module* module, const std::string& name) const {
  if (module == nullptr) return std::nullopt;
  auto own = module->items.find(name);
  if (own != module->items.end()) return ResolvedItem{module, own->second};
  auto imported = module->imports.find(name);
  if (imported != module->imports.end()) {
    const Module* from = module_at(imported->second.module);
    if (from == nullptr) return std::nullopt;
    return ResolvedItem{from, imported->second.item};
  }
  return std::nullopt;
}

ResolvedItem Evaluator::resolve_path(const Module* module, const std::vector<ast::Ident>& path, Span span) const {
  if (path.empty()) fail(codes::unknown_symbol, "empty path", span);
  auto first = find_item(module, path.front().text);
  if (!first) fail(codes::unknown_symbol, "cannot find `" + path.front().text + "` in this scope", span);
  ResolvedItem current = *first;
  for (size_t i = 1; i < path.size(); ++i) {
    if (current.item != nullptr) {
      fail(codes::unknown_symbol, "`" + path[i - 1].text + "` is not a module", path[i - 1].span);
    }
    auto found = current.module->items.find(path[i].text);
    if (found == current.module->items.end()) {
      fail(codes::unknown_symbol, "module `" + current.module->name + "` has no item `" + path[i].text + "`",
           path[i].span);
    }
    current = ResolvedItem{current.module, found->second};
  }
  return current;
}

std::string Evaluator::qualified_name(const Module* module, const std::string& item) const {
  if (module == nullptr || module->name.empty()) return item;
  return module->name + "::" + item;
}

ResolvedItem Evaluator::find_named(std::string_view name, std::initializer_list<ast::ItemKind> kinds) const {
  const std::string text(name);
  const size_t separator = text.rfind("::");
  std::vector<ResolvedItem> matches;
  auto collect = [&](bool requested_only, const std::string& module_name, const std::string& item_name) {
    for (const auto& module : program.modules()) {
      if (requested_only && !module->requested) continue;
      if (!module_name.empty() && module->name != module_name) continue;
      auto found = module->items.find(item_name);
      if (found != module->items.end() &&
          std::find(kinds.begin(), kinds.end(), found->second->kind) != kinds.end()) {
        matches.push_back(ResolvedItem{module.get(), found->second});
      }
    }
  };
  if (separator != std::string::npos) {
    collect(false, text.substr(0, separator), text.substr(separator + 2));
  } else {
    collect(true, "", text);
    if (matches.empty()) collect(false, "", text);
  }
  const char* what = *kinds.begin() == ast::ItemKind::Block ? "block" : "function";
  if (matches.empty()) fail(codes::unknown_symbol, std::string("no ") + what + " named `" + text + "`", Span{});
  if (matches.size() > 1) {
    std::vector<std::string> notes;
    for (const ResolvedItem& match : matches) notes.push_back("declared in module `" + match.module->name + "`");
    fail(codes::unknown_symbol,
         std::string("`") + text + "` names more than one " + what + "; write `module::" + text + "`", Span{},
         notes);
  }
  return matches.front();
}

Value Evaluator::const_value(const Module* module, const ast::ConstItem& item) {
  auto cached = const_cache_.find(&item);
  if (cached != const_cache_.end()) return cached->second;
  if (consts_in_progress_.count(&item)) {
    fail(codes::unknown_symbol, "constant `" + item.name.text + "` is defined in terms of itself", item.span);
  }
  consts_in_progress_.insert(&item);
  Frame frame;
  frame.module = module;
  frame.scopes.emplace_back();
  Value value;
  try {
    value = eval_value(*item.value, frame);
    if (item.type) {
      value = coerce(*item.type, value, frame, item.value->span, Subject{{"constant `", item.name.text, "`"}});
    }
  } catch (...) {
    consts_in_progress_.erase(&item);
    throw;
  }
  consts_in_progress_.erase(&item);
  const_cache_[&item] = value;
  return value;
}

// ---------------------------------------------------------------- locals

Local* Evaluator::find_local(Frame& frame, const std::string& name) const {
  for (auto scope = frame.scopes.rbegin(); scope != frame.scopes.rend(); ++scope) {
    auto found = scope->find(name);
    if (found != scope->end()) return &found->second;
  }
  return nullptr;
}

void Evaluator::declare(Frame& frame, const std::string& name, Value value, bool is_var) {
  if (name == "_") return;
  if (frame.scopes.empty()) frame.scopes.emplace_back();
  frame.scopes.back()[name] = Local{std::move(value), is_var};
}

}  // namespace linnet::eval
