// The text side of `generate --prompt/--chat` and `run --input
// NAME=text:...`: the card's tokenizer, and prompts made from text.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text_support.hpp"

namespace linnet::cli {

// The text model of a card's checkpoint; prints an error and returns
// nothing when there is none.
std::optional<TextModel> load_card_text_model(const std::string& card, const std::vector<std::string>& weights);

// The prompt ids of `--prompt TEXT` (encoded with the post-processor's
// special tokens) or `--chat MESSAGE` (the chat template rendered with a
// generation prompt, encoded as it is); prints an error and returns
// nothing on failure.
std::optional<std::vector<int32_t>> text_prompt(const TextModel& model, const std::string& prompt,
                                                const std::string& chat);

// Replaces each input value `text:...` by the list of its ids under the
// card's tokenizer. 0, or 1 after printing an error.
int encode_text_inputs(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& card,
                       const std::vector<std::string>& weights);

}  // namespace linnet::cli
