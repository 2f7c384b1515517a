// The prelude's functions (spec §2.3): the names every module may call
// without a `use`. The checker and the interpreter both read this one list,
// so that `check` and `run` accept the same calls.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace linnet::syntax {

// Every prelude function, those without a signature included.
const std::vector<std::string>& prelude_functions();
bool is_prelude_function(std::string_view name);

// `pad`, `gather` and `scatter`: prelude names the spec gives no signature,
// so that every call of one is rejected (E2190), by `check` and `run` alike.
bool is_unspecified_prelude_function(std::string_view name);

// `program_id` and `load`: callable only inside a `kernel` (E2127 elsewhere).
bool is_kernel_builtin(std::string_view name);

}  // namespace linnet::syntax
