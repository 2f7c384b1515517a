// Shape relations proved with the solver, and what a diagnostic says when
// one cannot be: the relation, where it was needed, the facts searched, and
// the `where` constraint that would prove it.
#include "gcc_workarounds.hpp"  // first: see the file

#include "checker_internal.hpp"
#include "linnet/check/dim_normalize.hpp"

namespace linnet::check {

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
    std::string facts = "facts searched: ";
    for (std::size_t i = 0; i < proof.facts_searched.size(); ++i) {
      if (i > 0) facts += "; ";
      facts += proof.facts_searched[i];
    }
    diagnostic.note(facts);
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
