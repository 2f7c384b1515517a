// Soundness by sampling: random facts, random expressions, and every binding
// of four symbols over a small range. Whatever the solver proves must hold at
// every binding that satisfies the facts (where the relation is defined),
// whatever it disproves must fail there, and every normal form must have the
// value of the expression it came from.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>
#include <sstream>

#include "linnet/check/dim_normalize.hpp"
#include "linnet/check/dim_parse.hpp"
#include "linnet/check/solver.hpp"

using namespace linnet::check;

namespace {

const std::vector<std::string> kSymbols = {"a", "b", "c", "d"};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  bool chance(int percent) { return between(1, 100) <= percent; }
  const std::string& symbol() { return kSymbols[std::size_t(between(0, int(kSymbols.size()) - 1))]; }

 private:
  std::mt19937_64 gen_;
};

std::uint64_t base_seed() {
  const char* env = std::getenv("LINNET_SOLVER_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20240601u;
}

DimExpr random_expr(Rng& rng, int depth) {
  if (depth == 0 || rng.chance(30)) {
    if (rng.chance(60)) return DimExpr::symbol(rng.symbol());
    static const int kConstants[] = {0, 1, 1, 2, 2, 3, 4, 6, 32};
    return DimExpr(kConstants[rng.between(0, 8)]);
  }
  DimExpr a = random_expr(rng, depth - 1);
  switch (rng.between(0, 9)) {
    case 0:
    case 1: return a + random_expr(rng, depth - 1);
    case 2: return a - random_expr(rng, depth - 1);
    case 3:
    case 4: return a * random_expr(rng, depth - 1);
    case 5:
    case 6: {
      // Half the divisors are small constants, so that divisions are often defined.
      DimExpr d = rng.chance(50) ? DimExpr(rng.between(1, 4)) : random_expr(rng, depth - 1);
      return rng.chance(60) ? a / d : a % d;
    }
    case 7: return DimExpr::min(a, random_expr(rng, depth - 1));
    case 8: return DimExpr::max(a, random_expr(rng, depth - 1));
    default: return -a;
  }
}

// Rewrites that keep the value (some only where defined or for e >= 0).
DimExpr variant_of(Rng& rng, const DimExpr& e) {
  DimExpr x = DimExpr::symbol(rng.symbol());
  int k = rng.between(1, 4);
  switch (rng.between(0, 9)) {
    case 0: return e + x - x;
    case 1: return (e * k) / k;
    case 2: return (e * k + rng.between(0, k - 1)) / k;  // equal when e >= 0
    case 3: return e % k + k * (e / k);
    case 4: return DimExpr::min(e, e + rng.between(0, 2));
    case 5: return DimExpr::max(e - rng.between(0, 2), e);
    case 6: return 2 * e - e;
    case 7: return (e * x) / x;
    case 8: return e + 1;  // never equal
    default: return e * (x + 1) - e * x;
  }
}

Relation random_fact(Rng& rng) {
  std::string p = rng.symbol(), q = rng.symbol(), r = rng.symbol();
  while (q == p) q = rng.symbol();
  while (r == p || r == q) r = rng.symbol();
  const std::string templates[] = {
      p + " % " + q + " == 0", q + " > 0",           p + " == " + q + " * " + r, p + " == 2 * " + q,
      p + " % 2 == 0",         "(" + p + " / " + q + ") % 2 == 0",            p + " <= " + q + " + " + r,
      p + " != " + q,          p + " >= 2",          p + " == " + q + " + 1", "(" + p + " / " + r + ") % (" + q + " / " + r + ") == 0",
      p + " % " + r + " == 0", p + " + " + q + " <= 5", "min(" + p + ", " + q + ") >= 1",
  };
  if (rng.chance(15)) {
    static const RelOp kOps[] = {RelOp::Eq, RelOp::Ne, RelOp::Lt, RelOp::Le, RelOp::Gt, RelOp::Ge};
    return {random_expr(rng, 1), kOps[rng.between(0, 5)], random_expr(rng, 1)};
  }
  return parse_relation(templates[rng.between(0, int(std::size(templates)) - 1)]);
}

Relation random_goal(Rng& rng, const Facts& facts) {
  static const RelOp kOps[] = {RelOp::Eq, RelOp::Ne, RelOp::Lt, RelOp::Le, RelOp::Gt, RelOp::Ge};
  switch (rng.between(0, 5)) {
    case 0: {  // a fact, possibly with another operator
      const Relation& f = facts.list()[std::size_t(rng.between(0, int(facts.list().size()) - 1))].relation;
      return {f.lhs, rng.chance(50) ? f.op : kOps[rng.between(0, 5)], f.rhs};
    }
    case 1: {
      DimExpr e = random_expr(rng, 2);
      return eq(e, variant_of(rng, e));
    }
    case 2: {
      DimExpr a = DimExpr::symbol(rng.symbol());
      DimExpr b = rng.chance(50) ? DimExpr::symbol(rng.symbol()) : DimExpr(rng.between(2, 4));
      DimExpr c = DimExpr::symbol(rng.symbol());
      return rng.chance(50) ? eq(a % b, 0) : eq((a / c) % (b / c), 0);
    }
    case 3: return {random_expr(rng, 2), kOps[rng.between(2, 5)], DimExpr(rng.between(0, 2))};
    default: return {random_expr(rng, 2), kOps[rng.between(0, 5)], random_expr(rng, 2)};
  }
}

struct World {
  Facts facts;
  bool a_signed = false;
  std::vector<Bindings> satisfying;
};

// Every binding of the four symbols over 0..5 (a over -3..3 when signed)
// at which every fact is defined and true.
void enumerate(World& world) {
  int lo = world.a_signed ? -3 : 0, hi = world.a_signed ? 3 : 5;
  for (int a = lo; a <= hi; ++a)
    for (int b = 0; b <= 5; ++b)
      for (int c = 0; c <= 5; ++c)
        for (int d = 0; d <= 5; ++d) {
          Bindings binding{{"a", a}, {"b", b}, {"c", c}, {"d", d}};
          bool ok = true;
          for (const Fact& f : world.facts.list()) {
            if (f.relation.check(binding).truth != Truth::True) {
              ok = false;
              break;
            }
          }
          if (ok) world.satisfying.push_back(std::move(binding));
        }
}

std::string describe(const World& world) {
  std::ostringstream out;
  out << "facts:";
  for (const Fact& f : world.facts.list()) out << " [" << f.relation.to_string() << "]";
  if (world.a_signed) out << " (a signed)";
  return out.str();
}

std::string describe(const Bindings& b) {
  std::ostringstream out;
  for (const auto& [k, v] : b) out << k << "=" << v << " ";
  return out.str();
}

}  // namespace

