#include "linnet/syntax/token.hpp"

namespace linnet::syntax {

std::string_view token_spelling(TokenKind kind) {
  switch (kind) {
    case TokenKind::Eof:
    case TokenKind::Identifier:
    case TokenKind::Integer:
    case TokenKind::Float:
    case TokenKind::String:
    case TokenKind::Reserved:
    case TokenKind::Invalid: return {};
    case TokenKind::KwModule: return "module";
    case TokenKind::KwUse: return "use";
    case TokenKind::KwPub: return "pub";
    case TokenKind::KwCrate: return "crate";
    case TokenKind::KwSelf: return "self";
    case TokenKind::KwSuper: return "super";
    case TokenKind::KwAs: return "as";
    case TokenKind::KwConst: return "const";
    case TokenKind::KwType: return "type";
    case TokenKind::KwStruct: return "struct";
    case TokenKind::KwEnum: return "enum";
    case TokenKind::KwFn: return "fn";
    case TokenKind::KwOp: return "op";
    case TokenKind::KwKernel: return "kernel";
    case TokenKind::KwBlock: return "block";
    case TokenKind::KwEntry: return "entry";
    case TokenKind::KwParam: return "param";
    case TokenKind::KwBuffer: return "buffer";
    case TokenKind::KwState: return "state";
    case TokenKind::KwSub: return "sub";
    case TokenKind::KwLet: return "let";
    case TokenKind::KwVar: return "var";
    case TokenKind::KwReturn: return "return";
    case TokenKind::KwIf: return "if";
    case TokenKind::KwElse: return "else";
    case TokenKind::KwMatch: return "match";
    case TokenKind::KwStatic: return "static";
    case TokenKind::KwFor: return "for";
    case TokenKind::KwIn: return "in";
    case TokenKind::KwWhile: return "while";
    case TokenKind::KwYield: return "yield";
    case TokenKind::KwWhere: return "where";
    case TokenKind::KwTrue: return "true";
    case TokenKind::KwFalse: return "false";
    case TokenKind::KwNone: return "none";
    case TokenKind::KwSome: return "some";
    case TokenKind::KwExtern: return "extern";
    case TokenKind::LParen: return "(";
    case TokenKind::RParen: return ")";
    case TokenKind::LBracket: return "[";
    case TokenKind::RBracket: return "]";
    case TokenKind::LBrace: return "{";
    case TokenKind::RBrace: return "}";
    case TokenKind::Comma: return ",";
    case TokenKind::Colon: return ":";
    case TokenKind::ColonColon: return "::";
    case TokenKind::Semicolon: return ";";
    case TokenKind::Dot: return ".";
    case TokenKind::DotDot: return "..";
    case TokenKind::Ellipsis: return "...";
    case TokenKind::Arrow: return "->";
    case TokenKind::FatArrow: return "=>";
    case TokenKind::Equal: return "=";
    case TokenKind::EqualEqual: return "==";
    case TokenKind::BangEqual: return "!=";
    case TokenKind::Less: return "<";
    case TokenKind::LessEqual: return "<=";
    case TokenKind::Greater: return ">";
    case TokenKind::GreaterEqual: return ">=";
    case TokenKind::Plus: return "+";
    case TokenKind::Minus: return "-";
    case TokenKind::Star: return "*";
    case TokenKind::Slash: return "/";
    case TokenKind::Percent: return "%";
    case TokenKind::Bang: return "!";
    case TokenKind::AmpAmp: return "&&";
    case TokenKind::PipePipe: return "||";
    case TokenKind::Amp: return "&";
    case TokenKind::Pipe: return "|";
    case TokenKind::Caret: return "^";
    case TokenKind::Question: return "?";
  }
  return {};
}

bool is_keyword(TokenKind kind) { return kind >= TokenKind::KwModule && kind <= TokenKind::KwExtern; }

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::Eof: return "end of file";
    case TokenKind::Identifier: return "identifier";
    case TokenKind::Integer: return "integer literal";
    case TokenKind::Float: return "floating literal";
    case TokenKind::String: return "string literal";
    case TokenKind::Reserved: return "reserved word";
    case TokenKind::Invalid: return "invalid character";
    default: break;
  }
  return is_keyword(kind) ? "keyword" : "punctuation";
}

}  // namespace linnet::syntax
