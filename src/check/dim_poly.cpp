#include "linnet/check/dim_poly.hpp"

#include "linnet/check/dim_text.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <utility>

namespace linnet::check {

namespace {

std::size_t mix(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

int three_way(int a, int b) { return (a > b) - (a < b); }

}  // namespace

// ---------------------------------------------------------------------------
// Atoms

AtomPtr DimAtom::symbol(std::string name) {
  auto atom = std::shared_ptr<DimAtom>(new DimAtom());
  atom->kind_ = Kind::Symbol;
  atom->hash_ = mix(std::hash<std::string>{}(name), 11);
  atom->name_ = std::move(name);
  return atom;
}

AtomPtr DimAtom::make(Kind kind, DimPoly lhs, DimPoly rhs) {
  auto atom = std::shared_ptr<DimAtom>(new DimAtom());
  atom->kind_ = kind;
  atom->hash_ = mix(mix(std::size_t(kind) * 131 + 17, lhs.hash()), rhs.hash());
  atom->lhs_ = std::move(lhs);
  atom->rhs_ = std::move(rhs);
  return atom;
}

int compare(const DimAtom& a, const DimAtom& b) {
  if (&a == &b) return 0;
  if (a.kind() != b.kind()) return three_way(int(a.kind()), int(b.kind()));
  if (a.kind() == DimAtom::Kind::Symbol) return a.name().compare(b.name()) < 0 ? -1 : (a.name() == b.name() ? 0 : 1);
  if (int c = compare(a.lhs(), b.lhs())) return c;
  return compare(a.rhs(), b.rhs());
}

bool operator==(const DimAtom& a, const DimAtom& b) {
  return &a == &b || (a.hash() == b.hash() && compare(a, b) == 0);
}

DimExpr DimAtom::to_expr() const {
  switch (kind_) {
    case Kind::Symbol: return DimExpr::symbol(name_);
    case Kind::Div: return lhs_.to_expr() / rhs_.to_expr();
    case Kind::Min: return DimExpr::min(lhs_.to_expr(), rhs_.to_expr());
    case Kind::Max: return DimExpr::max(lhs_.to_expr(), rhs_.to_expr());
  }
  return DimExpr();
}

// ---------------------------------------------------------------------------
// Monomials

Monomial Monomial::of(AtomPtr atom, int exponent) {
  Monomial m;
  if (exponent != 0) m.factors_.push_back({std::move(atom), exponent});
  m.rehash();
  return m;
}

void Monomial::rehash() {
  std::size_t h = kEmptyHash;
  for (const Factor& f : factors_) h = mix(mix(h, f.atom->hash()), std::size_t(f.exponent));
  hash_ = h;
}

int Monomial::degree() const {
  int d = 0;
  for (const Factor& f : factors_) d += std::max(f.exponent, 0);
  return d;
}

bool Monomial::has_negative_exponent() const {
  return std::any_of(factors_.begin(), factors_.end(), [](const Factor& f) { return f.exponent < 0; });
}

int Monomial::exponent_of(const DimAtom& atom) const {
  for (const Factor& f : factors_) {
    if (*f.atom == atom) return f.exponent;
  }
  return 0;
}

Monomial Monomial::numerator() const {
  Monomial m;
  for (const Factor& f : factors_) {
    if (f.exponent > 0) m.factors_.push_back(f);
  }
  m.rehash();
  return m;
}

Monomial Monomial::denominator() const {
  Monomial m;
  for (const Factor& f : factors_) {
    if (f.exponent < 0) m.factors_.push_back({f.atom, -f.exponent});
  }
  m.rehash();
  return m;
}

Monomial Monomial::inverse() const {
  Monomial m = *this;
  for (Factor& f : m.factors_) f.exponent = -f.exponent;
  m.rehash();
  return m;
}

Monomial operator*(const Monomial& a, const Monomial& b) {
  if (a.is_one()) return b;
  if (b.is_one()) return a;
  Monomial m;
  std::size_t i = 0, j = 0;
  while (i < a.factors_.size() || j < b.factors_.size()) {
    int c = i == a.factors_.size()   ? 1
            : j == b.factors_.size() ? -1
                                     : compare(*a.factors_[i].atom, *b.factors_[j].atom);
    if (c < 0) {
      m.factors_.push_back(a.factors_[i++]);
    } else if (c > 0) {
      m.factors_.push_back(b.factors_[j++]);
    } else {
      int e = a.factors_[i].exponent + b.factors_[j].exponent;
      if (e != 0) m.factors_.push_back({a.factors_[i].atom, e});
      ++i;
      ++j;
    }
  }
  m.rehash();
  return m;
}

Monomial operator/(const Monomial& a, const Monomial& b) { return a * b.inverse(); }

bool operator==(const Monomial& a, const Monomial& b) {
  if (a.hash_ != b.hash_ || a.factors_.size() != b.factors_.size()) return false;
  for (std::size_t i = 0; i < a.factors_.size(); ++i) {
    if (a.factors_[i].exponent != b.factors_[i].exponent || !(*a.factors_[i].atom == *b.factors_[i].atom)) {
      return false;
    }
  }
  return true;
}

int compare(const Monomial& a, const Monomial& b) {
  if (a.is_one() || b.is_one()) return three_way(a.is_one(), b.is_one());
  if (int c = three_way(b.degree(), a.degree())) return c;
  const auto& fa = a.factors();
  const auto& fb = b.factors();
  for (std::size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
    if (int c = compare(*fa[i].atom, *fb[i].atom)) return c;
    if (int c = three_way(fb[i].exponent, fa[i].exponent)) return c;
  }
  return three_way(int(fa.size()), int(fb.size()));
}

// ---------------------------------------------------------------------------
// Polynomials

void DimPoly::rehash() {
  std::size_t h = kZeroHash;
  for (const Term& t : terms_) h = mix(mix(h, t.monomial.hash()), t.coefficient.hash());
  hash_ = h;
}

DimPoly DimPoly::constant(Rational value) {
  DimPoly p;
  if (!value.is_zero()) p.terms_.push_back({value, Monomial()});
  p.rehash();
  return p;
}

DimPoly DimPoly::symbol(std::string name) { return atom(DimAtom::symbol(std::move(name))); }

DimPoly DimPoly::atom(AtomPtr atom) { return term(1, Monomial::of(std::move(atom))); }

DimPoly DimPoly::term(Rational coefficient, Monomial monomial) {
  DimPoly p;
  if (!coefficient.is_zero()) p.terms_.push_back({coefficient, std::move(monomial)});
  p.rehash();
  return p;
}

DimPoly DimPoly::from_terms(std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return compare(a.monomial, b.monomial) < 0; });
  DimPoly p;
  for (Term& t : terms) {
    if (!p.terms_.empty() && p.terms_.back().monomial == t.monomial) {
      p.terms_.back().coefficient = p.terms_.back().coefficient + t.coefficient;
      if (p.terms_.back().coefficient.is_zero()) p.terms_.pop_back();
    } else if (!t.coefficient.is_zero()) {
      p.terms_.push_back(std::move(t));
    }
  }
  p.rehash();
  return p;
}

