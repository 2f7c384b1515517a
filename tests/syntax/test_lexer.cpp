// The lexer (spec chapter 1): token kinds and spellings, literal forms and
// values, comments, and the lexical diagnostics E1001, E1002, E1003, E1005.
#include <catch2/catch.hpp>

#include "linnet/syntax/lexer.hpp"

using namespace linnet::syntax;

namespace {

struct Lexed {
  SourceManager sources;
  Diagnostics diagnostics;
  uint32_t file = 0;
  LexResult result;

  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token& t : result.tokens) out.push_back(t.kind);
    return out;
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const Token& t : result.tokens) {
      if (t.kind != TokenKind::Eof) out.emplace_back(t.text);
    }
    return out;
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diagnostics.all()) out.push_back(d.code);
    return out;
  }
  std::string slice(Span span) const { return sources.file(file).text().substr(span.begin, span.end - span.begin); }
};

std::unique_ptr<Lexed> lex_text(const std::string& text) {
  auto lexed = std::make_unique<Lexed>();
  lexed->file = lexed->sources.add("lexer.linnet", text);
  lexed->result = lex(lexed->sources, lexed->file, lexed->diagnostics);
  return lexed;
}

using K = TokenKind;

}  // namespace

TEST_CASE("keywords, reserved words and identifiers", "[syntax][lexer]") {
  const auto lexed = lex_text("module use pub let var fn op kernel block entry yield some none extern");
  CHECK(lexed->kinds() == std::vector<K>{K::KwModule, K::KwUse, K::KwPub, K::KwLet, K::KwVar, K::KwFn, K::KwOp,
                                         K::KwKernel, K::KwBlock, K::KwEntry, K::KwYield, K::KwSome, K::KwNone,
                                         K::KwExtern, K::Eof});
  CHECK(lexed->diagnostics.all().empty());

  // Words reserved for future syntax are their own kind; the parser reports
  // them (E1004) where they are used as names.
  const auto reserved = lex_text("async await effect unsafe macro trait impl derive rng mut ref device");
  for (const Token& token : reserved->result.tokens) {
    if (token.kind != K::Eof) CHECK(token.kind == K::Reserved);
  }
  CHECK(reserved->diagnostics.all().empty());

  // Contextual words are identifiers to the lexer.
  const auto contextual = lex_text("grad grid warps stages store atomic_add sum max Tensor f32 std _x X1");
  for (const Token& token : contextual->result.tokens) {
    if (token.kind != K::Eof) CHECK(token.kind == K::Identifier);
  }
  // Identifiers are case-sensitive: `Let` is not the keyword.
  CHECK(lex_text("Let")->result.tokens.front().kind == K::Identifier);
}

TEST_CASE("punctuation is read by maximal munch", "[syntax][lexer]") {
  const auto lexed = lex_text("... .. . :: : -> - => == = != ! <= < >= > && & || | ^ ? % / * + ; , ( ) [ ] { }");
  CHECK(lexed->kinds() == std::vector<K>{K::Ellipsis, K::DotDot,   K::Dot,      K::ColonColon, K::Colon,
                                         K::Arrow,    K::Minus,    K::FatArrow, K::EqualEqual, K::Equal,
                                         K::BangEqual, K::Bang,    K::LessEqual, K::Less,      K::GreaterEqual,
                                         K::Greater,  K::AmpAmp,   K::Amp,      K::PipePipe,   K::Pipe,
                                         K::Caret,    K::Question, K::Percent,  K::Slash,      K::Star,
                                         K::Plus,     K::Semicolon, K::Comma,   K::LParen,     K::RParen,
                                         K::LBracket, K::RBracket, K::LBrace,   K::RBrace,     K::Eof});
  // Without spaces: `0..N`, `0::2`, `x[...,0]`.
  CHECK(lex_text("0..N")->kinds() == std::vector<K>{K::Integer, K::DotDot, K::Identifier, K::Eof});
  CHECK(lex_text("0::2")->kinds() == std::vector<K>{K::Integer, K::ColonColon, K::Integer, K::Eof});
  CHECK(lex_text("x[...,0]")->kinds() ==
        std::vector<K>{K::Identifier, K::LBracket, K::Ellipsis, K::Comma, K::Integer, K::RBracket, K::Eof});
  // `>>` is two tokens, so nested generic argument lists close naturally.
  CHECK(lex_text("A<B<C>>")->kinds() ==
        std::vector<K>{K::Identifier, K::Less, K::Identifier, K::Less, K::Identifier, K::Greater, K::Greater, K::Eof});
}

