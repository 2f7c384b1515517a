// libFuzzer target for the Jinja engine: each input is a template,
// parsed and rendered with a chat context. Besides crashes and sanitizer
// reports, it stops on a broken invariant: a failure must be a
// TemplateError, and rendering the same template twice gives the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "linnet/text/jinja.hpp"

namespace {

using linnet::text::TemplateError;
using linnet::text::jinja::Template;
using linnet::text::jinja::Value;

void require(bool condition) {
  if (!condition) std::abort();
}

Value chat_context() {
  Value context = Value::from_json(
      R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi 😀"},
                       {"role": "assistant", "content": "<think>x</think>Hello", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}],
          "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
          "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})");
  // A fixed clock: the same template must render the same text twice.
  context.set("strftime_now", Value::make_function([](std::vector<Value>&, linnet::text::jinja::Keywords&) {
    return Value::from("2026-01-01");
  }));
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // deep nesting in long inputs only slows the search
  const std::string source(reinterpret_cast<const char*>(data), size);
  static const Value context = chat_context();
  try {
    const Template parsed(source);
    std::string first;
    try {
      first = parsed.render(context);
    } catch (const TemplateError&) {
      return 0;
    }
    require(parsed.render(context) == first);
  } catch (const TemplateError&) {
    // Refusing a template is the expected outcome for most inputs.
  }
  return 0;
}
