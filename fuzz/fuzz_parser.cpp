// libFuzzer target for the front end: each input is tokenized and parsed as a
// Linnet source file, and its diagnostics are rendered as text and JSON.
// Besides crashes and sanitizer reports, it stops on a broken invariant:
// tokens out of order or outside the input, a missing tree, or a diagnostic
// whose span lies outside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/lexer.hpp"
#include "linnet/syntax/parser.hpp"
#include "linnet/syntax/source.hpp"

namespace {

using namespace linnet::syntax;

void require(bool condition) {
  if (!condition) std::abort();
}

void check_tokens(const std::vector<Token>& tokens, size_t size) {
  require(!tokens.empty() && tokens.back().kind == TokenKind::Eof);
  uint32_t previous_end = 0;
  for (const Token& token : tokens) {
    require(token.span.begin >= previous_end && token.span.begin <= token.span.end && token.span.end <= size);
    require(token.text.size() == token.span.end - token.span.begin);
    previous_end = token.span.end;
  }
}

void check_diagnostics(const Diagnostics& diagnostics, uint32_t file, size_t size) {
  for (const Diagnostic& diagnostic : diagnostics.all()) {
    require(!diagnostic.code.empty());
    require(diagnostic.span.file == file);
    require(diagnostic.span.begin <= diagnostic.span.end && diagnostic.span.end <= size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceManager sources;
  const uint32_t file = sources.add("fuzz.linnet", std::string(reinterpret_cast<const char*>(data), size));

  Diagnostics lexer_diagnostics;
  const std::vector<Token> tokens = tokenize(sources, file, lexer_diagnostics);
  check_tokens(tokens, size);
  check_diagnostics(lexer_diagnostics, file, size);

  Diagnostics parser_diagnostics;
  const std::unique_ptr<ast::File> tree = parse_file(sources, file, parser_diagnostics);
  require(tree != nullptr);
  check_diagnostics(parser_diagnostics, file, size);
  // Whatever the lexer rejects, the parser (which lexes too) must reject.
  require(!lexer_diagnostics.has_errors() || parser_diagnostics.has_errors());

  // Later stages walk the tree recursively; the dump does too, so a tree too
  // deep to walk shows up here as a stack overflow.
  const std::string dump = dump_ast(*tree, sources);
  const std::string text = render_text(parser_diagnostics, sources);
  const std::string json = render_json(parser_diagnostics, sources);
  require(!json.empty());
  (void)dump;
  (void)text;
  return 0;
}
