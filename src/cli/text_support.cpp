#include "text_support.hpp"

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "linnet/nest/card.hpp"
#include "linnet/nest/weights.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/text/config_json.hpp"
#include "linnet/syntax/file_reading.hpp"

namespace linnet::cli {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_file(const fs::path& path) {
  std::string text, problem;
  if (!syntax::read_whole_file(path.string(), text, problem)) return std::nullopt;
  return text;
}

// A special token in tokenizer_config.json: a string, or {"content": ...}.
std::string special_token(simdjson::dom::element config, const char* key) {
  std::string_view text;
  if (config[key].get(text) == simdjson::SUCCESS) return std::string(text);
  if (config[key]["content"].get(text) == simdjson::SUCCESS) return std::string(text);
  return {};
}

}  // namespace

std::optional<std::string> find_tokenizer_directory(const std::string& target, const std::vector<std::string>& weights,
                                                    std::string& why) {
  std::error_code ec;
  if (fs::is_regular_file(target, ec)) {
    const fs::path parent = fs::path(target).parent_path();
    if (fs::path(target).filename() != "tokenizer.json") {
      why = "`" + target + "` is not a tokenizer.json";
      return std::nullopt;
    }
    return parent.empty() ? std::string(".") : parent.string();
  }
  if (!fs::is_directory(target, ec)) {
    why = "`" + target + "` does not exist";
    return std::nullopt;
  }
  if (weights.empty() && fs::is_regular_file(fs::path(target) / "tokenizer.json", ec)) return target;
  if (!fs::is_regular_file(fs::path(target) / "nest.toml", ec)) {
    why = "`" + target + "` holds neither a tokenizer.json nor a card (nest.toml)";
    return std::nullopt;
  }
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  const std::optional<nest::Card> card = nest::read_card(target, sources, diagnostics);
  if (!card) {
    why = "cannot read the card `" + target + "`";
    return std::nullopt;
  }
  try {
    const nest::WeightsLocation location = nest::locate_weights(*card, weights);
    if (!fs::is_regular_file(fs::path(location.directory) / "tokenizer.json", ec)) {
      why = "the card's weights folder `" + location.directory + "` holds no tokenizer.json";
      return std::nullopt;
    }
    return location.directory;
  } catch (const nest::WeightsNotFound& failure) {
    why = std::string("no tokenizer for the card: ") + failure.what();
    return std::nullopt;
  }
}

std::optional<TextModel> load_text_model(const std::string& directory, std::string& why) {
  const fs::path folder(directory);
  std::optional<text::Tokenizer> tokenizer;
  try {
    tokenizer.emplace(text::Tokenizer::from_file((folder / "tokenizer.json").string()));
  } catch (const text::TokenizerError& failure) {
    why = failure.what();
    return std::nullopt;
  }
  TextModel model{directory, std::move(*tokenizer), std::nullopt, {}, {}, {}};

  simdjson::dom::parser parser;
  if (const auto config_text = read_file(folder / "tokenizer_config.json")) {
    simdjson::dom::element config;
    const simdjson::padded_string padded(text::tame_big_integers(*config_text));
    if (const auto error = parser.parse(padded).get(config); error != simdjson::SUCCESS) {
      why = (folder / "tokenizer_config.json").string() + " is not valid JSON (" + simdjson::error_message(error) + ")";
      return std::nullopt;
    }
    std::string_view chat;
    if (config["chat_template"].get(chat) == simdjson::SUCCESS) model.chat_template = std::string(chat);
    model.bos_token = special_token(config, "bos_token");
    model.eos_token = special_token(config, "eos_token");
  }
  if (!model.chat_template) {
    if (auto jinja = read_file(folder / "chat_template.jinja")) model.chat_template = std::move(*jinja);
  }
  if (const auto generation_text = read_file(folder / "generation_config.json")) {
    simdjson::dom::element generation;
    const simdjson::padded_string padded(text::tame_big_integers(*generation_text));
    if (parser.parse(padded).get(generation) == simdjson::SUCCESS) {
      int64_t one = 0;
      simdjson::dom::array many;
      if (generation["eos_token_id"].get(one) == simdjson::SUCCESS) {
        model.eos_ids.push_back(static_cast<int32_t>(one));
      } else if (generation["eos_token_id"].get(many) == simdjson::SUCCESS) {
        for (auto id : many) {
          if (id.get(one) == simdjson::SUCCESS) model.eos_ids.push_back(static_cast<int32_t>(one));
        }
      }
    }
  }
  if (model.eos_ids.empty() && !model.eos_token.empty()) {
    if (const auto id = model.tokenizer.id_of(model.eos_token)) model.eos_ids.push_back(*id);
  }
  return model;
}

}  // namespace linnet::cli
