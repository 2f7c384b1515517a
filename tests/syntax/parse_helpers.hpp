// Helpers for the front end's own tests: parse inline source, find the first
// error, and print expressions and types as compact S-expressions so that a
// test can state a tree's whole structure in one line.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/lexer.hpp"
#include "linnet/syntax/parser.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::syntax::testing {

struct Parsed {
  SourceManager sources;
  Diagnostics diagnostics;
  uint32_t file = 0;
  std::unique_ptr<ast::File> tree;

  // The codes of every diagnostic, in order.
  std::vector<std::string> codes() const;
  std::string first_code() const;
  // "line:col" of the first diagnostic.
  std::string first_position() const;
  std::string text() const { return render_text(diagnostics, sources); }
  // The source text a span covers.
  std::string slice(Span span) const;
};

std::unique_ptr<Parsed> parse(const std::string& text);

// Parses `module m\nfn f() {\n<body>\n}` and returns the result.
std::unique_ptr<Parsed> parse_body(const std::string& body);

// The value of the first `let`/`return` in `parse_body("let v = <expr>")`.
const ast::Expr& first_let_value(const Parsed& parsed);

std::string sexpr(const ast::Expr& expr);
std::string sexpr(const ast::Type& type);
std::string sexpr(const ast::Pattern& pattern);
std::string sexpr(const ast::GenericArg& arg);

// Parses `let v = <expr>` in a function body and prints the value; "ERR:<codes>"
// when there were diagnostics.
std::string expr_of(const std::string& expression);

// Parses `fn f(x: <type>) {}` and prints the parameter's type.
std::string type_of(const std::string& type);

}  // namespace linnet::syntax::testing
