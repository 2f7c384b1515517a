// Unbalanced brackets are reported once, before parsing, where the mistake
// most likely is (placed by indentation), not at the end of the file.
#include <catch2/catch.hpp>

#include <string>

#include "parse_helpers.hpp"

using namespace linnet::syntax;
using namespace linnet::syntax::testing;

namespace {

// "line:col" of a span in the parsed file.
std::string position(const Parsed& parsed, Span span) {
  const LineColumn at = parsed.sources.file(span.file).line_column(span.begin);
  return std::to_string(at.line) + ":" + std::to_string(at.column);
}

}  // namespace

TEST_CASE("an extra `}` points at the out-of-line `}` that closed a block early", "[syntax][delimiters]") {
  const auto parsed = parse(
      "module m\n"
      "fn f(x: f32) -> f32 {\n"           // 2: the block closed early
      "    let y = if x > 0.0 {\n"
      "        x\n"
      "    } else { 0.0 }\n"
      "    }\n"                             // 6: the extra `}`
      "    return y\n"
      "}\n"                                 // 8: left with nothing to close
      "fn g() {\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().size() == 1);  // no cascade of parse errors
  const Diagnostic& d = parsed->diagnostics.all().front();
  CHECK(d.code == "E1101");
  CHECK(d.message == "unexpected closing delimiter `}`");
  CHECK(parsed->first_position() == "8:1");
  REQUIRE(d.related.size() == 2);
  CHECK(position(*parsed, d.related[0].span) == "2:21");
  CHECK(position(*parsed, d.related[1].span) == "6:5");
  REQUIRE(d.help.size() == 1);
  CHECK(d.help[0].find("line 6") != std::string::npos);
}

TEST_CASE("an extra `}` with nothing out of line names the block it follows", "[syntax][delimiters]") {
  const auto parsed = parse(
      "module m\n"
      "fn f() {\n"
      "}\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().size() == 1);
  const Diagnostic& d = parsed->diagnostics.all().front();
  CHECK(d.message == "unexpected closing delimiter `}`");
  CHECK(parsed->first_position() == "4:1");
  REQUIRE(d.related.size() == 1);
  CHECK(position(*parsed, d.related[0].span) == "2:8");
  CHECK(d.related[0].message.find("already closed on line 3") != std::string::npos);
}

TEST_CASE("an unclosed `{` is reported at the opening brace", "[syntax][delimiters]") {
  SECTION("the innermost block whose `}` an outer block took") {
    const auto parsed = parse(
        "module m\n"
        "fn f(x: f32) -> f32 {\n"
        "    let y = if x > 0.0 {\n"    // 3: never closed
        "        x\n"
        "    return y\n"
        "}\n"                           // 6: indented like line 2
        "fn g() {\n"
        "}\n");
    REQUIRE(parsed->diagnostics.all().size() == 1);
    const Diagnostic& d = parsed->diagnostics.all().front();
    CHECK(d.message == "unclosed delimiter `{`");
    CHECK(parsed->first_position() == "3:24");
    REQUIRE(d.related.size() == 1);
    CHECK(position(*parsed, d.related[0].span) == "6:1");
    CHECK(d.related[0].message.find("indented like line 2") != std::string::npos);
  }
  SECTION("the last block of the file") {
    const auto parsed = parse("module m\nfn f() {\n    let x = 1\n");
    REQUIRE(parsed->diagnostics.all().size() == 1);
    CHECK(parsed->diagnostics.all().front().message == "unclosed delimiter `{`");
    CHECK(parsed->first_position() == "2:8");
  }
}

TEST_CASE("a bracket closed by another kind is reported where it opens", "[syntax][delimiters]") {
  const auto parsed = parse(
      "module m\n"
      "fn f(x: f32) -> f32 {\n"
      "    let y = max(x, 1.0\n"
      "    return y\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().size() == 1);
  const Diagnostic& d = parsed->diagnostics.all().front();
  CHECK(d.message == "unclosed delimiter `(`");
  CHECK(parsed->first_position() == "3:16");
  REQUIRE(d.related.size() == 1);
  CHECK(position(*parsed, d.related[0].span) == "5:1");
  REQUIRE(d.help.size() == 1);
  CHECK(d.help[0] == "close it with `)`");
}

TEST_CASE("a stray `)` or `]` is unexpected", "[syntax][delimiters]") {
  const auto parsed = parse("module m\nconst C: i64 = 1)\n");
  REQUIRE(parsed->diagnostics.all().size() == 1);
  CHECK(parsed->diagnostics.all().front().message == "unexpected closing delimiter `)`");
  CHECK(parsed->first_position() == "2:17");
}

TEST_CASE("balanced brackets leave the parser's own errors", "[syntax][delimiters]") {
  const auto parsed = parse("module m\nfn f() {\n    let = 1\n}\n");
  REQUIRE(!parsed->diagnostics.all().empty());
  CHECK(parsed->diagnostics.all().front().message.find("delimiter") == std::string::npos);
}

TEST_CASE("brackets inside an unterminated comment are not matched", "[syntax][delimiters]") {
  // The lexer's error is the one that explains the file.
  const auto parsed = parse("module m\nfn f() {\n/* {\n");
  REQUIRE(!parsed->diagnostics.all().empty());
  for (const Diagnostic& d : parsed->diagnostics.all()) CHECK(d.message.find("delimiter") == std::string::npos);
}
