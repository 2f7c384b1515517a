// The shape solver's speed: checking a model card asks it thousands of
// questions, and each must take microseconds. Prints the set-up time and
// the mean time of a fresh and of a cached query; scripts/bench_check runs
// it after timing `linnet check` on the cards. (tests/check/test_solver_queries.cpp
// checks the answers to the same queries.)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "linnet/check/dim_parse.hpp"
#include "linnet/check/solver.hpp"

using namespace linnet::check;

namespace {

// The facts of an attention block under `Shards` (Mistral's card).
const char* kAttention =
    "Shards > 0, Heads % Shards == 0, KvHeads % Shards == 0, KvHeads / Shards > 0,"
    "Heads > 0, KvHeads > 0, Heads % KvHeads == 0, H % Heads == 0, (H / Heads) % 2 == 0,"
    "MaxSeq > 0, Batch > 0, P + Batch <= MaxSeq";

double micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  auto start = std::chrono::steady_clock::now();
  Solver solver(parse_facts(kAttention));
  const double build = micros_since(start);

  // Distinct batch symbols defeat the caches: every query is normalised afresh.
  std::vector<Relation> queries;
  for (int i = 0; i < 500; ++i) {
    const std::string b = "B" + std::to_string(i);
    queries.push_back(parse_relation(b + " * S * Heads * (H / Heads) == " + b + " * S * H"));
    queries.push_back(parse_relation("(" + b + " * Heads / Shards) % (KvHeads / Shards) == 0"));
    queries.push_back(parse_relation(b + " * (Heads / Shards) * (H / Heads) > 0"));
    queries.push_back(parse_relation("max(0, min(P + " + b + ", MaxSeq) - P) <= " + b));
  }
  int proved = 0;
  start = std::chrono::steady_clock::now();
  for (const Relation& query : queries) proved += solver.prove(query).proved();
  const double fresh = micros_since(start) / static_cast<double>(queries.size());
  start = std::chrono::steady_clock::now();
  for (const Relation& query : queries) proved += solver.prove(query).proved();
  const double cached = micros_since(start) / static_cast<double>(queries.size());

  std::printf("solver: set-up %.0f us; %zu queries, fresh %.1f us each, cached %.2f us each (%d proved)\n", build,
              queries.size(), fresh, cached, proved);
  return 0;
}
