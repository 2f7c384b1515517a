// Chat templates against the reference renderings (@huggingface/jinja, as
// transformers.js renders them) in tests/text/references/*.chat.json: the
// golden cases' templates always, the fetched families' when present
// (hidden [.fetched] cases, run by the ctest `text_references`).
#include <simdjson.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>

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

// render_chat's context, with the clock fixed at 2026-01-01 as the
// reference script fixes it (GPT-OSS's template prints today's date).
std::string render(const std::string& source, const std::string& messages_json, const ChatOptions& options) {
  jinja::Value context = jinja::Value::map();
  context.set("messages", jinja::Value::from_json(messages_json));
  context.set("add_generation_prompt", jinja::Value::from(options.add_generation_prompt));
  context.set("bos_token", jinja::Value::from(options.bos_token));
  context.set("eos_token", jinja::Value::from(options.eos_token));
  if (!options.tools_json.empty()) context.set("tools", jinja::Value::from_json(options.tools_json));
  context.set("strftime_now", jinja::Value::make_function([](std::vector<jinja::Value>& args, jinja::Keywords&) {
    std::tm day{};
    day.tm_year = 126;
    day.tm_mon = 0;
    day.tm_mday = 1;
    day.tm_hour = 12;
    char text[64];
    const size_t length = std::strftime(text, sizeof text, args.empty() ? "%Y-%m-%d" : args[0].str().c_str(), &day);
    return jinja::Value::from(std::string(text, length));
  }));
  const std::string rendered = jinja::Template(source).render(context);
  // Without the date, render_chat itself must agree.
  if (source.find("strftime_now") == std::string::npos) CHECK(render_chat(source, messages_json, options) == rendered);
  return rendered;
}

void check_renderings(const std::string& folder, const std::string& family) {
  simdjson::dom::parser config_parser;
  const simdjson::padded_string config_json(tame_big_integers(read_whole(folder + "/tokenizer_config.json")));
  simdjson::dom::element config;
  REQUIRE(config_parser.parse(config_json).get(config) == simdjson::SUCCESS);
  std::string source;
  std::string_view from_config;
  if (config["chat_template"].get(from_config) == simdjson::SUCCESS) {
    source = std::string(from_config);
  } else if (std::filesystem::exists(folder + "/chat_template.jinja")) {
    source = read_whole(folder + "/chat_template.jinja");
  } else {
    WARN("skipped: " << folder << " has no chat template");
    return;
  }

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
      simdjson::dom::element tools;
      if (conversation["tools"].get(tools) == simdjson::SUCCESS) options.tools_json = simdjson::minify(tools);
      std::string_view text;
      if (expected["text"].get(text) == simdjson::SUCCESS) {
        CHECK(render(source, messages_json, options) == std::string(text));
      } else {
        // The reference raised (a template's raise_exception): so must we.
        CHECK_THROWS_AS(render(source, messages_json, options), TemplateError);
      }
      ++checked;
    }
  }
  CHECK(checked == 14);
}

}  // namespace

TEST_CASE("The golden cases' chat templates render as the reference", "[golden][chat]") {
  check_renderings(source_path("golden/qwen3-a"), "golden-qwen3-a");
  check_renderings(source_path("golden/gptoss-a"), "golden-gptoss-a");
  check_renderings(source_path("golden/mistral-a"), "golden-mistral-a");
}

TEST_CASE("Qwen3's chat template renders as the reference", "[.fetched][chat]") {
  if (!has_fetched("qwen3")) {
    WARN("skipped: no fetched `qwen3` tokenizer");
    return;
  }
  check_renderings(source_path("tests/text/fetched/qwen3"), "qwen3");
}

TEST_CASE("Llama 3's chat template renders as the reference", "[.fetched][chat]") {
  if (!has_fetched("llama3")) {
    WARN("skipped: no fetched `llama3` tokenizer");
    return;
  }
  check_renderings(source_path("tests/text/fetched/llama3"), "llama3");
}

TEST_CASE("GPT-OSS's chat template (harmony) renders as the reference", "[.fetched][chat]") {
  // The template is not in the npm package; it is checked when a
  // chat_template.jinja has been put beside the fetched tokenizer.
  if (!has_fetched("gptoss")) {
    WARN("skipped: no fetched `gptoss` tokenizer");
    return;
  }
  check_renderings(source_path("tests/text/fetched/gptoss"), "gptoss");
}

TEST_CASE("Mistral v0.3's chat template renders as the reference", "[.fetched][chat]") {
  // The template is not in the npm package (whose SentencePiece vocabulary
  // is Mistral's); checked when a chat_template.jinja is put beside it.
  if (!has_fetched("llama2")) {
    WARN("skipped: no fetched `llama2` tokenizer");
    return;
  }
  check_renderings(source_path("tests/text/fetched/llama2"), "llama2");
}