TEST_CASE("proved and disproved relations hold and fail at every satisfying binding", "[solver][property]") {
  Rng rng(base_seed());
  int proved = 0, disproved = 0, unknown = 0, identities_proved = 0, identities = 0, worlds = 0;
  for (int round = 0; round < 120; ++round) {
    World world;
    world.a_signed = round % 4 == 3;
    if (world.a_signed) world.facts.declare_signed("a");
    int count = rng.between(1, 4);
    for (int i = 0; i < count; ++i) world.facts.add(random_fact(rng));
    enumerate(world);
    Solver solver(world.facts);
    INFO(describe(world));
    if (world.satisfying.empty()) continue;  // nothing to check against in range
    // Satisfiable facts must not be reported as contradictory.
    CHECK_FALSE(solver.contradiction());
    if (solver.contradiction()) continue;
    ++worlds;
    for (int g = 0; g < 40; ++g) {
      Relation goal = random_goal(rng, world.facts);
      ProofResult result = solver.prove(goal);
      bool identity = goal.op == RelOp::Eq && g % 6 == 1;
      if (result.proved()) ++proved;
      if (result.disproved()) ++disproved;
      if (result.unknown()) ++unknown;
      if (result.unknown()) continue;
      INFO("goal: " << goal.to_string() << " -> " << spelling(result.verdict) << "\n" << result.explain());
      for (const Bindings& b : world.satisfying) {
        ConcreteCheck c = goal.check(b);
        if (c.truth == Truth::Undefined) continue;
        INFO("binding: " << describe(b) << " lhs=" << c.lhs << " rhs=" << c.rhs);
        REQUIRE((c.truth == Truth::True) == result.proved());
      }
      if (identity) ++identities;
    }
    // Identity goals: count how many the solver settles, so the test notices a useless solver.
    for (int g = 0; g < 10; ++g) {
      DimExpr e = random_expr(rng, 2);
      Relation goal = eq(e, variant_of(rng, e));
      ProofResult result = solver.prove(goal);
      if (result.proved()) ++identities_proved;
      ++identities;
      if (result.unknown()) continue;
      INFO("identity goal: " << goal.to_string() << " -> " << spelling(result.verdict));
      for (const Bindings& b : world.satisfying) {
        ConcreteCheck c = goal.check(b);
        if (c.truth == Truth::Undefined) continue;
        INFO("binding: " << describe(b));
        REQUIRE((c.truth == Truth::True) == result.proved());
      }
    }
  }
  INFO("worlds " << worlds << ", proved " << proved << ", disproved " << disproved << ", unknown " << unknown
                 << ", identities proved " << identities_proved << " of " << identities);
  CHECK(worlds >= 60);
  CHECK(proved >= 300);
  CHECK(disproved >= 100);
  CHECK(identities_proved * 3 >= identities);
}

