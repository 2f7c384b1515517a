// The solver: turns facts into rewrites, whole quotients, linear equalities
// and order constraints, then answers queries on normal forms.
#include "linnet/check/solver.hpp"

#include <algorithm>
#include <unordered_map>

#include "linnet/check/dim_normalize.hpp"
#include "linnet/check/dim_text.hpp"
#include "linnet/check/solver_order.hpp"

namespace linnet::check {

using solver_detail::LinearFact;
using solver_detail::LinearProver;

namespace {

// Nesting allowed for order proofs that establish the meaning of a monomial
// (the sign of an atom inside a bound inside the goal).
constexpr int kOrderDepth = 2;
// Whole quotients multiplied together to show a term whole.
constexpr int kIntegralDepth = 3;
// Min/max atoms an order proof may split into cases (2^n eliminations).
constexpr int kCaseSplits = 3;

// An order question and the nesting depth it was asked at (a shallower
// proof may fail where a deeper one succeeds, so depth is part of the key).
struct OrderKey {
  DimPoly poly;
  bool strict;
  bool integer_valued;
  int depth;
  friend bool operator==(const OrderKey& a, const OrderKey& b) = default;
};

struct OrderKeyHash {
  std::size_t operator()(const OrderKey& k) const {
    return (k.poly.hash() * 8 + std::size_t(k.depth)) * 4 + (k.strict ? 2 : 0) + (k.integer_valued ? 1 : 0);
  }
};

}  // namespace

struct Solver::Impl final : NormalizeContext, solver_detail::MonomialOracle {
  Facts facts;
  SolverOptions options;
  bool make_suggestions = true;

  // What the facts became.
  std::map<std::string, DimPoly, std::less<>> rewrites;  // symbol := value, idempotent
  std::vector<std::string> rewrite_notes;
  std::vector<Term> whole_terms;     // single terms known to be whole numbers
  std::vector<DimPoly> whole_sums;   // sums known to be whole numbers
  std::vector<LinearFact> order;     // p >= 0 / p > 0
  std::vector<DimPoly> equalities;   // p == 0, each with a distinct leading monomial
  std::vector<DimPoly> disequalities;  // p != 0
  std::optional<std::string> contradiction;

  mutable std::unordered_map<DimExpr, DimPoly> normal_cache;
  mutable std::unordered_map<OrderKey, bool, OrderKeyHash> order_cache;
  mutable std::unordered_map<DimPoly, bool> integral_cache;  // is_integral, by polynomial
  mutable std::unordered_map<DimPoly, bool> term_cache;      // integral_term, by term
  // The meaning of each monomial as constraints, per depth (kOrderDepth + 1 slots).
  mutable std::vector<std::unordered_map<DimPoly, std::vector<LinearFact>>> meaning_cache =
      std::vector<std::unordered_map<DimPoly, std::vector<LinearFact>>>(kOrderDepth + 1);
  mutable int depth = kOrderDepth;

  Impl(Facts f, SolverOptions o) : facts(std::move(f)), options(o) { build(); }

  // --- NormalizeContext --------------------------------------------------

  const DimPoly* rewrite(const std::string& symbol) const override {
    auto it = rewrites.find(symbol);
    return it == rewrites.end() ? nullptr : &it->second;
  }

  bool symbol_nonnegative(const std::string& symbol) const override {
    return facts.signed_symbols().count(symbol) == 0;
  }

  bool prove_nonnegative(const DimPoly& p, bool strict) const override {
    return prove_order(p, strict, false);
  }

  bool is_integral(const DimPoly& p) const override {
    if (NormalizeContext::is_integral(p)) return true;
    if (whole_terms.empty() && whole_sums.empty()) return false;
    auto it = integral_cache.find(p);
    if (it != integral_cache.end()) return it->second;
    bool result = integral_sum(p, kIntegralDepth);
    integral_cache.emplace(p, result);
    return result;
  }

  // --- whole numbers -----------------------------------------------------

