// The static checker as `linnet check` runs it, for every command that
// evaluates or inspects a program (run, generate, validate, explain,
// inspect --parameters, synth-weights): a program `check` refuses, even for
// code the chosen entry never reaches, is refused by them with check's own
// diagnostics (code, message, position) and exit status 1.
//
// It checks the whole program generically, then instantiates the card (or,
// for a plain program, its `root` block) at the generics the command will
// use, as `check TARGET [--root R] --bind ...` would: the card's [generics]
// and [check], then `binds` in order (--bind-from's and a golden case's
// values are passed here as texts too). A plain program run through its
// module-level entries is checked with no `binds`, as `check FILE`. Lints
// run last, on a program with no errors, and are warnings.
#pragma once

#include <string>
#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::nest {

struct ProgramCheckRequest {
  std::string target;              // the card directory, or the plain program's file or package
  std::string root;                // a plain program's --root (a card's root is its nest.toml's)
  std::vector<std::string> binds;  // "NAME=VALUE" texts; later ones win
  std::vector<std::string> binds_origins;  // where they came from, for notes (ResolvedCard::bind_origins; none: --bind)
  bool strict = false;             // --strict: the checker's warnings fail the check too
};

enum class ProgramCheck {
  Passed,      // no error (warnings, if any, are in the diagnostics)
  Failed,      // errors, or warnings under `strict`: exit status 1
  BadRequest,  // a malformed --bind the checker could not read: exit status 2
};

// Adds what the checker finds to `diagnostics`, whose sources are `sources`.
ProgramCheck check_program(const syntax::Program& program, const syntax::SourceManager& sources,
                           syntax::Diagnostics& diagnostics, const ProgramCheckRequest& request);

}  // namespace linnet::nest
