// Shape relations proved with the solver, and what a diagnostic says when
// one cannot be: the relation, where it was needed, the facts searched, and
// the `where` constraint that would prove it.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>

#include "checker_internal.hpp"
#include "linnet/check/dim_normalize.hpp"

namespace linnet::check {

namespace {

// An equality between two dimensions that are each a single generic or a
// number (`Vocab == H`, `H == 4`). Such a relation is never suggested as a
// `where` clause: it would make independent generics one, or fix a generic
// that the caller binds. Compound relations (`Heads * HeadDim == H`,
// `H % Heads == 0`) do constrain generics as cards mean them to.
bool equates_independent_dimensions(const Relation& goal) {
  if (goal.op != RelOp::Eq || goal.is_divisibility()) return false;
  const auto atom = [](const DimExpr& dim) { return dim.is_symbol() || dim.is_constant(); };
  return atom(goal.lhs) && atom(goal.rhs);
}

}  // namespace

void Checker::Impl::explain_failure(Diagnostic& diagnostic, const ProofResult& verdict, Context& cx) {
  // Verdicts are cheap; the facts searched and the suggestions are worked
  // out again only for the failures that become diagnostics.
  const ProofResult proof = cx.solver ? cx.solver->prove(verdict.goal, Detail::Explained) : verdict;
  if (proof.disproved()) {
    diagnostic.note(quoted(proof.goal.to_string()) + " is false" +
                    (proof.reason.empty() ? std::string() : ": " + proof.reason));
  } else if (!proof.reason.empty()) {
    diagnostic.note(proof.reason);
  }
  if (proof.facts_searched.empty()) {
    diagnostic.note("facts searched: none (no `where` clause is in force; only that dimensions are >= 0)");
  } else {
    diagnostic.note(facts_searched_note(proof.facts_searched));
  }
  if (!proof.disproved() && equates_independent_dimensions(proof.goal)) {
    help_for_unequal(diagnostic, proof.goal.lhs, proof.goal.rhs, cx);
    return;
  }
  if (!proof.disproved()) {
    std::string where_owner;
    if (cx.function) {
      where_owner = " to " + quoted(cx.function->qualified_name());
    } else if (cx.block) {
      where_owner = " to " + quoted(cx.block->name);
    }
    if (!proof.suggestions.empty()) {
      diagnostic.with_help("add `" + proof.suggestion_text() + "`" + where_owner +
                           (proof.suggestions_suffice ? "" : " (a start: it does not settle the relation alone)"));
    } else {
      diagnostic.with_help("add `where " + proof.goal.to_string() + "`" + where_owner);
    }
  }
}

std::string Checker::Impl::facts_searched_note(const std::vector<std::string>& facts) const {
  // A few facts tell what was in force; a card's forty `where` facts would
  // bury the message (all of them with --verbose).
  constexpr std::size_t brief = 3;
  const std::size_t shown = verbose ? facts.size() : std::min(brief, facts.size());
  std::string note = "facts searched: ";
  for (std::size_t i = 0; i < shown; ++i) note += (i ? "; " : "") + facts[i];
  if (shown < facts.size()) {
    note += "; and " + std::to_string(facts.size() - shown) + " more (`linnet check --verbose` lists them)";
  }
  return note;
}

void Checker::Impl::help_for_unequal(Diagnostic& diagnostic, const DimExpr& a, const DimExpr& b, Context& cx) {
  if (equates_independent_dimensions(eq(a, b))) {
    // `Vocab == H`: a `where` clause would declare two separately declared
    // generics (or a generic and a number) to be one, which is never what a
    // shape mismatch means; the tensor or the generic used is the mistake.
    diagnostic.with_help(quoted(a.to_string()) + " and " + quoted(b.to_string()) +
                         " are independent: check which tensor or generic is meant here");
    return;
  }
  std::string where_owner;
  if (cx.function) {
    where_owner = " to " + quoted(cx.function->qualified_name());
  } else if (cx.block) {
    where_owner = " to " + quoted(cx.block->name);
  }
  diagnostic.with_help("add `where " + a.to_string() + " == " + b.to_string() + "`" + where_owner +
                       ", or use one dimension for both");
}

bool Checker::Impl::require(const Relation& relation, const char* code, const std::string& message, Span span,
                            const std::string& needed_for, Context& cx) {
  if (!cx.solver) return true;
  const ProofResult proof = cx.solver->prove(relation);
  if (proof.proved()) return true;
  Diagnostic& d = error(code, message, span);
  d.note("needed for " + needed_for);
  explain_failure(d, proof, cx);
  return false;
}

bool Checker::Impl::prove_equal_dims(const DimExpr& a, const DimExpr& b, Context& cx) {
  if (a == b) return true;
  if (!cx.solver) return false;
  return cx.solver->equal(a, b);
}

bool Checker::Impl::is_one(const DimExpr& dim, Context& cx) {
  if (dim.is_constant()) return dim.value() == 1;
  return cx.solver && cx.solver->equal(dim, DimExpr(1));
}

DimExpr Checker::Impl::simplify(const DimExpr& dim, Context& cx) {
  if (dim.is_constant() || dim.is_symbol() || !cx.solver) return dim;
  try {
    return cx.solver->normalize(dim).to_expr();
  } catch (const DimArithmeticError&) {
    return dim;  // too large to normalize exactly: keep it as written
  }
}

std::optional<std::int64_t> Checker::Impl::constant_value(const DimExpr& dim, Context& cx) {
  if (dim.is_constant()) return dim.value();
  std::optional<Rational> value;
  try {
    value = (cx.solver ? cx.solver->normalize(dim) : normalize(dim)).as_constant();
  } catch (const DimArithmeticError&) {
    return std::nullopt;
  }
  if (!value || !value->is_integer()) return std::nullopt;
  return value->num();
}

}  // namespace linnet::check
