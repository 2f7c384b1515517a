// `linnet spec-test DIR`: runs an executable specification in upstream's
// layout. `DIR/manifest.toml` lists cases:
//
//   [[case]]
//   file = "invalid/101_shape_mismatch.linnet"
//   expect = "error"        # or "ok"
//   code = "E2201"          # for "error": a code the checker must report
//
// Each case's file is loaded and checked on its own, as `linnet check FILE`
// would; an "ok" case passes with no errors (warnings allowed), an "error"
// case passes when every error it produces carries the expected code. One
// line is printed per case. Then each snapshot `DIR/diagnostics/NAME.stderr`
// is compared byte for byte with the text diagnostics of the case whose file
// is NAME.linnet. The last line is `N passed, M failed`; the exit status is
// 1 if any case failed or any snapshot differs, 2 for a manifest that cannot
// be read or is malformed (each defect named at its line and column).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "command.hpp"
#include "progress_line.hpp"
#include "linnet/check/driver.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::cli {

namespace {

namespace fs = std::filesystem;

struct SpecCase {
  std::string file;
  std::string expect;
  std::string code;
};

struct SpecTestOptions {
  std::string dir;
  bool verbose = false;
  bool no_progress = false;
};

// The checker's verdict on one file: its text diagnostics and error codes.
struct Outcome {
  std::string rendered;
  std::vector<std::string> error_codes;
};

Outcome check_file(const std::string& file, const std::string& std_dir) {
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  syntax::LoadOptions load;
  load.inputs = {file};
  load.std_dir = std_dir;
  const std::unique_ptr<syntax::Program> program = syntax::load_program(sources, load, diagnostics);
  if (!diagnostics.has_errors()) {
    check::DriverOptions options;
    check::run_check(*program, sources, diagnostics, load.inputs, options);
  }
  Outcome outcome;
  outcome.rendered = syntax::render_text(diagnostics, sources);
  for (const syntax::Diagnostic& d : diagnostics.all()) {
    if (d.severity == syntax::Severity::Error) outcome.error_codes.push_back(d.code);
  }
  return outcome;
}

// "manifest.toml:3:1: " for a place the parser knows, else "manifest.toml: ".
std::string where(const std::string& manifest, const toml::source_region& source) {
  if (source.begin.line == 0) return manifest + ": ";
  return manifest + ":" + std::to_string(source.begin.line) + ":" + std::to_string(source.begin.column) + ": ";
}

// Whether `code` reads as a diagnostic code: a letter and four digits (E2201, W1001).
bool is_code(const std::string& code) {
  return code.size() == 5 && (code[0] == 'E' || code[0] == 'W') &&
         std::all_of(code.begin() + 1, code.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The manifest's cases, each checked before any runs: a missing or
// mistyped field, an unknown key, a file outside DIR or listed twice is
// reported at its position (and the run exits 2); nullopt then.
std::optional<std::vector<SpecCase>> read_cases(const toml::table& manifest, const std::string& manifest_path,
                                                const fs::path& dir) {
  bool ok = true;
  auto fail = [&](const toml::node& node, const std::string& message) {
    std::cerr << "error: " << where(manifest_path, node.source()) << message << '\n';
    ok = false;
  };
  for (const auto& [key, node] : manifest) {
    const std::string name(key.str());
    if (name == "version") {
      if (node.value<int64_t>() != int64_t{1}) fail(node, "`version` must be the integer 1");
    } else if (name != "case") {
      fail(node, "unknown key `" + name + "`" + syntax::did_you_mean(name, {"version", "case"}));
    }
  }
  const toml::node* list_node = manifest.get("case");
  if (list_node == nullptr) {
    std::cerr << "error: " << manifest_path << ": lists no [[case]]\n";
    return std::nullopt;
  }
  const toml::array* list = list_node->as_array();
  if (list == nullptr) {
    fail(*list_node, "`case` must be an array of tables, written [[case]]");
    return std::nullopt;
  }
  std::vector<SpecCase> cases;
  std::set<std::string> seen;
  const std::vector<std::string> keys = {"file", "expect", "code"};
  for (const toml::node& node : *list) {
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      fail(node, "each `case` must be a table, written [[case]]");
      continue;
    }
    for (const auto& [key, value] : *table) {
      const std::string name(key.str());
      if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
        fail(value, "unknown key `" + name + "` in a [[case]]" + syntax::did_you_mean(name, keys));
      }
    }
    SpecCase c;
    bool case_ok = true;
    auto text = [&](const char* key, std::string& out, bool required) {
      const toml::node* value = table->get(key);
      if (value == nullptr) {
        if (required) {
          fail(node, std::string("a [[case]] without `") + key + "`");
          case_ok = false;
        }
        return;
      }
      if (!value->is_string()) {
        fail(*value, std::string("`") + key + "` must be a string");
        case_ok = false;
        return;
      }
      out = *value->value<std::string>();
    };
    text("file", c.file, true);
    text("expect", c.expect, true);
    text("code", c.code, false);
    if (!case_ok) continue;
    const toml::node& file_node = *table->get("file");
    const fs::path file(c.file);
    const fs::path normal = file.lexically_normal();
    if (c.file.empty() || c.file.find('\0') != std::string::npos) {
      fail(file_node, "`file` is empty");
    } else if (file.is_absolute() || normal.empty() || *normal.begin() == ".." ) {
      fail(file_node, "`file` must be a path inside `" + dir.string() + "`, not `" + c.file + "`");
    } else if (!seen.insert(normal.string()).second) {
      fail(file_node, "`" + c.file + "` is listed twice");
    }
    if (c.expect != "ok" && c.expect != "error") {
      fail(*table->get("expect"), "`expect` must be \"ok\" or \"error\", not \"" + c.expect + "\"");
    } else if (c.expect == "error" && !table->get("code")) {
      fail(node, "an error case needs the `code` it expects");
    } else if (c.expect == "error" && !is_code(c.code)) {
      fail(*table->get("code"), "`code` must be a diagnostic code such as \"E2201\", not \"" + c.code + "\"");
    } else if (c.expect == "ok" && table->get("code")) {
      fail(*table->get("code"), "an \"ok\" case expects no `code`");
    }
    cases.push_back(std::move(c));
  }
  if (ok && list->empty()) fail(*list_node, "`case` lists no case");
  if (!ok) return std::nullopt;
  return cases;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

int run_spec_test(const SpecTestOptions& options, const CommandContext& context) {
  std::error_code ec;
  const fs::path dir = fs::absolute(options.dir, ec);
  const fs::path manifest_path = dir / "manifest.toml";
  if (!fs::is_regular_file(manifest_path, ec)) {
    std::cerr << "error: no manifest.toml in `" << options.dir << "`\n";
    return 2;
  }
  toml::table manifest;
  try {
    manifest = toml::parse_file(manifest_path.string());
  } catch (const toml::parse_error& e) {
    std::cerr << "error: " << where(manifest_path.string(), e.source()) << "not valid TOML: " << e.description()
              << '\n';
    return 2;
  }
  std::optional<std::vector<SpecCase>> cases = read_cases(manifest, manifest_path.string(), dir);
  if (!cases) return 2;
  // Paths in diagnostics are relative to DIR, as in the snapshots.
  const std::string std_dir = fs::absolute(context.std_dir, ec).string();
  const fs::path previous = fs::current_path(ec);
  fs::current_path(dir, ec);
  if (ec) {
    std::cerr << "error: cannot enter `" << dir.string() << "`: " << ec.message() << '\n';
    return 2;
  }

  std::size_t passed = 0, failed = 0;
  std::map<std::string, std::string> rendered_by_stem;
  // Where stdout is a terminal its line per case shows the progress; the
  // status line is for a run whose report goes to a file or a pipe.
  const std::shared_ptr<ProgressLine> progress =
      make_progress_line(!options.no_progress && ::isatty(STDOUT_FILENO) != 1);
  const int64_t case_count = static_cast<int64_t>(cases->size());
  for (const SpecCase& c : *cases) {
    if (progress) progress->stage({"spec-test", static_cast<int64_t>(&c - cases->data()), case_count, c.file});
    if (!fs::is_regular_file(c.file, ec)) {
      std::cout << "FAIL " << c.file << (fs::exists(c.file, ec) ? ": not a regular file\n" : ": no such file\n");
      ++failed;
      continue;
    }
    const Outcome outcome = check_file(c.file, std_dir);
    rendered_by_stem[fs::path(c.file).stem().string()] = outcome.rendered;
    bool ok = false;
    std::string detail;
    if (c.expect == "ok") {
      ok = outcome.error_codes.empty();
      if (!ok) detail = "expected no errors, got " + join(outcome.error_codes);
    } else {
      // As strict as upstream: the case's code must be the diagnostic the
      // file produces, not one among several.
      ok = !outcome.error_codes.empty() &&
           std::all_of(outcome.error_codes.begin(), outcome.error_codes.end(),
                       [&](const std::string& code) { return code == c.code; });
      if (!ok) detail = "expected " + c.code + " alone, got " + join(outcome.error_codes);
    }
    if (ok) {
      ++passed;
      std::cout << "ok   " << c.file << (c.expect == "error" ? " (" + c.code + ")" : std::string()) << '\n';
    } else {
      ++failed;
      std::cout << "FAIL " << c.file << ": " << detail << '\n';
    }
    if (options.verbose && !outcome.rendered.empty()) std::cout << outcome.rendered;
  }

  // Snapshots, counted on their own.
  std::size_t snapshots_matched = 0, snapshots_differ = 0;
  if (fs::is_directory("diagnostics", ec)) {
    std::vector<fs::path> snapshots;
    for (const fs::directory_entry& entry : fs::directory_iterator("diagnostics", ec)) {
      if (entry.path().extension() == ".stderr") snapshots.push_back(entry.path());
    }
    std::sort(snapshots.begin(), snapshots.end());
    for (const fs::path& snapshot : snapshots) {
      if (!fs::is_regular_file(snapshot, ec)) {
        ++snapshots_differ;
        std::cout << "snapshot differs: " << snapshot.string() << " (not a regular file)\n";
        continue;
      }
      std::ifstream in(snapshot, std::ios::binary);
      std::stringstream expected;
      expected << in.rdbuf();
      auto it = rendered_by_stem.find(snapshot.stem().string());
      if (it != rendered_by_stem.end() && it->second == expected.str()) {
        ++snapshots_matched;
        continue;
      }
      ++snapshots_differ;
      std::cout << "snapshot differs: " << snapshot.string()
                << (it == rendered_by_stem.end() ? " (no case checks that file)" : "") << '\n';
      if (options.verbose && it != rendered_by_stem.end()) {
        std::cout << "--- expected\n" << expected.str() << "--- got\n" << it->second;
      }
    }
    std::cout << "snapshots: " << snapshots_matched << " match, " << snapshots_differ << " differ\n";
  }
  if (progress) progress->clear();
  fs::current_path(previous, ec);
  std::cout << passed << " passed, " << failed << " failed\n";
  // A differing snapshot fails the run, as upstream's runner does.
  return failed == 0 && snapshots_differ == 0 ? 0 : 1;
}

}  // namespace

void add_spec_test_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<SpecTestOptions>();
  CLI::App* command = app.add_subcommand("spec-test", "run an executable specification: DIR/manifest.toml's cases");
  command->add_flag("-v,--verbose", options->verbose, "print each case's diagnostics and snapshot differences");
  command->add_option("dir", options->dir, "the folder holding manifest.toml")->required();
  command->add_flag("--no-progress", options->no_progress,
                    "never show the progress line (shown on a terminal's stderr when stdout is not one)");
  command->callback([options, &context] { context.exit_code = run_spec_test(*options, context); });
}

}  // namespace linnet::cli