TEST_CASE("normal forms keep the value of their expressions", "[solver][property]") {
  Rng rng(base_seed() + 1);
  int compared = 0;
  for (int round = 0; round < 120; ++round) {
    World world;
    world.a_signed = round % 3 == 2;
    if (world.a_signed) world.facts.declare_signed("a");
    if (round % 2 == 1) {
      int count = rng.between(1, 3);
      for (int i = 0; i < count; ++i) world.facts.add(random_fact(rng));
    }
    enumerate(world);
    Solver solver(world.facts);
    if (world.satisfying.empty() || solver.contradiction()) continue;
    INFO(describe(world));
    for (int i = 0; i < 30; ++i) {
      DimExpr e = random_expr(rng, 3);
      DimPoly p;
      try {
        p = solver.normalize(e);
      } catch (const DimArithmeticError&) {
        continue;  // beyond 64-bit exact arithmetic: refused, not guessed
      }
      INFO("expr: " << e.to_string() << "  normal form: " << p.to_string());
      for (const Bindings& b : world.satisfying) {
        EvalResult want = e.evaluate(b);
        if (!want.ok()) continue;
        EvalResult got = p.evaluate(b);
        INFO("binding: " << describe(b) << " " << got.detail);
        REQUIRE(got.ok());
        REQUIRE(got.value == want.value);
        ++compared;
      }
      // The printed normal form, read back and evaluated with truncating
      // division, has the same value wherever the facts hold.
      DimExpr printed = parse_dim(p.to_string());
      for (const Bindings& b : world.satisfying) {
        EvalResult want = e.evaluate(b);
        if (!want.ok()) continue;
        EvalResult got = printed.evaluate(b);
        INFO("printed: " << printed.to_string() << " binding: " << describe(b));
        REQUIRE(got.ok());
        REQUIRE(got.value == want.value);
      }
    }
  }
  CHECK(compared > 100000);
}

TEST_CASE("fact-free normalisation agrees with evaluation on dimensions", "[dim][property]") {
  Rng rng(base_seed() + 2);
  for (int i = 0; i < 400; ++i) {
    DimExpr e = random_expr(rng, 4);
    DimPoly p;
    try {
      p = normalize(e);
    } catch (const DimArithmeticError&) {
      continue;  // beyond 64-bit exact arithmetic: refused, not guessed
    }
    INFO("expr: " << e.to_string() << "  normal form: " << p.to_string());
    for (int k = 0; k < 40; ++k) {
      Bindings b{{"a", rng.between(0, 9)}, {"b", rng.between(0, 9)}, {"c", rng.between(0, 9)}, {"d", rng.between(0, 40)}};
      EvalResult want = e.evaluate(b);
      if (!want.ok()) continue;
      EvalResult got = p.evaluate(b);
      INFO("binding: " << describe(b));
      REQUIRE(got.ok());
      REQUIRE(got.value == want.value);
    }
    // Without facts, printing and reading back gives the same normal form.
    REQUIRE(normalize(parse_dim(p.to_string())) == p);
  }
}
