// A Jinja2 template engine for chat templates: the part of the language
// that Hugging Face chat templates use, with the settings transformers
// renders them with (trim_blocks, lstrip_blocks, the loopcontrols
// extension, no autoescape), and Python's conventions for printing values.
//
//   jinja::Template template_(source);
//   jinja::Value context = jinja::Value::map();
//   context.set("messages", jinja::Value::from_json(R"([{"role": "user", "content": "Hi"}])"));
//   std::string prompt = template_.render(context);
//
// Supported: {{ }}, {% if/elif/else %}, {% for %} (with loop.*, `else`,
// an `if` filter, tuple unpacking, break/continue), {% set %} (also
// `ns.attr` and block sets), {% macro %} with defaults and keyword
// arguments, {# #} and the -/+ whitespace controls; the usual operators,
// literals, slices, filters, tests, string/dict methods and the globals
// range, namespace, raise_exception and strftime_now. docs/text.md lists
// them all. Anything else is a TemplateError naming it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linnet::text {

// A template that does not parse, fails while rendering, or calls
// raise_exception(message).
class TemplateError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

namespace jinja {

struct Value;
using ValueList = std::vector<Value>;
// A dict keeps its keys in insertion order, as Python's does.
using ValueMap = std::vector<std::pair<std::string, Value>>;
using Keywords = std::vector<std::pair<std::string, Value>>;
using Function = std::function<Value(std::vector<Value>& args, Keywords& keywords)>;

struct Value {
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Map, Function };
  Kind kind = Kind::Undefined;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string text;
  std::shared_ptr<ValueList> list;   // shared: lists and dicts are references, as in Python
  std::shared_ptr<ValueMap> entries;
  std::shared_ptr<Function> function;
  bool is_namespace = false;  // a namespace() object, whose attributes `set` may assign

  static Value none();
  static Value from(bool flag);
  static Value from(int64_t value);
  static Value from(double value);
  static Value from(std::string value);
  static Value from(const char* value) { return from(std::string(value)); }
  static Value make_list(ValueList items = {});
  static Value map();
  static Value make_function(Function function);
  // A JSON document as a value (objects keep their key order). Throws TemplateError.
  static Value from_json(std::string_view json);

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool truthy() const;
  // For a dict: the value at `key`, or undefined.
  Value get(std::string_view key) const;
  // For a dict: sets (or adds) `key`.
  void set(const std::string& key, Value value);

  // What {{ value }} prints: Python's str() (None, True, 1.0, ['a', 1]).
  std::string str() const;
  // Python's repr(): strings quoted.
  std::string repr() const;
  // JSON as the tojson filter writes it (json.dumps defaults: ", " and ": ").
  std::string to_json(int indent = -1, int depth = 0) const;
};

bool operator==(const Value& a, const Value& b);

class Template {
 public:
  // Throws TemplateError for a template that does not parse.
  explicit Template(const std::string& source);
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  ~Template();

  // Throws TemplateError. `context` is a dict of the template's variables.
  std::string render(const Value& context) const;

 private:
  struct Program;
  std::unique_ptr<Program> program_;
};

}  // namespace jinja
}  // namespace linnet::text