  // A term is whole if it is an integer multiple of a product of
  // dimensions, or a whole quotient times a whole term. The search only
  // divides by quotients whose numerator the term contains (H * KvHeads^-1
  // by H * Heads^-1, leaving Heads * KvHeads^-1), which keeps it small.
  bool integral_term(const Rational& c, const Monomial& m, int budget) const {
    if (c.is_integer() && !m.has_negative_exponent()) return true;
    if (budget == 0) return false;
    const bool memo = budget == kIntegralDepth;
    DimPoly key;
    if (memo) {
      key = DimPoly::term(c, m);
      auto it = term_cache.find(key);
      if (it != term_cache.end()) return it->second;
    }
    bool result = false;
    for (const Term& g : whole_terms) {
      bool contained = std::all_of(g.monomial.factors().begin(), g.monomial.factors().end(), [&](const Factor& f) {
        return f.exponent < 0 || m.exponent_of(*f.atom) >= f.exponent;
      });
      if (contained && integral_term(c / g.coefficient, m / g.monomial, budget - 1)) {
        result = true;
        break;
      }
    }
    if (memo) term_cache.emplace(std::move(key), result);
    return result;
  }

  bool integral_sum(const DimPoly& p, int budget) const {
    const Term* stuck = nullptr;
    for (const Term& t : p.terms()) {
      if (!integral_term(t.coefficient, t.monomial, kIntegralDepth)) {
        stuck = &t;
        break;
      }
    }
    if (!stuck) return true;
    if (budget == 0) return false;
    // Take a whole multiple of a whole sum away and look again.
    for (const DimPoly& g : whole_sums) {
      for (const Term& s : g.terms()) {
        Term r{stuck->coefficient / s.coefficient, stuck->monomial / s.monomial};
        if (!integral_term(r.coefficient, r.monomial, kIntegralDepth)) continue;
        if (integral_sum(p - g.times(r), budget - 1)) return true;
      }
    }
    return false;
  }

  // --- order -------------------------------------------------------------

  // `by_cases`: may split min/max atoms into cases when elimination alone
  // fails. Only goals asked by prove() do; the normaliser's many sign
  // questions stay cheap.
  bool prove_order(const DimPoly& p, bool strict, bool integer_valued, bool by_cases = false) const {
    if (by_cases) {
      if (prove_order(p, strict, integer_valued, false)) return true;
      if (depth != kOrderDepth || !has_extremum(p)) return false;
      OrderKey key{p, strict, integer_valued, -1};
      auto it = order_cache.find(key);
      if (it != order_cache.end()) return it->second;
      std::vector<LinearFact> assumptions;
      std::vector<AtomPtr> split;
      bool result = prove_by_cases(p, strict, integer_valued, assumptions, split, kCaseSplits);
      order_cache.emplace(std::move(key), result);
      return result;
    }
    if (auto c = p.as_constant()) return strict ? c->sign() > 0 : c->sign() >= 0;
    if (termwise_nonnegative(p, strict)) return true;
    if (strict && integer_valued && termwise_nonnegative(p - DimPoly::constant(1), false)) return true;
    if (depth <= 0) return false;
    OrderKey key{p, strict, integer_valued, depth};
    auto it = order_cache.find(key);
    if (it != order_cache.end()) return it->second;
    bool result = LinearProver(order, *this).implies(p, strict, integer_valued, depth);
    order_cache.emplace(std::move(key), result);
    return result;
  }

  static bool has_extremum(const DimPoly& p) {
    for (const AtomPtr& a : p.atoms()) {
      if (a->kind() == DimAtom::Kind::Min || a->kind() == DimAtom::Kind::Max) return true;
    }
    return false;
  }

  // max(x, y) is x (when x >= y) or y (when y >= x), and min likewise: a
  // goal that holds in every case holds. Linear elimination cannot see this
  // (it needs max(0, m - P) <= B from m <= P + B), so the top-level proof
  // splits up to kCaseSplits min/max atoms when elimination alone fails.
  bool prove_by_cases(const DimPoly& p, bool strict, bool integer_valued, std::vector<LinearFact>& assumptions,
                      std::vector<AtomPtr>& split, int splits_left) const {
    if (splits_left == 0) return false;
    AtomPtr atom;
    auto pick = [&](const DimPoly& q) {
      for (const AtomPtr& a : q.atoms()) {
        if (atom || (a->kind() != DimAtom::Kind::Min && a->kind() != DimAtom::Kind::Max)) continue;
        if (std::none_of(split.begin(), split.end(), [&](const AtomPtr& s) { return *s == *a; })) atom = a;
      }
    };
    pick(p);
    for (const LinearFact& f : assumptions) pick(f.poly);
    if (!atom) return false;
    split.push_back(atom);
    const DimPoly value = DimPoly::atom(atom);
    bool all_cases = true;
    for (int side = 0; side < 2 && all_cases; ++side) {
      const DimPoly& chosen = side == 0 ? atom->lhs() : atom->rhs();
      const DimPoly& other = side == 0 ? atom->rhs() : atom->lhs();
      const std::size_t mark = assumptions.size();
      assumptions.push_back({value - chosen, false});
      assumptions.push_back({chosen - value, false});
      assumptions.push_back({atom->kind() == DimAtom::Kind::Max ? chosen - other : other - chosen, false});
      all_cases = LinearProver(order, *this, &assumptions).implies(p, strict, integer_valued, depth) ||
                  prove_by_cases(p, strict, integer_valued, assumptions, split, splits_left - 1);
      assumptions.resize(mark);
    }
    split.pop_back();
    return all_cases;
  }

