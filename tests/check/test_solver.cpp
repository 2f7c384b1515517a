// The solver on the relations the model cards and spec tests need.
#include <catch2/catch.hpp>

#include "linnet/check/dim_parse.hpp"
#include "linnet/check/solver.hpp"

using namespace linnet::check;

namespace {

Solver solver_for(const char* where) { return Solver(parse_facts(where)); }

Verdict verdict(const Solver& s, const char* relation) { return s.prove(parse_relation(relation)).verdict; }

bool proves(const Solver& s, const char* relation) { return verdict(s, relation) == Verdict::Proved; }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The where clause of Mistral's and Qwen3's GroupedQueryAttention blocks.
const char* kAttention =
    "Shards > 0, Heads % Shards == 0, KvHeads % Shards == 0, KvHeads / Shards > 0,"
    "Heads > 0, KvHeads > 0, Heads % KvHeads == 0, H % Heads == 0, (H / Heads) % 2 == 0,"
    "MaxSeq > 0, Batch > 0";

}  // namespace

TEST_CASE("reshape element counts", "[solver][reshape]") {
  Solver s = solver_for("H % Heads == 0, Heads > 0");
  CHECK(proves(s, "B * S * Heads * (H / Heads) == B * S * H"));
  CHECK(proves(s, "B * Heads * S * (H / Heads) == B * S * H"));  // split_heads then permute
  CHECK(proves(s, "(B * S) * H == B * S * H"));                   // [B * S, H] vs [B, S, H]
  CHECK(proves(s, "Heads * (H / Heads) == H"));
  CHECK(s.normalize(parse_dim("H / Heads * Heads")).to_string() == "H");
  CHECK(verdict(s, "B * S * H == B * S * H + 1") == Verdict::Disproved);
}

TEST_CASE("a reshape without the divisibility fact asks for it (E2203)", "[solver][reshape][explain]") {
  Solver s = solver_for("N > 0");  // spec-tests/invalid/114_reshape_count
  ProofResult r = s.prove(parse_relation("N * (H / N) == H"), Detail::Explained);
  REQUIRE(r.unknown());
  REQUIRE(r.suggestions.size() == 1);
  CHECK(r.suggestions[0].to_string() == "H % N == 0");
  CHECK(r.suggestions_suffice);
  CHECK(r.suggestion_text() == "where H % N == 0");
  std::string text = r.explain();
  CHECK(contains(text, "cannot prove `N * (H / N) == H`"));
  CHECK(contains(text, "normal forms: `N * (H / N)` == `H`"));
  CHECK(contains(text, "`N > 0`"));
  CHECK(contains(text, "help: add `where H % N == 0`"));
}

TEST_CASE("equalities are used as rewrites", "[solver][rewrite]") {
  Solver s = solver_for("Experts > 0, TopK > 0, H == Blocks * 32, Inner == InnerBlocks * 32");
  CHECK(proves(s, "H / 32 == Blocks"));
  CHECK(proves(s, "H % 32 == 0"));
  CHECK(proves(s, "Blocks * 32 == H"));
  CHECK(proves(s, "(2 * Inner) / 32 == 2 * InnerBlocks"));
  CHECK(proves(s, "(2 * Inner) % 2 == 0"));
  CHECK(s.normalize(parse_dim("H")).to_string() == "32 * Blocks");
  bool noted = false;
  for (const std::string& d : s.derived()) noted = noted || contains(d, "H := 32 * Blocks");
  CHECK(noted);
  // Chains of equalities compose.
  Solver chain = solver_for("A == B + 1, B == 2 * C");
  CHECK(proves(chain, "A == 2 * C + 1"));
  CHECK(proves(chain, "A % 2 == 1"));
  CHECK(verdict(chain, "A == 2 * C") == Verdict::Disproved);
}

