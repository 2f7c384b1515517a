// The prelude's function names (see prelude.hpp).
#include "linnet/syntax/prelude.hpp"

#include <algorithm>

namespace linnet::syntax {

const std::vector<std::string>& prelude_functions() {
  // Spec §2.3, "Core prelude": casts and shape functions, data functions,
  // elementwise math, then min/max, shifts and select.
  static const std::vector<std::string> functions = {
      "cast", "reshape", "permute", "broadcast_to", "concat", "pad", "iota", "fill", "cumsum", "gather", "scatter",
      "exp",  "log",     "sqrt",    "rsqrt",        "sin",    "cos", "tanh", "abs",  "min",    "max",    "shl",
      "shr",  "select"};
  return functions;
}

bool is_prelude_function(std::string_view name) {
  const std::vector<std::string>& functions = prelude_functions();
  return std::find(functions.begin(), functions.end(), name) != functions.end();
}

bool is_unspecified_prelude_function(std::string_view name) {
  return name == "pad" || name == "gather" || name == "scatter";
}

bool is_kernel_builtin(std::string_view name) { return name == "program_id" || name == "load"; }

}  // namespace linnet::syntax
