// Hostile input for the front end: deep nesting, huge random buffers, broken
// encodings, stray NUL bytes, unterminated comments, empty files. Each must end
// in diagnostics (at least one error) in reasonable time: never a crash, a
// stack overflow, an exception or a hang.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/lexer.hpp"
#include "linnet/syntax/parser.hpp"
#include "linnet/syntax/source.hpp"

using namespace linnet::syntax;

namespace {

constexpr size_t deep = 100'000;

// Generous bounds: the work is linear, so even a loaded machine or a debug
// build stays far inside them, while a quadratic algorithm does not.
constexpr double nesting_seconds = 10.0;
constexpr double random_buffer_seconds = 60.0;

struct Outcome {
  size_t errors = 0;  // stored and suppressed together
  std::vector<std::string> codes;
  double seconds = 0.0;
};

Outcome parse_text(std::string text) {
  SourceManager sources;
  const uint32_t file = sources.add("hostile.linnet", std::move(text));
  Diagnostics diagnostics;
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ast::File> tree;
  REQUIRE_NOTHROW(tree = parse_file(sources, file, diagnostics));
  const auto stop = std::chrono::steady_clock::now();
  REQUIRE(tree != nullptr);

  Outcome outcome;
  outcome.errors = diagnostics.error_count() + diagnostics.suppressed();
  for (const Diagnostic& diagnostic : diagnostics.all()) {
    outcome.codes.push_back(diagnostic.code);
    // Every diagnostic must point inside the file it came from.
    CHECK(diagnostic.span.file == file);
    CHECK(diagnostic.span.begin <= diagnostic.span.end);
    CHECK(diagnostic.span.end <= sources.file(file).text().size());
  }
  // Rendering walks the spans again; it must not trip over what the parser made.
  CHECK_NOTHROW(render_text(diagnostics, sources));
  outcome.seconds = std::chrono::duration<double>(stop - start).count();
  return outcome;
}

bool has_code(const Outcome& outcome, const std::string& code) {
  return std::find(outcome.codes.begin(), outcome.codes.end(), code) != outcome.codes.end();
}

// Concatenation by appending (g++ 12 misreports `"literal" + std::string`
// under -Wrestrict at -O2, so the tests build their text this way).
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out += part;
  return out;
}

std::string repeat(std::string_view piece, size_t count) {
  std::string out;
  out.reserve(piece.size() * count);
  for (size_t i = 0; i < count; ++i) out += piece;
  return out;
}

// A string literal's bytes including embedded NULs (not stopping at the first).
template <size_t N>
std::string with_nul(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// A function whose body returns `expression`.
std::string in_function(const std::string& expression) {
  return join({"module hostile\nfn f(x: i64) -> i64 {\n    return ", expression, "\n}\n"});
}

}  // namespace

TEST_CASE("deeply nested parentheses end in an error", "[syntax][hostile]") {
  const Outcome balanced = parse_text(in_function(join({repeat("(", deep), "x", repeat(")", deep)})));
  CHECK(balanced.errors > 0);
  CHECK(balanced.seconds < nesting_seconds);

  const Outcome unclosed = parse_text(in_function(join({repeat("(", deep), "x"})));
  CHECK(unclosed.errors > 0);
  CHECK(unclosed.seconds < nesting_seconds);

  const Outcome calls = parse_text(in_function(join({repeat("abs(", deep), "x", repeat(")", deep)})));
  CHECK(calls.errors > 0);
  CHECK(calls.seconds < nesting_seconds);
}

TEST_CASE("deeply nested brackets end in an error", "[syntax][hostile]") {
  // Shape literals inside shape literals.
  const Outcome shapes = parse_text(in_function(join({repeat("[", deep), "1", repeat("]", deep)})));
  CHECK(shapes.errors > 0);
  CHECK(shapes.seconds < nesting_seconds);

  // Index expressions inside index expressions.
  const Outcome indices = parse_text(in_function(join({repeat("x[", deep), "0", repeat("]", deep)})));
  CHECK(indices.errors > 0);
  CHECK(indices.seconds < nesting_seconds);

  // Tensor types inside generic arguments inside tensor types.
  const Outcome types = parse_text(
      join({"module hostile\nconst C: ", repeat("Tensor[4; T<", deep), "f32", repeat(">]", deep), " = 1\n"}));
  CHECK(types.errors > 0);
  CHECK(types.seconds < nesting_seconds);

  const Outcome unclosed = parse_text(in_function(repeat("[", deep)));
  CHECK(unclosed.errors > 0);
  CHECK(unclosed.seconds < nesting_seconds);
}