TEST_CASE("divisibility passed down: H / 32 where H % 32 == 0", "[solver][divisibility]") {
  Solver s = solver_for("H % 32 == 0, Inner % 32 == 0, Layers % 2 == 0");
  CHECK(proves(s, "(H / 32) * 32 == H"));
  CHECK(proves(s, "32 * (H / 32) + Inner == H + Inner"));
  CHECK(proves(s, "H % 16 == 0"));
  CHECK(proves(s, "(H / 16) % 2 == 0"));
  CHECK(proves(s, "(H + Inner) % 32 == 0"));
  CHECK(proves(s, "(Layers / 2) * 2 == Layers"));
  CHECK(s.normalize(parse_dim("H / 32")).to_string() == "H / 32");
  CHECK(verdict(s, "H % 64 == 0") == Verdict::Unknown);
  CHECK(verdict(s, "(H + 1) % 32 == 0") == Verdict::Disproved);
}

TEST_CASE("grouped attention: callee where clauses at a call", "[solver][call]") {
  Solver s = solver_for(kAttention);
  REQUIRE_FALSE(s.contradiction());
  // grouped_attention<Heads / Shards, KvHeads / Shards> needs its own `Heads % KvHeads == 0`.
  Relation callee = parse_relation("Heads % KvHeads == 0");
  Relation at_call = callee.substitute({{"Heads", parse_dim("Heads / Shards")}, {"KvHeads", parse_dim("KvHeads / Shards")}});
  CHECK(at_call.to_string() == "(Heads / Shards) % (KvHeads / Shards) == 0");
  CHECK(s.prove(at_call).proved());
  CHECK(proves(s, "KvHeads / Shards > 0"));
  CHECK(proves(s, "Heads / Shards > 0"));
  CHECK(proves(s, "(Heads / Shards) / (KvHeads / Shards) == Heads / KvHeads"));
  CHECK(proves(s, "Heads / KvHeads > 0"));
  CHECK(proves(s, "(H / Heads) % 2 == 0"));
  CHECK(proves(s, "Heads / Shards * (H / Heads) * Shards == H"));
  CHECK(proves(s, "H % KvHeads == 0"));                                  // H = Heads * k = KvHeads * j * k
  CHECK(proves(s, "(Heads / KvHeads) * (KvHeads / Shards) == Heads / Shards"));
  CHECK(proves(s, "(H / Heads) / 2 * 2 == H / Heads"));                  // rope's D / 2
}

TEST_CASE("GPT-OSS: Model passes H / 32 to a block that requires H == Blocks * 32", "[solver][call][cards]") {
  Solver model = solver_for(
      "Heads > 0, KvHeads > 0, Heads % KvHeads == 0, HeadDim % 2 == 0, Experts > 0, TopK > 0,"
      "Layers % 2 == 0, H % 32 == 0, Inner % 32 == 0, MaxSeq > 0");
  // MixtureOfExperts' clauses with Blocks := H / 32, InnerBlocks := Inner / 32.
  std::map<std::string, DimExpr, std::less<>> args{{"Blocks", parse_dim("H / 32")},
                                                    {"InnerBlocks", parse_dim("Inner / 32")}};
  for (const char* clause : {"H == Blocks * 32", "Inner == InnerBlocks * 32", "Experts > 0", "TopK > 0"}) {
    INFO(clause);
    CHECK(model.prove(parse_relation(clause).substitute(args)).proved());
  }
  CHECK(proves(model, "Layers / 2 * 2 == Layers"));  // the [LayerPair; Layers / 2] array

  // Inside MixtureOfExperts: the MXFP4 shapes.
  Solver moe = solver_for("Experts > 0, TopK > 0, H == Blocks * 32, Inner == InnerBlocks * 32");
  CHECK(proves(moe, "Blocks * 32 == H"));                 // x[R, G * 32] with G := Blocks against [B * S, H]
  CHECK(proves(moe, "(2 * Inner) / 2 == Inner"));         // gate_up[..., 0::2] of 2 * Inner
  CHECK(proves(moe, "InnerBlocks * 32 == Inner"));        // the down projection's G * 32
  CHECK(proves(moe, "B * S * H == (B * S) * (Blocks * 32)"));  // reshape(x, [B * S, H])
}

