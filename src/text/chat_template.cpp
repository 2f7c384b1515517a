// Chat templates rendered as transformers' apply_chat_template does: the
// variables it passes are `messages`, `add_generation_prompt`, `tools`
// when given, and the tokenizer's special tokens (`bos_token`, `eos_token`).
#include "linnet/text/chat_template.hpp"

#include "linnet/text/jinja.hpp"

namespace linnet::text {

std::string render_chat(const std::string& template_source, std::string_view messages_json,
                        const ChatOptions& options) {
  const jinja::Value messages = jinja::Value::from_json(messages_json);
  if (messages.kind != jinja::Value::Kind::List) throw TemplateError("the messages are not a JSON list");
  jinja::Value context = jinja::Value::map();
  context.set("messages", messages);
  context.set("add_generation_prompt", jinja::Value::from(options.add_generation_prompt));
  context.set("bos_token", jinja::Value::from(options.bos_token));
  context.set("eos_token", jinja::Value::from(options.eos_token));
  if (!options.tools_json.empty()) context.set("tools", jinja::Value::from_json(options.tools_json));
  return jinja::Template(template_source).render(context);
}

std::string chat_messages_json(std::string_view text) {
  size_t first = 0;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\n' || text[first] == '\t')) ++first;
  if (first < text.size() && text[first] == '[') {
    try {
      if (jinja::Value::from_json(text).kind == jinja::Value::Kind::List) return std::string(text);
    } catch (const TemplateError&) {
      // Not JSON after all: the text is the message.
    }
  }
  jinja::Value message = jinja::Value::map();
  message.set("role", jinja::Value::from("user"));
  message.set("content", jinja::Value::from(std::string(text)));
  return jinja::Value::make_list({message}).to_json();
}

}  // namespace linnet::text
