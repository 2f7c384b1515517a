// The lexer: UTF-8 source bytes to tokens (spec chapter 1).
//
// It never fails and never throws: every byte sequence yields a token list
// ending in TokenKind::Eof, with problems reported as diagnostics
//   E1001 invalid character or bytes (invalid UTF-8, a non-ASCII character or
//         a control character outside comments and strings),
//   E1002 unclosed block comment,
//   E1003 malformed string or escape,
//   E1005 malformed number.
// Reserved words (E1004) become TokenKind::Reserved; the parser reports them
// where they are used as names. Work is linear in the input size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"
#include "linnet/syntax/token.hpp"

namespace linnet::syntax {

// A comment, kept out of the token stream. Documentation comments (`///` and
// `/** */`) are attached to the item that follows them by the parser.
struct Comment {
  Span span;
  bool is_doc = false;
};

struct LexResult {
  std::vector<Token> tokens;  // ends with TokenKind::Eof
  std::vector<Comment> comments;
};

LexResult lex(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics);

// The tokens of one file, without comments.
std::vector<Token> tokenize(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics);

// The value of a String token's spelling (quotes removed, escapes `\n \r \t
// \0 \\ \" \u{...}` applied). Malformed parts, already reported by the
// lexer, are kept as written.
std::string decode_string_literal(std::string_view spelling);

// The value of an Integer token's spelling; nullopt when it exceeds 64 bits.
std::optional<uint64_t> integer_literal_value(std::string_view spelling);

// The value of a Float token's spelling (digit separators removed).
double float_literal_value(std::string_view spelling);

}  // namespace linnet::syntax
