// Normal forms without facts: every symbol is a non-negative dimension.
#include <catch2/catch.hpp>

#include "linnet/check/dim_normalize.hpp"
#include "linnet/check/dim_parse.hpp"

using namespace linnet::check;

namespace {

DimPoly norm(const char* text) { return normalize(parse_dim(text)); }

bool same(const char* a, const char* b) { return norm(a) == norm(b); }

}  // namespace

TEST_CASE("ring arithmetic reaches one form", "[dim][poly]") {
  CHECK(same("P + Batch - P", "Batch"));
  CHECK(same("B * S * H", "H * (S * B)"));
  CHECK(same("(a + b) * (a - b)", "a * a - b * b"));
  CHECK(same("2 * Batch", "Batch + Batch"));
  CHECK(same("-(x - y)", "y - x"));
  CHECK(same("P + Rows", "Rows + P"));
  CHECK(same("3 * (x + 1) - 3", "x * 3"));
  CHECK_FALSE(same("x", "x + 1"));
  CHECK(norm("P + Batch - P").to_string() == "Batch");
  CHECK(norm("0 * x").is_zero());
}

TEST_CASE("exact divisions disappear", "[dim][poly][div]") {
  CHECK(same("(2 * Inner) / 2", "Inner"));
  CHECK(same("(x * 4) / 2", "2 * x"));
  CHECK(same("(6 * x + 9 * y) / 3", "2 * x + 3 * y"));
  CHECK(same("(x * y) / y", "x"));
  CHECK(same("(B * S * H) / (S * H)", "B"));
  CHECK(same("(2 * x * y + 4 * y) / (2 * y)", "x + 2"));
  CHECK(same("(x * x - y * y) / (x + y)", "x - y"));  // a sum as divisor, long division
  CHECK(norm("(x * 4) / 2").to_string() == "2 * x");
  // Not exact without facts: kept as an atom.
  CHECK(norm("H / Heads").to_string() == "H / Heads");
  CHECK(norm("B * S * Heads * (H / Heads)").to_string() == "B * Heads * S * (H / Heads)");
  CHECK_FALSE(same("B * S * Heads * (H / Heads)", "B * S * H"));
}

TEST_CASE("constant division and remainder truncate toward zero", "[dim][poly][div]") {
  CHECK(norm("7 / 2") == DimPoly::constant(3));
  CHECK(norm("-7 / 2") == DimPoly::constant(-3));
  CHECK(norm("-7 % 2") == DimPoly::constant(-1));
  CHECK(norm("7 % -2") == DimPoly::constant(1));
  CHECK(norm("7 / -2") == DimPoly::constant(-3));
}

TEST_CASE("whole multiples come out of a division of a dimension", "[dim][poly][div]") {
  CHECK(same("(2 * Inner + 1) / 2", "Inner"));
  CHECK(same("(2 * x + 5) / 2", "x + 2"));
  CHECK(same("(4 * x + 6) / 4", "x + 1"));
  CHECK(same("(3 * x) / 2", "x + x / 2"));
  CHECK(same("(x * y + 1) / y", "x + 1 / y"));  // 1 / y is not 0 when y may be 1
  CHECK(norm("(x + 1) / 2").to_string() == "(x + 1) / 2");
  // The sign of a truncating division is pulled out of the atom.
  CHECK(same("(-x) / 2", "-(x / 2)"));
  CHECK(same("x / (-2)", "-(x / 2)"));
  // Common factors cancel inside an opaque division.
  CHECK(same("(2 * x) / (2 * y)", "x / y"));
  CHECK(same("(x * z) / (y * z)", "x / y"));
  CHECK(same("c / (2 * c)", "0"));
  CHECK(same("b % (3 * b)", "b"));
  CHECK(same("(3 * c) / (2 * c)", "1"));
  CHECK(same("(3 * c * d) / (2 * c)", "d + d / 2"));
  // 0 <= x - x ... and a numerator below the divisor.
  CHECK(same("x / (x + 1)", "0"));
  // A difference of dimensions may be negative: no splitting.
  CHECK(norm("(2 * x - y) / 2").to_string() == "(2 * x - y) / 2");
}

