// The tokenizers of real models against the reference (Hugging Face's Rust
// `tokenizers`): every string of tests/text/corpus.json encodes to the
// same ids, with and without special tokens, and decodes to the same text.
// The tokenizer files come from scripts/fetch_tokenizers; these cases are
// hidden ([.fetched]) and run by the ctest `text_references`, which is
// skipped with a reason when the files are absent.
#include <simdjson.h>

#include <catch2/catch.hpp>

#include "linnet/text/tokenizer.hpp"
#include "text/text_test_util.hpp"

namespace {

using namespace linnet::text;
using namespace linnet::text::testing;

std::vector<int32_t> id_list(simdjson::dom::element item, const char* key) {
  simdjson::dom::array list;
  REQUIRE(item[key].get(list) == simdjson::SUCCESS);
  std::vector<int32_t> ids;
  for (simdjson::dom::element id : list) {
    int64_t value = 0;
    REQUIRE(id.get(value) == simdjson::SUCCESS);
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

std::string string_field(simdjson::dom::element item, const char* key) {
  std::string_view text;
  REQUIRE(item[key].get(text) == simdjson::SUCCESS);
  return std::string(text);
}

void check_references(const Tokenizer& tokenizer, const std::string& family) {
  simdjson::dom::parser parser;
  const simdjson::padded_string json(read_whole(source_path("tests/text/references/" + family + ".json")));
  simdjson::dom::element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  simdjson::dom::array cases;
  REQUIRE(root["cases"].get(cases) == simdjson::SUCCESS);
  int checked = 0;
  for (simdjson::dom::element item : cases) {
    const std::string text = string_field(item, "text");
    INFO(family << " text: " << text);
    const std::vector<int32_t> ids = tokenizer.encode(text, true);
    CHECK(ids == id_list(item, "ids"));
    const std::vector<int32_t> plain = tokenizer.encode(text, false);
    CHECK(plain == id_list(item, "ids_plain"));
    CHECK(tokenizer.decode(plain) == string_field(item, "decoded"));
    ++checked;
  }
  CHECK(checked > 30);
}

void check_family(const std::string& family) {
  if (!has_fetched(family)) {
    WARN("skipped: no fetched `" << family << "` tokenizer");
    return;
  }
  check_references(Tokenizer::from_file(fetched_tokenizer(family)), family);
}

}  // namespace

TEST_CASE("Qwen3's tokenizer matches the reference on the corpus", "[.fetched]") { check_family("qwen3"); }
TEST_CASE("GPT-OSS's tokenizer (o200k) matches the reference on the corpus", "[.fetched]") { check_family("gptoss"); }
TEST_CASE("Llama 3's tokenizer matches the reference on the corpus", "[.fetched]") { check_family("llama3"); }
TEST_CASE("The SentencePiece-BPE tokenizer (llama2 package) matches the reference on the corpus", "[.fetched]") {
  check_family("llama2");
}

// The golden cases' small tokenizers are committed, so these always run.
TEST_CASE("The golden cases' tokenizers match the reference on the corpus", "[golden]") {
  for (const char* name : {"qwen3-a", "gptoss-a", "mistral-a"}) {
    const std::string family = std::string("golden-") + name;
    const Tokenizer tokenizer = Tokenizer::from_file(source_path(std::string("golden/") + name + "/tokenizer.json"));
    CHECK(tokenizer.vocab_size() == 512);
    check_references(tokenizer, family);
  }
}

TEST_CASE("Metaspace (Mistral v0.3's convention) matches the reference on the corpus", "[.fetched]") {
  // scripts/text_references.js derives it from the llama2 package's vocabulary.
  if (!has_fetched("metaspace")) {
    WARN("skipped: no fetched `metaspace` tokenizer");
    return;
  }
  check_family("metaspace");
}
