// DimExpr: construction, printing, parsing, substitution, evaluation.
#include <catch2/catch.hpp>

#include <limits>

#include "linnet/check/dim_expr.hpp"
#include "linnet/check/dim_parse.hpp"
#include "linnet/check/dim_rational.hpp"

using namespace linnet::check;

namespace {
DimExpr sym(const char* name) { return DimExpr::symbol(name); }
}  // namespace

TEST_CASE("DimExpr prints Linnet syntax with minimal parentheses", "[dim][expr]") {
  DimExpr B = sym("B"), S = sym("S"), H = sym("H"), Heads = sym("Heads");
  CHECK((B * S * (H / Heads)).to_string() == "B * S * (H / Heads)");
  CHECK((B * S * H / Heads).to_string() == "B * S * H / Heads");
  CHECK((H - (B + S)).to_string() == "H - (B + S)");
  CHECK((H + (B - S)).to_string() == "H + B - S");
  CHECK((H * (B * S)).to_string() == "H * B * S");
  CHECK((H * (B / S * Heads)).to_string() == "H * (B / S * Heads)");
  CHECK((H * (B * S / Heads)).to_string() == "H * (B * S / Heads)");
  CHECK((H / (B * S)).to_string() == "H / (B * S)");
  CHECK(((H + B) * S).to_string() == "(H + B) * S");
  CHECK(((H / Heads) % 2).to_string() == "(H / Heads) % 2");
  CHECK((-(H + B)).to_string() == "-(H + B)");
  CHECK((-H * B).to_string() == "-H * B");
  CHECK((-(H * B)).to_string() == "-(H * B)");
  CHECK((H + DimExpr(-3)).to_string() == "H + -3");
  CHECK(DimExpr::min(sym("P") + sym("Batch"), sym("MaxSeq")).to_string() == "min(P + Batch, MaxSeq)");
  CHECK((DimExpr::max(0, H - 1) * 2).to_string() == "max(0, H - 1) * 2");
}

TEST_CASE("parse_dim reads what to_string writes", "[dim][expr][parse]") {
  for (const char* text : {"B * S * (H / Heads)", "H - (B + S)", "(H / Heads) % 2", "min(P + Batch, MaxSeq) - P",
                           "-(H + B)", "max(0, (D - 1 + 2) / 2)", "Heads / Shards * (H / Heads)", "2 * Inner",
                           "x % 4 - -3"}) {
    INFO(text);
    CHECK(parse_dim(text).to_string() == text);
  }
  CHECK(parse_dim("1_024").value() == 1024);
  CHECK(parse_dim("-3").value() == -3);
  CHECK(parse_dim(" H+1 ").to_string() == "H + 1");
}

TEST_CASE("parse errors say where", "[dim][expr][parse]") {
  CHECK_THROWS_AS(parse_dim("H +"), DimParseError);
  CHECK_THROWS_AS(parse_dim("min(H)"), DimParseError);
  CHECK_THROWS_AS(parse_dim("(H"), DimParseError);
  CHECK_THROWS_AS(parse_dim("3 $ 4"), DimParseError);
  CHECK_THROWS_AS(parse_dim("99999999999999999999"), DimParseError);
  CHECK_THROWS_AS(parse_relation("H"), DimParseError);
  try {
    parse_dim("H + * 2");
    FAIL("expected a parse error");
  } catch (const DimParseError& e) {
    CHECK(e.offset() == 4);
  }
  Facts facts = parse_facts("H % N == 0, N > 0,");
  REQUIRE(facts.list().size() == 2);
  CHECK(facts.list()[1].relation.to_string() == "N > 0");
}

TEST_CASE("structural equality and hashing follow the tree", "[dim][expr]") {
  DimExpr a = parse_dim("H / Heads + 1");
  DimExpr b = parse_dim("H / Heads + 1");
  DimExpr c = parse_dim("1 + H / Heads");
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK_FALSE(a == c);
  CHECK(a.symbols() == std::set<std::string>{"H", "Heads"});
  CHECK(DimExpr() == DimExpr(0));
  CHECK_THROWS_AS(DimExpr::symbol(""), std::invalid_argument);
  CHECK_THROWS_AS(DimExpr::binary(DimExpr::Kind::Negate, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(sym("H").value(), std::logic_error);
}

TEST_CASE("substitution instantiates generics", "[dim][expr]") {
  DimExpr e = parse_dim("(Heads / Shards) % (KvHeads / Shards)");
  DimExpr out = e.substitute({{"Heads", parse_dim("2 * G")}, {"Shards", DimExpr(1)}});
  CHECK(out.to_string() == "(2 * G / 1) % (KvHeads / 1)");
  CHECK(e.substitute({}) == e);
}

TEST_CASE("evaluation truncates toward zero and reports failures", "[dim][expr][eval]") {
  Bindings b{{"x", -7}, {"y", 2}, {"z", 0}, {"big", std::numeric_limits<std::int64_t>::max()}};
  CHECK(parse_dim("x / y").evaluate(b).value == -3);
  CHECK(parse_dim("x % y").evaluate(b).value == -1);
  CHECK(parse_dim("7 % -2").evaluate(b).value == 1);
  CHECK(parse_dim("min(x, y) + max(x, y)").evaluate(b).value == -5);
  CHECK(parse_dim("-x").evaluate(b).value == 7);

  EvalResult by_zero = parse_dim("y / z").evaluate(b);
  CHECK(by_zero.status == EvalStatus::DivisionByZero);
  CHECK(by_zero.detail.find("`z` is 0") != std::string::npos);
  CHECK(parse_dim("y % z").evaluate(b).status == EvalStatus::DivisionByZero);
  CHECK(parse_dim("big + 1").evaluate(b).status == EvalStatus::Overflow);
  CHECK(parse_dim("big * 2").evaluate(b).status == EvalStatus::Overflow);
  CHECK(parse_dim("0 - big - 2").evaluate(b).status == EvalStatus::Overflow);
  EvalResult unbound = parse_dim("H + 1").evaluate(b);
  CHECK(unbound.status == EvalStatus::Unbound);
  CHECK(unbound.detail == "`H` has no value");
}

TEST_CASE("rationals are exact and refuse to overflow", "[dim][rational]") {
  CHECK(Rational(6, -4) == Rational(-3, 2));
  CHECK(Rational(-3, 2).floor() == -2);
  CHECK(Rational(-3, 2).trunc() == -1);
  CHECK(Rational(1, 2) + Rational(1, 3) == Rational(5, 6));
  CHECK(Rational::gcd(Rational(1, 2), 3) == Rational(1, 2));
  CHECK(Rational::gcd(4, 6) == 2);
  CHECK(Rational::gcd(0, 0) == 0);
  CHECK(Rational(2, 3) < Rational(3, 4));
  CHECK(Rational(-5, 10).to_string() == "-1/2");
  std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK_THROWS_AS(Rational(big) + Rational(1), DimArithmeticError);
  CHECK_THROWS_AS(Rational(big) * Rational(2), DimArithmeticError);
  CHECK_THROWS_AS(Rational(std::numeric_limits<std::int64_t>::min()), DimArithmeticError);
  CHECK_THROWS_AS(Rational(1, 0), DimArithmeticError);
  CHECK_THROWS_AS(Rational(0).inverse(), DimArithmeticError);
}