TEST_CASE("the divisibility between shards follows without being stated", "[solver][call]") {
  // Qwen3 and Mistral state it; it also follows from the three facts and Shards > 0.
  Solver s = solver_for("Shards > 0, Heads % Shards == 0, KvHeads % Shards == 0, Heads % KvHeads == 0");
  CHECK(proves(s, "(Heads / Shards) % (KvHeads / Shards) == 0"));
  Solver missing = solver_for("Shards > 0, Heads % Shards == 0, Heads % KvHeads == 0");
  ProofResult r = missing.prove(parse_relation("(Heads / Shards) % (KvHeads / Shards) == 0"), Detail::Explained);
  CHECK_FALSE(r.proved());
}

TEST_CASE("callee constraints unprovable at a call (E2206)", "[solver][call][explain]") {
  // spec-tests/invalid/113: halve<D> needs D % 2 == 0; the caller has nothing.
  Solver none;
  ProofResult r = none.prove(parse_relation("D % 2 == 0"), Detail::Explained);
  REQUIRE(r.unknown());
  CHECK(r.suggestion_text() == "where D % 2 == 0");
  CHECK(r.suggestions_suffice);
  CHECK(contains(r.explain(), "facts searched: none"));
  // spec-tests/invalid/118: Heads<H, 8> needs H % 8 == 0.
  CHECK(verdict(none, "H % 8 == 0") == Verdict::Unknown);
  // spec-tests/valid/018: split_heads<B, S, 8 * D, 8> needs (8 * D) % 8 == 0 and 8 > 0.
  CHECK(proves(none, "(8 * D) % 8 == 0"));
  CHECK(proves(none, "8 > 0"));
  CHECK(proves(none, "(8 * D) / 8 == D"));
}

TEST_CASE("slice extents and concatenations", "[solver][slice]") {
  auto extent = [](const char* start, const char* stop, const char* step, const char* axis) {
    DimExpr s = parse_dim(start), e = parse_dim(stop), k = parse_dim(step), d = parse_dim(axis);
    return DimExpr::max(0, (DimExpr::min(e, d) - s + k - 1) / k);
  };
  Solver none;
  CHECK(none.equal(extent("P", "P + Batch", "1", "P + Batch"), parse_dim("Batch")));
  CHECK(none.equal(extent("0", "2 * Inner", "2", "2 * Inner"), parse_dim("Inner")));
  CHECK(none.equal(extent("1", "2 * Inner", "2", "2 * Inner"), parse_dim("Inner")));
  // spec-tests/valid/010: x[..., 0::2] of D with D % 2 == 0 has D / 2.
  Solver even = solver_for("D % 2 == 0");
  CHECK(even.equal(extent("0", "D", "2", "D"), parse_dim("D / 2")));
  CHECK(even.equal(extent("1", "D", "2", "D"), parse_dim("D / 2")));
  CHECK(none.equal(extent("1", "D", "2", "D"), parse_dim("D / 2")));        // 1::2 has D / 2 either way
  CHECK_FALSE(none.equal(extent("0", "D", "2", "D"), parse_dim("D / 2")));  // 0::2 has (D + 1) / 2
  // Slicing a cache of MaxSeq rows needs P + Batch <= MaxSeq, and says so.
  ProofResult r = none.prove_equal(extent("P", "P + Batch", "1", "MaxSeq"), parse_dim("Batch"), Detail::Explained);
  REQUIRE(r.unknown());
  CHECK(r.suggestion_text() == "where Batch + P <= MaxSeq");
  CHECK(r.suggestions_suffice);
  Solver fits = solver_for("P + Batch <= MaxSeq");
  CHECK(fits.equal(extent("P", "P + Batch", "1", "MaxSeq"), parse_dim("Batch")));
  // Concatenations.
  CHECK(proves(none, "Batch + Batch == 2 * Batch"));
  CHECK(proves(none, "P + Rows == Rows + P"));
  CHECK(proves(none, "P + Batch + Batch == P + 2 * Batch"));
}