bool DimPoly::is_constant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_[0].monomial.is_one());
}

std::optional<Rational> DimPoly::as_constant() const {
  if (!is_constant()) return std::nullopt;
  return constant_term();
}

Rational DimPoly::constant_term() const {
  if (!terms_.empty() && terms_.back().monomial.is_one()) return terms_.back().coefficient;
  return 0;
}

Rational DimPoly::content() const {
  Rational g = 0;
  for (const Term& t : terms_) g = Rational::gcd(g, t.coefficient);
  return g;
}

std::vector<AtomPtr> DimPoly::atoms() const {
  std::vector<AtomPtr> out;
  std::function<void(const DimPoly&)> walk = [&](const DimPoly& p) {
    for (const Term& t : p.terms_) {
      for (const Factor& f : t.monomial.factors()) {
        bool seen = std::any_of(out.begin(), out.end(), [&](const AtomPtr& a) { return *a == *f.atom; });
        if (seen) continue;
        out.push_back(f.atom);
        if (f.atom->kind() != DimAtom::Kind::Symbol) {
          walk(f.atom->lhs());
          walk(f.atom->rhs());
        }
      }
    }
  };
  walk(*this);
  return out;
}

std::set<std::string> DimPoly::symbols() const {
  std::set<std::string> out;
  for (const AtomPtr& a : atoms()) {
    if (a->kind() == DimAtom::Kind::Symbol) out.insert(a->name());
  }
  return out;
}