TEST_CASE("deeply nested braces end in an error", "[syntax][hostile]") {
  // Block declarations nested inside block declarations.
  const Outcome blocks = parse_text(join({"module hostile\n", repeat("block B {\n", deep), repeat("}\n", deep)}));
  CHECK(blocks.errors > 0);
  CHECK(blocks.seconds < nesting_seconds);

  // `if` expressions nested in their then-branches.
  const Outcome ifs = parse_text(in_function(join({repeat("if true { ", deep), "x", repeat(" } else { x }", deep)})));
  CHECK(ifs.errors > 0);
  CHECK(ifs.seconds < nesting_seconds);

  // Bare braces, which no statement may start with.
  const Outcome bare = parse_text(join({"module hostile\nfn f() -> i64 ", repeat("{", deep), repeat("}", deep), "\n"}));
  CHECK(bare.errors > 0);
  CHECK(bare.seconds < nesting_seconds);

  const Outcome unclosed = parse_text(join({"module hostile\n", repeat("block B {\n", deep)}));
  CHECK(unclosed.errors > 0);
  CHECK(unclosed.seconds < nesting_seconds);
}

TEST_CASE("a long run of unary operators ends in an error", "[syntax][hostile]") {
  const Outcome minus = parse_text(in_function(join({repeat("-", deep), "x"})));
  CHECK(minus.errors > 0);
  CHECK(minus.seconds < nesting_seconds);

  const Outcome spaced = parse_text(in_function(join({repeat("- ", deep), "x"})));
  CHECK(spaced.errors > 0);
  CHECK(spaced.seconds < nesting_seconds);

  const Outcome negation = parse_text(in_function(join({repeat("!", deep), "x"})));
  CHECK(negation.errors > 0);
  CHECK(negation.seconds < nesting_seconds);
}

TEST_CASE("long operator chains stay within the time bound", "[syntax][hostile]") {
  // Left-deep chains are built without recursion in most parsers, but the tree
  // they make is deep; the parser must either accept them cheaply or reject
  // them, never overflow the stack.
  const Outcome chain = parse_text(in_function(join({"x", repeat(" + x", deep)})));
  CHECK(chain.seconds < nesting_seconds);
  const Outcome members = parse_text(in_function(join({"x", repeat(".y", deep)})));
  CHECK(members.seconds < nesting_seconds);
}

TEST_CASE("50 MB of random bytes end in errors", "[syntax][hostile]") {
  constexpr size_t size = 50u * 1024u * 1024u;
  std::mt19937_64 generator(20240611);  // fixed seed: the same buffer every run
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t word = generator();
    for (size_t j = 0; j < 8 && i + j < size; ++j) bytes[i + j] = static_cast<char>((word >> (8 * j)) & 0xFF);
  }
  const Outcome outcome = parse_text(std::move(bytes));
  CHECK(outcome.errors > 0);
  CHECK(outcome.seconds < random_buffer_seconds);
}

TEST_CASE("random printable tokens end in errors", "[syntax][hostile]") {
  // Random bytes are mostly rejected by the lexer; a stream of valid tokens in
  // random order exercises the parser's recovery instead.
  const std::vector<std::string> pieces = {
      "module", "use", "fn", "op", "kernel", "block", "let", "var", "return", "if", "else", "match",
      "for", "static", "while", "yield", "where", "some", "none", "sum", "x", "T", "Tensor", "1",
      "2.5", "\"s\"", "(", ")", "[", "]", "{", "}", "<", ">", ",", ":", "::", ";", ".", "..",
      "...", "->", "=>", "=", "==", "+", "-", "*", "/", "&&", "|", "?", "\n"};
  std::mt19937 generator(7);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::string text = "module hostile\n";
  for (int i = 0; i < 2'000'000; ++i) text += pieces[pick(generator)];
    text += ' ';
  const Outcome outcome = parse_text(std::move(text));
  CHECK(outcome.errors > 0);
  CHECK(outcome.seconds < random_buffer_seconds);
}