TEST_CASE("order: positivity, bounds, and divisors (E2205, E2208, E2209)", "[solver][order]") {
  Solver s = solver_for("N > 0, M >= 2, P + Batch <= MaxSeq, Batch > 0");
  CHECK(proves(s, "N > 0"));
  CHECK(proves(s, "N >= 1"));
  CHECK(proves(s, "N - 1 >= 0"));
  CHECK(proves(s, "N * M > 1"));
  CHECK(proves(s, "M * M >= 0"));
  CHECK(proves(s, "N + M > 2"));
  CHECK(proves(s, "P < MaxSeq"));
  CHECK(proves(s, "P + Batch - 1 < MaxSeq"));
  CHECK(proves(s, "MaxSeq > 0"));
  CHECK(proves(s, "min(N, M) > 0"));
  CHECK(proves(s, "max(N, P) >= N"));
  CHECK(proves(s, "(M + 1) / 2 > 0"));
  CHECK(proves(s, "(M + 1) / 2 <= M"));
  CHECK(proves(s, "M % N < N"));
  CHECK(proves(s, "M % N >= 0"));
  CHECK(verdict(s, "N < 1") == Verdict::Disproved);
  CHECK(verdict(s, "MaxSeq < P") == Verdict::Disproved);
  CHECK(verdict(s, "K > 0") == Verdict::Unknown);
  CHECK(verdict(s, "K >= 0") == Verdict::Proved);  // every Dim is non-negative
  CHECK(verdict(s, "N - M >= 0") == Verdict::Unknown);
  ProofResult divisor = s.prove_positive(parse_dim("K"), Detail::Explained);
  REQUIRE(divisor.unknown());
  CHECK(divisor.suggestion_text() == "where K > 0");
  // A divisibility fact does not by itself make its divisor positive.
  CHECK(verdict(solver_for("H % N == 0"), "N > 0") == Verdict::Unknown);
  SolverOptions derive;
  derive.divisibility_implies_nonzero_divisor = true;
  CHECK(Solver(parse_facts("H % N == 0"), derive).prove(parse_relation("N > 0")).proved());
}

TEST_CASE("explanations are opt-in; verdicts are the same either way", "[solver][explain]") {
  Solver s = solver_for("N > 0");
  ProofResult brief = s.prove(parse_relation("N * (H / N) == H"));
  ProofResult full = s.prove(parse_relation("N * (H / N) == H"), Detail::Explained);
  CHECK(brief.verdict == full.verdict);
  CHECK(brief.suggestions.empty());
  CHECK(brief.facts_searched.empty());
  CHECK(full.suggestions.size() == 1);
  CHECK(brief.lhs_normal == full.lhs_normal);
  CHECK(contains(brief.explain(), "normal forms: `N * (H / N)` == `H`"));
  CHECK_FALSE(contains(brief.explain(), "facts searched"));
  CHECK(contains(full.explain(), "facts searched:\n    `N > 0`"));
}

TEST_CASE("order through min and max needs case splits", "[solver][order][minmax]") {
  Solver s = solver_for("P + Batch <= MaxSeq, N >= 1");
  CHECK(proves(s, "max(0, min(P + Batch, MaxSeq) - P) <= Batch"));
  CHECK(proves(s, "max(0, min(P + Batch, MaxSeq) - P) >= Batch"));
  CHECK(proves(s, "min(P + Batch, MaxSeq) - P >= 0"));
  CHECK(proves(s, "max(N, Batch) >= 1"));
  CHECK(proves(s, "min(N, 3) <= 3"));
  CHECK(proves(s, "max(N, 3) <= N + 3"));
  CHECK(verdict(s, "max(N, Batch) <= N") == Verdict::Unknown);
  CHECK(verdict(s, "min(N, Batch) >= 1") == Verdict::Unknown);
}

