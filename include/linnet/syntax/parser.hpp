// The parser: tokens to a syntax tree (spec/grammar.ebnf).
//
// parse_file always returns a tree and never throws. After a syntax error it
// skips to the next statement or item and goes on, so one run reports several
// errors; what could not be parsed is kept as Error nodes. Codes:
//   E1004 a reserved word used as a name
//   E1101 unexpected token, and nesting deeper than max_nesting_depth
//   E1102 the file does not start with `module`
//   E1103 reserved, unsupported syntax (`self`/`super` imports, `extern`,
//         `Tensor[; T]`, enum payloads, reserved scalar types such as `i4`)
//
// Newlines are not significant: a statement ends where its expression can no
// longer continue, so `x +` at the end of a line continues on the next one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::syntax {

// Deepest nesting of expressions, types, patterns, statements and items
// (brackets, and operator and suffix chains, which count one level per
// link). Deeper input is rejected with E1101 "nesting is too deep" instead of
// exhausting the stack, here or in any later recursive walk of the tree.
inline constexpr uint32_t max_nesting_depth = 256;

std::unique_ptr<ast::File> parse_file(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics);

// A readable indented dump of a tree with spans as line:col-line:col, for
// `linnet inspect --ast` and for tests.
std::string dump_ast(const ast::File& file, const SourceManager& sources);

}  // namespace linnet::syntax
