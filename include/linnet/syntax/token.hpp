// Tokens of Linnet source (spec chapter 1). A token is a kind, the span it
// covers, and its spelling as a view into the SourceFile's text (which the
// SourceManager keeps alive and never moves).
#pragma once

#include <cstdint>
#include <string_view>

#include "linnet/syntax/source.hpp"

namespace linnet::syntax {

enum class TokenKind : uint8_t {
  Eof,         // always the last token; an empty span at the end of the file
  Identifier,  // [A-Za-z_][A-Za-z0-9_]*, including contextual words (grad, grid, sum, store, ...)
  Integer,     // 42, 1_000, 0xff, 0b1010
  Float,       // 1.5, 1e-5, 3.141_592
  String,      // "..." with its quotes; decode with decode_string_literal
  Reserved,    // a word reserved for future syntax (async, trait, mut, ...): E1004 when used as a name
  Invalid,     // bytes that form no token; the lexer has already reported them

  // Reserved keywords (spec §1.4).
  KwModule, KwUse, KwPub, KwCrate, KwSelf, KwSuper, KwAs,
  KwConst, KwType, KwStruct, KwEnum,
  KwFn, KwOp, KwKernel, KwBlock, KwEntry,
  KwParam, KwBuffer, KwState, KwSub,
  KwLet, KwVar, KwReturn,
  KwIf, KwElse, KwMatch,
  KwStatic, KwFor, KwIn, KwWhile, KwYield,
  KwWhere,
  KwTrue, KwFalse, KwNone, KwSome,
  KwExtern,

  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Colon, ColonColon, Semicolon, Dot, DotDot, Ellipsis,
  Arrow,     // ->
  FatArrow,  // =>
  Equal,     // =
  EqualEqual, BangEqual, Less, LessEqual, Greater, GreaterEqual,
  Plus, Minus, Star, Slash, Percent, Bang,
  AmpAmp, PipePipe, Amp, Pipe, Caret, Question,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  Span span;
  std::string_view text;  // the exact source spelling
};

// A short human name for diagnostics and `linnet inspect --tokens`:
// "identifier", "keyword `let`", "`->`", "end of file".
std::string_view token_kind_name(TokenKind kind);

// The fixed spelling of a keyword or punctuation kind ("let", "->"); empty for
// kinds whose spelling varies (identifiers, literals, Eof).
std::string_view token_spelling(TokenKind kind);

bool is_keyword(TokenKind kind);

}  // namespace linnet::syntax
