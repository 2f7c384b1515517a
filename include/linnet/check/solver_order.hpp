// Order reasoning for the solver: does p >= 0 follow from the facts?
//
// Every distinct monomial (H, B * S, H / Heads, min(P + B, M), ...) is
// treated as an unknown rational variable, and each fact as a linear
// constraint over those variables. Proving p >= 0 means showing that the
// facts together with p < 0 have no rational solution, which
// Fourier-Motzkin elimination decides exactly. Integers are rationals, so
// "no rational solution" is sound for dimensions; it is incomplete only where
// integrality or products matter (the meaning of a monomial is added as
// extra constraints by a MonomialOracle: signs, bounds of atoms).
//
// The facts of one where clause are few (tens of constraints), so elimination
// stays small; a query that grows past a fixed budget answers "not proved".
#pragma once

#include <cstddef>
#include <vector>

#include "linnet/check/dim_poly.hpp"

namespace linnet::check::solver_detail {

// poly >= 0, or poly > 0 when strict.
struct LinearFact {
  DimPoly poly;
  bool strict = false;
};

// What a monomial means beyond being a variable.
class MonomialOracle {
 public:
  virtual ~MonomialOracle() = default;
  // Constraints that hold by the meaning of `m` (m >= 0 for a product of
  // dimensions, 2 * (x / 2) <= x, min(a, b) <= a, ...). `depth` bounds the
  // nested proofs an oracle may run to establish them. The reference must
  // stay valid for the oracle's lifetime (oracles cache the answers).
  virtual const std::vector<LinearFact>& facts_about(const Monomial& m, int depth) const = 0;
};

class LinearProver {
 public:
  // Past this many live constraints an elimination gives up.
  static constexpr std::size_t kConstraintBudget = 400;

  // `assumptions` (optional) are further facts, such as the case being
  // considered in a case split.
  LinearProver(const std::vector<LinearFact>& facts, const MonomialOracle& oracle,
               const std::vector<LinearFact>* assumptions = nullptr)
      : facts_(facts), assumptions_(assumptions), oracle_(oracle) {}

  // Whether the facts imply p >= 0 (strict: p > 0). `integer_valued` says p
  // takes whole values, so that p < 0 may be tightened to p <= -1.
  bool implies(const DimPoly& p, bool strict, bool integer_valued, int depth) const;
  // Whether the facts alone have no solution.
  bool contradictory(int depth) const;

 private:
  bool infeasible(const LinearFact* seed, int depth) const;

  const std::vector<LinearFact>& facts_;
  const std::vector<LinearFact>* assumptions_;
  const MonomialOracle& oracle_;
};

}  // namespace linnet::check::solver_detail
