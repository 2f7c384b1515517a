// Bindings that are never silent. After the checkpoint passes
// check_parameters, two slips can still leave a model quietly wrong:
//
// - an optional parameter that bindings.json maps to a tensor the
//   checkpoint lacks (a misspelled tensor name) is simply absent;
// - a checkpoint tensor that no parameter reads (a misspelled parameter
//   path in bindings.json leaves the real parameter unbound, and absent if
//   it is optional). These are the spec's "unexpected external tensors".
//
// Tensors of layers past a truncation (`layers.7.*` when the run binds
// Layers=2) are expected and not reported.
#pragma once

#include <string>
#include <vector>

#include "linnet/eval/parameters.hpp"
#include "linnet/nest/bindings.hpp"
#include "linnet/nest/checkpoint.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::nest {

// The checkpoint tensors no parameter reads, less those of layers past a
// truncation (as described above), in checkpoint order.
std::vector<std::string> unexpected_tensors(const std::vector<eval::ParameterInfo>& manifest,
                                            const Checkpoint& checkpoint, const Bindings& bindings);

// E6003 diagnostics for both slips: warnings, or errors when `strict`.
std::vector<syntax::Diagnostic> audit_bindings(const std::vector<eval::ParameterInfo>& manifest,
                                               const Checkpoint& checkpoint, const Bindings& bindings, bool strict);

}  // namespace linnet::nest
