// Parser infrastructure (tokens, diagnostics, nesting limit, recovery,
// lookahead tables), the file and its declarations, and statements.
// Expressions, types and patterns are in parser_expressions.cpp.
#include "linnet/syntax/parser.hpp"

#include <algorithm>

#include "delimiters.hpp"
#include "parser_internal.hpp"

namespace linnet::syntax {

using namespace ast;
using detail::Parser;

std::unique_ptr<File> parse_file(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics) {
  return Parser(sources, file_id, diagnostics).run();
}

namespace detail {

namespace {

using K = TokenKind;

bool is_store_word(std::string_view word) {
  return word == "store" || word == "atomic_add" || word == "atomic_max" || word == "atomic_min";
}

}  // namespace

Parser::Parser(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics)
    : sources_(sources), file_(file_id), diagnostics_(diagnostics) {
  const std::size_t errors_before = diagnostics.error_count() + diagnostics.suppressed();
  LexResult lexed = lex(sources, file_id, diagnostics);
  tokens_ = std::move(lexed.tokens);
  comments_ = std::move(lexed.comments);
  // Brackets are matched first, unless the lexer already failed (an
  // unterminated comment or string swallows brackets of its own).
  const bool lexed_cleanly = diagnostics.error_count() + diagnostics.suppressed() == errors_before;
  if (lexed_cleanly && !check_delimiters(tokens_, sources.file(file_id), diagnostics)) unbalanced_ = true;
  compute_angle_matches();
}

// ------------------------------------------------------------------ tokens

const Token& Parser::peek(size_t ahead) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }

void Parser::advance() {
  if (pos_ + 1 < tokens_.size()) {
    previous_end_ = tokens_[pos_].span.end;
    ++pos_;
  }
}

bool Parser::accept(TokenKind k) {
  if (!at(k)) return false;
  advance();
  return true;
}

Span Parser::span_from(uint32_t begin) const { return Span{file_, begin, std::max(begin, previous_end_)}; }

// ------------------------------------------------------------------ diagnostics

Diagnostic* Parser::error_at(Span where, std::string message, const char* code) {
  ++errors_;
  if (abandoned_ || unbalanced_ || pos_ == last_error_token_) return nullptr;
  last_error_token_ = pos_;
  return &diagnostics_.error(code, std::move(message), where);
}

Diagnostic* Parser::error_here(std::string message, const char* code) {
  return error_at(here_span(), std::move(message), code);
}

std::string Parser::describe(const Token& token) const {
  // Long spellings (hostile input) are cut so messages stay one short line.
  const auto quoted = [](std::string_view text) {
    std::string out = "`";
    out.append(text.substr(0, 32));
    out += text.size() > 32 ? "...`" : "`";
    return out;
  };
  switch (token.kind) {
    case K::Eof: return "end of file";
    case K::Identifier: return quoted(token.text);
    case K::Integer: return "integer literal " + quoted(token.text);
    case K::Float: return "floating literal " + quoted(token.text);
    case K::String: return "string literal";
    case K::Reserved: return "reserved word " + quoted(token.text);
    case K::Invalid: return "an invalid character";
    default: break;
  }
  if (is_keyword(token.kind)) return "keyword `" + std::string(token_spelling(token.kind)) + "`";
  return "`" + std::string(token_spelling(token.kind)) + "`";
}

Diagnostic* Parser::expected(std::string_view what) {
  Diagnostic* d = error_here("expected " + std::string(what) + ", found " + describe(peek()));
  if (d && at(K::Semicolon)) d->with_help("Linnet has no `;`: a line break ends a statement");
  return d;
}

bool Parser::expect(TokenKind k, std::string_view context) {
  if (accept(k)) return true;
  std::string what = "`" + std::string(token_spelling(k)) + "`";
  if (!context.empty()) what += " " + std::string(context);
  expected(what);
  return false;
}

void Parser::report_reserved_word(const Token& token) {
  std::string message = "`";
  message.append(token.text);
  message += "` is reserved and cannot be used as a name";
  Diagnostic* d = error_at(token.span, std::move(message), "E1004");
  if (d) d->note("words reserved for future syntax: async await effect unsafe macro trait impl derive rng mut ref device");
}

Ident Parser::expect_name(std::string_view what) {
  const Token& token = peek();
  if (token.kind == K::Identifier) {
    Ident name{std::string(token.text), token.span};
    advance();
    return name;
  }
  if (token.kind == K::Reserved) {
    report_reserved_word(token);
    Ident name{std::string(token.text), token.span};
    advance();
    return name;
  }
  Diagnostic* d = expected(what);
  if (d && is_keyword(token.kind)) {
    d->note("`" + std::string(token_spelling(token.kind)) + "` is a keyword and cannot be used as a name");
  }
  return Ident{"", Span{file_, token.span.begin, token.span.begin}};
}

// ------------------------------------------------------------------ nesting limit

Parser::DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
  ++parser_.depth_;
  if (parser_.abandoned_ || parser_.depth_ > max_nesting_depth) {
    exceeded_ = true;
    parser_.report_too_deep();
  }
}

Parser::DepthGuard::~DepthGuard() { --parser_.depth_; }

