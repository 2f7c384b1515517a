#include "linnet/check/solver_order.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace linnet::check::solver_detail {

namespace {

struct MonomialHash {
  std::size_t operator()(const Monomial& m) const { return m.hash(); }
};

// sum(coefficient * variable) + constant >= 0 (or > 0).
struct Row {
  std::vector<std::pair<int, Rational>> coefficients;  // sorted by variable, no zeros
  Rational constant;
  bool strict = false;
};

// Scale so the first coefficient is +-1: equal rows then compare equal.
void normalize_row(Row& row) {
  if (row.coefficients.empty()) return;
  Rational scale = row.coefficients.front().second.abs().inverse();
  for (auto& entry : row.coefficients) entry.second = entry.second * scale;
  row.constant = row.constant * scale;
}

// A row without variables: is it violated?
bool violated(const Row& row) {
  return row.constant.sign() < 0 || (row.strict && row.constant.is_zero());
}

Row combine(const Row& positive, const Rational& a, const Row& negative, const Rational& b, int variable) {
  // positive has +a on `variable`, negative has -b: b*positive + a*negative drops it.
  std::map<int, Rational> sum;
  for (const auto& [v, c] : positive.coefficients) sum[v] = sum[v] + c * b;
  for (const auto& [v, c] : negative.coefficients) sum[v] = sum[v] + c * a;
  Row row;
  for (const auto& [v, c] : sum) {
    if (v != variable && !c.is_zero()) row.coefficients.emplace_back(v, c);
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
    if (row.coefficients.empty()) return !violated(row);
    auto key = row.coefficients;
    auto it = rows_.find(key);
    if (it == rows_.end()) {
      rows_.emplace(std::move(key), std::move(row));
    } else {
      Row& kept = it->second;
      // c.x + k >= 0 is stronger for smaller k; strict wins a tie.
      auto order = row.constant <=> kept.constant;
      if (order < 0 || (order == 0 && row.strict && !kept.strict)) kept = std::move(row);
    }
    return true;
  }
  std::size_t size() const { return rows_.size(); }
  std::vector<Row> take() {
    std::vector<Row> out;
    out.reserve(rows_.size());
    for (auto& entry : rows_) out.push_back(std::move(entry.second));
    rows_.clear();
    return out;
  }

 private:
  struct KeyLess {
    bool operator()(const std::vector<std::pair<int, Rational>>& a,
                    const std::vector<std::pair<int, Rational>>& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        if (x.first != y.first) return x.first < y.first;
        return (x.second <=> y.second) < 0;
      });
    }
  };
  std::map<std::vector<std::pair<int, Rational>>, Row, KeyLess> rows_;
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
  return infeasible({negation}, depth);
}

bool LinearProver::contradictory(int depth) const { return infeasible({}, depth); }

bool LinearProver::infeasible(std::vector<LinearFact> seed, int depth) const {
  try {
    // Gather the constraints that can matter: those sharing a variable with
    // what is already gathered, plus what the oracle knows of each variable.
    std::unordered_map<Monomial, int, MonomialHash> index;
    std::vector<Monomial> variables;
    std::vector<LinearFact> gathered;
    std::vector<bool> used(facts_.size(), false);
    std::size_t explained = 0;  // variables whose oracle facts are gathered

    auto note_variables = [&](const DimPoly& p) {
      for (const Term& t : p.terms()) {
        if (t.monomial.is_one()) continue;
        if (index.emplace(t.monomial, int(variables.size())).second) variables.push_back(t.monomial);
      }
    };
    for (LinearFact& f : seed) {
      note_variables(f.poly);
      gathered.push_back(std::move(f));
    }
    if (seed.empty()) {
      // Consistency of the facts themselves: all of them matter.
      for (std::size_t i = 0; i < facts_.size(); ++i) {
        used[i] = true;
        note_variables(facts_[i].poly);
        gathered.push_back(facts_[i]);
      }
    }
    bool grew = true;
    for (int pass = 0; grew && pass < 8; ++pass) {
      grew = false;
      for (std::size_t i = 0; i < facts_.size(); ++i) {
        if (used[i]) continue;
        bool touches = std::any_of(facts_[i].poly.terms().begin(), facts_[i].poly.terms().end(),
                                   [&](const Term& t) { return !t.monomial.is_one() && index.count(t.monomial); });
        if (!touches) continue;
        used[i] = true;
        note_variables(facts_[i].poly);
        gathered.push_back(facts_[i]);
        grew = true;
      }
      while (explained < variables.size() && variables.size() < 64) {
        std::vector<LinearFact> meaning;
        oracle_.facts_about(variables[explained++], depth, meaning);
        for (LinearFact& f : meaning) {
          note_variables(f.poly);
          gathered.push_back(std::move(f));
          grew = true;
        }
      }
    }

    RowSet rows;
    for (const LinearFact& f : gathered) {
      Row row;
      for (const Term& t : f.poly.terms()) {
        if (t.monomial.is_one()) continue;
        row.coefficients.emplace_back(index.at(t.monomial), t.coefficient);
      }
      std::sort(row.coefficients.begin(), row.coefficients.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      row.constant = f.poly.constant_term();
      row.strict = f.strict;
      normalize_row(row);
      if (!rows.add(std::move(row))) return true;
    }

    // Fourier-Motzkin: eliminate the variable that creates the fewest rows.
    std::vector<Row> live = rows.take();
    while (!live.empty()) {
      std::map<int, std::pair<int, int>> occurrences;  // variable -> (positive, negative)
      for (const Row& row : live) {
        for (const auto& [v, c] : row.coefficients) {
          auto& count = occurrences[v];
          (c.sign() > 0 ? count.first : count.second)++;
        }
      }
      if (occurrences.empty()) break;
      int best = -1;
      long best_cost = 0;
      for (const auto& [v, count] : occurrences) {
        long cost = long(count.first) * count.second - count.first - count.second;
        if (best < 0 || cost < best_cost) {
          best = v;
          best_cost = cost;
        }
      }
      std::vector<const Row*> positive, negative;
      RowSet next;
      for (const Row& row : live) {
        auto it = std::find_if(row.coefficients.begin(), row.coefficients.end(),
                               [&](const auto& e) { return e.first == best; });
        if (it == row.coefficients.end()) {
          next.add(row);
        } else {
          (it->second.sign() > 0 ? positive : negative).push_back(&row);
        }
      }
      for (const Row* p : positive) {
        Rational a = std::find_if(p->coefficients.begin(), p->coefficients.end(),
                                  [&](const auto& e) { return e.first == best; })->second;
        for (const Row* n : negative) {
          Rational b = -std::find_if(n->coefficients.begin(), n->coefficients.end(),
                                     [&](const auto& e) { return e.first == best; })->second;
          if (!next.add(combine(*p, a, *n, b, best))) return true;
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
