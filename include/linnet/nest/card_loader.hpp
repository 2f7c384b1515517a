// The one reader of a card for every command: `check`, `run`, `generate`,
// `explain`, `validate` and `inspect --parameters` all read nest.toml and
// bindings.json, find the root block and the [source] entry, and bind the
// generics through these two functions, so that every defect of a card is
// reported by every command with the same code, message and position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/interpreter.hpp"
#include "linnet/nest/bindings.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::nest {

// nest.toml and the bindings.json it names (E5001 with positions).
// `strict` (--strict) makes an unknown nest.toml key an error (read_card).
struct CardFiles {
  Card card;
  Bindings bindings;  // identity bindings when the card names none
};
std::optional<CardFiles> read_card_files(const std::string& directory, syntax::SourceManager& sources,
                                         syntax::Diagnostics& diagnostics, bool strict = false);

// The card against its loaded program: the root block nest.toml names (or
// `root_override`), its [source] entry (or `entry_override`), and the
// generics of [generics] and of `binds` ("NAME=VALUE" texts, --bind).
// `bind_from` names a --bind-from file (bind_from.hpp) whose values go
// before `binds`. Reports E5001 for a root or
// entry nest.toml names wrongly (at its position there), E2111 for
// generics, and returns nothing on any error.
// A [check] key that no entry (nor the block) declares as a generic is an
// E5001 warning at its position, an error when `strict`.
// `preset` values go first of all: a golden case's meta.json generics under
// `validate`, named as coming from that file.
struct ResolvedCard {
  RootBlock root;
  BoundGenerics generics;
  // Every "NAME=VALUE" text the generics came from, in order (the preset's,
  // --bind-from's, then `binds`), for the static checker (program_check.hpp).
  std::vector<std::string> bind_texts;
  // Where those texts came from, each once in order, for the checker's
  // notes: a preset's file, "`--bind-from F`", "--bind".
  std::vector<std::string> bind_origins;
};
struct PresetBinds {
  std::vector<std::string> texts;  // "NAME=VALUE"
  std::string from;                // "`golden/a/meta.json` (linnet_generics)"
};
std::optional<ResolvedCard> resolve_card(const Card& card, const syntax::Program& program,
                                         const std::vector<std::string>& binds, syntax::Diagnostics& diagnostics,
                                         const std::string& root_override = "",
                                         const std::string& entry_override = "", const std::string& bind_from = "",
                                         const PresetBinds& preset = {}, bool strict = false);

// The keys of the card's bindings.json that name no parameter of its root
// block (binding_audit.hpp's audit_binding_paths), for every command: the
// block listed at `generics` (the run's; `manifest` when the caller has
// listed it already) and at the card's own [generics]. Nothing when the
// block cannot be listed (the command reports that itself).
std::vector<syntax::Diagnostic> audit_card_binding_paths(const Card& card, const Bindings& bindings,
                                                         const RootBlock& root, const eval::GenericBindings& generics,
                                                         eval::Interpreter& interpreter,
                                                         const std::vector<eval::ParameterInfo>* manifest, bool strict);

}  // namespace linnet::nest
