// The Checker's public face (checker.hpp) and the diagnostics helpers every
// part of the implementation shares.
#include "gcc_workarounds.hpp"  // first: see the file

#include "linnet/check/checker.hpp"

#include "checker_internal.hpp"
#include "linnet/syntax/std_index.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::check {

Checker::Impl::Impl(const syntax::Program& program_, const syntax::SourceManager& sources_,
                    syntax::Diagnostics& diagnostics_)
    : program(program_), sources(sources_), diagnostics(diagnostics_) {}

Diagnostic& Checker::Impl::error(const char* code, std::string message, Span span) {
  return diagnostics.error(code, std::move(message), span);
}

void Checker::Impl::explain_unknown_name(Diagnostic& d, const std::string& name, const Context& cx, bool called) {
  if (!std_items) std_items = syntax::index_std_items(program.std_root());
  if (auto it = std_items->find(name); it != std_items->end()) {
    d.with_help("`" + name + "` is in the standard library: add `use " + it->second + "::{" + name + "}`");
    return;
  }
  std::vector<std::string> in_scope;
  for (const Local& local : cx.locals) in_scope.push_back(local.name);
  for (const auto& [generic, info] : cx.generics) in_scope.push_back(generic);
  if (cx.module) {
    for (const auto& [symbol, found] : cx.module->symbols) in_scope.push_back(symbol);
  }
  if (called) {
    const std::vector<std::string>& prelude = prelude_function_names();
    in_scope.insert(in_scope.end(), prelude.begin(), prelude.end());
    if (cx.in_kernel) in_scope.insert(in_scope.end(), {"program_id", "load"});
  }
  if (std::optional<std::string> near = syntax::closest_name(name, in_scope)) {
    d.with_help("did you mean `" + *near + "`?");
    return;
  }
  // A slip in a standard library name that was not imported either.
  if (std::optional<std::string> near = syntax::std_item_for(name, *std_items)) {
    d.with_help("did you mean `" + *near + "`? it is in the standard library: add `use " + std_items->at(*near) +
                "::{" + *near + "}`");
  }
}

void Checker::set_verbose(bool verbose) { impl_->verbose = verbose; }

std::string Checker::Impl::text_of(Span span) const {
  if (!span.valid() || span.file >= sources.size()) return {};
  const std::string& text = sources.file(span.file).text();
  if (span.begin > span.end || span.end > text.size()) return {};
  return text.substr(span.begin, span.end - span.begin);
}

Checker::Checker(const syntax::Program& program, const syntax::SourceManager& sources,
                 syntax::Diagnostics& diagnostics)
    : impl_(std::make_unique<Impl>(program, sources, diagnostics)) {}

Checker::~Checker() = default;

void Checker::check() {
  if (impl_->checked) return;
  impl_->checked = true;
  impl_->collect();
  impl_->check_all();
}

void Checker::lint() {
  check();
  impl_->run_lints();
}

std::optional<Instance> Checker::instantiate(const InstantiateRequest& request) {
  check();
  return impl_->instantiate(request);
}

std::size_t Checker::functions_checked() const { return impl_->functions_checked; }

}  // namespace linnet::check
