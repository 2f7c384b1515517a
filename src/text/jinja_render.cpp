// Rendering a parsed Jinja template: scopes, statements, operators with
// Python's rules, and the filters, tests, methods and globals chat
// templates use.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "jinja_ast.hpp"

namespace linnet::text::jinja {

namespace {

using Kind = Value::Kind;
using Scope = std::map<std::string, Value, std::less<>>;

[[noreturn]] void fail(size_t line, const std::string& message) {
  throw TemplateError("line " + std::to_string(line) + ": " + message);
}

const char* kind_name(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "none";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::List: return "list";
    case Kind::Map: return "dict";
    case Kind::Function: return "function";
  }
  return "value";
}

bool is_number(const Value& v) { return v.kind == Kind::Int || v.kind == Kind::Float || v.kind == Kind::Bool; }
double as_double(const Value& v) {
  return v.kind == Kind::Float ? v.number : static_cast<double>(v.kind == Kind::Bool ? int64_t{v.boolean} : v.integer);
}
int64_t as_int(const Value& v) { return v.kind == Kind::Bool ? int64_t{v.boolean} : v.integer; }

bool python_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip_text(const std::string& text, const Value* chars, bool left, bool right) {
  const auto strip_this = [&](char c) {
    if (chars && chars->kind == Kind::String) return chars->text.find(c) != std::string::npos;
    return python_space(c);
  };
  size_t begin = 0, end = text.size();
  if (left) {
    while (begin < end && strip_this(text[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strip_this(text[end - 1])) --end;
  }
  return text.substr(begin, end - begin);
}

// Items of an iterable: a list's elements, a dict's keys, a string's characters.
ValueList iterate(const Value& v, size_t line) {
  switch (v.kind) {
    case Kind::List: return *v.list;
    case Kind::Map: {
      ValueList keys;
      for (const auto& [key, value] : *v.entries) keys.push_back(Value::from(key));
      return keys;
    }
    case Kind::String: {
      ValueList characters;
      size_t at = 0;
      while (at < v.text.size()) {
        const unsigned char lead = static_cast<unsigned char>(v.text[at]);
        const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        characters.push_back(Value::from(v.text.substr(at, length)));
        at += length;
      }
      return characters;
    }
    case Kind::Undefined: return {};
    default: fail(line, std::string("a ") + kind_name(v) + " is not iterable");
  }
}

int64_t length_of(const Value& v, size_t line) {
  switch (v.kind) {
    case Kind::String: return static_cast<int64_t>(iterate(v, line).size());
    case Kind::List: return static_cast<int64_t>(v.list->size());
    case Kind::Map: return static_cast<int64_t>(v.entries->size());
    default: fail(line, std::string("a ") + kind_name(v) + " has no length");
  }
}

Value item_pair(const std::string& key, const Value& value) { return Value::make_list({Value::from(key), value}); }

bool less_than(const Value& a, const Value& b, size_t line) {
  if (is_number(a) && is_number(b)) return as_double(a) < as_double(b);
  if (a.kind == Kind::String && b.kind == Kind::String) return a.text < b.text;
  fail(line, std::string("cannot compare a ") + kind_name(a) + " with a " + kind_name(b));
}

bool contains(const Value& container, const Value& item, size_t line) {
  switch (container.kind) {
    case Kind::String:
      if (item.kind != Kind::String) fail(line, "`in <string>` needs a string on the left");
      return container.text.find(item.text) != std::string::npos;
    case Kind::List: return std::find(container.list->begin(), container.list->end(), item) != container.list->end();
    case Kind::Map: return item.kind == Kind::String && !container.get(item.text).is_undefined();
    case Kind::Undefined: return false;
    default: fail(line, std::string("`in` needs a string, list or dict, not a ") + kind_name(container));
  }
}

// Python's index rules for a[i] on a sequence of `size`.
std::optional<size_t> normalize_index(int64_t index, size_t size) {
  if (index < 0) index += static_cast<int64_t>(size);
  if (index < 0 || index >= static_cast<int64_t>(size)) return std::nullopt;
  return static_cast<size_t>(index);
}

Value slice(const Value& v, const Value& start_value, const Value& stop_value, const Value& step_value, size_t line) {
  const bool is_text = v.kind == Kind::String;
  ValueList items = is_text ? iterate(v, line) : v.kind == Kind::List ? *v.list : ValueList{};
  if (!is_text && v.kind != Kind::List) fail(line, std::string("cannot slice a ") + kind_name(v));
  const int64_t n = static_cast<int64_t>(items.size());
  const int64_t step = step_value.kind == Kind::Int ? step_value.integer : 1;
  if (step == 0) fail(line, "a slice step cannot be zero");
  const auto bound = [&](const Value& value, int64_t fallback) {
    if (value.kind != Kind::Int) return fallback;
    int64_t i = value.integer;
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t start = bound(start_value, step > 0 ? 0 : n - 1);
  const int64_t stop = bound(stop_value, step > 0 ? n : -1);
  ValueList out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(items[static_cast<size_t>(i)]);
  if (!is_text) return Value::make_list(std::move(out));
  std::string text;
  for (const Value& c : out) text += c.text;
  return Value::from(std::move(text));
}

enum class Flow { Normal, Break, Continue };

class Renderer {
 public:
  explicit Renderer(const Value& context) {
    scopes_.push_back(std::make_shared<Scope>());
    Scope& globals = *scopes_.back();
    install_globals(globals);
    if (context.kind == Kind::Map) {
      for (const auto& [key, value] : *context.entries) globals[key] = value;
    }
    scopes_.push_back(std::make_shared<Scope>());  // the template's own top level
  }

  void render(const NodeList& nodes, std::string& out) {
    if (render_nodes(nodes, out) != Flow::Normal) fail(0, "`break` or `continue` outside a loop");
  }

 private:
  std::vector<std::shared_ptr<Scope>> scopes_;
  int call_depth_ = 0;

  Value lookup(const std::string& name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      const auto found = (*scope)->find(name);
      if (found != (*scope)->end()) return found->second;
    }
    return Value();
  }
  void assign(const std::string& name, Value value) { (*scopes_.back())[name] = std::move(value); }

  static void install_globals(Scope& globals) {
    globals["range"] = Value::make_function([](std::vector<Value>& args, Keywords&) {
      int64_t start = 0, stop = 0, step = 1;
      if (args.size() == 1) {
        stop = as_int(args[0]);
      } else if (args.size() >= 2) {
        start = as_int(args[0]);
        stop = as_int(args[1]);
        if (args.size() > 2) step = as_int(args[2]);
      }
      if (step == 0) throw TemplateError("range() step cannot be zero");
      ValueList items;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(Value::from(i));
      return Value::make_list(std::move(items));
    });
    globals["namespace"] = Value::make_function([](std::vector<Value>& args, Keywords& keywords) {
      Value ns = Value::map();
      ns.is_namespace = true;
      for (const Value& arg : args) {
        if (arg.kind == Kind::Map) {
          for (const auto& [key, value] : *arg.entries) ns.set(key, value);
        }
      }
      for (auto& [key, value] : keywords) ns.set(key, value);
      return ns;
    });
    globals["dict"] = Value::make_function([](std::vector<Value>&, Keywords& keywords) {
      Value map = Value::map();
      for (auto& [key, value] : keywords) map.set(key, value);
      return map;
    });
    globals["raise_exception"] = Value::make_function([](std::vector<Value>& args, Keywords&) -> Value {
      throw TemplateError("the template raised: " + (args.empty() ? std::string() : args[0].str()));
    });
    globals["strftime_now"] = Value::make_function([](std::vector<Value>& args, Keywords&) {
      const std::time_t now = std::time(nullptr);
      std::tm local{};
      localtime_r(&now, &local);
      char buffer[256];
      const std::string format = args.empty() ? "%Y-%m-%d" : args[0].str();
      const size_t length = std::strftime(buffer, sizeof buffer, format.c_str(), &local);
      return Value::from(std::string(buffer, length));
    });
  }

  Flow render_nodes(const NodeList& nodes, std::string& out) {
    for (const auto& node : nodes) {
      const Flow flow = render_node(*node, out);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  Flow render_node(const Node& node, std::string& out) {
    switch (node.kind) {
      case Node::Kind::Text: out += node.text; return Flow::Normal;
      case Node::Kind::Output: out += eval(*node.expr).str(); return Flow::Normal;
      case Node::Kind::If:
        for (const auto& [condition, body] : node.branches) {
          if (eval(*condition).truthy()) return render_nodes(body, out);
        }
        return render_nodes(node.otherwise, out);
      case Node::Kind::For: return render_for(node, out);
      case Node::Kind::Set: {
        Value value = eval(*node.expr);
        if (node.attribute) {
          Value target = lookup(node.targets[0]);
          if (target.kind != Kind::Map || !target.is_namespace) {
            fail(node.line, "`set " + node.targets[0] + "." + node.targets[1] + "` needs a namespace()");
          }
          target.set(node.targets[1], std::move(value));
        } else if (node.targets.size() == 1) {
          assign(node.targets[0], std::move(value));
        } else {
          const ValueList items = iterate(value, node.line);
          if (items.size() != node.targets.size()) fail(node.line, "cannot unpack into the names of `set`");
          for (size_t i = 0; i < items.size(); ++i) assign(node.targets[i], items[i]);
        }
        return Flow::Normal;
      }
      case Node::Kind::SetBlock: {
        std::string captured;
        render_nodes(node.body, captured);
        assign(node.targets[0], Value::from(std::move(captured)));
        return Flow::Normal;
      }
      case Node::Kind::Macro: assign(node.name, make_macro(node)); return Flow::Normal;
      case Node::Kind::Break: return Flow::Break;
      case Node::Kind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  Flow render_for(const Node& node, std::string& out) {
    const Value iterable = eval(*node.expr);
    ValueList items = iterate(iterable, node.line);
    const auto bind = [&](const Value& item) {
      if (node.targets.size() == 1) {
        assign(node.targets[0], item);
        return;
      }
      const ValueList parts = iterate(item, node.line);
      if (parts.size() != node.targets.size()) fail(node.line, "cannot unpack a loop item into the loop's names");
      for (size_t i = 0; i < parts.size(); ++i) assign(node.targets[i], parts[i]);
    };
    if (node.condition) {
      // The `if` filter runs before the loop: loop.length counts what it keeps.
      ValueList kept;
      for (const Value& item : items) {
        scopes_.push_back(std::make_shared<Scope>());
        bind(item);
        const bool keep = eval(*node.condition).truthy();
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return render_nodes(node.otherwise, out);
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      scopes_.push_back(std::make_shared<Scope>());
      Value loop = Value::map();
      loop.set("index", Value::from(i + 1));
      loop.set("index0", Value::from(i));
      loop.set("revindex", Value::from(n - i));
      loop.set("revindex0", Value::from(n - i - 1));
      loop.set("first", Value::from(i == 0));
      loop.set("last", Value::from(i == n - 1));
      loop.set("length", Value::from(n));
      loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value());
      loop.set("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value());
      assign("loop", loop);
      bind(items[static_cast<size_t>(i)]);
      const Flow flow = render_nodes(node.body, out);
      scopes_.pop_back();
      if (flow == Flow::Break) break;
    }
    return Flow::Normal;
  }

  Value make_macro(const Node& node) {
    const Node* macro = &node;
    // Weak: the macro is stored in `top`, and a strong reference back would
    // be a cycle that frees neither (the renderer holds both scopes while
    // any macro can be called).
    std::weak_ptr<Scope> globals_scope = scopes_[0];
    std::weak_ptr<Scope> top_scope = scopes_[1];
    return Value::make_function([this, macro, globals_scope, top_scope](std::vector<Value>& args, Keywords& keywords) {
      std::shared_ptr<Scope> globals = globals_scope.lock();
      std::shared_ptr<Scope> top = top_scope.lock();
      if (!globals || !top) throw TemplateError("the macro `" + macro->name + "` is called after its template ended");
      if (args.size() > macro->parameters.size()) {
        throw TemplateError("the macro `" + macro->name + "` takes " + std::to_string(macro->parameters.size()) +
                            " arguments, given " + std::to_string(args.size()));
      }
      // A macro that calls itself without end is refused before the stack runs out.
      if (++call_depth_ > 100) {
        --call_depth_;
        throw TemplateError("the macro `" + macro->name + "` calls itself too deeply");
      }
      std::vector<std::shared_ptr<Scope>> saved = std::move(scopes_);
      scopes_ = {globals, top, std::make_shared<Scope>()};
      std::string out;
      try {
        for (size_t i = 0; i < macro->parameters.size(); ++i) {
          // (Not a structured binding: clang 14 cannot capture one in the lambda below.)
          const std::string& name = macro->parameters[i].first;
          const ExprPtr& fallback = macro->parameters[i].second;
          Value value;
          if (i < args.size()) {
            value = args[i];
          } else {
            const auto given = std::find_if(keywords.begin(), keywords.end(), [&](const auto& k) { return k.first == name; });
            if (given != keywords.end()) value = given->second;
            else if (fallback) value = eval(*fallback);
          }
          assign(name, std::move(value));
        }
        render_nodes(macro->body, out);
      } catch (...) {
        scopes_ = std::move(saved);
        --call_depth_;
        throw;
      }
      scopes_ = std::move(saved);
      --call_depth_;
      return Value::from(std::move(out));
    });
  }

  // ---- expressions ----

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Literal: return e.value;
      case Expr::Kind::Name: return lookup(e.name);
      case Expr::Kind::List:
      case Expr::Kind::Tuple: {
        ValueList items;
        for (const auto& item : e.items) items.push_back(eval(*item));
        return Value::make_list(std::move(items));
      }
      case Expr::Kind::Dict: {
        Value map = Value::map();
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          const Value key = eval(*e.items[i]);
          map.set(key.str(), eval(*e.items[i + 1]));
        }
        return map;
      }
      case Expr::Kind::Attribute: {
        const Value object = eval(*e.items[0]);
        if (object.kind == Kind::Map) return object.get(e.name);
        return Value();
      }
      case Expr::Kind::Index: return index(eval(*e.items[0]), eval(*e.items[1]), e.line);
      case Expr::Kind::Slice: {
        const auto part = [&](size_t i) { return e.items[i] ? eval(*e.items[i]) : Value(); };
        return slice(eval(*e.items[0]), part(1), part(2), part(3), e.line);
      }
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Filter: return filter(e);
      case Expr::Kind::Test: {
        const bool result = test(e);
        return Value::from(e.negated ? !result : result);
      }
      case Expr::Kind::Unary: {
        const Value operand = eval(*e.items[0]);
        if (e.name == "not") return Value::from(!operand.truthy());
        if (!is_number(operand)) fail(e.line, std::string("unary ") + e.name + " needs a number, not a " + kind_name(operand));
        if (e.name == "+") return operand;
        return operand.kind == Kind::Float ? Value::from(-operand.number) : Value::from(-as_int(operand));
      }
      case Expr::Kind::Binary: return binary(e);
      case Expr::Kind::Ternary:
        if (eval(*e.items[0]).truthy()) return eval(*e.items[1]);
        return e.items[2] ? eval(*e.items[2]) : Value();
    }
    return Value();
  }

  static Value index(const Value& object, const Value& key, size_t line) {
    switch (object.kind) {
      case Kind::Map: return object.get(key.str());
      case Kind::List: {
        if (key.kind != Kind::Int) fail(line, "a list index must be an integer");
        const auto at = normalize_index(key.integer, object.list->size());
        return at ? (*object.list)[*at] : Value();
      }
      case Kind::String: {
        if (key.kind != Kind::Int) fail(line, "a string index must be an integer");
        const ValueList characters = iterate(object, line);
        const auto at = normalize_index(key.integer, characters.size());
        return at ? characters[*at] : Value();
      }
      case Kind::Undefined: return Value();
      default: fail(line, std::string("cannot index a ") + kind_name(object));
    }
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value left = eval(*e.items[0]);
      return left.truthy() ? eval(*e.items[1]) : left;
    }
    if (op == "or") {
      Value left = eval(*e.items[0]);
      return left.truthy() ? left : eval(*e.items[1]);
    }
    const Value a = eval(*e.items[0]);
    const Value b = eval(*e.items[1]);
    if (op == "~") return Value::from(a.str() + b.str());
    if (op == "==") return Value::from(a == b);
    if (op == "!=") return Value::from(!(a == b));
    if (op == "<") return Value::from(less_than(a, b, e.line));
    if (op == ">") return Value::from(less_than(b, a, e.line));
    if (op == "<=") return Value::from(!less_than(b, a, e.line));
    if (op == ">=") return Value::from(!less_than(a, b, e.line));
    if (op == "in") return Value::from(contains(b, a, e.line));
    if (op == "not in") return Value::from(!contains(b, a, e.line));
    if (op == "+") {
      if (a.kind == Kind::String && b.kind == Kind::String) return Value::from(a.text + b.text);
      if (a.kind == Kind::List && b.kind == Kind::List) {
        ValueList joined = *a.list;
        joined.insert(joined.end(), b.list->begin(), b.list->end());
        return Value::make_list(std::move(joined));
      }
    }
    if (op == "*" && a.kind == Kind::String && b.kind == Kind::Int) {
      std::string out;
      for (int64_t i = 0; i < b.integer; ++i) out += a.text;
      return Value::from(std::move(out));
    }
    if (!is_number(a) || !is_number(b)) {
      fail(e.line, "cannot apply `" + op + "` to a " + kind_name(a) + " and a " + kind_name(b));
    }
    const bool floats = a.kind == Kind::Float || b.kind == Kind::Float;
    if (op == "/") {
      if (as_double(b) == 0) fail(e.line, "division by zero");
      return Value::from(as_double(a) / as_double(b));
    }
    if (floats) {
      const double x = as_double(a), y = as_double(b);
      if (op == "+") return Value::from(x + y);
      if (op == "-") return Value::from(x - y);
      if (op == "*") return Value::from(x * y);
      if (op == "**") return Value::from(std::pow(x, y));
      if (y == 0) fail(e.line, "division by zero");
      if (op == "//") return Value::from(std::floor(x / y));
      if (op == "%") return Value::from(x - std::floor(x / y) * y);
    } else {
      const int64_t x = as_int(a), y = as_int(b);
      if (op == "+") return Value::from(x + y);
      if (op == "-") return Value::from(x - y);
      if (op == "*") return Value::from(x * y);
      if (op == "**") return Value::from(static_cast<int64_t>(std::pow(static_cast<double>(x), static_cast<double>(y))));
      if (y == 0) fail(e.line, "division by zero");
      // Python floors toward negative infinity.
      int64_t quotient = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --quotient;
      if (op == "//") return Value::from(quotient);
      if (op == "%") return Value::from(x - quotient * y);
    }
    fail(e.line, "unknown operator `" + op + "`");
  }

  void evaluate_arguments(const Expr& e, size_t first, std::vector<Value>& args, Keywords& keywords) {
    for (size_t i = first; i < e.items.size(); ++i) args.push_back(eval(*e.items[i]));
    for (const auto& [name, value] : e.keywords) keywords.emplace_back(name, eval(*value));
  }

  static const Value* keyword(const Keywords& keywords, std::string_view name) {
    for (const auto& [key, value] : keywords) {
      if (key == name) return &value;
    }
    return nullptr;
  }

  Value call(const Expr& e) {
    std::vector<Value> args;
    Keywords keywords;
    const Expr& callee = *e.items[0];
    if (callee.kind == Expr::Kind::Attribute) {
      Value object = eval(*callee.items[0]);
      evaluate_arguments(e, 1, args, keywords);
      if (object.kind == Kind::Map && !object.get(callee.name).is_undefined()) {
        const Value member = object.get(callee.name);
        if (member.kind == Kind::Function) return (*member.function)(args, keywords);
      }
      return method(object, callee.name, args, keywords, e.line);
    }
    const Value function = eval(callee);
    evaluate_arguments(e, 1, args, keywords);
    if (function.kind != Kind::Function) {
      fail(e.line, (callee.kind == Expr::Kind::Name ? "`" + callee.name + "`" : std::string("a value")) +
                       " is not callable (" + kind_name(function) + ")");
    }
    try {
      return (*function.function)(args, keywords);
    } catch (const TemplateError&) {
      throw;
    }
  }

  static Value method(const Value& object, const std::string& name, std::vector<Value>& args, Keywords& keywords,
                      size_t line) {
    const auto arg = [&](size_t i, const char* key) -> const Value* {
      if (i < args.size()) return &args[i];
      return keyword(keywords, key);
    };
    if (object.kind == Kind::String) {
      const std::string& text = object.text;
      if (name == "strip") return Value::from(strip_text(text, arg(0, "chars"), true, true));
      if (name == "lstrip") return Value::from(strip_text(text, arg(0, "chars"), true, false));
      if (name == "rstrip") return Value::from(strip_text(text, arg(0, "chars"), false, true));
      if (name == "upper" || name == "lower") {
        std::string out = text;
        for (char& c : out) {
          if (name == "upper" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
          if (name == "lower" && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        }
        return Value::from(std::move(out));
      }
      if (name == "startswith" || name == "endswith") {
        const Value* affix = arg(0, "prefix");
        if (!affix) fail(line, name + "() needs an argument");
        ValueList options = affix->kind == Kind::List ? *affix->list : ValueList{*affix};
        for (const Value& option : options) {
          if (option.kind != Kind::String) fail(line, name + "() needs strings");
          if (name == "startswith" ? text.starts_with(option.text) : text.ends_with(option.text)) return Value::from(true);
        }
        return Value::from(false);
      }
      if (name == "split") {
        const Value* separator = arg(0, "sep");
        const Value* limit = arg(1, "maxsplit");
        int64_t splits = limit && limit->kind == Kind::Int ? limit->integer : -1;
        ValueList parts;
        if (!separator || separator->kind == Kind::None) {
          size_t at = 0;
          while (true) {
            while (at < text.size() && python_space(text[at])) ++at;
            if (at >= text.size()) break;
            if (splits == 0) {
              parts.push_back(Value::from(strip_text(text.substr(at), nullptr, false, true)));
              break;
            }
            size_t end = at;
            while (end < text.size() && !python_space(text[end])) ++end;
            parts.push_back(Value::from(text.substr(at, end - at)));
            at = end;
            --splits;
          }
          return Value::make_list(std::move(parts));
        }
        if (separator->kind != Kind::String || separator->text.empty()) fail(line, "split() needs a non-empty separator");
        size_t at = 0;
        while (true) {
          const size_t found = splits == 0 ? std::string::npos : text.find(separator->text, at);
          if (found == std::string::npos) {
            parts.push_back(Value::from(text.substr(at)));
            break;
          }
          parts.push_back(Value::from(text.substr(at, found - at)));
          at = found + separator->text.size();
          --splits;
        }
        return Value::make_list(std::move(parts));
      }
      if (name == "replace") {
        const Value* old_text = arg(0, "old");
        const Value* new_text = arg(1, "new");
        if (!old_text || !new_text) fail(line, "replace() needs two arguments");
        return Value::from(replace_text(text, old_text->str(), new_text->str()));
      }
      if (name == "title" || name == "capitalize") return Value::from(recase(text, name == "title"));
      if (name == "find") {
        const Value* needle = arg(0, "sub");
        if (!needle) fail(line, "find() needs an argument");
        const size_t found = text.find(needle->str());
        return Value::from(found == std::string::npos ? int64_t{-1} : static_cast<int64_t>(found));
      }
      if (name == "count") {
        const Value* needle = arg(0, "sub");
        if (!needle || needle->str().empty()) fail(line, "count() needs a non-empty argument");
        int64_t count = 0;
        for (size_t at = text.find(needle->str()); at != std::string::npos; at = text.find(needle->str(), at + needle->str().size())) ++count;
        return Value::from(count);
      }
      if (name == "join") {
        const Value* items = arg(0, "iterable");
        if (!items) fail(line, "join() needs an argument");
        std::string out;
        bool first = true;
        for (const Value& item : iterate(*items, line)) {
          out += (first ? "" : text) + item.str();
          first = false;
        }
        return Value::from(std::move(out));
      }
    }
    if (object.kind == Kind::Map) {
      if (name == "get") {
        const Value* key = arg(0, "key");
        if (!key) fail(line, "get() needs a key");
        const Value found = object.get(key->str());
        if (!found.is_undefined()) return found;
        const Value* fallback = arg(1, "default");
        return fallback ? *fallback : Value::none();
      }
      if (name == "items" || name == "keys" || name == "values") {
        ValueList out;
        for (const auto& [key, value] : *object.entries) {
          out.push_back(name == "items" ? item_pair(key, value) : name == "keys" ? Value::from(key) : value);
        }
        return Value::make_list(std::move(out));
      }
    }
    fail(line, std::string("a ") + kind_name(object) + " has no method `" + name + "`");
  }

  static std::string replace_text(const std::string& text, const std::string& from, const std::string& to) {
    if (from.empty()) return text;
    std::string out;
    size_t at = 0;
    for (size_t found = text.find(from); found != std::string::npos; found = text.find(from, at)) {
      out += text.substr(at, found - at) + to;
      at = found + from.size();
    }
    return out + text.substr(at);
  }

  static std::string recase(const std::string& text, bool every_word) {
    std::string out = text;
    bool start = true;
    for (char& c : out) {
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      if (letter) {
        if (start && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        if (!start && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        start = false;
      } else if (every_word) {
        start = true;
      }
    }
    return out;
  }

  Value filter(const Expr& e) {
    const Value input = eval(*e.items[0]);
    std::vector<Value> args;
    Keywords keywords;
    evaluate_arguments(e, 1, args, keywords);
    const std::string& name = e.name;
    const auto arg = [&](size_t i, const char* key) -> const Value* {
      if (i < args.size()) return &args[i];
      return keyword(keywords, key);
    };
    if (name == "length" || name == "count") return Value::from(length_of(input, e.line));
    if (name == "tojson") {
      const Value* indent = arg(0, "indent");
      return Value::from(input.to_json(indent && indent->kind == Kind::Int ? static_cast<int>(indent->integer) : -1));
    }
    if (name == "string") return Value::from(input.str());
    if (name == "safe") return input;
    if (name == "trim") return Value::from(strip_text(input.str(), arg(0, "chars"), true, true));
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
      std::vector<Value> none;
      Keywords no_keywords;
      return method(Value::from(input.str()), name, none, no_keywords, e.line);
    }
    if (name == "replace") {
      if (args.size() < 2) fail(e.line, "replace needs two arguments");
      return Value::from(replace_text(input.str(), args[0].str(), args[1].str()));
    }
    if (name == "default" || name == "d") {
      const Value* fallback = arg(0, "default_value");
      const Value* boolean = arg(1, "boolean");
      const bool use_fallback = input.is_undefined() || (boolean && boolean->truthy() && !input.truthy());
      return use_fallback ? (fallback ? *fallback : Value::from("")) : input;
    }
    if (name == "join") {
      const Value* separator = arg(0, "d");
      const Value* attribute = arg(1, "attribute");
      std::string out;
      bool first = true;
      for (const Value& item : iterate(input, e.line)) {
        out += (first ? "" : (separator ? separator->str() : "")) + (attribute ? item.get(attribute->str()) : item).str();
        first = false;
      }
      return Value::from(std::move(out));
    }
    if (name == "first" || name == "last") {
      const ValueList items = iterate(input, e.line);
      if (items.empty()) return Value();
      return name == "first" ? items.front() : items.back();
    }
    if (name == "list") return Value::make_list(iterate(input, e.line));
    if (name == "reverse") {
      if (input.kind == Kind::String) return slice(input, Value(), Value(), Value::from(int64_t{-1}), e.line);
      ValueList items = iterate(input, e.line);
      std::reverse(items.begin(), items.end());
      return Value::make_list(std::move(items));
    }
    if (name == "items") {
      if (input.kind != Kind::Map) fail(e.line, "items needs a dict");
      std::vector<Value> none;
      Keywords no_keywords;
      return method(input, "items", none, no_keywords, e.line);
    }
    if (name == "int") {
      if (input.kind == Kind::String) {
        try {
          return Value::from(static_cast<int64_t>(std::stoll(input.text)));
        } catch (const std::exception&) {
          return Value::from(int64_t{0});
        }
      }
      return Value::from(is_number(input) ? static_cast<int64_t>(as_double(input)) : int64_t{0});
    }
    if (name == "float") {
      if (input.kind == Kind::String) {
        try {
          return Value::from(std::stod(input.text));
        } catch (const std::exception&) {
          return Value::from(0.0);
        }
      }
      return Value::from(is_number(input) ? as_double(input) : 0.0);
    }
    if (name == "abs") {
      if (input.kind == Kind::Float) return Value::from(std::fabs(input.number));
      return Value::from(std::abs(as_int(input)));
    }
    if (name == "map") {
      const Value* attribute = keyword(keywords, "attribute");
      ValueList out;
      for (const Value& item : iterate(input, e.line)) {
        if (attribute) {
          out.push_back(item.get(attribute->str()));
        } else {
          if (args.empty()) fail(e.line, "map needs a filter name or attribute=");
          Expr call;
          call.kind = Expr::Kind::Filter;
          call.name = args[0].str();
          call.line = e.line;
          auto literal = std::make_unique<Expr>();
          literal->kind = Expr::Kind::Literal;
          literal->value = item;
          call.items.push_back(std::move(literal));
          out.push_back(filter(call));
        }
      }
      return Value::make_list(std::move(out));
    }
    if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
      const bool by_attribute = name.ends_with("attr");
      const bool keep_matching = name.starts_with("select");
      ValueList out;
      for (const Value& item : iterate(input, e.line)) {
        const Value subject = by_attribute ? (args.empty() ? Value() : item.get(args[0].str())) : item;
        const size_t test_at = by_attribute ? 1 : 0;
        bool matches = subject.truthy();
        if (args.size() > test_at) {
          std::vector<Value> test_args(args.begin() + static_cast<std::ptrdiff_t>(test_at + 1), args.end());
          matches = named_test(args[test_at].str(), subject, test_args, e.line);
        }
        if (matches == keep_matching) out.push_back(item);
      }
      return Value::make_list(std::move(out));
    }
    if (name == "unique") {
      ValueList out;
      for (const Value& item : iterate(input, e.line)) {
        if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
      }
      return Value::make_list(std::move(out));
    }
    if (name == "indent") {
      const Value* width = arg(0, "width");
      const Value* first = arg(1, "first");
      const std::string pad = width && width->kind == Kind::String ? width->text
                                                                    : std::string(static_cast<size_t>(width ? as_int(*width) : 4), ' ');
      std::string out;
      const std::string text = input.str();
      size_t at = 0;
      bool first_line = true;
      while (at <= text.size()) {
        size_t end = text.find('\n', at);
        const std::string line_text = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (!first_line) out += '\n';
        if ((!first_line || (first && first->truthy())) && !line_text.empty()) out += pad;
        out += line_text;
        first_line = false;
        if (end == std::string::npos) break;
        at = end + 1;
      }
      return Value::from(std::move(out));
    }
    fail(e.line, "the filter `" + name + "` is not supported");
  }

  bool test(const Expr& e) {
    const Value subject = eval(*e.items[0]);
    std::vector<Value> args;
    Keywords keywords;
    evaluate_arguments(e, 1, args, keywords);
    return named_test(e.name, subject, args, e.line);
  }

  static bool named_test(const std::string& name, const Value& v, const std::vector<Value>& args, size_t line) {
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.kind == Kind::None;
    if (name == "string") return v.kind == Kind::String;
    if (name == "number") return v.kind == Kind::Int || v.kind == Kind::Float;
    if (name == "integer") return v.kind == Kind::Int;
    if (name == "float") return v.kind == Kind::Float;
    if (name == "boolean") return v.kind == Kind::Bool;
    if (name == "true") return v.kind == Kind::Bool && v.boolean;
    if (name == "false") return v.kind == Kind::Bool && !v.boolean;
    if (name == "mapping") return v.kind == Kind::Map;
    if (name == "sequence") return v.kind == Kind::List || v.kind == Kind::String || v.kind == Kind::Map;
    if (name == "iterable") return v.kind == Kind::List || v.kind == Kind::String || v.kind == Kind::Map;
    if (name == "callable") return v.kind == Kind::Function;
    if (name == "odd" || name == "even") {
      if (v.kind != Kind::Int) fail(line, "`" + name + "` needs an integer");
      return (v.integer % 2 != 0) == (name == "odd");
    }
    if (name == "lower" || name == "upper") {
      if (v.kind != Kind::String) return false;
      for (char c : v.text) {
        if (name == "lower" && c >= 'A' && c <= 'Z') return false;
        if (name == "upper" && c >= 'a' && c <= 'z') return false;
      }
      return true;
    }
    if (args.empty()) fail(line, "the test `" + name + "` is not supported (or needs an argument)");
    if (name == "eq" || name == "equalto" || name == "==" || name == "sameas") return v == args[0];
    if (name == "ne" || name == "!=") return !(v == args[0]);
    if (name == "in") return contains(args[0], v, line);
    if (name == "divisibleby") return args[0].kind == Kind::Int && args[0].integer != 0 && as_int(v) % args[0].integer == 0;
    if (name == "gt" || name == ">") return less_than(args[0], v, line);
    if (name == "lt" || name == "<") return less_than(v, args[0], line);
    if (name == "ge" || name == ">=") return !less_than(v, args[0], line);
    if (name == "le" || name == "<=") return !less_than(args[0], v, line);
    fail(line, "the test `" + name + "` is not supported");
  }
};

}  // namespace

Template::Template(const std::string& source) : program_(std::make_unique<Program>()) {
  program_->nodes = parse_template(source);
}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

std::string Template::render(const Value& context) const {
  Renderer renderer(context);
  std::string out;
  renderer.render(program_->nodes, out);
  return out;
}

}  // namespace linnet::text::jinja