  struct DepthGuard {
    int& slot;
    int saved;
    DepthGuard(int& s, int value) : slot(s), saved(s) { slot = value; }
    ~DepthGuard() { slot = saved; }
  };

  bool atom_positive(const DimAtom& atom) const {
    switch (atom.kind()) {
      case DimAtom::Kind::Symbol: return prove_order(DimPoly::symbol(atom.name()), true, true);
      case DimAtom::Kind::Div:  // n >= d >= 0, and d != 0 wherever the atom is defined
        return prove_order(atom.rhs(), false, false) && prove_order(atom.lhs() - atom.rhs(), false, false);
      case DimAtom::Kind::Min:
        return prove_order(atom.lhs(), true, false) && prove_order(atom.rhs(), true, false);
      case DimAtom::Kind::Max:
        return prove_order(atom.lhs(), true, false) || prove_order(atom.rhs(), true, false);
    }
    return false;
  }

  const std::vector<LinearFact>& facts_about(const Monomial& m, int at_depth) const override {
    const std::size_t slot = std::size_t(std::clamp(at_depth, 0, kOrderDepth));
    DimPoly key = DimPoly::term(1, m);
    auto it = meaning_cache[slot].find(key);
    if (it == meaning_cache[slot].end()) {
      std::vector<LinearFact> meaning;
      derive_meaning(m, at_depth, meaning);
      // Nodes of an unordered_map keep their address, so the reference
      // stays valid until the caches are cleared (only while building).
      it = meaning_cache[slot].emplace(std::move(key), std::move(meaning)).first;
    }
    return it->second;
  }

  void derive_meaning(const Monomial& m, int at_depth, std::vector<LinearFact>& out) const {
    DepthGuard guard(depth, at_depth - 1);
    DimPoly var = DimPoly::term(1, m);
    if (monomial_nonnegative(m)) {
      // A whole, positive product of positive factors is at least 1.
      bool positive = std::all_of(m.factors().begin(), m.factors().end(),
                                  [&](const Factor& f) { return atom_positive(*f.atom); });
      if (positive && is_integral(var)) {
        out.push_back({var - DimPoly::constant(1), false});
      } else {
        out.push_back({var, false});
      }
    }
    // m = x * (m / x) >= m / x when x >= 1 and m / x >= 0: N * M >= M.
    if (m.degree() >= 2) {
      for (const Factor& f : m.factors()) {
        if (f.exponent <= 0) continue;
        Monomial rest = m / Monomial::of(f.atom);
        if (monomial_nonnegative(rest) && atom_positive(*f.atom) && is_integral(DimPoly::atom(f.atom))) {
          out.push_back({var - DimPoly::term(1, rest), false});
        }
      }
    }
    if (m.factors().size() == 1 && m.factors()[0].exponent == 1) {
      const DimAtom& atom = *m.factors()[0].atom;
      if (atom.kind() == DimAtom::Kind::Min) {
        out.push_back({atom.lhs() - var, false});
        out.push_back({atom.rhs() - var, false});
      } else if (atom.kind() == DimAtom::Kind::Max) {
        out.push_back({var - atom.lhs(), false});
        out.push_back({var - atom.rhs(), false});
      }
    }
    // d * (n / d) for a single-term d >= 0 and n >= 0 lies in (n - d, n]
    // (d == 0 leaves the atom undefined, and every claim is about bindings
    // where the atoms in play are defined).
    for (const Factor& f : m.factors()) {
      if (f.atom->kind() != DimAtom::Kind::Div || f.exponent != 1) continue;
      const DimPoly& n = f.atom->lhs();
      const DimPoly& d = f.atom->rhs();
      if (!d.is_single_term()) continue;
      const Term& dt = d.terms()[0];
      if (!(m == dt.monomial * Monomial::of(f.atom))) continue;
      if (!prove_order(d, false, false) || !prove_order(n, false, false)) continue;
      DimPoly product = var.scaled(dt.coefficient);
      out.push_back({n - product, false});
      out.push_back({product - n + d, true});
    }
  }

