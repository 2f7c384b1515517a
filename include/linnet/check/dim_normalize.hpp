// Turning a DimExpr into its canonical DimPoly.
//
// The normaliser is the one place that knows the arithmetic laws it may use.
// What it may assume about the symbols comes from a NormalizeContext: the
// base context knows only that every symbol is a non-negative dimension
// (spec 4.1, 4.8); the Solver's context adds the where clauses in force
// (rewrites such as H := 32 * Blocks, exact divisions, sign facts).
//
// Rules, all exact for truncating division (spec 5.4):
//   * + - * expand into polynomials; like terms combine.
//   * n / d becomes the exact quotient n * d^-1 when the context proves it a
//     whole number (`(x * 4) / 2` = 2 * x, `H / Heads` under H % Heads == 0).
//   * Otherwise, when d > 0 and n >= 0 are provable, the part of n that d
//     divides comes out: (2 * Inner + 1) / 2 = Inner + 1 / 2 = Inner.
//   * What is left is an opaque atom n' / d' with common factors cancelled and
//     signs pulled out (truncation is odd in both operands).
//   * a % b is a - b * (a / b).
//   * min/max pick an argument when the order is provable, else become an
//     atom with their common terms outside: min(P + B, P + C) = P + min(B, C).
// Equalities hold wherever the original expression is defined (no divisor is
// zero); whether divisors are positive is a separate question (E2205).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "linnet/check/dim_expr.hpp"
#include "linnet/check/dim_poly.hpp"

namespace linnet::check {

class NormalizeContext {
 public:
  virtual ~NormalizeContext() = default;

  // The replacement for a symbol, if the facts orient an equality onto it.
  virtual const DimPoly* rewrite(const std::string& symbol) const;
  // Whether a symbol is known to be >= 0 (every Dim generic is).
  virtual bool symbol_nonnegative(const std::string& symbol) const;
  // Whether p is a whole number wherever it is defined. The base answer:
  // integer coefficients and no negative exponents.
  virtual bool is_integral(const DimPoly& p) const;
  // p >= 0 (strict: p > 0) for every binding satisfying the context's facts.
  // The base answer looks at signs term by term.
  virtual bool prove_nonnegative(const DimPoly& p, bool strict) const;
  // A representative of p modulo the linear equalities the context knows
  // (the Solver's fully reduced equalities); the base context knows none.
  virtual DimPoly reduce(const DimPoly& p) const;

  // Term-by-term sign check shared by every context: a non-negative
  // constant plus terms that are positive multiples of non-negative monomials.
  bool termwise_nonnegative(const DimPoly& p, bool strict) const;
  bool atom_nonnegative(const DimAtom& atom) const;
  bool monomial_nonnegative(const Monomial& m) const;
};

class Normalizer {
 public:
  explicit Normalizer(const NormalizeContext& context) : context_(context) {}

  DimPoly normalize(const DimExpr& e) const;
  // Re-applies rewrites and simplifications to a polynomial built under
  // fewer facts (or before a substitution).
  DimPoly renormalize(const DimPoly& p) const;

  DimPoly divide(const DimPoly& n, const DimPoly& d) const;     // truncate(n / d)
  DimPoly remainder(const DimPoly& n, const DimPoly& d) const;  // n % d
  DimPoly minimum(const DimPoly& a, const DimPoly& b) const;
  DimPoly maximum(const DimPoly& a, const DimPoly& b) const;
  // n / d as a polynomial, when the context proves the division exact.
  std::optional<DimPoly> exact_quotient(const DimPoly& n, const DimPoly& d) const;

 private:
  DimPoly atom_value(const DimAtom& atom) const;
  DimPoly opaque_division(const DimPoly& n, const DimPoly& d) const;
  DimPoly extremum(DimAtom::Kind kind, const DimPoly& a, const DimPoly& b) const;

  const NormalizeContext& context_;
};

// Normal form with no facts beyond "symbols are non-negative". Throws
// DimArithmeticError when a coefficient leaves the 64-bit range.
DimPoly normalize(const DimExpr& e);
// Replaces symbols by polynomials and renormalises (no facts).
DimPoly substitute(const DimPoly& p, const std::map<std::string, DimPoly, std::less<>>& replacement);

}  // namespace linnet::check
