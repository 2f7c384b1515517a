// A nest card: a directory holding a Linnet package (linnet.toml, src/) and
// nest.toml, which says how to run it:
//
//   [source]   path = "src/lib.linnet", root = "Model", entry = "forward"
//   [generics] Vocab = 32768 ... T = "bf16"     the published model's sizes
//   [check]    B = 1, S = 8                     sizes for a quick check run
//   [weights]  repo, revision, files, bindings  where the checkpoint lives
//
// Generic values in nest.toml are typed by TOML itself: an integer is a
// dimension, a string a dtype name, an array of integers a shape pack.
// Problems are E5001 diagnostics pointing into nest.toml.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/value.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::nest {

// The one code of this component's own: a card's manifest (nest.toml or
// bindings.json) unreadable or malformed, as upstream's E5001 is for
// linnet.toml. Generic values use E2111 and weights E6003 (eval/error.hpp).
namespace codes {
inline constexpr const char* invalid_manifest = "E5001";
}  // namespace codes

// One `name = value` of [generics] or [check].
struct CardSetting {
  std::string name;
  eval::GenericValue value;
  syntax::Span span;  // the value in nest.toml
};

// [weights]: a Hugging Face repository at a pinned revision.
struct CardWeights {
  std::string repo;      // "mistralai/Mistral-7B-Instruct-v0.3"
  std::string revision;  // a commit hash
  std::vector<std::string> files;
  std::string bindings;  // file name relative to the card directory; empty when none
};

struct Card {
  std::string directory;
  std::string name;         // [model] name, else the directory's name
  std::string title;        // [model] title; may be empty
  std::string source_path;  // [source] path, relative to the directory
  std::string root = "Model";
  std::string entry;        // [source] entry; empty when the card names none
  syntax::Span root_span;   // [source] root's value in nest.toml (empty when not written)
  syntax::Span entry_span;  // [source] entry's value in nest.toml (empty when not written)
  std::vector<CardSetting> generics;
  std::vector<CardSetting> check;
  std::optional<CardWeights> weights;
  uint32_t manifest_file = 0;  // nest.toml in the SourceManager

  const CardSetting* generic(const std::string& name) const;
  // `directory`/`relative`.
  std::string path_of(const std::string& relative) const;
};

// Reads `<directory>/nest.toml` (added to `sources`). Returns nothing when
// it is missing or malformed; every problem found is in `diagnostics`. A
// key or table nest.toml does not define is an E5001 warning at its
// position, with the nearest known name, and an error when `strict`.
std::optional<Card> read_card(const std::string& directory, syntax::SourceManager& sources,
                              syntax::Diagnostics& diagnostics, bool strict = false);

}  // namespace linnet::nest