TEST_CASE("remainders are written through division", "[dim][poly][mod]") {
  CHECK(norm("x % 2").to_string() == "x % 2");
  CHECK(same("x % 2", "x - 2 * (x / 2)"));
  CHECK(same("(2 * x + 1) % 2", "1"));
  CHECK(same("(2 * x) % 2", "0"));
  CHECK(same("(x * y) % y", "0"));
  CHECK(same("(3 * x + 1) % 3", "1"));
  CHECK(same("(2 * x + 3) % 2", "1"));
  CHECK(same("(x + 2 * y) % 2", "x % 2"));
  CHECK(same("y * (x / y) + x % y", "x"));
  CHECK(same("x % (x + 1)", "x"));
  CHECK(norm("(H / Heads) % 2").to_string() == "(H / Heads) % 2");
}

TEST_CASE("min and max decide what they can and keep the rest canonical", "[dim][poly][minmax]") {
  CHECK(same("max(0, x)", "x"));
  CHECK(same("min(x, x + 1)", "x"));
  CHECK(same("max(x, x + 1)", "x + 1"));
  CHECK(same("min(x, x)", "x"));
  CHECK(same("min(2 * Inner, 2 * Inner)", "2 * Inner"));
  CHECK(same("min(P + Batch, P + C)", "P + min(Batch, C)"));
  CHECK(same("min(a, b)", "min(b, a)"));
  CHECK(same("max(2 * a, 2 * b)", "2 * max(a, b)"));
  CHECK_FALSE(same("min(a, b)", "max(a, b)"));
  CHECK(norm("min(P + Batch, MaxSeq) - P").to_string() == "min(Batch + P, MaxSeq) - P");
}

TEST_CASE("slice extents from spec 5.8 simplify", "[dim][poly][slice]") {
  // extent = max(0, (min(stop, D) - start + step - 1) / step)
  auto extent = [](const char* start, const char* stop, const char* step, const char* d) {
    DimExpr s = parse_dim(start), e = parse_dim(stop), k = parse_dim(step), D = parse_dim(d);
    return normalize(DimExpr::max(0, (DimExpr::min(e, D) - s + k - 1) / k));
  };
  CHECK(extent("0", "2 * Inner", "2", "2 * Inner") == norm("Inner"));      // x[..., 0::2]
  CHECK(extent("1", "2 * Inner", "2", "2 * Inner") == norm("Inner"));      // x[..., 1::2]
  CHECK(extent("P", "P + Batch", "1", "P + Batch") == norm("Batch"));      // q[:, :, P:P + Batch, :]
  CHECK(extent("0", "Rows", "1", "Rows + P") == norm("Rows"));
  CHECK(extent("0", "3 * N", "3", "3 * N") == norm("N"));
}

TEST_CASE("printing a normal form gives back an equal expression", "[dim][poly][print]") {
  for (const char* text : {"B * S * H", "x % 2 + y", "(x + 1) / 2", "min(P + Batch, MaxSeq) - P", "3 * x - 2 * y + 7",
                           "-x", "x * x * y", "max(a, b) * 2 - 1", "(2 * x - y) / 2", "y * (x / y)"}) {
    INFO(text);
    DimPoly p = norm(text);
    CHECK(normalize(parse_dim(p.to_string())) == p);
  }
  CHECK(norm("x * x * y").to_string() == "x * x * y");
  CHECK(norm("3 * x - 2 * y + 7").to_string() == "3 * x - 2 * y + 7");
  CHECK(norm("7 - x").to_string() == "7 - x");
}

TEST_CASE("normal forms evaluate exactly", "[dim][poly][eval]") {
  Bindings b{{"x", 7}, {"y", 3}};
  CHECK(norm("(x + 1) / 2 + x % y").evaluate(b).value == 5);
  CHECK(norm("x / (y - 3)").evaluate(b).status == EvalStatus::DivisionByZero);
  CHECK(norm("z").evaluate(b).status == EvalStatus::Unbound);
  // (1/2) * x is not whole at x = 7: the facts that would make it so fail.
  DimPoly half = DimPoly::term(Rational(1, 2), Monomial::of(DimAtom::symbol("x")));
  CHECK(half.to_string() == "x / 2");
  CHECK(half.evaluate(b).status == EvalStatus::NotInteger);
  CHECK(half.evaluate({{"x", 8}}).value == 4);
}

TEST_CASE("equal polynomials hash alike; substitution renormalises", "[dim][poly]") {
  CHECK(norm("a * b + 1").hash() == norm("1 + b * a").hash());
  std::map<std::string, DimPoly, std::less<>> with{{"H", norm("32 * Blocks")}};
  CHECK(substitute(norm("H / 32 + H % 32"), with) == norm("Blocks"));
  CHECK(substitute(norm("min(H, 32 * Blocks)"), with) == norm("32 * Blocks"));
  CHECK(norm("min(a, b)").symbols() == std::set<std::string>{"a", "b"});
}
