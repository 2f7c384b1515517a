// The one reader of a card for every command: `check`, `run`, `generate`,
// `explain`, `validate` and `inspect --parameters` all read nest.toml and
// bindings.json, find the root block and the [source] entry, and bind the
// generics through these two functions, so that every defect of a card is
// reported by every command with the same code, message and position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/nest/bindings.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::nest {

// nest.toml and the bindings.json it names (E5001 with positions).
struct CardFiles {
  Card card;
  Bindings bindings;  // identity bindings when the card names none
};
std::optional<CardFiles> read_card_files(const std::string& directory, syntax::SourceManager& sources,
                                         syntax::Diagnostics& diagnostics);

// The card against its loaded program: the root block nest.toml names (or
// `root_override`), its [source] entry (or `entry_override`), and the
// generics of [generics] and of `binds` ("NAME=VALUE" texts, --bind).
// `bind_from` names a --bind-from file (bind_from.hpp) whose values go
// before `binds`. Reports E5001 for a root or
// entry nest.toml names wrongly (at its position there), E2111 for
// generics, and returns nothing on any error.
struct ResolvedCard {
  RootBlock root;
  BoundGenerics generics;
};
std::optional<ResolvedCard> resolve_card(const Card& card, const syntax::Program& program,
                                         const std::vector<std::string>& binds, syntax::Diagnostics& diagnostics,
                                         const std::string& root_override = "",
                                         const std::string& entry_override = "", const std::string& bind_from = "");

}  // namespace linnet::nest