DimPoly DimPoly::operator-() const { return scaled(-1); }

DimPoly operator+(const DimPoly& a, const DimPoly& b) {
  if (a.is_zero()) return b;
  if (b.is_zero()) return a;
  DimPoly p;
  std::size_t i = 0, j = 0;
  while (i < a.terms_.size() || j < b.terms_.size()) {
    int c = i == a.terms_.size()   ? 1
            : j == b.terms_.size() ? -1
                                   : compare(a.terms_[i].monomial, b.terms_[j].monomial);
    if (c < 0) {
      p.terms_.push_back(a.terms_[i++]);
    } else if (c > 0) {
      p.terms_.push_back(b.terms_[j++]);
    } else {
      Rational sum = a.terms_[i].coefficient + b.terms_[j].coefficient;
      if (!sum.is_zero()) p.terms_.push_back({sum, a.terms_[i].monomial});
      ++i;
      ++j;
    }
  }
  p.rehash();
  return p;
}

DimPoly operator-(const DimPoly& a, const DimPoly& b) { return a + (-b); }

DimPoly operator*(const DimPoly& a, const DimPoly& b) {
  std::vector<Term> terms;
  terms.reserve(a.terms_.size() * b.terms_.size());
  for (const Term& x : a.terms_) {
    for (const Term& y : b.terms_) terms.push_back({x.coefficient * y.coefficient, x.monomial * y.monomial});
  }
  return DimPoly::from_terms(std::move(terms));
}

DimPoly DimPoly::scaled(const Rational& factor) const {
  if (factor.is_zero()) return DimPoly();
  DimPoly p = *this;
  for (Term& t : p.terms_) t.coefficient = t.coefficient * factor;
  p.rehash();
  return p;
}

DimPoly DimPoly::times(const Term& term) const {
  std::vector<Term> terms;
  terms.reserve(terms_.size());
  for (const Term& t : terms_) terms.push_back({t.coefficient * term.coefficient, t.monomial * term.monomial});
  return from_terms(std::move(terms));
}

bool operator==(const DimPoly& a, const DimPoly& b) {
  if (a.hash_ != b.hash_ || a.terms_.size() != b.terms_.size()) return false;
  for (std::size_t i = 0; i < a.terms_.size(); ++i) {
    if (a.terms_[i].coefficient != b.terms_[i].coefficient || !(a.terms_[i].monomial == b.terms_[i].monomial)) {
      return false;
    }
  }
  return true;
}

int compare(const DimPoly& a, const DimPoly& b) {
  const auto& ta = a.terms();
  const auto& tb = b.terms();
  for (std::size_t i = 0; i < ta.size() && i < tb.size(); ++i) {
    if (int c = compare(ta[i].monomial, tb[i].monomial)) return c;
    auto order = ta[i].coefficient <=> tb[i].coefficient;
    if (order != 0) return order < 0 ? -1 : 1;
  }
  return three_way(int(ta.size()), int(tb.size()));
}

// ---------------------------------------------------------------------------
// Back to source form