TEST_CASE("provably false versus unknown", "[solver][disprove]") {
  Solver none;
  CHECK(verdict(none, "2 == 3") == Verdict::Disproved);
  CHECK(verdict(none, "2 != 3") == Verdict::Proved);
  CHECK(verdict(none, "Batch == Batch + 1") == Verdict::Disproved);
  CHECK(verdict(none, "Batch != Batch + 1") == Verdict::Proved);
  CHECK(verdict(none, "2 * x == 2 * y + 1") == Verdict::Disproved);
  CHECK(verdict(none, "x + 1 <= x") == Verdict::Disproved);
  CHECK(verdict(none, "x < x + 1") == Verdict::Proved);
  CHECK(verdict(none, "x - 1 < 0") == Verdict::Unknown);
  CHECK(verdict(none, "x == y") == Verdict::Unknown);
  CHECK(verdict(none, "x * x == -1") == Verdict::Disproved);
  CHECK(verdict(none, "(2 * x + 1) % 2 == 0") == Verdict::Disproved);
  ProofResult r = none.prove(parse_relation("Batch == Batch + 1"), Detail::Explained);
  CHECK(contains(r.explain(), "`Batch == Batch + 1` is false"));
  CHECK(r.suggestions.empty());
  // Facts can make a relation false.
  CHECK(verdict(solver_for("x != y"), "x == y") == Verdict::Disproved);
  CHECK(verdict(solver_for("x > y"), "x == y") == Verdict::Disproved);
  CHECK(verdict(solver_for("x <= y, y <= x"), "x == y") == Verdict::Proved);
  CHECK(verdict(solver_for("x != 0"), "x >= 1") == Verdict::Proved);
}

TEST_CASE("contradictory facts are reported, not used", "[solver][contradiction]") {
  for (const char* facts : {"2 == 3", "N > 4, N < 2", "x % 0 == 0", "A == A + 1", "N != N", "x == 2 * y, x == 2 * y + 1",
                            "H == 32 * B, H % 32 == 5", "x != y, x == y", "x != y, y == x + 0"}) {
    INFO(facts);
    Solver s = solver_for(facts);
    REQUIRE(s.contradiction());
    ProofResult r = s.prove(parse_relation("1 == 2"));
    CHECK(r.unknown());
    CHECK(contains(r.reason, "contradict"));
  }
  CHECK_FALSE(solver_for("N > 4, N < 6").contradiction());
}

TEST_CASE("signed symbols are not assumed non-negative", "[solver][signed]") {
  Facts facts;
  facts.declare_signed("k");
  Solver s(facts);
  CHECK(verdict(s, "k >= 0") == Verdict::Unknown);
  CHECK(verdict(s, "(2 * k + 1) / 2 == k") == Verdict::Unknown);  // false at k = -1
  CHECK(verdict(s, "(2 * k) / 2 == k") == Verdict::Proved);       // exact either way
  CHECK(verdict(s, "k * k >= 0") == Verdict::Proved);
  CHECK(verdict(Solver(), "(2 * k + 1) / 2 == k") == Verdict::Proved);
}

