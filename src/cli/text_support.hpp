// Finding and loading the text side of a model for `tokenize`, `generate
// --prompt` and `run --input NAME=text:...`: tokenizer.json, the chat
// template and special tokens of tokenizer_config.json, and the
// end-of-sequence ids of generation_config.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/text/tokenizer.hpp"

namespace linnet::cli {

struct TextModel {
  std::string directory;  // where tokenizer.json was found
  text::Tokenizer tokenizer;
  std::optional<std::string> chat_template;  // tokenizer_config.json's, or chat_template.jinja
  std::string bos_token;                     // as text; empty when none
  std::string eos_token;
  // generation_config.json's eos_token_id (one or a list), else the
  // tokenizer's eos token; empty when neither says.
  std::vector<int32_t> eos_ids;
};

// The folder whose tokenizer.json serves `target`: a tokenizer.json file's
// folder, a folder holding one, or a card's weights folder (`weights`
// when given, else the Hugging Face cache). Nothing, with `why`, when
// there is none.
std::optional<std::string> find_tokenizer_directory(const std::string& target, const std::vector<std::string>& weights,
                                                    std::string& why);

// Loads the text model from a folder; nothing, with `why`, on failure.
std::optional<TextModel> load_text_model(const std::string& directory, std::string& why);

}  // namespace linnet::cli
