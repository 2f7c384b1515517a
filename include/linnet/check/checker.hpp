// Static semantics of a loaded Program (spec chapters 3-9 and 11): name
// resolution, types and dtypes, index notation, control flow, kernels, and
// the shape proofs the solver (solver.hpp) makes from `where` clauses.
//
//   linnet::check::Checker checker(*program, sources, diagnostics);
//   checker.check();                       // every function and block, generically
//   if (!diagnostics.has_errors()) checker.lint();
//   auto instance = checker.instantiate(request);  // concrete bindings (--bind)
//
// Generic checking treats every generic as a symbol: a function is checked
// once, and its body is valid for every binding that satisfies its `where`
// clause. Instantiation then binds a root block's and an entry's generics to
// numbers and dtypes, checks each `where` clause it reaches at those values,
// and prints the entries' concrete signatures. Nothing here runs model code.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::check {

// What `linnet check` binds: a root block of a module, its generics, an entry.
struct InstantiateRequest {
  const syntax::Module* module = nullptr;  // where the root block is declared
  std::string root;                        // block name; empty: the only block with entries
  std::string entry;                       // one entry; empty: every entry
  // Generic values as written: `4096`, `bf16`, `2,3` or `` for a shape pack.
  // Entries take theirs from the same map (the card's [check] table).
  std::map<std::string, std::string, std::less<>> bindings;
  std::string origin;  // where the bindings came from, for messages ("nest.toml")
  bool card = false;   // a card's root (messages may then point at nest.toml); else a plain program
};

struct EntrySignature {
  std::string name;
  std::string text;      // `entry forward(tokens: Tensor[1, 8; i32]) -> Tensor[1, 8, 512; f32]`
  bool concrete = true;  // false when some of its generics stayed unbound
};

struct Instance {
  std::string root;  // `gpt_oss::Model<Vocab = 512, ...>`
  std::vector<EntrySignature> entries;
};

class Checker {
 public:
  Checker(const syntax::Program& program, const syntax::SourceManager& sources, syntax::Diagnostics& diagnostics);
  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Checks every module of the program. Safe on a program with load errors:
  // names that failed to import are not reported again.
  void check();
  // List every fact searched when a shape relation cannot be proved (the
  // default lists a few and counts the rest).
  void set_verbose(bool verbose);
  // W1001-W1003, for a program `check` found no errors in (spec 12.3).
  void lint();
  // Binds a root block concretely. Returns nullopt (with diagnostics) when
  // the request names nothing suitable or a binding breaks a `where` clause.
  std::optional<Instance> instantiate(const InstantiateRequest& request);

  // Counts for benchmarks and tests.
  std::size_t functions_checked() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace linnet::check