TEST_CASE("concrete bindings for --bind", "[solver][bind]") {
  Solver s = solver_for("H % Heads == 0, Heads > 0, Heads % KvHeads == 0");
  std::vector<FactCheck> ok = s.check_bindings({{"H", 4096}, {"Heads", 32}, {"KvHeads", 8}});
  REQUIRE(ok.size() == 3);
  for (const FactCheck& c : ok) CHECK(c.check.truth == Truth::True);
  std::vector<FactCheck> bad = s.check_bindings({{"H", 4096}, {"Heads", 24}, {"KvHeads", 8}});
  CHECK(bad[0].check.truth == Truth::False);
  CHECK(bad[0].check.lhs == 4096 % 24);
  CHECK(bad[2].check.truth == Truth::True);
  std::vector<FactCheck> partial = s.check_bindings({{"H", 4096}});
  CHECK(partial[0].check.truth == Truth::Undefined);
  CHECK(partial[0].check.detail == "`Heads` has no value");
  std::vector<FactCheck> zero = s.check_bindings({{"H", 8}, {"Heads", 0}, {"KvHeads", 1}});
  CHECK(zero[0].check.truth == Truth::Undefined);

  // Some symbols bound, the rest symbolic.
  Solver bound = s.with_bindings({{"Heads", 32}, {"KvHeads", 8}});
  CHECK(bound.prove(parse_relation("Heads / KvHeads == 4")).proved());
  CHECK(bound.prove(parse_relation("H % 32 == 0")).proved());
  CHECK(bound.prove(parse_relation("H / Heads * 32 == H")).proved());
  CHECK(bound.normalize(parse_dim("Heads * (H / Heads)")).to_string() == "H");
  CHECK(s.with_bindings({{"Heads", 32}, {"H", 100}}).contradiction());
  CHECK(parse_relation("H % Heads == 0").check({{"H", 4096}, {"Heads", 32}}).truth == Truth::True);
}

TEST_CASE("facts compose across scopes and solvers copy", "[solver][scope]") {
  Solver block = solver_for("H % Heads == 0, Heads > 0");
  Solver fn = block.with_facts(parse_facts("S > 0"));
  CHECK(fn.facts().list().size() == 3);
  CHECK(fn.prove(parse_relation("S * (H / Heads) * Heads > 0")).verdict == Verdict::Unknown);  // H may be 0
  CHECK(fn.prove(parse_relation("S * (H / Heads) * Heads == S * H")).proved());
  Solver copy = fn;
  CHECK(copy.prove(parse_relation("Heads * (H / Heads) == H")).proved());
  Solver moved = std::move(copy);
  CHECK(moved.prove(parse_relation("S >= 1")).proved());
}

TEST_CASE("facts in any order, equalities between compound terms", "[solver][facts]") {
  // The divisibility of H / Heads is stated before H % Heads == 0.
  Solver s = solver_for("(H / Heads) % 2 == 0, H % Heads == 0");
  CHECK(proves(s, "(H / Heads) / 2 * 2 * Heads == H"));
  // An equality no symbol can be solved for stays a linear equality.
  Solver lin = solver_for("A * B == C * D");
  CHECK(proves(lin, "A * B - C * D == 0"));
  CHECK(proves(lin, "2 * A * B + 1 == 2 * C * D + 1"));
  CHECK(proves(lin, "(A * B) % D == 0"));
  // A rational rewrite keeps its divisibility: 2 * A == 3 * B makes B even.
  Solver ratio = solver_for("2 * A == 3 * B");
  CHECK(proves(ratio, "A % 3 == 0"));
  CHECK(proves(ratio, "B % 2 == 0"));
  // A divisor that is a sum.
  Solver sum = solver_for("X % (P + Q) == 0, P + Q > 0");
  CHECK(proves(sum, "X % (P + Q) == 0"));
  CHECK(proves(sum, "(P + Q) * (X / (P + Q)) == X"));
}

TEST_CASE("overflowing arithmetic gives unknown, not a wrong answer", "[solver][overflow]") {
  Solver none;
  ProofResult r = none.prove(parse_relation("x * 9223372036854775807 * 4 == 0"));
  CHECK_FALSE(r.proved());
  CHECK_FALSE(r.disproved());
  Solver big = solver_for("x == 9223372036854775807");
  CHECK_FALSE(big.prove(parse_relation("x + 1 == 0")).proved());
}
