// Relations, fact lists, and the text of proof results.
#include <sstream>

#include "linnet/check/solver.hpp"

namespace linnet::check {

std::string_view spelling(RelOp op) {
  switch (op) {
    case RelOp::Eq: return "==";
    case RelOp::Ne: return "!=";
    case RelOp::Lt: return "<";
    case RelOp::Le: return "<=";
    case RelOp::Gt: return ">";
    case RelOp::Ge: return ">=";
  }
  return "?";
}

std::string_view spelling(Verdict verdict) {
  switch (verdict) {
    case Verdict::Proved: return "proved";
    case Verdict::Disproved: return "disproved";
    case Verdict::Unknown: return "unknown";
  }
  return "?";
}

std::string Relation::to_string() const {
  std::string out = lhs.to_string();
  out += ' ';
  out += spelling(op);
  out += ' ';
  out += rhs.to_string();
  return out;
}

Relation Relation::substitute(const std::map<std::string, DimExpr, std::less<>>& replacement) const {
  return {lhs.substitute(replacement), op, rhs.substitute(replacement)};
}

ConcreteCheck Relation::check(const Bindings& bindings) const {
  ConcreteCheck out;
  EvalResult a = lhs.evaluate(bindings);
  if (!a.ok()) {
    out.detail = a.detail;
    return out;
  }
  EvalResult b = rhs.evaluate(bindings);
  if (!b.ok()) {
    out.detail = b.detail;
    return out;
  }
  out.lhs = a.value;
  out.rhs = b.value;
  bool holds = false;
  switch (op) {
    case RelOp::Eq: holds = a.value == b.value; break;
    case RelOp::Ne: holds = a.value != b.value; break;
    case RelOp::Lt: holds = a.value < b.value; break;
    case RelOp::Le: holds = a.value <= b.value; break;
    case RelOp::Gt: holds = a.value > b.value; break;
    case RelOp::Ge: holds = a.value >= b.value; break;
  }
  out.truth = holds ? Truth::True : Truth::False;
  return out;
}

bool Relation::is_divisibility() const {
  if (op != RelOp::Eq) return false;
  auto zero = [](const DimExpr& e) { return e.is_constant() && e.value() == 0; };
  return (lhs.kind() == DimExpr::Kind::Mod && zero(rhs)) || (rhs.kind() == DimExpr::Kind::Mod && zero(lhs));
}

Relation eq(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Eq, std::move(b)}; }
Relation ne(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Ne, std::move(b)}; }
Relation lt(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Lt, std::move(b)}; }
Relation le(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Le, std::move(b)}; }
Relation gt(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Gt, std::move(b)}; }
Relation ge(DimExpr a, DimExpr b) { return {std::move(a), RelOp::Ge, std::move(b)}; }

Facts& Facts::add(Relation relation, std::string origin) {
  facts_.push_back({std::move(relation), std::move(origin)});
  return *this;
}

Facts& Facts::add_all(const Facts& other) {
  facts_.insert(facts_.end(), other.facts_.begin(), other.facts_.end());
  signed_.insert(other.signed_.begin(), other.signed_.end());
  return *this;
}

Facts& Facts::declare_signed(std::string symbol) {
  signed_.insert(std::move(symbol));
  return *this;
}

std::string ProofResult::suggestion_text() const {
  if (suggestions.empty()) return {};
  std::string out = "where ";
  for (std::size_t i = 0; i < suggestions.size(); ++i) {
    if (i) out += ", ";
    out += suggestions[i].to_string();
  }
  return out;
}

std::string ProofResult::explain() const {
  std::ostringstream out;
  switch (verdict) {
    case Verdict::Proved: out << "proved `" << goal.to_string() << "`"; break;
    case Verdict::Disproved: out << "`" << goal.to_string() << "` is false"; break;
    case Verdict::Unknown: out << "cannot prove `" << goal.to_string() << "`"; break;
  }
  if (!reason.empty()) out << ": " << reason;
  out << "\n  normal forms: `" << lhs_normal.to_string() << "` " << spelling(goal.op) << " `"
      << rhs_normal.to_string() << "`";
  if (explained && verdict != Verdict::Proved) {
    if (facts_searched.empty()) {
      out << "\n  facts searched: none (only that dimensions are >= 0)";
    } else {
      out << "\n  facts searched:";
      for (const std::string& f : facts_searched) out << "\n    " << f;
    }
    if (!derived.empty()) {
      out << "\n  derived from them:";
      for (const std::string& d : derived) out << "\n    " << d;
    }
  }
  if (!suggestions.empty()) {
    out << "\n  help: add `" << suggestion_text() << "`";
    if (!suggestions_suffice) out << " (a start: it does not settle the relation on its own)";
  }
  return out.str();
}

}  // namespace linnet::check
