// Lints (spec 12.3): unused imports (W1001), unused locals (W1002) and
// unused block members (W1003), for the modules the user asked to check.
// Names beginning with `_` are exempt. Lints are reported only for
// error-free programs, so `Checker::lint` runs after `check`.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>

#include "checker_internal.hpp"

namespace linnet::check {

namespace {

bool exempt(const std::string& name) { return name.empty() || name.front() == '_'; }

}  // namespace

void Checker::Impl::lint_locals(const Context& cx) {
  if (cx.scopes.empty()) return;
  for (const auto& [name, index] : cx.scopes.back()) {
    const Local& local = cx.locals[index];
    if (local.used || exempt(local.name)) continue;
    switch (local.kind) {
      case Local::Kind::Let:
      case Local::Kind::Var:
      case Local::Kind::MatchBinding:
      case Local::Kind::LoopVar: unused_locals_pending.emplace_back(local.name, local.span); break;
      default: break;
    }
  }
}

void Checker::Impl::run_lints() {
  std::set<const syntax::Module*> requested;
  for (const auto& module : program.modules()) {
    if (module->requested) requested.insert(module.get());
  }
  auto in_requested = [&](Span span) {
    const syntax::Module* module = program.module_of_file(span.file);
    return module && requested.count(module) > 0;
  };
  for (const ModuleScope& scope : modules) {
    if (!requested.count(scope.module)) continue;
    std::vector<std::pair<Span, std::string>> unused;
    for (const auto& [name, import] : scope.imports) {
      if (!import.used && !exempt(name)) unused.emplace_back(import.span, name);
    }
    std::sort(unused.begin(), unused.end(),
              [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
    for (const auto& [span, name] : unused) {
      diagnostics.add(syntax::warning("W1001", "unused import " + quoted(name), span))
          .with_help("remove it from the `use` declaration");
    }
  }
  std::sort(unused_locals_pending.begin(), unused_locals_pending.end(), [](const auto& a, const auto& b) {
    return a.second.file != b.second.file ? a.second.file < b.second.file : a.second.begin < b.second.begin;
  });
  for (const auto& [name, span] : unused_locals_pending) {
    if (!in_requested(span)) continue;
    diagnostics.add(syntax::warning("W1002", "unused local " + quoted(name), span))
        .with_help("prefix it with `_` to keep it");
  }
  for (const BlockDecl& block : blocks) {
    if (!requested.count(block.module->module)) continue;
    for (const MemberDecl& member : block.members) {
      if (member.used || exempt(member.name)) continue;
      diagnostics
          .add(syntax::warning("W1003",
                               std::string("unused `") + ast::member_kind_spelling(member.kind) + "` " +
                                   quoted(member.name),
                               member.item->name.span))
          .note("no method of " + quoted(block.name) + " and no parent block reads it")
          .with_help("prefix it with `_` to keep it");
    }
  }
}

}  // namespace linnet::check
