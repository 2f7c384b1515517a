// `linnet tokenize`, `generate --prompt/--chat` and `run --input
// NAME=text:...` on the golden checkpoints, whose small tokenizer.json
// files (golden/*/tokenizer.json) match their 512-token vocabularies.
#include <filesystem>
#include <sstream>

#include "cli_test_util.hpp"
#include "nest/test_run_golden.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

struct GoldenCard {
  const char* card;
  const char* golden;
};
const GoldenCard kCards[] = {{"nest/mistral-7b-instruct-v0.3", "mistral-a"},
                             {"nest/qwen3-8b", "qwen3-a"},
                             {"nest/gpt-oss-20b", "gptoss-a"}};

std::vector<std::string> card_arguments(const std::string& command, const GoldenCard& card,
                                        const std::string& weights = "") {
  std::vector<std::string> arguments{command, card.card, "--weights",
                                     weights.empty() ? "golden/" + std::string(card.golden) : weights};
  for (const std::string& bind : nest_test::golden_binds(card.golden)) {
    arguments.push_back("--bind");
    arguments.push_back(bind);
  }
  return arguments;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The ids of `--json` output: {"ids": [1, 2], ...}.
std::string json_ids(const std::string& json) {
  const size_t open = json.find("\"ids\": [");
  const size_t close = json.find(']', open);
  REQUIRE(open != std::string::npos);
  std::string ids = json.substr(open + 8, close - open - 8);
  std::string compact;
  for (char c : ids) {
    if (c != ' ') compact += c;
  }
  return compact;
}

}  // namespace

TEST_CASE("linnet tokenize: ids and pieces, --json, --decode", "[cli][text]") {
  const cli_test::Outcome plain = run_linnet({"tokenize", "golden/qwen3-a", "The capital of France"});
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  CHECK(contains(plain.out, "84\tT\n"));
  CHECK(contains(plain.out, "\tĠof\n"));

  const cli_test::Outcome json = run_linnet({"tokenize", "golden/mistral-a", "The capital", "--json"});
  REQUIRE(json.status == 0);
  CHECK(json.out.starts_with("{\"ids\": [1, "));  // the post-processor's <s>
  CHECK(contains(json.out, "\"pieces\": [\"<s>\", \"▁T\", \"he\""));

  // A card finds the tokenizer beside its weights; decode gives the text back.
  const cli_test::Outcome by_card =
      run_linnet({"tokenize", "nest/gpt-oss-20b", "--weights", "golden/gptoss-a", "Héllo, wörld! 😀", "--json"});
  REQUIRE(by_card.status == 0);
  const cli_test::Outcome decoded =
      run_linnet({"tokenize", "golden/gptoss-a", "--decode", json_ids(by_card.out)});
  REQUIRE(decoded.status == 0);
  CHECK(decoded.out == "Héllo, wörld! 😀\n");
}

