// Packages, modules and imports (spec chapter 2).
//
// load_program turns command-line inputs into a Program: every requested
// module, every module they import (transitively), each parsed once, and the
// imports resolved to the items they name. It reports
//   E1201 an imported item the module does not declare
//   E1202 a module that cannot be found
//   E1203 an imported item that is not `pub`
//   E1204 a name declared twice at a module's top level (items and imports)
//   E1206 an import cycle
//   E5001 a `linnet.toml` that is unreadable or malformed
// plus the lexer's and parser's own diagnostics for every file.
//
// Where a module lives (spec §2.2):
//   crate       <package>/src/lib.linnet
//   crate.a.b   <package>/src/a/b.linnet
//   std.a.b     <std_dir>/a/b.linnet
//   dep.a.b     <root of dependency `dep`>/src/a/b.linnet
// <package> is the nearest directory above the importing file that holds a
// linnet.toml. Files under the standard library directory belong to no
// package and import only `std` modules.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::syntax {

// A package: a directory with a linnet.toml.
struct Package {
  std::string root;  // the directory, canonical
  std::string name;
  std::string version;
  std::string language;  // "0.1"
  // Path dependencies: key (the first segment of imports) -> canonical root.
  std::map<std::string, std::string> dependencies;
  bool manifest_ok = false;  // false when linnet.toml was malformed (E5001 reported)
};

// Reads and validates `<root>/linnet.toml`. Problems are E5001 diagnostics
// pointing into the manifest (which is added to `sources`). Returns the
// package even when the manifest is malformed, with what could be read.
Package read_package(const std::string& root, SourceManager& sources, Diagnostics& diagnostics);

// What a name brought in by `use` refers to.
struct ImportedName {
  int module = -1;                   // the module imported from (or the module itself)
  const ast::Item* item = nullptr;   // null for a whole-module import (`use a.b`)
  const ast::UseDecl* use = nullptr;
  Span span;                         // the local name in the `use`
};

// One source file, parsed, with its imports resolved.
struct Module {
  uint32_t file_id = 0;
  std::string path;           // as displayed in diagnostics
  std::string canonical_path; // identity: each file is loaded once
  std::unique_ptr<ast::File> ast;
  std::string name;           // the declared module path, "a.b.c"; empty when missing
  int package = -1;           // index into Program::packages(); -1 outside any package
  bool is_std = false;        // under the standard library directory
  bool requested = false;     // named by the inputs, not only imported

  // Top-level items by name; on a duplicate (E1204) the first one stays.
  std::map<std::string, const ast::Item*> items;
  // Per `use` declaration (parallel to ast->uses): the module it names, or -1.
  std::vector<int> use_targets;
  // Names the `use` declarations bring into scope.
  std::map<std::string, ImportedName> imports;
};

class Program {
 public:
  const std::vector<std::unique_ptr<Module>>& modules() const { return modules_; }
  const std::vector<Package>& packages() const { return packages_; }
  // The module of a loaded file, or nullptr.
  const Module* module_of_file(uint32_t file_id) const;
  // The module with this canonical file path, or nullptr.
  const Module* module_at(const std::string& canonical_path) const;
  // The standard library's directory (canonical), or "" when none is set.
  const std::string& std_root() const { return std_root_; }

 private:
  friend class ProgramLoader;
  std::string std_root_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<Package> packages_;
  std::map<std::string, int> by_path_;
};

struct LoadOptions {
  // Each input is a .linnet file, a package directory (holding linnet.toml:
  // every .linnet file under its src/), a card directory (a package directory
  // whose nest.toml names its source file under [source] path), or any other
  // directory, searched recursively for .linnet files.
  std::vector<std::string> inputs;
  std::string std_dir;  // the standard library; `std.*` imports fail with E1202 without one
};

std::unique_ptr<Program> load_program(SourceManager& sources, const LoadOptions& options, Diagnostics& diagnostics);

}  // namespace linnet::syntax
