// What `linnet check` does after loading: checks the whole program
// generically, then instantiates each card it was given (a directory with a
// nest.toml: [source] path/root, [generics], [check]) or, with `--root` or
// `--bind`, the requested root block, and returns the entries' concrete
// signatures. Lints run last, and only on a program with no errors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linnet/check/checker.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::check {

// A card's nest.toml, as far as checking needs it.
struct CardConfig {
  std::string dir;
  std::string source;  // [source] path, relative to dir
  std::string root;    // [source] root
  std::string entry;   // [source] entry
  std::map<std::string, std::string, std::less<>> generics;  // [generics], values as written
  std::map<std::string, std::string, std::less<>> check;     // [check]
};

// Whether `dir` holds a nest.toml.
bool is_card_directory(const std::string& dir);
// Reads `dir/nest.toml`; on failure returns nullopt and sets `error`.
std::optional<CardConfig> read_card(const std::string& dir, std::string& error);

struct DriverOptions {
  std::string root;   // --root
  std::string entry;  // --entry
  // --bind K=V, in order; later ones win. Packs: `S=2,3`, or `S=` for none.
  std::vector<std::string> bindings;
  // Where `bindings` came from, as the checker's notes name them, in order
  // (e.g. "`--bind-from golden/a/meta.json`", "--bind"); empty: "--bind".
  std::vector<std::string> bindings_origins;
  bool lint = true;
  bool verbose = false;  // --verbose: every fact searched in a failed proof, not only the first few
};

struct DriverResult {
  std::vector<Instance> instances;
  std::size_t functions_checked = 0;
  bool bad_request = false;  // a malformed --bind or unreadable nest.toml (exit status 2)
};

DriverResult run_check(const syntax::Program& program, const syntax::SourceManager& sources,
                       syntax::Diagnostics& diagnostics, const std::vector<std::string>& inputs,
                       const DriverOptions& options);

// `Model<...>` and its entries, one per line, as `linnet check` prints them.
std::string render_instances(const std::vector<Instance>& instances);

}  // namespace linnet::check
