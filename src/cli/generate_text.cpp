#include "generate_text.hpp"

#include <iostream>

#include "linnet/text/chat_template.hpp"
#include "linnet/text/jinja.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::cli {

std::optional<TextModel> load_card_text_model(const std::string& card, const std::vector<std::string>& weights) {
  std::string why;
  const std::optional<std::string> directory = find_tokenizer_directory(card, weights, why);
  if (!directory) {
    std::cerr << "error: text needs the checkpoint's tokenizer: " << why << '\n';
    return std::nullopt;
  }
  std::optional<TextModel> model = load_text_model(*directory, why);
  if (!model) std::cerr << "error: " << why << '\n';
  return model;
}

std::optional<std::vector<int32_t>> text_prompt(const TextModel& model, const std::string& prompt,
                                                const std::string& chat) {
  try {
    if (chat.empty()) return model.tokenizer.encode(prompt, /*add_special_tokens=*/true);
    if (!model.chat_template) {
      std::cerr << "error: `" << model.directory
                << "` has no chat template (tokenizer_config.json's chat_template or chat_template.jinja)\n";
      return std::nullopt;
    }
    text::ChatOptions options;
    options.add_generation_prompt = true;
    options.bos_token = model.bos_token;
    options.eos_token = model.eos_token;
    const std::string rendered =
        text::render_chat(*model.chat_template, text::chat_messages_json(chat), options);
    // The template writes the special tokens itself (as apply_chat_template).
    return model.tokenizer.encode(rendered, /*add_special_tokens=*/false);
  } catch (const text::TokenizerError& failure) {
    std::cerr << "error: " << syntax::printable(failure.what()) << '\n';
  } catch (const text::TemplateError& failure) {
    std::cerr << "error: the chat template: " << syntax::printable(failure.what()) << '\n';
  }
  return std::nullopt;
}

int encode_text_inputs(std::vector<std::pair<std::string, std::string>>& inputs, const std::string& card,
                       const std::vector<std::string>& weights) {
  std::optional<TextModel> model;
  for (auto& [name, value] : inputs) {
    if (!value.starts_with("text:")) continue;
    if (card.empty()) {
      std::cerr << "error: `--input " << name << "=text:...` needs a card (whose checkpoint has a tokenizer)\n";
      return 1;
    }
    if (!model) {
      model = load_card_text_model(card, weights);
      if (!model) return 1;
    }
    std::vector<int32_t> ids;
    try {
      ids = model->tokenizer.encode(value.substr(5), /*add_special_tokens=*/true);
    } catch (const text::TokenizerError& failure) {
      std::cerr << "error: `--input " << name << "=text:...`: " << failure.what() << '\n';
      return 1;
    }
    std::string list = "[";
    for (size_t i = 0; i < ids.size(); ++i) list += (i ? "," : "") + std::to_string(ids[i]);
    value = list + "]";
  }
  return 0;
}

}  // namespace linnet::cli