namespace {

// One summand of the printed expression: a magnitude and its sign.
struct Summand {
  bool negative = false;
  DimExpr magnitude;
};

// The product, built left to right: `6 * (x / y) * z`.
DimExpr product_of(std::optional<DimExpr> out, const Monomial& m) {
  for (const Factor& f : m.factors()) {
    for (int k = 0; k < f.exponent; ++k) {
      DimExpr atom = f.atom->to_expr();
      out = out ? *out * atom : atom;
    }
  }
  return out ? *out : DimExpr(1);
}

// |coefficient| * numerator for an integer coefficient.
DimExpr magnitude_of(std::int64_t coefficient, const Monomial& numerator) {
  std::int64_t c = coefficient < 0 ? -coefficient : coefficient;
  if (numerator.is_one()) return DimExpr(c);
  return product_of(c == 1 ? std::nullopt : std::optional<DimExpr>(DimExpr(c)), numerator);
}

DimExpr sum_of(const std::vector<Summand>& items) {
  if (items.empty()) return DimExpr(0);
  DimExpr out = items[0].negative ? -items[0].magnitude : items[0].magnitude;
  for (std::size_t i = 1; i < items.size(); ++i) {
    out = items[i].negative ? out - items[i].magnitude : out + items[i].magnitude;
  }
  return out;
}

bool contains_terms(const DimPoly& whole, const DimPoly& part) {
  for (const Term& t : part.terms()) {
    bool found = std::any_of(whole.terms().begin(), whole.terms().end(), [&](const Term& w) {
      return w.coefficient == t.coefficient && w.monomial == t.monomial;
    });
    if (!found) return false;
  }
  return true;
}

struct ModItem {
  std::int64_t multiple;
  AtomPtr division;  // the atom a / b of `a % b`
};

// Finds a - b * (a / b) patterns (times an integer) and takes them out of `rest`.
std::vector<ModItem> extract_remainders(DimPoly& rest) {
  std::vector<ModItem> items;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Term& t : rest.terms()) {
      for (const Factor& f : t.monomial.factors()) {
        if (f.atom->kind() != DimAtom::Kind::Div || f.exponent != 1) continue;
        const DimPoly& a = f.atom->lhs();
        const DimPoly& b = f.atom->rhs();
        if (!b.is_single_term()) continue;
        const Term& bt = b.terms()[0];
        if (!(t.monomial == bt.monomial * Monomial::of(f.atom))) continue;
        Rational lambda = -(t.coefficient / bt.coefficient);
        if (!lambda.is_integer()) continue;
        DimPoly a_part = a.scaled(lambda);
        if (!contains_terms(rest, a_part)) continue;
        // Copy what is still needed before `rest` (which t and f point into) changes.
        ModItem item{lambda.num(), f.atom};
        DimPoly matched = a_part + DimPoly::term(t.coefficient, t.monomial);
        rest = rest - matched;
        items.push_back(std::move(item));
        changed = true;
        break;
      }
      if (changed) break;
    }
  }
  return items;
}

}  // namespace

DimExpr DimPoly::to_expr() const {
  DimPoly rest = *this;
  std::vector<ModItem> remainders;
  try {
    remainders = extract_remainders(rest);
  } catch (const DimArithmeticError&) {
    rest = *this;
    remainders.clear();
  }

  // Group terms by denominator (coefficient denominator and the monomial's
  // negative part), in term order.
  struct Group {
    std::int64_t coefficient_den;
    Monomial monomial_den;
    std::vector<Summand> numerators;
  };
  std::vector<Group> groups;
  std::optional<Summand> constant;
  for (const Term& t : rest.terms()) {
    if (t.monomial.is_one() && t.coefficient.is_integer()) {
      constant = Summand{t.coefficient.num() < 0, magnitude_of(t.coefficient.num(), Monomial())};
      continue;
    }
    Monomial den = t.monomial.denominator();
    Summand s{t.coefficient.num() < 0, magnitude_of(t.coefficient.num(), t.monomial.numerator())};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.coefficient_den == t.coefficient.den() && g.monomial_den == den;
    });
    if (it == groups.end()) {
      groups.push_back({t.coefficient.den(), den, {s}});
    } else {
      it->numerators.push_back(s);
    }
  }

  std::vector<Summand> summands;
  for (const Group& g : groups) {
    if (g.coefficient_den == 1 && g.monomial_den.is_one()) {
      summands.insert(summands.end(), g.numerators.begin(), g.numerators.end());
      continue;
    }
    DimExpr den = g.monomial_den.is_one()
                      ? DimExpr(g.coefficient_den)
                      : product_of(g.coefficient_den == 1 ? std::nullopt
                                                          : std::optional<DimExpr>(DimExpr(g.coefficient_den)),
                                   g.monomial_den);
    bool all_negative = std::all_of(g.numerators.begin(), g.numerators.end(),
                                    [](const Summand& s) { return s.negative; });
    std::vector<Summand> numerators = g.numerators;
    if (all_negative) {
      for (Summand& s : numerators) s.negative = false;
    }
    summands.push_back({all_negative, sum_of(numerators) / den});
  }
  for (const ModItem& m : remainders) {
    DimExpr mod = m.division->lhs().to_expr() % m.division->rhs().to_expr();
    std::int64_t k = m.multiple < 0 ? -m.multiple : m.multiple;
    summands.push_back({m.multiple < 0, k == 1 ? mod : DimExpr(k) * mod});
  }
  if (constant) summands.push_back(*constant);
  // Lead with a positive summand: `min(B + P, M) - P`, not `-P + min(B + P, M)`.
  auto positive = std::find_if(summands.begin(), summands.end(), [](const Summand& s) { return !s.negative; });
  if (positive != summands.end()) std::rotate(summands.begin(), positive, positive + 1);
  return sum_of(summands);
}

