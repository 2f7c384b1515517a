// Helpers for the checker's tests: run the checker on files or folders as
// `linnet check` does, and copy a card to a temporary folder with one line
// changed (a mutation).
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "temp_dir.hpp"

#include <unistd.h>

#include "linnet/check/driver.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::check::testing {

struct CheckRun {
  std::vector<std::string> errors;    // codes, in report order
  std::vector<std::string> warnings;  // codes
  std::string text;                   // the rendered diagnostics
  std::vector<Instance> instances;

  bool has_error(const std::string& code) const {
    for (const std::string& e : errors) {
      if (e == code) return true;
    }
    return false;
  }
};

inline std::string source_dir() { return LINNET_SOURCE_DIR; }

inline CheckRun run_checker(const std::vector<std::string>& inputs, const DriverOptions& options = {}) {
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  syntax::LoadOptions load;
  load.inputs = inputs;
  load.std_dir = source_dir() + "/stdlib";
  const std::unique_ptr<syntax::Program> program = syntax::load_program(sources, load, diagnostics);
  CheckRun run;
  if (!diagnostics.has_errors()) run.instances = run_check(*program, sources, diagnostics, inputs, options).instances;
  for (const syntax::Diagnostic& d : diagnostics.all()) {
    (d.severity == syntax::Severity::Error ? run.errors : run.warnings).push_back(d.code);
  }
  run.text = syntax::render_text(diagnostics, sources);
  return run;
}

// A source file written to a fresh temporary folder, removed on destruction.
// A scratch folder for one test, removed with its files at the end.
struct TempDir : linnet_test::TempDir {
  TempDir() : linnet_test::TempDir("linnet-check") {}
};

// Copies nest/<card> into `dir` and replaces the first occurrence of `from`
// with `to` in `file` (relative to the card). Throws when `from` is absent,
// so a test cannot pass by mutating nothing.
inline std::string mutate_card(const TempDir& dir, const std::string& card, const std::string& file,
                               const std::string& from, const std::string& to) {
  const std::filesystem::path copy = dir.path() / card;
  std::filesystem::copy(source_dir() + "/nest/" + card, copy, std::filesystem::copy_options::recursive);
  const std::filesystem::path target = copy / file;
  std::ifstream in(target);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("mutation target not found in " + file + ": " + from);
  text.replace(at, from.size(), to);
  std::ofstream(target) << text;
  return copy.string();
}

}  // namespace linnet::check::testing
