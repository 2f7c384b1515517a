// The syntax tree of a Jinja template (jinja_parse.cpp builds it,
// jinja_render.cpp walks it).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linnet/text/jinja.hpp"

namespace linnet::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,   // value
    Name,      // name
    List,      // items
    Tuple,     // items
    Dict,      // keys (items[2i]) and values (items[2i+1])
    Attribute, // items[0] . name
    Index,     // items[0] [ items[1] ]
    Slice,     // items[0] [ items[1] : items[2] : items[3] ] (null parts absent)
    Call,      // items[0] ( items[1..] , keywords )
    Filter,    // items[0] | name ( items[1..] , keywords )
    Test,      // items[0] is [not] name ( items[1..] )
    Unary,     // op items[0]: "not", "-", "+"
    Binary,    // items[0] op items[1]
    Ternary,   // items[1] if items[0] else items[2] (items[2] may be null)
  };
  Kind kind;
  Value value;
  std::string name;  // Name, Attribute, Filter, Test; the operator of Unary/Binary
  bool negated = false;  // Test: `is not`
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  size_t line = 0;
};

struct Node;
using NodeList = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind { Text, Output, If, For, Set, SetBlock, Macro, Break, Continue };
  Kind kind;
  std::string text;                    // Text
  ExprPtr expr;                        // Output; For's iterable; Set's value
  // If: one (condition, body) per if/elif; `otherwise` is the else body.
  std::vector<std::pair<ExprPtr, NodeList>> branches;
  NodeList body;                       // For, SetBlock, Macro
  NodeList otherwise;                  // If's and For's else
  std::vector<std::string> targets;    // For's loop variables; Set's names (a.b: {"a", "b"} with `attribute`)
  bool attribute = false;              // Set: ns.attr
  ExprPtr condition;                   // For's `if` filter
  std::string name;                    // Macro
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // Macro: name and default (may be null)
  size_t line = 0;
};

struct Template::Program {
  NodeList nodes;
};

// Parses a template (after transformers' whitespace settings). Throws TemplateError.
NodeList parse_template(const std::string& source);

}  // namespace linnet::text::jinja
