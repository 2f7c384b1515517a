#include "linnet/check/dim_normalize.hpp"

#include <algorithm>
#include <vector>

namespace linnet::check {

// ---------------------------------------------------------------------------
// Base context: no facts, every symbol a non-negative dimension.

const DimPoly* NormalizeContext::rewrite(const std::string&) const { return nullptr; }

bool NormalizeContext::symbol_nonnegative(const std::string&) const { return true; }

bool NormalizeContext::is_integral(const DimPoly& p) const {
  return std::all_of(p.terms().begin(), p.terms().end(), [](const Term& t) {
    return t.coefficient.is_integer() && !t.monomial.has_negative_exponent();
  });
}

bool NormalizeContext::prove_nonnegative(const DimPoly& p, bool strict) const {
  return termwise_nonnegative(p, strict);
}

DimPoly NormalizeContext::reduce(const DimPoly& p) const { return p; }

bool NormalizeContext::atom_nonnegative(const DimAtom& atom) const {
  switch (atom.kind()) {
    case DimAtom::Kind::Symbol: return symbol_nonnegative(atom.name());
    case DimAtom::Kind::Div:
      // truncate(n / d) >= 0 when n >= 0 and d >= 0: d == 0 leaves the atom
      // undefined, and claims only cover bindings where it is defined.
      return prove_nonnegative(atom.lhs(), false) && prove_nonnegative(atom.rhs(), false);
    case DimAtom::Kind::Min:
      return prove_nonnegative(atom.lhs(), false) && prove_nonnegative(atom.rhs(), false);
    case DimAtom::Kind::Max:
      return prove_nonnegative(atom.lhs(), false) || prove_nonnegative(atom.rhs(), false);
  }
  return false;
}

bool NormalizeContext::monomial_nonnegative(const Monomial& m) const {
  return std::all_of(m.factors().begin(), m.factors().end(), [&](const Factor& f) {
    return f.exponent % 2 == 0 || atom_nonnegative(*f.atom);
  });
}

bool NormalizeContext::termwise_nonnegative(const DimPoly& p, bool strict) const {
  Rational constant = p.constant_term();
  if (constant.sign() < 0 || (strict && constant.is_zero())) return false;
  for (const Term& t : p.terms()) {
    if (t.monomial.is_one()) continue;
    if (t.coefficient.sign() < 0 || !monomial_nonnegative(t.monomial)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Normalisation

DimPoly Normalizer::normalize(const DimExpr& e) const {
  using K = DimExpr::Kind;
  switch (e.kind()) {
    case K::Constant: return DimPoly::constant(Rational(e.value()));
    case K::Symbol: {
      if (const DimPoly* replacement = context_.rewrite(e.name())) return *replacement;
      return DimPoly::symbol(e.name());
    }
    case K::Negate: return -normalize(e.operand());
    default: break;
  }
  DimPoly a = normalize(e.lhs());
  DimPoly b = normalize(e.rhs());
  switch (e.kind()) {
    case K::Add: return a + b;
    case K::Sub: return a - b;
    case K::Mul: return a * b;
    case K::Div: return divide(a, b);
    case K::Mod: return remainder(a, b);
    case K::Min: return minimum(a, b);
    case K::Max: return maximum(a, b);
    default: return DimPoly();
  }
}

DimPoly Normalizer::atom_value(const DimAtom& atom) const {
  switch (atom.kind()) {
    case DimAtom::Kind::Symbol: {
      if (const DimPoly* replacement = context_.rewrite(atom.name())) return *replacement;
      return DimPoly::symbol(atom.name());
    }
    case DimAtom::Kind::Div: return divide(renormalize(atom.lhs()), renormalize(atom.rhs()));
    case DimAtom::Kind::Min: return minimum(renormalize(atom.lhs()), renormalize(atom.rhs()));
    case DimAtom::Kind::Max: return maximum(renormalize(atom.lhs()), renormalize(atom.rhs()));
  }
  return DimPoly();
}

DimPoly Normalizer::renormalize(const DimPoly& p) const {
  DimPoly sum;
  for (const Term& t : p.terms()) {
    DimPoly numerator = DimPoly::constant(t.coefficient);
    DimPoly denominator = DimPoly::constant(1);
    for (const Factor& f : t.monomial.factors()) {
      DimPoly value = atom_value(*f.atom);
      int count = f.exponent < 0 ? -f.exponent : f.exponent;
      for (int k = 0; k < count; ++k) {
        if (f.exponent > 0) {
          numerator = numerator * value;
        } else {
          denominator = denominator * value;
        }
      }
    }
    // A negative exponent came from a division already known to be exact,
    // so a single-term denominator is inverted as it stands. After a rewrite
    // the base may be a sum, which has no inverse: then divide again.
    if (denominator.is_single_term()) {
      const Term& dt = denominator.terms()[0];
      sum = sum + numerator.times({dt.coefficient.inverse(), dt.monomial.inverse()});
    } else {
      sum = sum + divide(numerator, denominator);
    }
  }
  return sum;
}

std::optional<DimPoly> Normalizer::exact_quotient(const DimPoly& n, const DimPoly& d) const {
  if (d.is_zero()) return std::nullopt;
  if (n.is_zero()) return DimPoly();
  if (d.is_single_term()) {
    const Term& dt = d.terms()[0];
    DimPoly q = n.times({dt.coefficient.inverse(), dt.monomial.inverse()});
    if (context_.is_integral(q)) return q;
    return std::nullopt;
  }
  // A sum as divisor: long division by leading terms, accepted only when it
  // leaves no remainder (checked exactly, so a poor step order costs
  // completeness, never soundness).
  const Term& lead = d.terms()[0];
  DimPoly quotient;
  DimPoly rest = n;
  try {
    for (int step = 0; step < 16 && !rest.is_zero(); ++step) {
      const Term& r = rest.terms()[0];
      Term t{r.coefficient / lead.coefficient, r.monomial / lead.monomial};
      quotient = quotient + DimPoly::term(t.coefficient, t.monomial);
      rest = rest - d.times(t);
    }
  } catch (const DimArithmeticError&) {
    return std::nullopt;  // a division that does not end shrinks its coefficients without bound
  }
  if (rest.is_zero() && context_.is_integral(quotient)) return quotient;
  return std::nullopt;
}

DimPoly Normalizer::divide(const DimPoly& n_in, const DimPoly& d_in) const {
  // Arguments in their reduced form, so `(A * B) / D` under A * B == C * D
  // is seen as C * D / D.
  const DimPoly n = context_.reduce(n_in);
  const DimPoly d = context_.reduce(d_in);
  if (d.is_zero()) return DimPoly::atom(DimAtom::make(DimAtom::Kind::Div, n, d));  // undefined: kept as written
  if (n.is_zero()) return DimPoly();
  if (n.is_constant() && d.is_constant()) {
    return DimPoly::constant(Rational((n.constant_term() / d.constant_term()).trunc()));
  }
  if (auto q = exact_quotient(n, d)) return *q;
  // Truncation is odd in each operand: keep both leading coefficients positive.
  if (d.terms()[0].coefficient.sign() < 0) return -divide(n, -d);
  if (n.terms()[0].coefficient.sign() < 0) return -divide(-n, d);

  if (d.is_single_term()) {
    // n = d * whole + rest, where `whole` collects the terms d divides
    // exactly and, for a constant d, the multiples of d in each coefficient.
    const Term& dt = d.terms()[0];
    const bool constant_divisor = dt.monomial.is_one() && dt.coefficient.is_integer();
    std::vector<Term> whole, rest;
    for (const Term& t : n.terms()) {
      Term q{t.coefficient / dt.coefficient, t.monomial / dt.monomial};
      if (context_.is_integral(DimPoly::term(q.coefficient, q.monomial))) {
        whole.push_back(q);
      } else if (constant_divisor && t.coefficient.is_integer() && !t.monomial.has_negative_exponent()) {
        Rational k = Rational(q.coefficient.floor());
        if (!k.is_zero()) whole.push_back({k, t.monomial});
        rest.push_back({t.coefficient - k * dt.coefficient, t.monomial});
      } else {
        rest.push_back(t);
      }
    }
    DimPoly whole_part = DimPoly::from_terms(std::move(whole));
    DimPoly rest_part = DimPoly::from_terms(std::move(rest));
    // truncate((d*w + r) / d) = w + truncate(r / d) needs w whole (it is, by
    // construction) and both quotients non-negative, so truncation is floor.
    // d >= 0 is enough: where the division is defined, d != 0.
    if (!whole_part.is_zero() && context_.prove_nonnegative(d, false) &&
        context_.prove_nonnegative(n, false) && context_.prove_nonnegative(rest_part, false)) {
      return whole_part + divide(rest_part, d);
    }
  }
  return opaque_division(n, d);
}

DimPoly Normalizer::opaque_division(const DimPoly& n, const DimPoly& d) const {
  // 0 <= n < d: the quotient is 0.
  if (context_.prove_nonnegative(n, false) && context_.prove_nonnegative(d - n, true)) return DimPoly();
  // Cancel the common rational content and the common monomial factor: the
  // exact ratio, and so its truncation, is unchanged.
  Rational g = Rational::gcd(n.content(), d.content());
  Monomial common;
  const Term& first = d.terms()[0];
  for (const Factor& f : first.monomial.factors()) {
    int low = f.exponent;
    bool everywhere = true;
    for (const DimPoly* p : {&n, &d}) {
      for (const Term& t : p->terms()) {
        int e = t.monomial.exponent_of(*f.atom);
        if (e == 0) everywhere = false;
        low = std::min(low, e);
      }
    }
    // Only a factor present in every term, and only as far as every term has it.
    if (everywhere && low > 0) common = common * Monomial::of(f.atom, low);
  }
  Term factor{g.inverse(), common.inverse()};
  DimPoly n2 = n.times(factor);
  DimPoly d2 = d.times(factor);
  // What cancelling leaves is a new division, which may simplify further:
  // c / (2 * c) is 1 / 2, so 0; (3 * c * d) / (2 * c) is d + d / 2. It has
  // no common factor left, so this recursion ends.
  if (!(n2 == n) || !(d2 == d)) return divide(n2, d2);
  return DimPoly::atom(DimAtom::make(DimAtom::Kind::Div, std::move(n2), std::move(d2)));
}

DimPoly Normalizer::remainder(const DimPoly& n, const DimPoly& d) const {
  if (d.is_zero()) {
    // Undefined; keep a form that evaluates to a division by zero.
    return n - DimPoly::atom(DimAtom::make(DimAtom::Kind::Div, n, d));
  }
  // Truncating division satisfies n == d * (n / d) + n % d exactly.
  return n - d * divide(n, d);
}

DimPoly Normalizer::minimum(const DimPoly& a, const DimPoly& b) const {
  return extremum(DimAtom::Kind::Min, a, b);
}

DimPoly Normalizer::maximum(const DimPoly& a, const DimPoly& b) const {
  return extremum(DimAtom::Kind::Max, a, b);
}

DimPoly Normalizer::extremum(DimAtom::Kind kind, const DimPoly& a_in, const DimPoly& b_in) const {
  const DimPoly a = context_.reduce(a_in);
  const DimPoly b = context_.reduce(b_in);
  const bool is_min = kind == DimAtom::Kind::Min;
  if (a == b) return a;
  DimPoly difference = a - b;
  if (context_.prove_nonnegative(difference, false)) return is_min ? b : a;  // a >= b
  if (context_.prove_nonnegative(-difference, false)) return is_min ? a : b;  // a <= b
  // min(c + x, c + y) = c + min(x, y); min(g*x, g*y) = g * min(x, y) for g > 0.
  std::vector<Term> shared;
  for (const Term& t : a.terms()) {
    for (const Term& u : b.terms()) {
      if (t.coefficient == u.coefficient && t.monomial == u.monomial) shared.push_back(t);
    }
  }
  DimPoly common = DimPoly::from_terms(std::move(shared));
  DimPoly x = a - common;
  DimPoly y = b - common;
  // Only a whole content comes out: a fractional one would leave a
  // division whose exactness only the facts know.
  Rational g = Rational::gcd(x.content(), y.content());
  if (!g.is_integer()) g = 1;
  x = x.scaled(g.inverse());
  y = y.scaled(g.inverse());
  if (compare(y, x) < 0) std::swap(x, y);  // min and max are symmetric
  return common + DimPoly::atom(DimAtom::make(kind, std::move(x), std::move(y))).scaled(g);
}

// ---------------------------------------------------------------------------

DimPoly normalize(const DimExpr& e) {
  NormalizeContext context;
  return Normalizer(context).normalize(e);
}

namespace {

class SubstitutionContext : public NormalizeContext {
 public:
  explicit SubstitutionContext(const std::map<std::string, DimPoly, std::less<>>& replacement)
      : replacement_(replacement) {}
  const DimPoly* rewrite(const std::string& symbol) const override {
    auto it = replacement_.find(symbol);
    return it == replacement_.end() ? nullptr : &it->second;
  }

 private:
  const std::map<std::string, DimPoly, std::less<>>& replacement_;
};

}  // namespace

DimPoly substitute(const DimPoly& p, const std::map<std::string, DimPoly, std::less<>>& replacement) {
  SubstitutionContext context(replacement);
  return Normalizer(context).renormalize(p);
}

}  // namespace linnet::check
