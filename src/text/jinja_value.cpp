// Jinja values: construction, truthiness, Python's str()/repr(), JSON in
// (from a document) and out (the tojson filter).
#include <simdjson.h>

#include <charconv>
#include <cmath>

#include "linnet/text/jinja.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/text/utf8.hpp"

namespace linnet::text::jinja {

Value Value::none() {
  Value value;
  value.kind = Kind::None;
  return value;
}
Value Value::from(bool flag) {
  Value value;
  value.kind = Kind::Bool;
  value.boolean = flag;
  return value;
}
Value Value::from(int64_t number) {
  Value value;
  value.kind = Kind::Int;
  value.integer = number;
  return value;
}
Value Value::from(double number) {
  Value value;
  value.kind = Kind::Float;
  value.number = number;
  return value;
}
Value Value::from(std::string text) {
  Value value;
  value.kind = Kind::String;
  value.text = std::move(text);
  return value;
}
Value Value::make_list(ValueList items) {
  Value value;
  value.kind = Kind::List;
  value.list = std::make_shared<ValueList>(std::move(items));
  return value;
}
Value Value::map() {
  Value value;
  value.kind = Kind::Map;
  value.entries = std::make_shared<ValueMap>();
  return value;
}
Value Value::make_function(Function function) {
  Value value;
  value.kind = Kind::Function;
  value.function = std::make_shared<Function>(std::move(function));
  return value;
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return boolean;
    case Kind::Int: return integer != 0;
    case Kind::Float: return number != 0;
    case Kind::String: return !text.empty();
    case Kind::List: return !list->empty();
    case Kind::Map: return !entries->empty();
    case Kind::Function: return true;
  }
  return false;
}

Value Value::get(std::string_view key) const {
  if (kind != Kind::Map) return Value();
  for (const auto& [name, value] : *entries) {
    if (name == key) return value;
  }
  return Value();
}

void Value::set(const std::string& key, Value value) {
  for (auto& [name, existing] : *entries) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  entries->emplace_back(key, std::move(value));
}

namespace {

// Python's repr of a float: the shortest text that reads back, with ".0"
// for integral values.
std::string float_text(double number) {
  if (std::isnan(number)) return "nan";
  if (std::isinf(number)) return number > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, number);
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string quote_python(const std::string& text) {
  // Python prefers single quotes unless the text holds one and no double.
  const bool has_single = text.find('\'') != std::string::npos;
  const bool has_double = text.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == quote) out += '\\';
        out += c;
    }
  }
  return out + quote;
}

Value from_element(simdjson::dom::element element) {
  switch (element.type()) {
    case simdjson::dom::element_type::ARRAY: {
      Value list = Value::make_list();
      for (simdjson::dom::element item : simdjson::dom::array(element)) list.list->push_back(from_element(item));
      return list;
    }
    case simdjson::dom::element_type::OBJECT: {
      Value map = Value::map();
      for (auto [key, item] : simdjson::dom::object(element)) map.entries->emplace_back(std::string(key), from_element(item));
      return map;
    }
    case simdjson::dom::element_type::INT64: return Value::from(int64_t(element));
    case simdjson::dom::element_type::UINT64: return Value::from(static_cast<int64_t>(uint64_t(element)));
    case simdjson::dom::element_type::DOUBLE: return Value::from(double(element));
    case simdjson::dom::element_type::STRING: return Value::from(std::string(std::string_view(element)));
    case simdjson::dom::element_type::BOOL: return Value::from(bool(element));
    case simdjson::dom::element_type::NULL_VALUE: return Value::none();
  }
  return Value();
}

}  // namespace

std::string Value::str() const {
  switch (kind) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return boolean ? "True" : "False";
    case Kind::Int: return std::to_string(integer);
    case Kind::Float: return float_text(number);
    case Kind::String: return text;
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind) {
    case Kind::String: return quote_python(text);
    case Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < list->size(); ++i) out += (i ? ", " : "") + (*list)[i].repr();
      return out + "]";
    }
    case Kind::Map: {
      std::string out = "{";
      for (size_t i = 0; i < entries->size(); ++i) {
        out += (i ? ", " : "") + quote_python((*entries)[i].first) + ": " + (*entries)[i].second.repr();
      }
      return out + "}";
    }
    case Kind::Function: return "<function>";
    default: return str();
  }
}

std::string Value::to_json(int indent, int depth) const {
  const bool pretty = indent >= 0;
  const std::string item_separator = pretty ? "," : ", ";
  const auto newline = [&](int level) { return pretty ? "\n" + std::string(static_cast<size_t>(indent * level), ' ') : ""; };
  switch (kind) {
    case Kind::Undefined:
    case Kind::None: return "null";
    case Kind::Bool: return boolean ? "true" : "false";
    case Kind::Int: return std::to_string(integer);
    case Kind::Float: return float_text(number);
    case Kind::String: return syntax::json_quote(text);
    case Kind::List: {
      if (list->empty()) return "[]";
      std::string out = "[";
      for (size_t i = 0; i < list->size(); ++i) {
        out += (i ? item_separator : "") + newline(depth + 1) + (*list)[i].to_json(indent, depth + 1);
      }
      return out + newline(depth) + "]";
    }
    case Kind::Map: {
      if (entries->empty()) return "{}";
      std::string out = "{";
      for (size_t i = 0; i < entries->size(); ++i) {
        out += (i ? item_separator : "") + newline(depth + 1) + syntax::json_quote((*entries)[i].first) + ": " +
               (*entries)[i].second.to_json(indent, depth + 1);
      }
      return out + newline(depth) + "}";
    }
    case Kind::Function: throw TemplateError("a function cannot be written as JSON");
  }
  return "null";
}

Value Value::from_json(std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
    throw TemplateError(std::string("not valid JSON (") + simdjson::error_message(error) + ")");
  }
  return from_element(root);
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  const auto numeric = [](const Value& v) { return v.kind == Kind::Int || v.kind == Kind::Float || v.kind == Kind::Bool; };
  if (numeric(a) && numeric(b)) {
    const auto as_double = [](const Value& v) {
      return v.kind == Kind::Float ? v.number : static_cast<double>(v.kind == Kind::Bool ? v.boolean : v.integer);
    };
    if (a.kind != Kind::Float && b.kind != Kind::Float) {
      const auto as_int = [](const Value& v) { return v.kind == Kind::Bool ? int64_t{v.boolean} : v.integer; };
      return as_int(a) == as_int(b);
    }
    return as_double(a) == as_double(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return a.text == b.text;
    case Kind::List: return *a.list == *b.list;
    case Kind::Map: {
      if (a.entries->size() != b.entries->size()) return false;
      for (const auto& [key, value] : *a.entries) {
        if (!(b.get(key) == value) || b.get(key).is_undefined()) return false;
      }
      return true;
    }
    case Kind::Function: return a.function == b.function;
    default: return false;
  }
}

}  // namespace linnet::text::jinja