TEST_CASE("integer literals and their values", "[syntax][lexer]") {
  const auto lexed = lex_text("0 42 1_000_000 0xff 0b1010 0xDEAD_beef 18446744073709551615");
  CHECK(lexed->diagnostics.all().empty());
  CHECK(lexed->texts() == std::vector<std::string>{"0", "42", "1_000_000", "0xff", "0b1010", "0xDEAD_beef",
                                                   "18446744073709551615"});
  for (const Token& token : lexed->result.tokens) {
    if (token.kind != K::Eof) CHECK(token.kind == K::Integer);
  }
  CHECK(integer_literal_value("0") == 0u);
  CHECK(integer_literal_value("1_000_000") == 1000000u);
  CHECK(integer_literal_value("0xff") == 255u);
  CHECK(integer_literal_value("0b1010") == 10u);
  CHECK(integer_literal_value("0xDEAD_beef") == 0xDEADBEEFu);
  CHECK(integer_literal_value("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(integer_literal_value("18446744073709551616").has_value());
}

TEST_CASE("floating literals and their values", "[syntax][lexer]") {
  const auto lexed = lex_text("0.0 1.5 1e-5 3.141_592 2E+3 6.2831853071795865 1e30");
  CHECK(lexed->diagnostics.all().empty());
  for (const Token& token : lexed->result.tokens) {
    if (token.kind != K::Eof) CHECK(token.kind == K::Float);
  }
  CHECK(lexed->texts() ==
        std::vector<std::string>{"0.0", "1.5", "1e-5", "3.141_592", "2E+3", "6.2831853071795865", "1e30"});
  CHECK(float_literal_value("1.5") == 1.5);
  CHECK(float_literal_value("1e-5") == Approx(1e-5));
  CHECK(float_literal_value("3.141_592") == Approx(3.141592));
  CHECK(float_literal_value("2E+3") == 2000.0);
  // `-1e30` is a minus and a literal.
  CHECK(lex_text("-1e30")->kinds() == std::vector<K>{K::Minus, K::Float, K::Eof});
  // A dot not followed by a digit ends the number: `1.x` is `1`, `.`, `x`.
  CHECK(lex_text("1.x")->kinds() == std::vector<K>{K::Integer, K::Dot, K::Identifier, K::Eof});
}

TEST_CASE("malformed numbers are E1005 over the whole literal", "[syntax][lexer]") {
  for (const std::string bad : {"1__0", "1_", "0x", "0b102", "007", "1e", "1e+", "1.5e", "0X1F", "12abc",
                                "0x_1", "0.5_"}) {
    INFO(bad);
    const auto lexed = lex_text(bad);
    REQUIRE_FALSE(lexed->diagnostics.all().empty());
    const Diagnostic& d = lexed->diagnostics.all().front();
    CHECK(d.code == "E1005");
    CHECK(d.span.begin == 0);
    // One token carries the bad spelling, so the parser sees one operand.
    CHECK(lexed->result.tokens.front().span.begin == 0);
  }
  // The message names the problem.
  CHECK(lex_text("007")->diagnostics.all().front().message.find("leading zero") != std::string::npos);
  CHECK(lex_text("1__0")->diagnostics.all().front().message.find("between two digits") != std::string::npos);
  CHECK(lex_text("0b102")->diagnostics.all().front().message.find("`2` is not a binary digit") != std::string::npos);
}

TEST_CASE("string literals, escapes and their values", "[syntax][lexer]") {
  const auto lexed = lex_text(R"("model.layers.0.weight" "a\nb" "q\"q" "\u{1F600}" "tab\there" "")");
  CHECK(lexed->diagnostics.all().empty());
  CHECK(lexed->kinds() == std::vector<K>{K::String, K::String, K::String, K::String, K::String, K::String, K::Eof});
  CHECK(decode_string_literal(lexed->result.tokens[0].text) == "model.layers.0.weight");
  CHECK(decode_string_literal(lexed->result.tokens[1].text) == "a\nb");
  CHECK(decode_string_literal(lexed->result.tokens[2].text) == "q\"q");
  CHECK(decode_string_literal(lexed->result.tokens[3].text) == "\xF0\x9F\x98\x80");
  CHECK(decode_string_literal(lexed->result.tokens[4].text) == "tab\there");
  CHECK(decode_string_literal(lexed->result.tokens[5].text).empty());
  // Any Unicode scalar value may appear in a string.
  CHECK(lex_text("\"h\xC3\xA9llo \xE2\x82\xAC\"")->diagnostics.all().empty());
}

TEST_CASE("malformed strings are E1003", "[syntax][lexer]") {
  const auto unknown = lex_text(R"("a\qb")");
  REQUIRE(unknown->codes() == std::vector<std::string>{"E1003"});
  CHECK(unknown->slice(unknown->diagnostics.all().front().span) == "\\q");

  const auto unterminated = lex_text("\"never closed\nlet x = 1");
  REQUIRE(unterminated->codes() == std::vector<std::string>{"E1003"});
  CHECK(unterminated->slice(unterminated->diagnostics.all().front().span) == "\"never closed");
  // The next line lexes normally.
  CHECK(unterminated->result.tokens[1].kind == K::KwLet);

  CHECK(lex_text(R"("\u{D800}")")->codes() == std::vector<std::string>{"E1003"});
  CHECK(lex_text(R"("\u{110000}")")->codes() == std::vector<std::string>{"E1003"});
  CHECK(lex_text(R"("\u{}")")->codes() == std::vector<std::string>{"E1003"});
  CHECK(lex_text(R"("\u{41")")->codes().front() == "E1003");
  // Raw strings are reserved syntax.
  CHECK(lex_text(R"(r"raw")")->codes() == std::vector<std::string>{"E1103"});
}

TEST_CASE("comments are skipped; block comments nest", "[syntax][lexer]") {
  const auto lexed = lex_text("a // line\nb /* outer /* inner */ still outer */ c\n/// doc\n/** block doc */ d");
  CHECK(lexed->diagnostics.all().empty());
  CHECK(lexed->texts() == std::vector<std::string>{"a", "b", "c", "d"});
  REQUIRE(lexed->result.comments.size() == 4);
  CHECK_FALSE(lexed->result.comments[0].is_doc);
  CHECK_FALSE(lexed->result.comments[1].is_doc);
  CHECK(lexed->result.comments[2].is_doc);
  CHECK(lexed->result.comments[3].is_doc);
  CHECK(lexed->slice(lexed->result.comments[1].span) == "/* outer /* inner */ still outer */");
  // `////` and `/***/` are not documentation.
  const auto plain = lex_text("//// rule\n/***/");
  CHECK_FALSE(plain->result.comments[0].is_doc);
  CHECK_FALSE(plain->result.comments[1].is_doc);
}

TEST_CASE("an unclosed block comment is E1002 at its opener", "[syntax][lexer]") {
  const auto lexed = lex_text("let x = 1\n/* outer /* inner */ never closed");
  REQUIRE(lexed->codes() == std::vector<std::string>{"E1002"});
  const Diagnostic& d = lexed->diagnostics.all().front();
  CHECK(lexed->slice(d.span) == "/*");
  CHECK(d.span.begin == 10);
  CHECK(lexed->result.tokens.back().kind == K::Eof);
}

TEST_CASE("invalid characters are E1001", "[syntax][lexer]") {
  const auto at = lex_text("a @ b");
  REQUIRE(at->codes() == std::vector<std::string>{"E1001"});
  CHECK(at->slice(at->diagnostics.all().front().span) == "@");
  CHECK(at->kinds() == std::vector<K>{K::Identifier, K::Invalid, K::Identifier, K::Eof});

  // A non-ASCII identifier: the run of non-ASCII characters is one error.
  const auto accented = lex_text("caf\xC3\xA9\xC3\xA9 = 1");
  REQUIRE(accented->codes() == std::vector<std::string>{"E1001"});
  CHECK(accented->slice(accented->diagnostics.all().front().span) == "\xC3\xA9\xC3\xA9");

  // Invalid UTF-8 outside and inside comments and strings.
  CHECK(lex_text("a \xFF b")->codes() == std::vector<std::string>{"E1001"});
  CHECK(lex_text("// \xC0\xAF\n")->codes() == std::vector<std::string>{"E1001"});
  CHECK(lex_text("\"\xED\xA0\x80\"")->codes() == std::vector<std::string>{"E1001"});
  // One report per comment, however many bad bytes it holds.
  CHECK(lex_text("/* \xFF x \xFE y \xFF */")->codes() == std::vector<std::string>{"E1001"});

  // Control characters other than tab and line breaks.
  const auto nul = lex_text(std::string("a\0b", 3));
  CHECK(nul->codes() == std::vector<std::string>{"E1001"});
  CHECK(nul->diagnostics.all().front().message.find("U+0000") != std::string::npos);
}

TEST_CASE("token spans and positions", "[syntax][lexer]") {
  const auto lexed = lex_text("\xEF\xBB\xBFmodule a.b\r\n  let x");
  // The byte-order mark is skipped.
  REQUIRE(lexed->result.tokens.size() == 7);
  CHECK(lexed->result.tokens[0].span.begin == 3);
  CHECK(lexed->result.tokens[0].text == "module");
  const Token& let = lexed->result.tokens[4];
  CHECK(let.kind == K::KwLet);
  const LineColumn position = lexed->sources.file(lexed->file).line_column(let.span.begin);
  CHECK(position.line == 2);
  CHECK(position.column == 3);
  // Eof is an empty span at the end.
  const Token& eof = lexed->result.tokens.back();
  CHECK(eof.kind == K::Eof);
  CHECK(eof.span.begin == eof.span.end);
  CHECK(eof.span.end == lexed->sources.file(lexed->file).text().size());
}

TEST_CASE("tokenize returns the tokens without comments", "[syntax][lexer]") {
  SourceManager sources;
  const uint32_t file = sources.add("t.linnet", "a /* c */ b // d\n");
  Diagnostics diagnostics;
  const std::vector<Token> tokens = tokenize(sources, file, diagnostics);
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[0].text == "a");
  CHECK(tokens[1].text == "b");
  CHECK(tokens[2].kind == K::Eof);
}
