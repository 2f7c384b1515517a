// Mutation tests: each copies a card from nest/ to a temporary folder,
// changes one line, and requires the checker to reject it with the code the
// specification's table gives for that mistake. The unchanged cards check
// clean (test_checker_cards.cpp), so every failure here comes from the
// change.
#include <catch2/catch.hpp>

#include "checker_test_util.hpp"

namespace {

using linnet::check::testing::mutate_card;
using linnet::check::testing::run_checker;
using linnet::check::testing::TempDir;

struct Mutation {
  const char* name;
  const char* card;
  const char* file;
  const char* from;
  const char* to;
  const char* code;
};

constexpr const char* kGptOss = "gpt-oss-20b";
constexpr const char* kMistral = "mistral-7b-instruct-v0.3";
constexpr const char* kQwen = "qwen3-8b";

const Mutation kMutations[] = {
    // `SinkAttention` requires the grouping its reshapes depend on.
    {"gpt-oss: DecoderLayer drops `Heads % KvHeads == 0`", kGptOss, "src/lib.linnet",
     "KvHeads > 0,\nHeads % KvHeads == 0,\nHeadDim % 2 == 0,\nExperts > 0,\nTopK > 0,\nH == Blocks * 32,",
     "KvHeads > 0,\nHeadDim % 2 == 0,\nExperts > 0,\nTopK > 0,\nH == Blocks * 32,", "E2206"},
    // `H / 32` is passed as `Blocks`, and `LayerPair` needs `H == Blocks * 32`.
    {"gpt-oss: Model drops `H % 32 == 0`", kGptOss, "src/lib.linnet", "Layers % 2 == 0,\nH % 32 == 0,",
     "Layers % 2 == 0,", "E2206"},
    // The layer pairs are `Layers / 2` blocks: a whole number only when Layers is even.
    {"gpt-oss: Model drops `Layers % 2 == 0`", kGptOss, "src/lib.linnet", "Layers % 2 == 0,\n", "", "E2202"},
    {"gpt-oss: rope's `HeadDim % 2 == 0` dropped from SinkAttention", kGptOss, "src/attention.linnet",
     "HeadDim % 2 == 0,\nMaxSeq > 0", "MaxSeq > 0", "E2206"},
    {"gpt-oss: a reshape loses the factor 2", kGptOss, "src/experts.linnet",
     "reshape(gate_up_weight, [Experts * 2 * Inner, H])", "reshape(gate_up_weight, [Experts * Inner, H])", "E2203"},
    {"gpt-oss: bf16 added to f32", kGptOss, "src/experts.linnet",
     "return mixed + linear(scores, permute(down_bias, [1, 0]))",
     "return mixed + cast<f32>(linear(scores, permute(down_bias, [1, 0])))", "E2103"},
    {"gpt-oss: an index used on an axis of another extent", kGptOss, "src/experts.linnet",
     "activated[b, s, e, i] * scores[b, s, e]", "activated[b, s, e, i] * scores[b, s, i]", "E2201"},
    {"gpt-oss: the last position read one past the end", kGptOss, "src/lib.linnet",
     "return lm_head.forward(norm.forward(hidden(tokens)[:, S - 1, :]))",
     "return lm_head.forward(norm.forward(hidden(tokens)[:, S, :]))", "E2209"},

    {"mistral: DecoderLayer drops `(H / Heads) % 2 == 0`", kMistral, "src/lib.linnet", "(H / Heads) % 2 == 0,\n",
     "", "E2206"},
    {"mistral: split_heads reshapes to the wrong dimension", kMistral, "src/attention.linnet",
     "return permute(reshape(x, [B, S, N, D]), [0, 2, 1, 3])",
     "return permute(reshape(x, [B, S, N, N]), [0, 2, 1, 3])", "E2203"},
    {"mistral: bf16 added to f32", kMistral, "src/lib.linnet",
     "let attended = x + attention.forward(shared(attention_norm.forward(x)))",
     "let attended = x + cast<f32>(attention.forward(shared(attention_norm.forward(x))))", "E2103"},
    {"mistral: next_token reads position S of an axis of extent S", kMistral, "src/lib.linnet",
     "let last = hidden_states(tokens)[:, S - 1, :]", "let last = hidden_states(tokens)[:, S, :]", "E2209"},
    {"mistral: `Shards > 0` dropped, so `Heads / Shards` has no positive divisor", kMistral, "src/lib.linnet",
     "where\nShards > 0,", "where", "E2205"},
    {"mistral: an index neither output nor reduced", kMistral, "src/lib.linnet",
     "let written[b, s] = select(slots[s] == cast<i32>(i), next[b], produced[b, s])",
     "let written[b, s] = select(slots[s] == cast<i32>(i), next[j], produced[b, s])", "E3101"},
    {"mistral: `Vocab % Shards == 0` dropped, so the gathered logits are not `Vocab` wide", kMistral,
     "src/lib.linnet", "Vocab % Shards == 0,\n", "", "E2203"},

    {"qwen3: DecoderLayer drops `HeadDim % 2 == 0`", kQwen, "src/lib.linnet", "HeadDim % 2 == 0,\n", "", "E2206"},
    {"qwen3: the layer array counts `Layers / 2` blocks without `Layers % 2 == 0`", kQwen, "src/lib.linnet",
     "PageSize>; Layers]", "PageSize>; Layers / 2]", "E2202"},
    {"qwen3: merge_heads drops a factor", kQwen, "src/attention.linnet",
     "return reshape(permute(x, [0, 2, 1, 3]), [B, S, N * D])",
     "return reshape(permute(x, [0, 2, 1, 3]), [B, S, N])", "E2203"},
    {"qwen3: bf16 added to f32", kQwen, "src/lib.linnet",
     "let attended = x + attention.forward(shared(attention_norm.forward(x)))",
     "let attended = x + cast<f32>(attention.forward(shared(attention_norm.forward(x))))", "E2103"},
    {"qwen3: next_token reads position S of an axis of extent S", kQwen, "src/lib.linnet",
     "let last = hidden_states(tokens)[:, S - 1, :]", "let last = hidden_states(tokens)[:, S, :]", "E2209"},
};

}  // namespace

TEST_CASE("one-line mutations of the cards are rejected with the spec's code", "[check][mutation]") {
  for (const Mutation& mutation : kMutations) {
    DYNAMIC_SECTION(mutation.name) {
      TempDir dir;
      const std::string card = mutate_card(dir, mutation.card, mutation.file, mutation.from, mutation.to);
      const auto run = run_checker({card});
      INFO(run.text);
      CHECK(run.has_error(mutation.code));
      CHECK(run.instances.empty());
    }
  }
}

TEST_CASE("an unprovable `where` says which relation, where, the facts, and the fix", "[check][mutation]") {
  TempDir dir;
  const std::string card = mutate_card(dir, kGptOss, "src/lib.linnet",
                                       "KvHeads > 0,\nHeads % KvHeads == 0,\nHeadDim % 2 == 0,\nExperts > 0,",
                                       "KvHeads > 0,\nHeadDim % 2 == 0,\nExperts > 0,");
  const auto run = run_checker({card});
  REQUIRE(run.has_error("E2206"));
  CHECK(run.text.find("cannot prove `Heads % KvHeads == 0`, which `SinkAttention` requires") != std::string::npos);
  CHECK(run.text.find("facts searched: `Heads > 0` (where clause of `DecoderLayer`)") != std::string::npos);
  CHECK(run.text.find("help: add `where Heads % KvHeads == 0` to `DecoderLayer`") != std::string::npos);
}
