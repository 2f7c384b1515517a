// The three model cards in nest/ are the front end's acceptance test: every
// source file parses with no diagnostic at all, and loading a card resolves
// all of its `crate` imports (the `std` ones need the standard library).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "linnet/syntax/package.hpp"
#include "linnet/syntax/parser.hpp"

namespace fs = std::filesystem;
using namespace linnet::syntax;

namespace {

const fs::path nest_root = fs::path(LINNET_SOURCE_DIR) / "nest";

std::vector<fs::path> card_directories() {
  std::vector<fs::path> cards;
  for (const auto& entry : fs::directory_iterator(nest_root)) {
    if (fs::is_regular_file(entry.path() / "nest.toml")) cards.push_back(entry.path());
  }
  std::sort(cards.begin(), cards.end());
  return cards;
}

std::vector<fs::path> card_sources() {
  std::vector<fs::path> files;
  for (const fs::path& card : card_directories()) {
    for (const auto& entry : fs::recursive_directory_iterator(card / "src")) {
      if (entry.path().extension() == ".linnet") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

TEST_CASE("the three cards are present", "[syntax][cards]") {
  CHECK(card_directories().size() == 3);
  CHECK(card_sources().size() == 11);
}

TEST_CASE("every card source file parses with no diagnostic", "[syntax][cards]") {
  for (const fs::path& path : card_sources()) {
    DYNAMIC_SECTION(path.lexically_relative(nest_root).string()) {
      SourceManager sources;
      const uint32_t file = sources.add(path.string(), read_file(path));
      Diagnostics diagnostics;
      const std::unique_ptr<ast::File> tree = parse_file(sources, file, diagnostics);
      INFO(render_text(diagnostics, sources));
      CHECK(diagnostics.all().empty());
      CHECK_FALSE(tree->module_path.empty());
      CHECK_FALSE(tree->items.empty());
    }
  }
}

TEST_CASE("all three cards parse without a diagnostic", "[syntax][cards]") {
  std::vector<std::string> texts;
  for (const fs::path& path : card_sources()) texts.push_back(read_file(path));
  SourceManager sources;
  std::vector<uint32_t> files;
  for (size_t i = 0; i < texts.size(); ++i) files.push_back(sources.add("card" + std::to_string(i), texts[i]));
  size_t items = 0;
  Diagnostics diagnostics;
  for (uint32_t file : files) items += parse_file(sources, file, diagnostics)->items.size();
  CHECK(diagnostics.all().empty());
  CHECK(items > 20);
}

TEST_CASE("loading a card resolves its crate imports", "[syntax][cards]") {
  for (const fs::path& card : card_directories()) {
    DYNAMIC_SECTION(card.filename().string()) {
      SourceManager sources;
      Diagnostics diagnostics;
      LoadOptions options;
      options.inputs = {card.string()};  // no standard library: every `std.` import is E1202
      const std::unique_ptr<Program> program = load_program(sources, options, diagnostics);
      INFO(render_text(diagnostics, sources));
      size_t sources_in_card = 0;
      for (const auto& entry : fs::recursive_directory_iterator(card / "src")) {
        sources_in_card += entry.path().extension() == ".linnet";
      }
      CHECK(program->modules().size() == sources_in_card);
      REQUIRE(program->packages().size() == 1);
      CHECK(program->packages()[0].manifest_ok);
      for (const Diagnostic& d : diagnostics.all()) {
        CHECK(d.code == "E1202");
        const std::string spelled =
            sources.file(d.span.file).text().substr(d.span.begin, d.span.end - d.span.begin);
        CHECK(spelled.rfind("std.", 0) == 0);
      }
      // Every `crate` import names a module of the card.
      for (const auto& module : program->modules()) {
        for (size_t i = 0; i < module->ast->uses.size(); ++i) {
          if (module->ast->uses[i].path.front().text == "crate") CHECK(module->use_targets[i] >= 0);
        }
      }
    }
  }
}
