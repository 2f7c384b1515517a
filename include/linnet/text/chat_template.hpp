// Chat templates: tokenizer_config.json's `chat_template` (Jinja2) rendered
// as transformers' apply_chat_template renders it, with our own Jinja
// engine (jinja.hpp).
#pragma once

#include <string>
#include <string_view>

namespace linnet::text {

struct ChatOptions {
  bool add_generation_prompt = true;
  std::string bos_token;
  std::string eos_token;
  std::string tools_json;  // a JSON list of tool definitions, passed as `tools`; empty: none
};

// The prompt for `messages_json`, a JSON array of {"role", "content"}
// objects (any other fields are passed through to the template). Throws
// TemplateError (jinja.hpp) when the template fails or raises.
std::string render_chat(const std::string& template_source, std::string_view messages_json,
                        const ChatOptions& options);

// `--chat TEXT`: TEXT itself when it is a JSON array of messages, else a
// one-message list with TEXT as the user's content.
std::string chat_messages_json(std::string_view text);

}  // namespace linnet::text
