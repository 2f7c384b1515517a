#include "linnet/check/solver_order.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace linnet::check::solver_detail {

namespace {

struct MonomialHash {
  std::size_t operator()(const Monomial& m) const { return m.hash(); }
};

// sum(coefficients[v] * variable v) + constant >= 0 (or > 0), dense over
// the few variables of one query.
struct Row {
  std::vector<Rational> coefficients;
  Rational constant;
  bool strict = false;
  std::size_t hash = 0;  // of the coefficients, set by RowSet::add

  bool has_variables() const {
    return std::any_of(coefficients.begin(), coefficients.end(), [](const Rational& c) { return !c.is_zero(); });
  }
};

// Scale so the first non-zero coefficient is +-1: equal rows then compare equal.
void normalize_row(Row& row) {
  auto first = std::find_if(row.coefficients.begin(), row.coefficients.end(),
                            [](const Rational& c) { return !c.is_zero(); });
  if (first == row.coefficients.end() || first->abs() == Rational(1)) return;
  Rational scale = first->abs().inverse();
  for (Rational& c : row.coefficients) c = c * scale;
  row.constant = row.constant * scale;
}

// A row without variables: is it violated?
bool violated(const Row& row) {
  return row.constant.sign() < 0 || (row.strict && row.constant.is_zero());
}

// b * positive + a * negative, where positive has +a on `variable` and
// negative has -b: the variable drops out.
Row combine(const Row& positive, const Rational& a, const Row& negative, const Rational& b, std::size_t variable) {
  Row row;
  row.coefficients.resize(positive.coefficients.size());
  for (std::size_t v = 0; v < row.coefficients.size(); ++v) {
    if (v == variable) continue;
    const Rational& p = positive.coefficients[v];
    const Rational& n = negative.coefficients[v];
    if (p.is_zero() && n.is_zero()) continue;
    row.coefficients[v] = p * b + n * a;
  }
  row.constant = positive.constant * b + negative.constant * a;
  row.strict = positive.strict || negative.strict;
  normalize_row(row);
  return row;
}

// Keeps only the strongest row per coefficient vector.
class RowSet {
 public:
  // Returns false when a row without variables is violated.
  bool add(Row row) {
    if (!row.has_variables()) return !violated(row);
    std::size_t h = 0;
    for (const Rational& c : row.coefficients) h = h * 1000003u ^ c.hash();
    row.hash = h;
    // Sets stay small (tens of rows), so a scan beats a hash table here.
    for (Row& kept : rows_) {
      if (kept.hash != h || kept.coefficients != row.coefficients) continue;
      // c.x + k >= 0 is stronger for smaller k; strict wins a tie.
      auto order = row.constant <=> kept.constant;
      if (order < 0 || (order == 0 && row.strict && !kept.strict)) kept = std::move(row);
      return true;
    }
    rows_.push_back(std::move(row));
    return true;
  }
  std::size_t size() const { return rows_.size(); }
  std::vector<Row> take() { return std::move(rows_); }

 private:
  std::vector<Row> rows_;
};

}  // namespace

bool LinearProver::implies(const DimPoly& p, bool strict, bool integer_valued, int depth) const {
  // Negate the goal: not (p > 0) is -p >= 0; not (p >= 0) is -p > 0, and for
  // a whole-valued p, -p - 1 >= 0.
  LinearFact negation;
  if (strict) {
    negation = {-p, false};
  } else if (integer_valued) {
    negation = {-p - DimPoly::constant(1), false};
  } else {
    negation = {-p, true};
  }
  return infeasible(&negation, depth);
}

bool LinearProver::contradictory(int depth) const { return infeasible(nullptr, depth); }

bool LinearProver::infeasible(const LinearFact* seed, int depth) const {
  try {
    // Gather the constraints that can matter: those sharing a variable with
    // what is already gathered, plus what the oracle knows of each variable.
    std::unordered_map<Monomial, int, MonomialHash> index;
    std::vector<Monomial> variables;
    std::vector<const LinearFact*> gathered;
    std::vector<const LinearFact*> candidates;
    for (const LinearFact& f : facts_) candidates.push_back(&f);
    if (assumptions_) {
      for (const LinearFact& f : *assumptions_) candidates.push_back(&f);
    }
    std::vector<bool> used(candidates.size(), false);
    std::size_t explained = 0;  // variables whose oracle facts are gathered

    auto note_variables = [&](const DimPoly& p) {
      for (const Term& t : p.terms()) {
        if (t.monomial.is_one()) continue;
        if (index.emplace(t.monomial, int(variables.size())).second) variables.push_back(t.monomial);
      }
    };
    if (seed) {
      note_variables(seed->poly);
      gathered.push_back(seed);
    } else {
      // Consistency of the facts themselves: all of them matter.
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        used[i] = true;
        note_variables(candidates[i]->poly);
        gathered.push_back(candidates[i]);
      }
    }
    bool grew = true;
    for (int pass = 0; grew && pass < 8; ++pass) {
      grew = false;
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (used[i]) continue;
        const DimPoly& poly = candidates[i]->poly;
        bool touches = std::any_of(poly.terms().begin(), poly.terms().end(),
                                   [&](const Term& t) { return !t.monomial.is_one() && index.count(t.monomial); });
        if (!touches) continue;
        used[i] = true;
        note_variables(poly);
        gathered.push_back(candidates[i]);
        grew = true;
      }
      while (explained < variables.size() && variables.size() < 64) {
        for (const LinearFact& f : oracle_.facts_about(variables[explained++], depth)) {
          note_variables(f.poly);
          gathered.push_back(&f);
          grew = true;
        }
      }
    }

    const std::size_t n = variables.size();
    RowSet rows;
    for (const LinearFact* f : gathered) {
      Row row;
      row.coefficients.resize(n);
      for (const Term& t : f->poly.terms()) {
        if (!t.monomial.is_one()) row.coefficients[std::size_t(index.at(t.monomial))] = t.coefficient;
      }
      row.constant = f->poly.constant_term();
      row.strict = f->strict;
      normalize_row(row);
      if (!rows.add(std::move(row))) return true;
    }

    // Fourier-Motzkin: eliminate the variable that creates the fewest rows.
    std::vector<Row> live = rows.take();
    std::vector<bool> eliminated(n, false);
    while (!live.empty()) {
      std::size_t best = n;
      long best_cost = 0;
      for (std::size_t v = 0; v < n; ++v) {
        if (eliminated[v]) continue;
        long positive = 0, negative = 0;
        for (const Row& row : live) {
          int sign = row.coefficients[v].sign();
          positive += sign > 0;
          negative += sign < 0;
        }
        if (positive + negative == 0) {
          eliminated[v] = true;
          continue;
        }
        long cost = positive * negative - positive - negative;
        if (best == n || cost < best_cost) {
          best = v;
          best_cost = cost;
        }
      }
      if (best == n) break;
      eliminated[best] = true;
      std::vector<const Row*> positive, negative;
      RowSet next;
      for (const Row& row : live) {
        int sign = row.coefficients[best].sign();
        if (sign == 0) {
          next.add(row);
        } else {
          (sign > 0 ? positive : negative).push_back(&row);
        }
      }
      for (const Row* p : positive) {
        const Rational& a = p->coefficients[best];
        for (const Row* q : negative) {
          if (!next.add(combine(*p, a, *q, -q->coefficients[best], best))) return true;
        }
        if (next.size() > kConstraintBudget) return false;
      }
      live = next.take();
    }
    return false;
  } catch (const DimArithmeticError&) {
    return false;  // coefficients too large to compare exactly: not proved
  }
}

}  // namespace linnet::check::solver_detail