  // --- building from the facts -------------------------------------------

  void clear_caches() {
    normal_cache.clear();
    order_cache.clear();
    integral_cache.clear();
    term_cache.clear();
    for (auto& level : meaning_cache) level.clear();
  }

  void contradict(const Fact& fact, const std::string& why) {
    if (!contradiction) contradiction = cat({code(fact.relation.to_string()), " ", why});
  }

  void contradict(const std::string& why) {
    if (!contradiction) contradiction = why;
  }

  void add_order(DimPoly p, const Fact& fact) {
    if (auto c = p.as_constant()) {
      if (c->sign() < 0) contradict(fact, "can never hold");
      return;
    }
    for (const LinearFact& f : order) {
      if (!f.strict && f.poly == p) return;
    }
    order.push_back({std::move(p), false});
    clear_caches();
  }

  void add_whole(const DimPoly& q) {
    if (q.is_zero() || NormalizeContext::is_integral(q)) return;
    if (q.is_single_term()) {
      Term t = q.terms()[0];
      // For a product of dimensions M, (p/r) * M whole with gcd(p, r) == 1
      // means r divides M: keep the stronger (1/r) * M.
      if (!t.monomial.has_negative_exponent()) t.coefficient = Rational(1, t.coefficient.den());
      for (const Term& g : whole_terms) {
        if (g.coefficient == t.coefficient && g.monomial == t.monomial) return;
      }
      whole_terms.push_back(t);
    } else {
      if (std::find(whole_sums.begin(), whole_sums.end(), q) != whole_sums.end()) return;
      whole_sums.push_back(q);
    }
    clear_caches();
  }

  DimPoly reduce(const DimPoly& p) const override {
    if (equalities.empty()) return p;
    return reduce_by_rows(p);
  }