TEST_CASE("an unterminated block comment at the end of the file", "[syntax][hostile]") {
  const Outcome plain = parse_text("module hostile\nconst N = 1\n/* never closed");
  CHECK(has_code(plain, "E1002"));

  const Outcome nested = parse_text(join({"module hostile\n", repeat("/*", deep)}));
  CHECK(has_code(nested, "E1002"));
  CHECK(nested.seconds < nesting_seconds);

  const Outcome opener_only = parse_text("module hostile\n/*");
  CHECK(has_code(opener_only, "E1002"));
}

TEST_CASE("invalid UTF-8 in identifiers, strings and comments", "[syntax][hostile]") {
  const std::vector<std::string> sequences = {
      "\xFF",              // never valid
      "\x80",              // a continuation byte with no lead
      "\xC3",              // a lead byte cut short
      "\xC0\xAF",          // an overlong encoding of '/'
      "\xED\xA0\x80",      // a UTF-16 surrogate
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xF8\x88\x80\x80\x80",  // a five-byte form
      "\xE2\x82",          // a three-byte form cut short
  };
  for (const std::string& bad : sequences) {
    const Outcome identifier = parse_text(join({"module hostile\nconst na", bad, "me = 1\n"}));
    CHECK(has_code(identifier, "E1001"));
    const Outcome string = parse_text(join({"module hostile\nconst NAME = \"a", bad, "b\"\n"}));
    CHECK(has_code(string, "E1001"));
    const Outcome comment = parse_text(join({"module hostile\n// a", bad, "b\nconst N = 1\n"}));
    CHECK(has_code(comment, "E1001"));
    const Outcome block_comment = parse_text(join({"module hostile\n/* a", bad, "b */\nconst N = 1\n"}));
    CHECK(has_code(block_comment, "E1001"));
    // At the very end of the file, where a decoder may read past the buffer.
    const Outcome at_end = parse_text(join({"module hostile\n// ", bad}));
    CHECK(has_code(at_end, "E1001"));
  }
}

TEST_CASE("NUL bytes", "[syntax][hostile]") {
  CHECK(has_code(parse_text(with_nul("module hostile\nconst N = 1\0\n")), "E1001"));
  CHECK(parse_text(with_nul("\0")).errors > 0);
  CHECK(parse_text(std::string(1000, '\0')).errors > 0);
  // Comments and strings may hold any Unicode scalar value, U+0000 included
  // (spec §1.1), so these only have to be survived, not rejected.
  parse_text(with_nul("module hostile\nconst S = \"a\0b\"\n"));
  parse_text(with_nul("module hostile\n// a\0b\n"));
}

TEST_CASE("empty and nearly empty files", "[syntax][hostile]") {
  const Outcome empty = parse_text("");
  CHECK(has_code(empty, "E1102"));

  const Outcome blank = parse_text(" \n\t\r\n");
  CHECK(has_code(blank, "E1102"));

  // `module` with no path is incomplete.
  CHECK(parse_text("module").errors > 0);
  CHECK(parse_text("module hostile.").errors > 0);

  // A file holding only its module declaration is a complete, valid module
  // (source_file = module_decl, { use_decl }, { item }).
  CHECK(parse_text("module hostile.only").errors == 0);
  CHECK(parse_text("module hostile.only\n").errors == 0);
}

TEST_CASE("the lexer alone survives the same input", "[syntax][hostile]") {
  // tokenize is public API too; it must end every token list with Eof.
  const std::vector<std::string> inputs = {
      "", with_nul("\0\xFF\x80"), repeat("/*", deep), join({"\"", repeat("\\", 1001)}), repeat("0x_", 1000),
      repeat("1e+", 1000), repeat("...", deep)};
  for (const std::string& input : inputs) {
    SourceManager sources;
    const uint32_t file = sources.add("lexer.linnet", input);
    Diagnostics diagnostics;
    std::vector<Token> tokens;
    REQUIRE_NOTHROW(tokens = tokenize(sources, file, diagnostics));
    REQUIRE_FALSE(tokens.empty());
    CHECK(tokens.back().kind == TokenKind::Eof);
    // Tokens come in source order, inside the file, without overlapping.
    bool ordered = true;
    uint32_t previous_end = 0;
    for (const Token& token : tokens) {
      ordered = ordered && token.span.begin >= previous_end && token.span.begin <= token.span.end &&
                token.span.end <= input.size();
      previous_end = token.span.end;
    }
    CHECK(ordered);
  }
}
