// The canonical form of a dimension expression: a polynomial with rational
// coefficients over monomials of atoms.
//
// An atom is a symbol (`H`) or an opaque term the polynomial cannot see into:
// a truncating division `n / d` that is not known to be exact, `min(a, b)` or
// `max(a, b)`. The arguments of opaque atoms are themselves normal forms, so
// two atoms are equal exactly when they are structurally equal.
//
// Monomials are Laurent monomials: an exponent may be negative. A negative
// exponent only ever comes from a division known to be exact, so
// `H / Heads` under `H % Heads == 0` is the monomial H * Heads^-1, and
// `B * S * Heads * (H / Heads)` is then literally the same polynomial as
// `B * S * H`. Likewise `H / 32` under `H % 32 == 0` is (1/32) * H.
// A remainder `a % b` is written `a - b * (a / b)`, so it needs no atom of its
// own and every identity between `/` and `%` holds by construction.
//
// DimPoly values are built by the normaliser (dim_normalize.hpp); the
// arithmetic here only keeps terms sorted and combined.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "linnet/check/dim_expr.hpp"
#include "linnet/check/dim_rational.hpp"

namespace linnet::check {

class DimAtom;
using AtomPtr = std::shared_ptr<const DimAtom>;

// Three-way structural comparison of atoms: symbols first, by name.
int compare(const DimAtom& a, const DimAtom& b);

struct Factor {
  AtomPtr atom;
  int exponent = 1;  // never 0
};

class Monomial {
 public:
  Monomial() = default;  // the empty product, 1
  static Monomial of(AtomPtr atom, int exponent = 1);

  const std::vector<Factor>& factors() const { return factors_; }
  bool is_one() const { return factors_.empty(); }
  int degree() const;  // sum of the positive exponents
  bool has_negative_exponent() const;
  int exponent_of(const DimAtom& atom) const;  // 0 when absent
  Monomial numerator() const;    // the factors with positive exponents
  Monomial denominator() const;  // the factors with negative exponents, made positive
  Monomial inverse() const;
  std::size_t hash() const { return hash_; }

  friend Monomial operator*(const Monomial& a, const Monomial& b);
  friend Monomial operator/(const Monomial& a, const Monomial& b);
  friend bool operator==(const Monomial& a, const Monomial& b);

 private:
  void rehash();
  // The hash of the empty product: every constructor and rehash() agree on it.
  static constexpr std::size_t kEmptyHash = 0x51ed;
  std::vector<Factor> factors_;  // sorted by compare(atom); distinct atoms
  std::size_t hash_ = kEmptyHash;
};

// Term order: higher degree first, then by atoms; the constant monomial last.
int compare(const Monomial& a, const Monomial& b);

struct Term {
  Rational coefficient;
  Monomial monomial;
};

class DimPoly {
 public:
  DimPoly() = default;  // zero
  static DimPoly constant(Rational value);
  static DimPoly symbol(std::string name);
  static DimPoly atom(AtomPtr atom);
  static DimPoly term(Rational coefficient, Monomial monomial);
  static DimPoly from_terms(std::vector<Term> terms);  // sorts and combines

  const std::vector<Term>& terms() const { return terms_; }
  bool is_zero() const { return terms_.empty(); }
  bool is_constant() const;
  std::optional<Rational> as_constant() const;
  Rational constant_term() const;
  bool is_single_term() const { return terms_.size() == 1; }
  // gcd of all coefficients (0 for the zero polynomial).
  Rational content() const;
  // Every symbol, including those inside opaque atoms.
  std::set<std::string> symbols() const;
  // Every distinct atom, outermost first, including nested ones.
  std::vector<AtomPtr> atoms() const;

  DimPoly operator-() const;
  friend DimPoly operator+(const DimPoly& a, const DimPoly& b);
  friend DimPoly operator-(const DimPoly& a, const DimPoly& b);
  friend DimPoly operator*(const DimPoly& a, const DimPoly& b);
  DimPoly scaled(const Rational& factor) const;
  DimPoly times(const Term& term) const;

  friend bool operator==(const DimPoly& a, const DimPoly& b);
  std::size_t hash() const { return hash_; }

  // Back to source form: terms over a common denominator are grouped
  // (`(B * H + H * S) / Heads`), a - b * (a / b) prints as `a % b`. The
  // printed expression has the polynomial's value wherever the facts that
  // produced the polynomial hold.
  DimExpr to_expr() const;
  std::string to_string() const { return to_expr().to_string(); }

  // Exact evaluation (rationals inside, the result must be a whole number).
  EvalResult evaluate(const Bindings& bindings) const;

 private:
  void rehash();
  static constexpr std::size_t kZeroHash = 0x7a11;  // the hash of the zero polynomial
  std::vector<Term> terms_;  // sorted by compare(monomial); no zero coefficients
  std::size_t hash_ = kZeroHash;
};

int compare(const DimPoly& a, const DimPoly& b);

class DimAtom {
 public:
  enum class Kind { Symbol, Div, Min, Max };

  static AtomPtr symbol(std::string name);
  // Div: truncate(value(lhs) / value(rhs)) computed on the exact values;
  // Min, Max: of the two values.
  static AtomPtr make(Kind kind, DimPoly lhs, DimPoly rhs);

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }  // Symbol only
  const DimPoly& lhs() const { return lhs_; }        // Div, Min, Max
  const DimPoly& rhs() const { return rhs_; }
  std::size_t hash() const { return hash_; }
  DimExpr to_expr() const;
  std::string to_string() const { return to_expr().to_string(); }

 private:
  DimAtom() = default;
  Kind kind_ = Kind::Symbol;
  std::string name_;
  DimPoly lhs_, rhs_;
  std::size_t hash_ = 0;
};

bool operator==(const DimAtom& a, const DimAtom& b);

}  // namespace linnet::check

template <>
struct std::hash<linnet::check::DimPoly> {
  std::size_t operator()(const linnet::check::DimPoly& p) const { return p.hash(); }
};
