// The parser corpus (tests/syntax/corpus): every file under valid/ must parse
// with no diagnostic at all, and every file under invalid/ must fail, its first
// error carrying the code and position named on the file's first line:
//
//   // expect: E1101 at 12:5
//
// (1-based line and column, columns counted in Unicode code points).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/parser.hpp"
#include "linnet/syntax/source.hpp"

namespace fs = std::filesystem;
using namespace linnet::syntax;

namespace {

const fs::path corpus_root = fs::path(LINNET_SOURCE_DIR) / "tests" / "syntax" / "corpus";

// The .linnet files of one corpus folder, sorted so runs are reproducible.
std::vector<fs::path> corpus_files(const std::string& folder) {
  std::vector<fs::path> files;
  const fs::path directory = corpus_root / folder;
  if (!fs::is_directory(directory)) return files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".linnet") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// "E1101 at 12:5" from the first line of an invalid case; empty if the line
// does not have that form.
std::string expectation_of(const std::string& text) {
  static const std::regex header(R"(^// expect: (E\d{4}) at (\d+):(\d+)\r?$)");
  const std::string first_line = text.substr(0, text.find('\n'));
  std::smatch match;
  if (!std::regex_match(first_line, match, header)) return {};
  return match[1].str() + " at " + match[2].str() + ":" + match[3].str();
}

const Diagnostic* first_error(const Diagnostics& diagnostics) {
  for (const Diagnostic& diagnostic : diagnostics.all()) {
    if (diagnostic.severity == Severity::Error) return &diagnostic;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("every valid corpus file parses without diagnostics", "[syntax][corpus]") {
  const std::vector<fs::path> files = corpus_files("valid");
  REQUIRE_FALSE(files.empty());
  for (const fs::path& path : files) {
    DYNAMIC_SECTION("valid/" << path.filename().string()) {
      const std::string text = read_bytes(path);
      // The grammar's first production, and the corpus convention.
      CHECK(text.rfind("module corpus.", 0) == 0);

      SourceManager sources;
      const uint32_t file = sources.add(path.string(), text);
      Diagnostics diagnostics;
      const std::unique_ptr<ast::File> tree = parse_file(sources, file, diagnostics);
      REQUIRE(tree != nullptr);
      INFO(render_text(diagnostics, sources));
      CHECK(diagnostics.all().empty());
      CHECK(diagnostics.suppressed() == 0);
    }
  }
}

TEST_CASE("every invalid corpus file fails with its expected first error", "[syntax][corpus]") {
  const std::vector<fs::path> files = corpus_files("invalid");
  REQUIRE_FALSE(files.empty());
  for (const fs::path& path : files) {
    DYNAMIC_SECTION("invalid/" << path.filename().string()) {
      const std::string text = read_bytes(path);
      const std::string expected = expectation_of(text);
      INFO("first line must read `// expect: E1234 at LINE:COL`");
      REQUIRE_FALSE(expected.empty());

      SourceManager sources;
      const uint32_t file = sources.add(path.string(), text);
      Diagnostics diagnostics;
      const std::unique_ptr<ast::File> tree = parse_file(sources, file, diagnostics);
      REQUIRE(tree != nullptr);
      INFO(render_text(diagnostics, sources));

      const Diagnostic* error = first_error(diagnostics);
      REQUIRE(error != nullptr);
      REQUIRE(error->span.file == file);
      const LineColumn at = sources.file(file).line_column(error->span.begin);
      const std::string actual =
          error->code + " at " + std::to_string(at.line) + ":" + std::to_string(at.column);
      CHECK(actual == expected);
    }
  }
}
