// Checking a model card asks the solver thousands of questions, and asks
// many of them again: a fresh query and a cached one must get the same
// answer. (Their speed is measured by bench/bench_solver, through
// scripts/bench_check, not here.)
#include <catch2/catch.hpp>

#include <string>

#include "linnet/check/dim_parse.hpp"
#include "linnet/check/solver.hpp"

using namespace linnet::check;

namespace {

const char* kAttention =
    "Shards > 0, Heads % Shards == 0, KvHeads % Shards == 0, KvHeads / Shards > 0,"
    "Heads > 0, KvHeads > 0, Heads % KvHeads == 0, H % Heads == 0, (H / Heads) % 2 == 0,"
    "MaxSeq > 0, Batch > 0, P + Batch <= MaxSeq";

}  // namespace

TEST_CASE("thousands of shape queries get the same answers fresh and cached", "[solver]") {
  Solver solver(parse_facts(kAttention));
  REQUIRE_FALSE(solver.contradiction());

  // Distinct batch symbols defeat the caches: every query is normalised afresh.
  std::vector<Relation> queries;
  for (int i = 0; i < 500; ++i) {
    std::string b = "B" + std::to_string(i);
    queries.push_back(parse_relation(b + " * S * Heads * (H / Heads) == " + b + " * S * H"));
    queries.push_back(parse_relation("(" + b + " * Heads / Shards) % (KvHeads / Shards) == 0"));
    queries.push_back(parse_relation(b + " * (Heads / Shards) * (H / Heads) > 0"));
    queries.push_back(parse_relation("max(0, min(P + " + b + ", MaxSeq) - P) <= " + b));
  }
  std::vector<bool> fresh;
  for (const Relation& q : queries) fresh.push_back(solver.prove(q).proved());
  std::vector<bool> cached;
  for (const Relation& q : queries) cached.push_back(solver.prove(q).proved());

  CHECK(fresh == cached);
  // B * (Heads / Shards) * (H / Heads) > 0 needs B > 0, which is not known:
  // 3 of every 4 hold.
  for (size_t i = 0; i < queries.size(); ++i) {
    CAPTURE(i);
    CHECK(fresh[i] == (i % 4 != 2));
  }
}
