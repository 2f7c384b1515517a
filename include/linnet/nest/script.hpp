// A script of entry calls on one instance (`linnet run CARD --script FILE`),
// for the serving entries whose state carries from call to call:
//
//   [
//     {"entry": "prefill_slots", "inputs": {"tokens": [[5, 9, 2, 0]], "slots": [0], "lengths": [3]}},
//     {"entry": "decode_rows", "inputs": {"tokens": [[7]], "positions": [3]}},
//     {"reset": true},
//     {"entry": "prefill_packed", "inputs": {"tokens": "@packed.npy", ...}, "bind": {"P": 6}}
//   ]
//
// (or the same list as `{"calls": [...]}`). Each call names an entry, gives
// every input as a JSON value or "@file.npy" (relative to the script), and
// may bind the entry's generics; `"reset": true` zeroes the states, on its
// own or before the call it comes with. The whole script is read and every
// input built before the first call runs. Outputs are named
// `<index>_<entry>` by the call's position in the list.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "linnet/nest/session.hpp"

namespace linnet::nest {

struct ScriptCall {
  size_t index = 0;  // position in the script
  std::string entry; // empty for a reset on its own
  bool reset = false;
  eval::EntryInputs inputs;
};

// Reads and checks a script against the session's entries. Throws InputError.
std::vector<ScriptCall> read_script(const std::string& path, const Session& session);
std::vector<ScriptCall> parse_script(std::string_view json, const std::string& base_directory, const Session& session);

struct ScriptStep {
  size_t index = 0;
  std::string entry;
  double seconds = 0;
  std::vector<std::pair<std::string, tensor::Tensor>> outputs;  // "<index>_<entry>", ...
};

// Runs the calls in order; `after_each` sees each finished step. Throws RunError.
// With `after_each`, the returned steps carry no outputs: the callback had
// them, and keeping every call's results (a prompt's logits are hundreds of
// MB) would hold them all until the end.
std::vector<ScriptStep> run_script(Session& session, const std::vector<ScriptCall>& calls,
                                   const std::function<void(const ScriptStep&)>& after_each = {});

}  // namespace linnet::nest