// ---------------------------------------------------------------------------
// Evaluation

namespace {

struct EvalFailure {
  EvalResult result;
};

Rational eval_poly(const DimPoly& p, const Bindings& bindings);

Rational eval_atom(const DimAtom& atom, const Bindings& bindings) {
  switch (atom.kind()) {
    case DimAtom::Kind::Symbol: {
      auto it = bindings.find(atom.name());
      if (it == bindings.end()) {
        throw EvalFailure{EvalResult::failure(EvalStatus::Unbound, cat({code(atom.name()), " has no value"}))};
      }
      return Rational(it->second);
    }
    case DimAtom::Kind::Div: {
      Rational n = eval_poly(atom.lhs(), bindings);
      Rational d = eval_poly(atom.rhs(), bindings);
      if (d.is_zero()) {
        throw EvalFailure{EvalResult::failure(EvalStatus::DivisionByZero,
                                              cat({code(atom.to_string()), " divides by zero"}))};
      }
      return Rational((n / d).trunc());
    }
    case DimAtom::Kind::Min:
    case DimAtom::Kind::Max: {
      Rational a = eval_poly(atom.lhs(), bindings);
      Rational b = eval_poly(atom.rhs(), bindings);
      bool take_a = atom.kind() == DimAtom::Kind::Min ? a <= b : a >= b;
      return take_a ? a : b;
    }
  }
  return 0;
}

Rational eval_poly(const DimPoly& p, const Bindings& bindings) {
  Rational sum = 0;
  for (const Term& t : p.terms()) {
    Rational value = t.coefficient;
    for (const Factor& f : t.monomial.factors()) {
      Rational base = eval_atom(*f.atom, bindings);
      if (f.exponent < 0 && base.is_zero()) {
        throw EvalFailure{EvalResult::failure(EvalStatus::DivisionByZero,
                                              cat({code(f.atom->to_string()), " is 0 in a denominator"}))};
      }
      Rational power = 1;
      for (int k = 0; k < (f.exponent < 0 ? -f.exponent : f.exponent); ++k) power = power * base;
      value = f.exponent < 0 ? value / power : value * power;
    }
    sum = sum + value;
  }
  return sum;
}

}  // namespace

EvalResult DimPoly::evaluate(const Bindings& bindings) const {
  try {
    Rational value = eval_poly(*this, bindings);
    if (!value.is_integer()) {
      return EvalResult::failure(EvalStatus::NotInteger,
                                 cat({code(to_string()), " is ", value.to_string(), ", not a whole number"}));
    }
    return EvalResult::success(value.num());
  } catch (const EvalFailure& failure) {
    return failure.result;
  } catch (const DimArithmeticError&) {
    return EvalResult::failure(EvalStatus::Overflow, cat({code(to_string()), " overflows 64 bits"}));
  }
}

}  // namespace linnet::check