bool Parser::ChainGuard::extend() {
  if (parser_.abandoned_ || parser_.depth_ >= max_nesting_depth) {
    parser_.report_too_deep();
    return false;
  }
  ++parser_.depth_;
  ++links_;
  return true;
}

void Parser::report_too_deep() {
  if (abandoned_) {
    ++errors_;
    return;
  }
  Diagnostic* d = error_here("nesting is too deep: more than " + std::to_string(max_nesting_depth) +
                             " levels of brackets, operators or declarations");
  if (d) {
    d->note("the rest of the file was not parsed");
    d->with_help("split the expression with `let` bindings");
  }
  abandoned_ = true;
  pos_ = tokens_.size() - 1;  // the end of the file
}

// ------------------------------------------------------------------ recovery

bool Parser::starts_item(size_t ahead) const {
  switch (kind(ahead)) {
    case K::KwPub:
    case K::KwConst:
    case K::KwType:
    case K::KwStruct:
    case K::KwEnum:
    case K::KwFn:
    case K::KwOp:
    case K::KwKernel:
    case K::KwBlock:
    case K::KwEntry:
    case K::KwParam:
    case K::KwBuffer:
    case K::KwState:
    case K::KwSub:
    case K::KwUse:
    case K::KwModule:
    case K::KwExtern: return true;
    default: return false;
  }
}

bool Parser::starts_statement() const {
  switch (kind()) {
    case K::KwLet:
    case K::KwVar:
    case K::KwReturn:
    case K::KwStatic:
    case K::KwWhile:
    case K::KwFor:
    case K::KwYield:
    case K::RBrace:
    case K::Eof: return true;
    case K::Identifier: return kind(1) == K::Equal || (is_store_word(peek().text) && kind(1) == K::LParen);
    default: return starts_item();
  }
}

// Skips to the next statement at this bracket level. Brackets opened while
// skipping are skipped whole; a stray `)` or `]` is passed over.
void Parser::skip_to_statement_start() {
  size_t depth = 0;
  while (!at(K::Eof)) {
    if (depth == 0 && starts_statement()) break;
    const K k = kind();
    if (k == K::LParen || k == K::LBracket || k == K::LBrace) {
      ++depth;
    } else if (k == K::RParen || k == K::RBracket || k == K::RBrace) {
      if (depth > 0) --depth;
    }
    advance();
  }
}

// Skips to the next item at this level, stopping before a `}` that closes
// the enclosing block (or, at file level, a stray one the caller reports).
void Parser::skip_to_item_start() {
  size_t depth = 0;
  while (!at(K::Eof)) {
    const K k = kind();
    if (depth == 0 && (starts_item() || k == K::RBrace)) break;
    if (k == K::LParen || k == K::LBracket || k == K::LBrace) {
      ++depth;
    } else if (k == K::RParen || k == K::RBracket || k == K::RBrace) {
      if (depth > 0) --depth;
    }
    advance();
  }
}

// Passes over one bracketed group, from its opening bracket to the matching
// closing one (or the end of the file).
void Parser::skip_balanced() {
  size_t depth = 0;
  do {
    const K k = kind();
    if (k == K::LParen || k == K::LBracket || k == K::LBrace) {
      ++depth;
    } else if (k == K::RParen || k == K::RBracket || k == K::RBrace) {
      --depth;
    }
    advance();
  } while (depth > 0 && !at(K::Eof));
}

// ------------------------------------------------------------------ lookahead tables

// Pairs every `<` with its `>` the way generic argument lists nest: brackets
// nest inside, and a token that cannot appear in a generic argument list
// (`&&`, `==`, `{`, `=`, a keyword, ...) ends every `<` still open at its
// bracket level unmatched. One pass over the tokens.
void Parser::compute_angle_matches() {
  angle_close_.assign(tokens_.size(), 0);
  struct Open {
    uint32_t index;
    bool is_angle;
  };
  std::vector<Open> open;
  const auto drop_angles = [&open] {
    while (!open.empty() && open.back().is_angle) open.pop_back();
  };
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    switch (tokens_[i].kind) {
      case K::LParen:
      case K::LBracket:
        open.push_back({i, false});
        break;
      case K::LBrace:
        drop_angles();
        open.push_back({i, false});
        break;
      case K::RParen:
      case K::RBracket:
      case K::RBrace:
        drop_angles();
        if (!open.empty()) open.pop_back();
        break;
      case K::Less:
        open.push_back({i, true});
        break;
      case K::Greater:
        if (!open.empty() && open.back().is_angle) {
          angle_close_[open.back().index] = i;
          open.pop_back();
        }
        break;
      // Tokens that may stand in a generic argument list outside brackets.
      case K::Identifier:
      case K::Reserved:
      case K::Integer:
      case K::Float:
      case K::String:
      case K::KwTrue:
      case K::KwFalse:
      case K::KwSome:
      case K::KwNone:
      case K::Comma:
      case K::Dot:
      case K::Plus:
      case K::Minus:
      case K::Star:
      case K::Slash:
      case K::Percent:
      case K::Bang:
      case K::Question:
        break;
      default:
        drop_angles();
        break;
    }
  }
}

