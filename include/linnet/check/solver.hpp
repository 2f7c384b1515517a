// The shape solver: proves relations between dimension expressions from the
// `where` clauses in force (spec 4.3-4.5).
//
//   Facts facts;
//   facts.add(parse("H % Heads == 0"), "where clause of `split_heads`");
//   facts.add(parse("Heads > 0"));
//   Solver solver(facts);
//   solver.prove_equal(B * S * Heads * (H / Heads), B * S * H).proved();  // true
//
// Soundness contract. A binding gives every symbol a whole value (>= 0 for
// dimensions). It satisfies the facts when every fact is defined (no
// division by zero) and true. The solver answers
//   Proved     - the relation holds at every satisfying binding where its
//                own expressions are defined;
//   Disproved  - it fails at every such binding;
//   Unknown    - anything else, including "true but beyond the solver".
// Whether a divisor is non-zero is not assumed: the checker asks
// prove_positive on divisors itself (E2205).
//
// What it decides, in short (docs/solver.md has the details): equality of
// normal forms (polynomials with exact divisions as Laurent monomials), with
// equalities oriented into rewrites (`H == Blocks * 32` rewrites H) and the
// rest as linear equalities; divisibility through the quotients the facts
// make whole; order through Fourier-Motzkin over monomials. A Solver caches
// its normal forms and proofs: it is cheap to query, not to share between
// threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/check/dim_expr.hpp"
#include "linnet/check/dim_poly.hpp"

namespace linnet::check {

enum class RelOp { Eq, Ne, Lt, Le, Gt, Ge };
std::string_view spelling(RelOp op);  // "==", "<=", ...

// Whether a relation held at a concrete binding.
enum class Truth { True, False, Undefined };

struct ConcreteCheck {
  Truth truth = Truth::Undefined;
  std::int64_t lhs = 0;  // valid unless Undefined
  std::int64_t rhs = 0;
  std::string detail;    // for Undefined: the unbound symbol or division by zero
};

struct Relation {
  DimExpr lhs;
  RelOp op = RelOp::Eq;
  DimExpr rhs;

  std::string to_string() const;  // `H % Heads == 0`
  Relation substitute(const std::map<std::string, DimExpr, std::less<>>& replacement) const;
  ConcreteCheck check(const Bindings& bindings) const;
  // `a % b == 0` (either way round): the form a divisibility fact takes.
  bool is_divisibility() const;
};

Relation eq(DimExpr a, DimExpr b);
Relation ne(DimExpr a, DimExpr b);
Relation lt(DimExpr a, DimExpr b);
Relation le(DimExpr a, DimExpr b);
Relation gt(DimExpr a, DimExpr b);
Relation ge(DimExpr a, DimExpr b);

struct Fact {
  Relation relation;
  std::string origin;  // free text for explanations: "where clause of `Attention`"
};

class Facts {
 public:
  Facts& add(Relation relation, std::string origin = {});
  Facts& add_all(const Facts& other);
  // A compile-time integer that may be negative (not a Dim): no implicit >= 0.
  Facts& declare_signed(std::string symbol);

  const std::vector<Fact>& list() const { return facts_; }
  const std::set<std::string, std::less<>>& signed_symbols() const { return signed_; }

 private:
  std::vector<Fact> facts_;
  std::set<std::string, std::less<>> signed_;
};

struct SolverOptions {
  // Treat `a % b == 0` as also saying b != 0 (true of every satisfying
  // binding, since `% 0` is undefined). Off by default so that a where
  // clause still needs its own `b > 0` for E2205, as upstream cards state it.
  bool divisibility_implies_nonzero_divisor = false;
};

enum class Verdict { Proved, Disproved, Unknown };
std::string_view spelling(Verdict verdict);

// How much a proof query reports. Verdict is cheap (the verdict, a reason and
// the normal forms) and suits the many probing questions a checker asks;
// Explained adds the facts searched and the suggested where clauses, which
// costs trial proofs, for the failures that become diagnostics.
enum class Detail { Verdict, Explained };

struct ProofResult {
  Verdict verdict = Verdict::Unknown;
  Relation goal;
  DimPoly lhs_normal;  // the two sides' normal forms under the facts
  DimPoly rhs_normal;
  std::string reason;  // one sentence: why it holds, fails, or is open
  // With Detail::Explained, for Disproved and Unknown: the facts searched,
  // as written (with origin), and what the solver derived from them.
  std::vector<std::string> facts_searched;
  std::vector<std::string> derived;
  // With Detail::Explained, for Unknown: where clauses that would prove the
  // goal (or, failing that, the goal restated), and whether adding them does.
  std::vector<Relation> suggestions;
  bool suggestions_suffice = false;
  bool explained = false;  // asked with Detail::Explained

  bool proved() const { return verdict == Verdict::Proved; }
  bool disproved() const { return verdict == Verdict::Disproved; }
  bool unknown() const { return verdict == Verdict::Unknown; }
  // The suggestions as one `where` clause: "where H % Heads == 0, N > 0".
  std::string suggestion_text() const;
  // Multi-line text for diagnostic notes.
  std::string explain() const;
};

// A fact evaluated at a binding (for `--bind`).
struct FactCheck {
  Fact fact;
  ConcreteCheck check;
};

class Solver {
 public:
  Solver();  // no facts: symbols are non-negative, nothing else
  explicit Solver(Facts facts, SolverOptions options = {});
  Solver(const Solver& other);
  Solver& operator=(const Solver& other);
  Solver(Solver&& other) noexcept;
  Solver& operator=(Solver&& other) noexcept;
  ~Solver();

  const Facts& facts() const;
  const SolverOptions& options() const;
  // A contradiction found among the facts (e.g. `where N > 4, N < 2`). While
  // one is present every query answers Unknown with it as the reason.
  const std::optional<std::string>& contradiction() const;
  // What the facts were turned into, for explanations: "H := 32 * Blocks",
  // "H / Heads is a whole number", "Heads - 1 >= 0".
  std::vector<std::string> derived() const;

  // The normal form under the facts. Throws DimArithmeticError when exact
  // arithmetic leaves 64 bits (the prove functions answer Unknown instead).
  DimPoly normalize(const DimExpr& e) const;

  ProofResult prove(const Relation& relation, Detail detail = Detail::Verdict) const;
  ProofResult prove_equal(const DimExpr& a, const DimExpr& b, Detail detail = Detail::Verdict) const;
  ProofResult prove_divisible(const DimExpr& a, const DimExpr& b,  // a % b == 0
                              Detail detail = Detail::Verdict) const;
  ProofResult prove_nonnegative(const DimExpr& e, Detail detail = Detail::Verdict) const;  // e >= 0
  ProofResult prove_positive(const DimExpr& e, Detail detail = Detail::Verdict) const;     // e > 0
  bool equal(const DimExpr& a, const DimExpr& b) const { return prove_equal(a, b).proved(); }

  // Concrete bindings (`--bind`): each fact evaluated, and a solver that
  // also knows the bound values (the rest stay symbolic).
  std::vector<FactCheck> check_bindings(const Bindings& bindings) const;
  Solver with_bindings(const Bindings& bindings) const;
  Solver with_facts(const Facts& more) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace linnet::check
