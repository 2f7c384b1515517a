// Chat templates against the reference renderings (@huggingface/jinja, as
// transformers.js renders them) in tests/text/references/*.chat.json: the
// golden cases' templates always, the fetched families' when present
// (hidden [.fetched] cases, run by the ctest `text_references`).
#include <simdjson.h>

#include <catch2/catch.hpp>

#include "linnet/text/chat_template.hpp"
#include "linnet/text/jinja.hpp"
#include "linnet/text/config_json.hpp"
#include "text/text_test_util.hpp"

namespace {

using namespace linnet::text;
using namespace linnet::text::testing;

// bos/eos as the reference script passes them: a string, or {"content": ...}.
std::string special(simdjson::dom::element config, const char* key) {
  std::string_view text;
  if (config[key].get(text) == simdjson::SUCCESS) return std::string(text);
  if (config[key]["content"].get(text) == simdjson::SUCCESS) return std::string(text);
  return {};
}

void check_renderings(const std::string& folder, const std::string& family) {
  simdjson::dom::parser config_parser;
  const simdjson::padded_string config_json(tame_big_integers(read_whole(folder + "/tokenizer_config.json")));
  simdjson::dom::element config;
  REQUIRE(config_parser.parse(config_json).get(config) == simdjson::SUCCESS);
  std::string_view source;
  REQUIRE(config["chat_template"].get(source) == simdjson::SUCCESS);

  simdjson::dom::parser parser;
  const simdjson::padded_string json(read_whole(source_path("tests/text/references/" + family + ".chat.json")));
  simdjson::dom::element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  const simdjson::padded_string conversations_json(read_whole(source_path("tests/text/conversations.json")));
  simdjson::dom::parser conversations_parser;
  simdjson::dom::array conversations;
  REQUIRE(conversations_parser.parse(conversations_json).get(conversations) == simdjson::SUCCESS);

  simdjson::dom::array renderings;
  REQUIRE(root["renderings"].get(renderings) == simdjson::SUCCESS);
  size_t index = 0;
  int checked = 0;
  for (simdjson::dom::element conversation : conversations) {
    for (bool add_generation_prompt : {false, true}) {
      simdjson::dom::element expected = renderings.at(index++).value_unsafe();
      std::string_view name;
      REQUIRE(expected["name"].get(name) == simdjson::SUCCESS);
      INFO(family << ": " << name << (add_generation_prompt ? " (with generation prompt)" : ""));
      ChatOptions options;
      options.add_generation_prompt = add_generation_prompt;
      options.bos_token = special(config, "bos_token");
      options.eos_token = special(config, "eos_token");
      simdjson::dom::element messages;
      REQUIRE(conversation["messages"].get(messages) == simdjson::SUCCESS);
      const std::string messages_json = simdjson::minify(messages);
      std::string_view text;
      if (expected["text"].get(text) == simdjson::SUCCESS) {
        CHECK(render_chat(std::string(source), messages_json, options) == std::string(text));
      } else {
        // The reference raised (a template's raise_exception): so must we.
        CHECK_THROWS_AS(render_chat(std::string(source), messages_json, options), TemplateError);
      }
      ++checked;
    }
  }
  CHECK(checked == 10);
}

}  // namespace

TEST_CASE("The golden cases' chat templates render as the reference", "[golden][chat]") {
  check_renderings(source_path("golden/qwen3-a"), "golden-qwen3-a");
  check_renderings(source_path("golden/gptoss-a"), "golden-gptoss-a");
  check_renderings(source_path("golden/mistral-a"), "golden-mistral-a");
}

TEST_CASE("Qwen3's chat template renders as the reference", "[.fetched][chat]") {
  REQUIRE(has_fetched("qwen3"));
  check_renderings(source_path("tests/text/fetched/qwen3"), "qwen3");
}

TEST_CASE("Llama 3's chat template renders as the reference", "[.fetched][chat]") {
  REQUIRE(has_fetched("llama3"));
  check_renderings(source_path("tests/text/fetched/llama3"), "llama3");
}
