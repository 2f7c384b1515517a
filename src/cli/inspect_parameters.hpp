// `linnet inspect --parameters CARD [--bind K=V]... [--json]`: the tensors a
// checkpoint must supply for a card at the bound generics, each with its
// parameter path, the tensor name the card's bindings give it, its dtype
// and shape, and whether it is optional. Reads no weights.
#pragma once

#include <string>
#include <vector>

#include "command.hpp"

namespace linnet::cli {

struct InspectParametersOptions {
  std::string card;
  std::vector<std::string> binds;
  // With a checkpoint: also list its tensors that no parameter reads.
  std::vector<std::string> weights;
  std::string bind_from;  // --bind-from FILE
  bool strict = false;    // --strict: the card's and the checker's warnings fail it
  bool json = false;
};

// Exit status: 0, 1 (a problem with the card or the generics), 2 (no such card).
int run_inspect_parameters(const InspectParametersOptions& options, const CommandContext& context);

}  // namespace linnet::cli