  DimPoly reduce_by_rows(DimPoly p) const {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const DimPoly& row : equalities) {
        const Term& pivot = row.terms()[0];
        for (const Term& t : p.terms()) {
          if (t.monomial == pivot.monomial) {
            p = p - row.scaled(t.coefficient / pivot.coefficient);
            changed = true;
            break;
          }
        }
      }
    }
    return p;
  }

  // `fact` is null for rows re-derived after the rewrites are final.
  void add_equality(DimPoly p, const Fact* fact) {
    p = reduce_by_rows(std::move(p));
    if (p.is_zero()) return;
    if (p.is_constant()) {
      if (fact) {
        contradict(*fact, "contradicts the other equalities");
      } else {
        contradict("the equalities among the facts contradict each other");
      }
      return;
    }
    p = p.scaled(p.terms()[0].coefficient.inverse());
    for (DimPoly& row : equalities) {
      for (const Term& t : row.terms()) {
        if (t.monomial == p.terms()[0].monomial) {
          row = row - p.scaled(t.coefficient);
          break;
        }
      }
    }
    equalities.push_back(std::move(p));
    clear_caches();
  }

  // A symbol the equality d == 0 can be solved for: it occurs once, alone,
  // to the first power. Prefers the side written alone (`H == Blocks * 32`
  // rewrites H), then a coefficient of +-1.
  std::optional<std::pair<std::string, Rational>> solvable_symbol(const DimPoly& d, const Relation& r) const {
    std::vector<std::pair<std::string, Rational>> candidates;
    for (const Term& t : d.terms()) {
      if (t.monomial.factors().size() != 1) continue;
      const Factor& f = t.monomial.factors()[0];
      if (f.exponent != 1 || f.atom->kind() != DimAtom::Kind::Symbol) continue;
      if ((d - DimPoly::term(t.coefficient, t.monomial)).symbols().count(f.atom->name())) continue;
      candidates.emplace_back(f.atom->name(), t.coefficient);
    }
    if (candidates.empty()) return std::nullopt;
    for (const DimExpr* side : {&r.lhs, &r.rhs}) {
      if (!side->is_symbol()) continue;
      for (const auto& c : candidates) {
        if (c.first == side->name()) return c;
      }
    }
    for (const auto& c : candidates) {
      if (c.second == Rational(1) || c.second == Rational(-1)) return c;
    }
    return candidates.front();
  }

  void orient(const std::string& symbol, const Rational& coefficient, const DimPoly& d, const Fact& fact) {
    // d = c * s + rest == 0, so s = s - d / c.
    DimPoly value = DimPoly::symbol(symbol) - d.scaled(coefficient.inverse());
    rewrites[symbol] = value;
    Normalizer norm(*this);
    clear_caches();
    for (auto& [name, existing] : rewrites) {
      if (name != symbol) existing = norm.renormalize(existing);
    }
    rewrite_notes.push_back(cat({symbol, " := ", value.to_string(), " (from ", code(fact.relation.to_string()), ")"}));
    add_whole(value);  // it equals a symbol, so it is whole
    if (symbol_nonnegative(symbol)) add_order(value, fact);
    clear_caches();
  }

  void absorb(const Fact& fact) {
    Normalizer norm(*this);
    const Relation& r = fact.relation;
    if (r.is_divisibility()) {
      const DimExpr& mod = r.lhs.kind() == DimExpr::Kind::Mod ? r.lhs : r.rhs;
      DimPoly a = norm.normalize(mod.lhs());
      DimPoly b = norm.normalize(mod.rhs());
      if (b.is_zero()) {
        contradict(fact, "divides by zero, so it never holds");
        return;
      }
      DimPoly rest = norm.remainder(a, b);
      if (auto c = rest.as_constant(); c && !c->is_zero()) {
        contradict(fact, cat({"can never hold: the remainder is ", c->to_string()}));
        return;
      }
      if (b.is_single_term()) {
        const Term& bt = b.terms()[0];
        add_whole(a.times({bt.coefficient.inverse(), bt.monomial.inverse()}));
      } else if (!rest.is_zero()) {
        add_equality(rest, &fact);
      }
      if (options.divisibility_implies_nonzero_divisor && prove_order(b, false, true)) {
        add_order(b - DimPoly::constant(1), fact);
      }
      return;
    }
    DimPoly lhs = norm.normalize(r.lhs);
    DimPoly rhs = norm.normalize(r.rhs);
    switch (r.op) {
      case RelOp::Eq: {
        DimPoly d = lhs - rhs;
        if (d.is_zero()) return;
        if (d.is_constant()) {
          contradict(fact, cat({"can never hold: the sides differ by ", d.constant_term().to_string()}));
          return;
        }
        if (auto s = solvable_symbol(d, r)) {
          orient(s->first, s->second, d, fact);
        } else {
          add_equality(d, &fact);
        }
        return;
      }
      case RelOp::Ne: {
        DimPoly d = lhs - rhs;
        if (d.is_zero()) {
          contradict(fact, "can never hold: both sides are the same");
        } else if (!d.is_constant() && std::find(disequalities.begin(), disequalities.end(), d) == disequalities.end()) {
          disequalities.push_back(d);
        }
        return;
      }
      case RelOp::Le: add_order(rhs - lhs, fact); return;
      case RelOp::Lt: add_order(rhs - lhs - DimPoly::constant(1), fact); return;
      case RelOp::Ge: add_order(lhs - rhs, fact); return;
      case RelOp::Gt: add_order(lhs - rhs - DimPoly::constant(1), fact); return;
    }
  }

  void build() {
    // Two passes: facts stated before the facts they depend on (a
    // divisibility of `H / Heads` before `H % Heads == 0`) are re-read once
    // the later ones are known.
    for (int pass = 0; pass < 2 && !contradiction; ++pass) {
      for (const Fact& fact : facts.list()) {
        try {
          absorb(fact);
        } catch (const DimArithmeticError&) {
          // Too large to use exactly: leaving a fact out is sound.
        }
        if (contradiction) return;
      }
    }
    try {
      finish();
    } catch (const DimArithmeticError&) {
    }
  }

  // Brings everything derived up to the final rewrites.
  void finish() {
    Normalizer norm(*this);
    auto stale = [&](const DimPoly& p) {
      for (const std::string& s : p.symbols()) {
        if (rewrites.count(s)) return true;
      }
      return false;
    };
    std::vector<LinearFact> kept;
    for (const LinearFact& f : order) {
      DimPoly p = norm.renormalize(f.poly);
      if (auto c = p.as_constant()) {
        if (c->sign() < 0 || (f.strict && c->is_zero())) contradict("the order facts contradict each other");
        continue;
      }
      if (!stale(f.poly)) kept.push_back(f);
      kept.push_back({p, f.strict});
    }
    // Renormalise the whole quotients while the old ones still answer
    // integrality questions, then replace them.
    std::vector<DimPoly> renewed;
    for (const Term& t : whole_terms) renewed.push_back(norm.renormalize(DimPoly::term(t.coefficient, t.monomial)));
    for (const DimPoly& s : whole_sums) renewed.push_back(norm.renormalize(s));
    whole_terms.clear();
    whole_sums.clear();
    for (const DimPoly& q : renewed) add_whole(q);
    std::vector<DimPoly> old_rows = std::move(equalities);
    equalities.clear();
    for (const DimPoly& row : old_rows) add_equality(norm.renormalize(row), nullptr);
    std::vector<DimPoly> old_differences = std::move(disequalities);
    disequalities.clear();
    for (const DimPoly& d : old_differences) {
      DimPoly p = norm.renormalize(d);
      if (p.is_zero()) {
        contradict("a `!=` fact contradicts the equalities");
      } else if (!p.is_constant()) {
        disequalities.push_back(std::move(p));
      }
    }

    order.clear();
    for (LinearFact& f : kept) {
      bool seen = std::any_of(order.begin(), order.end(),
                              [&](const LinearFact& g) { return g.strict == f.strict && g.poly == f.poly; });
      if (!seen) order.push_back(std::move(f));
    }
    for (const DimPoly& row : equalities) {
      order.push_back({row, false});
      order.push_back({-row, false});
    }
    clear_caches();
    // p != 0 with p >= 0 known is p >= 1 (p is whole).
    for (const DimPoly& d : disequalities) {
      if (prove_order(d, false, true)) {
        order.push_back({d - DimPoly::constant(1), false});
      } else if (prove_order(-d, false, true)) {
        order.push_back({-d - DimPoly::constant(1), false});
      }
      clear_caches();
    }
    if (!contradiction && LinearProver(order, *this).contradictory(kOrderDepth)) {
      contradict("the order facts contradict each other");
    }
    clear_caches();
  }

  // --- queries -----------------------------------------------------------

  DimPoly normal(const DimExpr& e) const {
    auto it = normal_cache.find(e);
    if (it != normal_cache.end()) return it->second;
    DimPoly p = reduce(Normalizer(*this).normalize(e));
    normal_cache.emplace(e, p);
    return p;
  }

  bool gcd_excludes_zero(const DimPoly& d) const {
    Rational constant = d.constant_term();
    if (constant.is_zero() || !constant.is_integer()) return false;
    Rational g = 0;
    for (const Term& t : d.terms()) {
      if (t.monomial.is_one()) continue;
      if (!t.coefficient.is_integer() || !is_integral(DimPoly::term(1, t.monomial))) return false;
      g = Rational::gcd(g, t.coefficient);
    }
    if (g.is_zero() || g == Rational(1)) return false;
    return constant.num() % g.num() != 0;
  }

  std::pair<Verdict, std::string> equality(const DimPoly& lhs, const DimPoly& rhs) const {
    DimPoly d = lhs - rhs;
    if (d.is_zero()) return {Verdict::Proved, "both sides have the same normal form"};
    DimPoly rd = reduce(d);
    if (rd.is_zero()) return {Verdict::Proved, "the difference vanishes by the equalities among the facts"};
    if (auto c = rd.as_constant()) {
      return {Verdict::Disproved, cat({"the sides always differ by ", c->to_string()})};
    }
    if (gcd_excludes_zero(rd)) {
      return {Verdict::Disproved, cat({"their difference ", code(rd.to_string()), " is never 0 (divisibility)"})};
    }
    for (const DimPoly& q : disequalities) {
      Rational ratio = rd.terms()[0].coefficient / q.terms()[0].coefficient;
      if (rd == q.scaled(ratio)) return {Verdict::Disproved, "a fact says the sides differ"};
    }
    // Cheap elimination first in every direction, then min/max case splits.
    for (bool by_cases : {false, true}) {
      if (by_cases && !has_extremum(rd)) break;
      if (prove_order(rd, true, true, by_cases) || prove_order(-rd, true, true, by_cases)) {
        return {Verdict::Disproved, "one side is provably larger than the other"};
      }
      if (prove_order(rd, false, true, by_cases) && prove_order(-rd, false, true, by_cases)) {
        return {Verdict::Proved, "each side is at most the other"};
      }
    }
    return {Verdict::Unknown, cat({"the normal forms differ by ", code(rd.to_string()), ", and no fact settles it"})};
  }

  std::pair<Verdict, std::string> ordering(const DimPoly& larger, const DimPoly& smaller, bool strict) const {
    DimPoly d = larger - smaller;
    if (prove_order(d, strict, true, true)) return {Verdict::Proved, "it follows from the facts and dimension signs"};
    if (prove_order(-d, !strict, true, true)) return {Verdict::Disproved, "the facts imply the opposite"};
    return {Verdict::Unknown, "neither it nor its opposite follows from the facts"};
  }

  ProofResult prove(const Relation& goal, Detail detail) const {
    ProofResult result;
    result.goal = goal;
    const bool explained = detail == Detail::Explained;
    result.explained = explained;
    if (contradiction) {
      result.reason = cat({"the facts contradict each other (", *contradiction, ")"});
      if (explained) describe_facts(result);
      return result;
    }
    try {
      result.lhs_normal = normal(goal.lhs);
      result.rhs_normal = normal(goal.rhs);
      std::pair<Verdict, std::string> outcome;
      const DimPoly& l = result.lhs_normal;
      const DimPoly& r = result.rhs_normal;
      switch (goal.op) {
        case RelOp::Eq: outcome = equality(l, r); break;
        case RelOp::Ne:
          outcome = equality(l, r);
          if (outcome.first == Verdict::Proved) {
            outcome = {Verdict::Disproved, cat({"the sides are equal: ", outcome.second})};
          } else if (outcome.first == Verdict::Disproved) {
            outcome.first = Verdict::Proved;
          }
          break;
        case RelOp::Le: outcome = ordering(r, l, false); break;
        case RelOp::Lt: outcome = ordering(r, l, true); break;
        case RelOp::Ge: outcome = ordering(l, r, false); break;
        case RelOp::Gt: outcome = ordering(l, r, true); break;
      }
      result.verdict = outcome.first;
      result.reason = std::move(outcome.second);
    } catch (const DimArithmeticError& e) {
      result.verdict = Verdict::Unknown;
      result.reason = std::string("the arithmetic is too large to decide exactly (") + e.what() + ")";
    }
    if (explained && result.verdict != Verdict::Proved) describe_facts(result);
    if (explained && result.verdict == Verdict::Unknown && make_suggestions) suggest(result);
    return result;
  }

  void describe_facts(ProofResult& result) const {
    for (const Fact& f : facts.list()) {
      std::string line = code(f.relation.to_string());
      if (!f.origin.empty()) line += cat({" (", f.origin, ")"});
      result.facts_searched.push_back(std::move(line));
    }
    result.derived = derived();
  }

  std::vector<std::string> derived() const {
    std::vector<std::string> out = rewrite_notes;
    for (const Term& t : whole_terms) {
      out.push_back(code(DimPoly::term(t.coefficient, t.monomial).to_string()) + " is a whole number");
    }
    for (const DimPoly& s : whole_sums) out.push_back(code(s.to_string()) + " is a whole number");
    for (const DimPoly& row : equalities) out.push_back(code(row.to_string() + " == 0"));
    for (const DimPoly& d : disequalities) out.push_back(code(d.to_string() + " != 0"));
    return out;
  }

  // Does the goal follow once `extra` is added to the facts?
  bool proves_with(const std::vector<Relation>& extra, const Relation& goal) const {
    Facts more = facts;
    for (const Relation& r : extra) more.add(r, "suggested");
    Impl trial(std::move(more), options);
    trial.make_suggestions = false;
    return !trial.contradiction && trial.prove(goal, Detail::Verdict).proved();
  }

  // Suggests where clauses: the divisibilities that would make the inexact
  // divisions exact, an order that settles a min or max, or else the goal.
  void suggest(ProofResult& result) const {
    const Relation& goal = result.goal;
    std::vector<Relation> divisibility;
    std::vector<Relation> orders;
    if (!goal.is_divisibility()) {
      DimPoly both = result.lhs_normal - result.rhs_normal;
      for (const AtomPtr& atom : both.atoms()) {
        switch (atom->kind()) {
          case DimAtom::Kind::Div:
            if (!atom->rhs().is_zero()) divisibility.push_back(eq(atom->lhs().to_expr() % atom->rhs().to_expr(), 0));
            break;
          case DimAtom::Kind::Min:
          case DimAtom::Kind::Max:
            orders.push_back(le(atom->lhs().to_expr(), atom->rhs().to_expr()));
            orders.push_back(le(atom->rhs().to_expr(), atom->lhs().to_expr()));
            break;
          case DimAtom::Kind::Symbol: break;
        }
      }
    }
    auto minimise = [&](std::vector<Relation> chosen) {
      for (std::size_t i = chosen.size(); i-- > 0 && chosen.size() > 1;) {
        std::vector<Relation> without = chosen;
        without.erase(without.begin() + std::ptrdiff_t(i));
        if (proves_with(without, goal)) chosen = std::move(without);
      }
      return chosen;
    };
    try {
      if (!divisibility.empty() && proves_with(divisibility, goal)) {
        result.suggestions = minimise(divisibility);
        result.suggestions_suffice = true;
        return;
      }
      for (const Relation& o : orders) {
        std::vector<Relation> chosen = divisibility;
        chosen.push_back(o);
        if (proves_with(chosen, goal)) {
          result.suggestions = minimise(chosen);
          result.suggestions_suffice = true;
          return;
        }
      }
      result.suggestions = {goal};
      result.suggestions_suffice = proves_with({goal}, goal);
    } catch (const DimArithmeticError&) {
      result.suggestions = {goal};
    }
  }
};