bool Parser::is_generic_call_open(size_t index) const {
  if (index >= tokens_.size() || tokens_[index].kind != K::Less) return false;
  const uint32_t close = angle_close_[index];
  return close != 0 && close + 1 < tokens_.size() && tokens_[close + 1].kind == K::LParen;
}

// `sum[`, or `sum<f32>[` with a scalar type: the start of a reduction (the
// names are contextual, spec grammar `reduction_expr`).
bool Parser::is_reduction_start(size_t index) const {
  const auto token = [&](size_t i) -> const Token& { return tokens_[std::min(i, tokens_.size() - 1)]; };
  const Token& word = token(index);
  if (word.kind != K::Identifier) return false;
  static constexpr std::string_view kinds[] = {"sum", "prod", "max", "min", "any", "all"};
  if (std::find(std::begin(kinds), std::end(kinds), word.text) == std::end(kinds)) return false;
  if (token(index + 1).kind == K::LBracket) return true;
  static constexpr std::string_view scalars[] = {"bool", "i8",  "i16", "i32",  "i64", "u8", "u16",
                                                 "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return token(index + 1).kind == K::Less && token(index + 2).kind == K::Identifier &&
         std::find(std::begin(scalars), std::end(scalars), token(index + 2).text) != std::end(scalars) &&
         token(index + 3).kind == K::Greater && token(index + 4).kind == K::LBracket;
}

// ------------------------------------------------------------------ file

std::unique_ptr<File> Parser::run() {
  auto file = std::make_unique<File>();
  file->file_id = file_;
  parse_module_decl(*file);
  while (!at(K::Eof)) {
    const size_t before = pos_;
    const size_t errors_before = errors_;
    if (at(K::KwUse)) {
      if (!file->items.empty()) {
        Diagnostic* d = error_here("`use` declarations must come before all items");
        if (d) d->with_help("move this `use` up, below the `module` line");
      }
      parse_use(*file);
    } else if (at(K::RBrace)) {
      error_here("unmatched `}`");
      advance();
    } else {
      file->items.push_back(parse_item(false));
    }
    if (errors_ != errors_before && !starts_item()) skip_to_item_start();
    if (pos_ == before) advance();
  }
  return file;
}

void Parser::parse_module_decl(File& file) {
  if (!at(K::KwModule)) {
    Diagnostic* d = error_at(Span{file_, here(), here()}, "missing `module` declaration", "E1102");
    if (d) {
      d->with_label("expected `module` here");
      d->with_help("every source file starts with its module path, such as `module my_package.layers`");
    }
    // Let the first real token report its own problem, if it has one.
    last_error_token_ = static_cast<size_t>(-1);
    return;
  }
  const uint32_t begin = here();
  advance();
  file.module_path = parse_path("a module path");
  file.module_span = span_from(begin);
  if (at(K::ColonColon) || at(K::LBrace)) expected("a line break after the module path");
}

std::vector<Ident> Parser::parse_path(std::string_view what) {
  std::vector<Ident> path;
  path.push_back(expect_name(what));
  while (at(K::Dot) && !path.back().empty()) {
    advance();
    path.push_back(expect_name("a name after `.`"));
  }
  return path;
}

void Parser::parse_use(File& file) {
  UseDecl use;
  const uint32_t begin = here();
  advance();  // `use`
  const uint32_t path_begin = here();
  if (at(K::KwSelf) || at(K::KwSuper)) {
    Diagnostic* d = error_here("`" + std::string(peek().text) + "` imports are reserved for a future version", "E1103");
    if (d) d->with_help("name the module from `crate`: `use crate.a.b::{x}`");
    use.path.push_back(Ident{std::string(peek().text), peek().span});
    advance();
  } else if (at(K::KwCrate)) {
    use.path.push_back(Ident{"crate", peek().span});
    advance();
  } else {
    use.path.push_back(expect_name("a module path (`std.`, `crate.` or a dependency)"));
  }
  while (at(K::Dot) && !use.path.back().empty()) {
    advance();
    use.path.push_back(expect_name("a module name after `.`"));
  }
  use.path_span = span_from(path_begin);
  if (accept(K::ColonColon)) {
    if (accept(K::LBrace)) {
      use.braced = true;
      while (!at(K::RBrace) && !at(K::Eof)) {
        ImportName import;
        const uint32_t name_begin = here();
        import.name = expect_name("a name to import");
        if (import.name.empty()) break;
        if (accept(K::KwAs)) import.alias = expect_name("a name after `as`");
        import.span = span_from(name_begin);
        use.names.push_back(std::move(import));
        if (!accept(K::Comma)) break;
      }
      if (use.names.empty() && at(K::RBrace)) expected("a name to import");
      expect(K::RBrace, "to close the import list");
    } else if (at(K::Star)) {
      Diagnostic* d = error_here("glob imports are not part of Linnet");
      if (d) d->with_help("name the items: `use a.b::{x, y}`, or import the module: `use a.b`");
      advance();
    } else {
      ImportName import;
      const uint32_t name_begin = here();
      import.name = expect_name("a name to import, or `{`");
      import.span = span_from(name_begin);
      if (at(K::KwAs)) {
        Diagnostic* d = error_here("`as` renames only inside braces");
        if (d) d->with_help("write `use a.b::{x as y}`");
        advance();
        import.alias = expect_name("a name after `as`");
        import.span = span_from(name_begin);
      }
      use.names.push_back(std::move(import));
    }
  } else {
    use.imports_module = true;
  }
  use.span = span_from(begin);
  file.uses.push_back(std::move(use));
}

// ------------------------------------------------------------------ items

std::string Parser::take_doc_comments() {
  std::string doc;
  const uint32_t item_begin = here();
  while (next_comment_ < comments_.size() && comments_[next_comment_].span.end <= item_begin) {
    const Comment& comment = comments_[next_comment_++];
    if (!comment.is_doc || comment.span.begin < previous_end_) continue;
    std::string_view text = std::string_view(sources_.file(file_).text())
                                .substr(comment.span.begin, comment.span.end - comment.span.begin);
    if (text.substr(0, 3) == "///") {
      text.remove_prefix(3);
    } else {
      text.remove_prefix(3);  // `/**`
      if (text.size() >= 2) text.remove_suffix(2);
    }
    if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    if (!doc.empty()) doc += '\n';
    doc += text;
  }
  return doc;
}

ItemPtr Parser::parse_item(bool in_block) {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  if (guard.exceeded()) return std::make_unique<ErrorItem>(span_from(begin));
  std::string doc = take_doc_comments();
  bool is_pub = false;
  Span pub_span;
  if (at(K::KwPub)) {
    is_pub = true;
    pub_span = here_span();
    advance();
  }
  ItemPtr item;
  switch (kind()) {
    case K::KwConst: item = parse_const(begin); break;
    case K::KwType: item = parse_type_alias(begin); break;
    case K::KwStruct: item = parse_struct(begin); break;
    case K::KwEnum: item = parse_enum(begin); break;
    case K::KwFn: item = parse_function(begin, FunctionKind::Fn); break;
    case K::KwOp: item = parse_function(begin, FunctionKind::Op); break;
    case K::KwEntry: item = parse_function(begin, FunctionKind::Entry); break;
    case K::KwKernel: item = parse_kernel(begin); break;
    case K::KwBlock: item = parse_block(begin); break;
    case K::KwParam:
    case K::KwBuffer:
    case K::KwState:
    case K::KwSub:
      if (is_pub) {
        Diagnostic* d = error_here("`" + std::string(token_spelling(kind())) + "` declarations cannot be `pub`");
        if (d) {
          d->also(pub_span, "remove this `pub`");
          d->note("a block's `param`, `buffer`, `state` and `sub` are reached through the block's paths");
        }
      }
      item = parse_member(begin, in_block);
      break;
    case K::KwExtern: {
      Diagnostic* d = error_here("`extern` declarations are reserved for a future version", "E1103");
      if (d) d->note("an `op` body is its normative definition; a backend may substitute a native kernel");
      advance();
      item = std::make_unique<ErrorItem>(span_from(begin));
      break;
    }
    case K::KwUse: {
      Diagnostic* d = error_here(in_block ? "`use` declarations belong at the top of the file, not inside a block"
                                          : "`use` declarations must come before all items");
      if (d) d->with_help("move this `use` up, below the `module` line");
      File scratch;
      parse_use(scratch);
      item = std::make_unique<ErrorItem>(span_from(begin));
      break;
    }
    case K::KwModule: {
      Diagnostic* d = error_here("a file declares one module, on its first line");
      if (d) d->note("one file is one module (spec chapter 2)");
      advance();
      parse_path("a module path");
      item = std::make_unique<ErrorItem>(span_from(begin));
      break;
    }
    case K::Reserved: {
      Diagnostic* d = error_here("`" + std::string(peek().text) + "` is reserved for future syntax", "E1103");
      if (d) d->note("Linnet 0.1 has no `" + std::string(peek().text) + "` declarations");
      advance();
      item = std::make_unique<ErrorItem>(span_from(begin));
      break;
    }
    default: {
      Diagnostic* d = expected(in_block ? "a block member (`param`, `buffer`, `state`, `sub`, `fn`, `entry`, ...)"
                                        : "an item (`fn`, `op`, `block`, `entry`, `kernel`, `const`, `type`, "
                                          "`struct`, `enum`)");
      if (d && (at(K::KwLet) || at(K::KwVar) || at(K::KwReturn))) {
        d->note("statements belong inside the body of a `fn`, `op` or `entry`");
      }
      item = std::make_unique<ErrorItem>(span_from(begin));
      break;
    }
  }
  item->is_pub = is_pub;
  item->doc = std::move(doc);
  item->span = span_from(begin);
  return item;
}

ItemPtr Parser::parse_const(uint32_t begin) {
  advance();  // `const`
  auto item = std::make_unique<ConstItem>(span_from(begin));
  item->name = expect_name("a constant name");
  if (accept(K::Colon)) item->type = parse_type();
  if (expect(K::Equal, "and the constant's value")) {
    item->value = parse_expr();
  } else {
    item->value = error_expr(here());
  }
  return item;
}

ItemPtr Parser::parse_type_alias(uint32_t begin) {
  advance();  // `type`
  auto item = std::make_unique<TypeAliasItem>(span_from(begin));
  item->name = expect_name("a type name");
  if (at(K::Less)) item->generics = parse_generic_params();
  if (expect(K::Equal, "and the aliased type")) {
    item->type = parse_type();
  } else {
    item->type = std::make_unique<ErrorType>(here_span());
  }
  return item;
}

ItemPtr Parser::parse_struct(uint32_t begin) {
  advance();  // `struct`
  auto item = std::make_unique<StructItem>(span_from(begin));
  item->name = expect_name("a struct name");
  if (at(K::Less)) item->generics = parse_generic_params();
  if (!expect(K::LBrace, "to open the struct's fields")) return item;
  while (!at(K::RBrace) && !at(K::Eof) && !starts_item()) {
    const size_t before = pos_;
    if (at(K::Comma)) {
      Diagnostic* d = error_here("struct fields are separated by line breaks, not commas");
      if (d) d->with_help("remove the `,`");
      advance();
      continue;
    }
    Field field;
    const uint32_t field_begin = here();
    field.name = expect_name("a field name");
    if (expect(K::Colon, "and the field's type")) {
      field.type = parse_type();
    } else {
      field.type = std::make_unique<ErrorType>(here_span());
    }
    field.span = span_from(field_begin);
    item->fields.push_back(std::move(field));
    if (pos_ == before) advance();
    if (abandoned_) break;
  }
  expect(K::RBrace, "to close the struct");
  return item;
}

ItemPtr Parser::parse_enum(uint32_t begin) {
  advance();  // `enum`
  auto item = std::make_unique<EnumItem>(span_from(begin));
  item->name = expect_name("an enum name");
  if (at(K::Less)) item->generics = parse_generic_params();
  if (!expect(K::LBrace, "to open the enum's variants")) return item;
  while (!at(K::RBrace) && !at(K::Eof)) {
    Ident variant = expect_name("a variant name");
    if (variant.empty()) break;
    item->variants.push_back(std::move(variant));
    if (at(K::LParen) || at(K::LBrace)) {
      Diagnostic* d = error_here("enum variants with payloads are reserved for a future version", "E1103");
      if (d) d->note("Linnet 0.1 enums are closed sets of names");
      skip_balanced();
    }
    if (!accept(K::Comma)) break;
  }
  expect(K::RBrace, "to close the enum");
  return item;
}

std::vector<GenericParam> Parser::parse_generic_params() {
  std::vector<GenericParam> params;
  advance();  // `<`
  while (!at(K::Greater) && !at(K::Eof)) {
    GenericParam param;
    const uint32_t begin = here();
    param.is_pack = accept(K::Star);
    param.name = expect_name("a generic parameter name");
    if (param.name.empty()) break;
    if (expect(K::Colon, "and the generic's kind (`Dim`, `Shape`, `DType`, `Numeric`, `Integer` or `Float`)")) {
      param.constraint_name = expect_name("a generic kind");
      static constexpr std::pair<std::string_view, GenericKind> kinds[] = {
          {"Dim", GenericKind::Dim},         {"Shape", GenericKind::Shape},     {"DType", GenericKind::DType},
          {"Numeric", GenericKind::Numeric}, {"Integer", GenericKind::Integer}, {"Float", GenericKind::Float},
      };
      for (const auto& [word, kind] : kinds) {
        if (param.constraint_name.text == word) param.constraint = kind;
      }
      if (param.constraint == GenericKind::Unknown && !param.constraint_name.empty()) {
        Diagnostic* d = error_at(param.constraint_name.span,
                                 "unknown generic kind `" + param.constraint_name.text + "`");
        if (d) {
          d->note("the kinds are Dim, Shape, DType, Numeric, Integer and Float");
          d->note("user-defined traits are reserved for a future version");
        }
      }
    }
    if (accept(K::Equal)) param.default_value = std::make_unique<GenericArg>(parse_type_or_expr(false));
    param.span = span_from(begin);
    params.push_back(std::move(param));
    if (!accept(K::Comma)) break;
  }
  expect(K::Greater, "to close the generic parameters");
  return params;
}

std::vector<Param> Parser::parse_params() {
  std::vector<Param> params;
  if (!expect(K::LParen, "to open the parameter list")) return params;
  while (!at(K::RParen) && !at(K::Eof)) {
    Param param;
    const uint32_t begin = here();
    param.name = expect_name("a parameter name");
    if (param.name.empty()) break;
    if (expect(K::Colon, "and the parameter's type")) {
      param.type = parse_type();
    } else {
      param.type = std::make_unique<ErrorType>(here_span());
    }
    if (accept(K::Equal)) param.default_value = parse_expr();
    param.span = span_from(begin);
    params.push_back(std::move(param));
    if (!accept(K::Comma)) break;
  }
  expect(K::RParen, "to close the parameter list");
  return params;
}

WhereClause Parser::parse_where() {
  WhereClause clause;
  const uint32_t begin = here();
  advance();  // `where`
  while (!at(K::LBrace) && !at(K::Eof)) {
    ExprPtr constraint = parse_expr();
    const auto* binary = constraint->as<BinaryExpr>();
    const bool comparison = binary && binary->op >= BinaryOp::Equal && binary->op <= BinaryOp::GreaterEqual;
    if (!comparison && constraint->kind != ExprKind::Error) {
      Diagnostic* d = error_at(constraint->span, "a `where` constraint must be a comparison");
      if (d) d->with_help("write a relation between dimensions, such as `H % Heads == 0` or `N > 0`");
    }
    clause.constraints.push_back(std::move(constraint));
    if (!accept(K::Comma)) break;
  }
  clause.span = span_from(begin);
  return clause;
}

std::unique_ptr<GradClause> Parser::parse_grad() {
  auto grad = std::make_unique<GradClause>();
  const uint32_t begin = here();
  advance();  // `grad`
  expect(K::LParen, "after `grad`");
  grad->result = expect_name("the name of the op's result");
  expect(K::Comma, "between the result's and the gradient's names");
  grad->gradient = expect_name("the name of the incoming gradient");
  expect(K::RParen, "to close `grad(...)`");
  grad->body = parse_body();
  grad->span = span_from(begin);
  return grad;
}

ItemPtr Parser::parse_function(uint32_t begin, FunctionKind function) {
  const std::string_view keyword = peek().text;
  advance();  // `fn`, `op` or `entry`
  auto item = std::make_unique<FunctionItem>(span_from(begin));
  item->function = function;
  item->name = expect_name("a name after `" + std::string(keyword) + "`");
  if (at(K::Less)) item->generics = parse_generic_params();
  item->params = parse_params();
  if (accept(K::Arrow)) {
    item->result = parse_type();
  } else if (function == FunctionKind::Op) {
    Diagnostic* d = expected("`->` and the op's result type");
    if (d) d->note("an `op` always returns a value");
  }
  if (at(K::KwKernel)) {
    auto binding = std::make_unique<KernelBinding>();
    const uint32_t binding_begin = here();
    advance();
    binding->kernel = expect_name("the kernel's name");
    if (at(K::Less)) {
      binding->generic_args = parse_generic_args();
      binding->has_generic_args = true;
    }
    binding->span = span_from(binding_begin);
    item->kernel = std::move(binding);
  }
  if (at(K::KwWhere)) item->where = parse_where();
  item->body = parse_body();
  if (at_word("grad") && kind(1) == K::LParen) item->grad = parse_grad();
  return item;
}

ItemPtr Parser::parse_kernel(uint32_t begin) {
  advance();  // `kernel`
  auto item = std::make_unique<KernelItem>(span_from(begin));
  item->name = expect_name("a kernel name");
  if (at(K::Less)) item->generics = parse_generic_params();
  item->params = parse_params();
  const auto parse_result = [this]() {
    KernelResult result;
    const uint32_t result_begin = here();
    result.name = expect_name("a named kernel result, such as `y: Tensor[N; f32]`");
    if (expect(K::Colon, "and the result's type")) {
      result.type = parse_type();
    } else {
      result.type = std::make_unique<ErrorType>(here_span());
    }
    result.span = span_from(result_begin);
    return result;
  };
  if (expect(K::Arrow, "and the kernel's named results")) {
    if (accept(K::LParen)) {
      item->results_parenthesized = true;
      while (!at(K::RParen) && !at(K::Eof)) {
        KernelResult result = parse_result();
        const bool named = !result.name.empty();
        item->results.push_back(std::move(result));
        if (!named || !accept(K::Comma)) break;
      }
      expect(K::RParen, "to close the kernel's results");
    } else {
      item->results.push_back(parse_result());
    }
  }
  const uint32_t grid_begin = here();
  if (at_word("grid") && kind(1) == K::LParen) {
    advance();
    advance();
    while (!at(K::RParen) && !at(K::Eof)) {
      item->grid.push_back(parse_expr());
      if (!accept(K::Comma)) break;
    }
    expect(K::RParen, "to close `grid(...)`");
    item->grid_span = span_from(grid_begin);
  } else {
    Diagnostic* d = expected("`grid(...)` after the kernel's results");
    if (d) d->note("a kernel declares its launch grid: `-> y: Tensor[R, C; f32] grid(R)`");
  }
  while ((at_word("warps") || at_word("stages")) && kind(1) == K::LParen) {
    LaunchHint hint;
    const uint32_t hint_begin = here();
    hint.name = Ident{std::string(peek().text), here_span()};
    advance();
    advance();
    hint.value = parse_expr();
    expect(K::RParen, "to close the launch hint");
    hint.span = span_from(hint_begin);
    item->hints.push_back(std::move(hint));
  }
  if (at(K::KwWhere)) item->where = parse_where();
  item->body = parse_body();
  return item;
}

ItemPtr Parser::parse_block(uint32_t begin) {
  advance();  // `block`
  auto item = std::make_unique<BlockItem>(span_from(begin));
  item->name = expect_name("a block name");
  if (at(K::Less)) item->generics = parse_generic_params();
  if (at(K::KwWhere)) item->where = parse_where();
  if (!expect(K::LBrace, "to open the block's members")) return item;
  while (!at(K::RBrace) && !at(K::Eof)) {
    const size_t before = pos_;
    const size_t errors_before = errors_;
    if (at(K::KwModule)) break;  // a `}` is missing; the file level takes over
    item->members.push_back(parse_item(true));
    if (errors_ != errors_before && !starts_item() && !at(K::RBrace)) skip_to_item_start();
    if (pos_ == before) advance();
  }
  expect(K::RBrace, "to close the block");
  return item;
}

ItemPtr Parser::parse_member(uint32_t begin, bool in_block) {
  const Token keyword = peek();
  auto item = std::make_unique<MemberItem>(span_from(begin));
  switch (keyword.kind) {
    case K::KwParam: item->member = MemberKind::Param; break;
    case K::KwBuffer: item->member = MemberKind::Buffer; break;
    case K::KwState: item->member = MemberKind::State; break;
    default: item->member = MemberKind::Sub; break;
  }
  if (!in_block) {
    Diagnostic* d = error_here("`" + std::string(keyword.text) + "` declarations belong inside a `block`");
    if (d) d->note("a block declares its parameters, buffers, state and sub-blocks");
  }
  advance();
  item->name = expect_name("a member name");
  if (expect(K::Colon, "and the member's type")) {
    item->type = parse_type();
  } else {
    item->type = std::make_unique<ErrorType>(here_span());
  }
  if (at(K::Equal)) {
    // `param` and `sub` may be written `= none`; whether the value is
    // allowed is the checker's rule (E4102, E4101). `buffer` and `state`
    // have no initializer in the grammar.
    if (item->member == MemberKind::Buffer || item->member == MemberKind::State) {
      Diagnostic* d = error_here("a `" + std::string(keyword.text) + "` has no initializer");
      if (d) {
        d->note(item->member == MemberKind::Buffer ? "a buffer's payload is bound externally, like a param's"
                                                   : "the runtime supplies a state's initial value (zeros)");
      }
    }
    advance();
    item->default_value = parse_expr();
  }
  return item;
}

// ------------------------------------------------------------------ statements

Body Parser::parse_body() {
  Body body;
  const uint32_t begin = here();
  if (!expect(K::LBrace, "to open the body")) {
    body.span = span_from(begin);
    return body;
  }
  while (!at(K::RBrace) && !at(K::Eof)) {
    if (starts_item()) {
      Diagnostic* d = expected("a statement or `}`");
      if (d) d->with_help("is a `}` missing above?");
      break;  // the enclosing declaration ends here; the item goes on from this token
    }
    const size_t before = pos_;
    const size_t errors_before = errors_;
    body.statements.push_back(parse_statement());
    if (errors_ != errors_before) skip_to_statement_start();
    if (pos_ == before) advance();
  }
  expect(K::RBrace, "to close the body");
  body.span = span_from(begin);
  return body;
}

StmtPtr Parser::statement_error(uint32_t begin) { return std::make_unique<ErrorStmt>(span_from(begin)); }

StmtPtr Parser::parse_statement() {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  if (guard.exceeded()) return statement_error(begin);
  switch (kind()) {
    case K::KwLet: return parse_let(begin);
    case K::KwVar: return parse_var(begin);
    case K::KwReturn: return parse_return(begin);
    case K::KwStatic: return parse_static_for(begin);
    case K::KwWhile: {
      advance();
      auto stmt = std::make_unique<WhileStmt>(span_from(begin));
      stmt->condition = parse_expr();
      stmt->body = parse_body();
      stmt->span = span_from(begin);
      return stmt;
    }
    case K::KwFor: {
      auto stmt = std::make_unique<ForStmt>(span_from(begin));
      stmt->loop = parse_for_loop();
      stmt->span = span_from(begin);
      return stmt;
    }
    case K::KwYield: {
      advance();
      auto stmt = std::make_unique<YieldStmt>(span_from(begin));
      stmt->value = parse_expr();
      stmt->span = span_from(begin);
      return stmt;
    }
    case K::Identifier:
    case K::Reserved:
      if (kind(1) == K::Equal) {
        auto stmt = std::make_unique<AssignStmt>(span_from(begin));
        stmt->target = expect_name("an assignment target");
        advance();  // `=`
        stmt->value = parse_expr();
        stmt->span = span_from(begin);
        return stmt;
      }
      if (is_store_word(peek().text) && kind(1) == K::LParen) return parse_store(begin);
      break;
    default: break;
  }
  Diagnostic* d = expected("a statement");
  if (d) {
    if (at(K::KwIf) || at(K::KwMatch)) {
      d->note("`" + std::string(peek().text) + "` is an expression; bind its value with `let` or `return` it");
    } else if ((at(K::Identifier) || at(K::Reserved)) &&
               (kind(1) == K::Plus || kind(1) == K::Minus || kind(1) == K::Star || kind(1) == K::Slash) &&
               kind(2) == K::Equal) {
      d->with_help("Linnet has no compound assignment; write `x = x + ...`");
    } else if (at(K::Identifier) && kind(1) == K::LBracket) {
      d->with_help("to define a tensor by index notation, write `let " + std::string(peek().text) + "[...] = ...`");
    } else if (!at(K::Semicolon)) {  // `expected` already explained `;`
      d->note("Linnet has no expression statements; bind a value with `let`, assign a `var`, or `return` it");
    }
  }
  return statement_error(begin);
}

StmtPtr Parser::parse_let(uint32_t begin) {
  advance();  // `let`
  if ((at(K::Identifier) || at(K::Reserved)) && kind(1) == K::LBracket) {
    auto stmt = std::make_unique<ComprehensionStmt>(span_from(begin));
    stmt->name = expect_name("a tensor name");
    advance();  // `[`
    while (!at(K::RBracket) && !at(K::Eof)) {
      IndexOutput output;
      const uint32_t output_begin = here();
      output.is_pack = accept(K::Star);
      output.name = expect_name(output.is_pack ? "a pack index name after `*`" : "an output index name");
      output.span = span_from(output_begin);
      if (output.name.empty()) break;
      stmt->outputs.push_back(std::move(output));
      if (!accept(K::Comma)) break;
    }
    if (stmt->outputs.empty() && at(K::RBracket)) expected("an output index, such as `let c[m, n] = ...`");
    expect(K::RBracket, "to close the output indices");
    if (expect(K::Equal, "and the element's value")) {
      stmt->value = parse_expr();
    } else {
      stmt->value = error_expr(here());
    }
    stmt->span = span_from(begin);
    return stmt;
  }
  auto stmt = std::make_unique<LetStmt>(span_from(begin));
  stmt->pattern = parse_pattern(false);
  if (accept(K::Colon)) stmt->type = parse_type();
  if (expect(K::Equal, "and the bound value")) {
    stmt->value = parse_expr();
  } else {
    stmt->value = error_expr(here());
  }
  stmt->span = span_from(begin);
  return stmt;
}

StmtPtr Parser::parse_var(uint32_t begin) {
  advance();  // `var`
  auto stmt = std::make_unique<VarStmt>(span_from(begin));
  stmt->name = expect_name("a variable name");
  if (accept(K::Colon)) stmt->type = parse_type();
  if (expect(K::Equal, "and the variable's initial value")) {
    stmt->value = parse_expr();
  } else {
    stmt->value = error_expr(here());
  }
  stmt->span = span_from(begin);
  return stmt;
}

StmtPtr Parser::parse_return(uint32_t begin) {
  advance();  // `return`
  auto stmt = std::make_unique<ReturnStmt>(span_from(begin));
  // A bare `return` is followed by `}` or by the next statement.
  bool has_value;
  switch (kind()) {
    case K::Identifier:
    case K::Reserved: has_value = kind(1) != K::Equal && !(is_store_word(peek().text) && kind(1) == K::LParen); break;
    case K::Integer:
    case K::Float:
    case K::String:
    case K::KwTrue:
    case K::KwFalse:
    case K::KwNone:
    case K::KwSome:
    case K::KwIf:
    case K::KwMatch:
    case K::KwFor:
    case K::LParen:
    case K::LBracket:
    case K::Bang:
    case K::Minus:
    case K::Plus: has_value = true; break;
    default: has_value = false; break;
  }
  if (has_value) stmt->value = parse_expr();
  stmt->span = span_from(begin);
  return stmt;
}

StmtPtr Parser::parse_static_for(uint32_t begin) {
  advance();  // `static`
  auto stmt = std::make_unique<StaticForStmt>(span_from(begin));
  if (!expect(K::KwFor, "after `static`")) {
    stmt->pattern = std::make_unique<ErrorPattern>(here_span());
    stmt->iterable = error_expr(here());
    return stmt;
  }
  stmt->pattern = parse_pattern(false);
  expect(K::KwIn, "after the loop variable");
  stmt->iterable = parse_expr();
  if (accept(K::DotDot)) stmt->range_stop = parse_expr();
  stmt->body = parse_body();
  stmt->span = span_from(begin);
  return stmt;
}

ForLoop Parser::parse_for_loop() {
  ForLoop loop;
  advance();  // `for`
  loop.variable = expect_name("a loop variable");
  expect(K::KwIn, "after the loop variable");
  loop.start = parse_expr();
  if (accept(K::DotDot)) {
    loop.stop = parse_expr();
  } else {
    Diagnostic* d = expected("`..` and the end of the range");
    if (d) d->note("`for` runs over an integer range `start..stop`; `static for` iterates a sub-block array");
    loop.stop = error_expr(here());
  }
  loop.body = parse_body();
  return loop;
}

StmtPtr Parser::parse_store(uint32_t begin) {
  auto stmt = std::make_unique<StoreStmt>(span_from(begin));
  const std::string_view word = peek().text;
  stmt->store = word == "store"        ? StoreKind::Store
                : word == "atomic_add" ? StoreKind::AtomicAdd
                : word == "atomic_max" ? StoreKind::AtomicMax
                                       : StoreKind::AtomicMin;
  stmt->keyword_span = here_span();
  advance();
  advance();  // `(`
  stmt->target = parse_expr();
  if (expect(K::Comma, "and the value to write")) {
    stmt->value = parse_expr();
  } else {
    stmt->value = error_expr(here());
  }
  if (accept(K::Comma) && !at(K::RParen)) stmt->mask = parse_expr();
  accept(K::Comma);
  expect(K::RParen, "to close the call");
  stmt->span = span_from(begin);
  return stmt;
}

}  // namespace detail
}  // namespace linnet::syntax
