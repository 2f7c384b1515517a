// --bind-from FILE: a card's generics from a file instead of a dozen --bind
// flags. The values come as "NAME=VALUE" texts that go before the --bind
// ones, so that an explicit --bind still wins.
//
// - A golden case's meta.json: every entry of its `linnet_generics`.
// - A checkpoint's config.json: each generic of the root block that the
//   config names by convention (config_size_keys: Vocab from vocab_size,
//   H from hidden_size, ...; Layers from num_hidden_layers).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/nest/generics.hpp"

namespace linnet::nest {

// Nothing, with `why`, when the file cannot be read or is neither kind.
std::optional<std::vector<std::string>> binds_from_file(const std::string& path, const RootBlock& root,
                                                        std::string& why);

}  // namespace linnet::nest