// ---------------------------------------------------------------------------

Solver::Solver() : Solver(Facts{}) {}

Solver::Solver(Facts facts, SolverOptions options)
    : impl_(std::make_unique<Impl>(std::move(facts), options)) {}

Solver::Solver(const Solver& other) : Solver(other.impl_->facts, other.impl_->options) {}

Solver& Solver::operator=(const Solver& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(other.impl_->facts, other.impl_->options);
  return *this;
}

Solver::Solver(Solver&& other) noexcept = default;
Solver& Solver::operator=(Solver&& other) noexcept = default;
Solver::~Solver() = default;

const Facts& Solver::facts() const { return impl_->facts; }
const SolverOptions& Solver::options() const { return impl_->options; }
const std::optional<std::string>& Solver::contradiction() const { return impl_->contradiction; }
std::vector<std::string> Solver::derived() const { return impl_->derived(); }

DimPoly Solver::normalize(const DimExpr& e) const { return impl_->normal(e); }

ProofResult Solver::prove(const Relation& relation, Detail detail) const { return impl_->prove(relation, detail); }
ProofResult Solver::prove_equal(const DimExpr& a, const DimExpr& b, Detail detail) const {
  return prove(eq(a, b), detail);
}
ProofResult Solver::prove_divisible(const DimExpr& a, const DimExpr& b, Detail detail) const {
  return prove(eq(a % b, 0), detail);
}
ProofResult Solver::prove_nonnegative(const DimExpr& e, Detail detail) const { return prove(ge(e, 0), detail); }
ProofResult Solver::prove_positive(const DimExpr& e, Detail detail) const { return prove(gt(e, 0), detail); }

std::vector<FactCheck> Solver::check_bindings(const Bindings& bindings) const {
  std::vector<FactCheck> out;
  for (const Fact& f : impl_->facts.list()) out.push_back({f, f.relation.check(bindings)});
  return out;
}

Solver Solver::with_bindings(const Bindings& bindings) const {
  Facts more = impl_->facts;
  for (const auto& [name, value] : bindings) {
    more.add(eq(DimExpr::symbol(name), value), cat({"--bind ", name, "=", std::to_string(value)}));
  }
  return Solver(std::move(more), impl_->options);
}

Solver Solver::with_facts(const Facts& more) const {
  Facts all = impl_->facts;
  all.add_all(more);
  return Solver(std::move(all), impl_->options);
}

}  // namespace linnet::check