TEST_CASE("linnet tokenize: problems are reported, never a crash", "[cli][text]") {
  const cli_test::Outcome no_tokenizer = run_linnet({"tokenize", "golden/mxfp4-dequant", "hi"});
  CHECK(no_tokenizer.status == 1);
  CHECK(contains(no_tokenizer.err, "holds neither a tokenizer.json nor a card"));

  const cli_test::Outcome out_of_range = run_linnet({"tokenize", "golden/qwen3-a", "--decode", "1,99999"});
  CHECK(out_of_range.status == 1);
  CHECK(contains(out_of_range.err, "the id 99999 is not in the vocabulary"));

  const cli_test::Outcome bad_ids = run_linnet({"tokenize", "golden/qwen3-a", "--decode", "1,x"});
  CHECK(bad_ids.status == 2);

  ScratchDir scratch;
  scratch.write("tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
  const cli_test::Outcome unsupported = run_linnet({"tokenize", scratch.file("tokenizer.json"), "hi"});
  CHECK(unsupported.status == 1);
  CHECK(contains(unsupported.err, "the model `Unigram` is not supported"));
}

TEST_CASE("linnet generate --prompt streams the text of the tokens it generates", "[cli][text][generate]") {
  for (const GoldenCard& card : kCards) {
    INFO(card.golden);
    // The prompt's ids, then the tokens the same prompt generates.
    const cli_test::Outcome ids = run_linnet({"tokenize", std::string("golden/") + card.golden, "The capital of France is", "--json"});
    REQUIRE(ids.status == 0);
    const cli_test::Outcome tokens = run_linnet(
        card_arguments("generate", card) + std::vector<std::string>{"--tokens", json_ids(ids.out), "--max-new", "8"});
    INFO(tokens.err);
    REQUIRE(tokens.status == 0);
    std::string generated = tokens.out.substr(0, tokens.out.size() - 1);
    for (char& c : generated) c = c == ' ' ? ',' : c;
    const cli_test::Outcome expected_text = run_linnet(
        {"tokenize", std::string("golden/") + card.golden, "--decode", generated, "--skip-special"});
    REQUIRE(expected_text.status == 0);

    const cli_test::Outcome text = run_linnet(card_arguments("generate", card) +
                                              std::vector<std::string>{"--prompt", "The capital of France is",
                                                                       "--max-new", "8", "--ignore-eos"});
    INFO(text.err);
    REQUIRE(text.status == 0);
    CHECK(text.out == expected_text.out);
  }
}

TEST_CASE("linnet generate --prompt stops at the end-of-sequence id of generation_config.json", "[cli][text][generate]") {
  const GoldenCard& card = kCards[1];
  const cli_test::Outcome ids = run_linnet({"tokenize", "golden/qwen3-a", "Hello", "--json"});
  const cli_test::Outcome tokens = run_linnet(
      card_arguments("generate", card) + std::vector<std::string>{"--tokens", json_ids(ids.out), "--max-new", "6"});
  REQUIRE(tokens.status == 0);
  // A copy of the checkpoint whose generation_config names the third new token as eos.
  std::vector<std::string> generated;
  std::istringstream words(tokens.out);
  for (std::string word; words >> word;) generated.push_back(word);
  REQUIRE(generated.size() == 6);
  ScratchDir scratch;
  const std::filesystem::path copy = scratch.file("qwen3-a");
  std::filesystem::copy(cli_test::source_path("golden/qwen3-a"), copy);
  scratch.write("qwen3-a/generation_config.json", "{\"eos_token_id\": [" + generated[2] + "]}");
  const cli_test::Outcome stopped =
      run_linnet(card_arguments("generate", card, copy.string()) +
                 std::vector<std::string>{"--prompt", "Hello", "--max-new", "6", "--out", scratch.file("out.npy")});
  INFO(stopped.err);
  REQUIRE(stopped.status == 0);
  // The first generation of that token stops it (it may come before the third).
  CHECK(std::filesystem::exists(scratch.file("out.npy")));
  const cli_test::Outcome all = run_linnet(card_arguments("generate", card, copy.string()) +
                                           std::vector<std::string>{"--prompt", "Hello", "--max-new", "6", "--ignore-eos"});
  REQUIRE(all.status == 0);
  CHECK(stopped.out.size() < all.out.size());
}

TEST_CASE("linnet generate --chat renders the chat template", "[cli][text][generate]") {
  const GoldenCard& card = kCards[0];
  const cli_test::Outcome chat = run_linnet(card_arguments("generate", card) +
                                            std::vector<std::string>{"--chat", "Hi there", "--max-new", "4"});
  INFO(chat.err);
  CHECK(chat.status == 0);
  const cli_test::Outcome messages = run_linnet(
      card_arguments("generate", card) +
      std::vector<std::string>{"--chat", R"([{"role": "user", "content": "Hi there"}])", "--max-new", "4"});
  CHECK(messages.status == 0);
  CHECK(messages.out == chat.out);

  const cli_test::Outcome both = run_linnet(card_arguments("generate", card) +
                                            std::vector<std::string>{"--chat", "x", "--prompt", "y"});
  CHECK(both.status == 2);
  CHECK(contains(both.err, "give the prompt as one of --tokens IDS, --prompt TEXT or --chat MESSAGE"));
}

TEST_CASE("linnet run --input tokens=text:... encodes with the card's tokenizer", "[cli][text][run]") {
  const GoldenCard& card = kCards[1];
  const cli_test::Outcome ids = run_linnet({"tokenize", "golden/qwen3-a", "The capital", "--json"});
  const cli_test::Outcome by_ids =
      run_linnet(card_arguments("run", card) + std::vector<std::string>{"--input", "tokens=" + json_ids(ids.out)});
  const cli_test::Outcome by_text =
      run_linnet(card_arguments("run", card) + std::vector<std::string>{"--input", "tokens=text:The capital"});
  INFO(by_text.err);
  REQUIRE(by_ids.status == 0);
  REQUIRE(by_text.status == 0);
  CHECK(by_text.out == by_ids.out);
}
