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

// E6003 diagnostics for both slips: warnings, or errors when `strict`. A
// tensor bound by a bindings.json key that names no parameter is left to
// audit_binding_paths, which reports the key itself.
std::vector<syntax::Diagnostic> audit_bindings(const std::vector<eval::ParameterInfo>& manifest,
                                               const Checkpoint& checkpoint, const Bindings& bindings, bool strict);

// E6003 for every bindings.json key that names no `param` or `buffer` of
// the model (a misspelled path: its tensor may still be read, by another
// key or by a parameter of that very name, so the checkpoint audit above
// cannot see it), at the key's line and column with the nearest path:
// warnings, or errors when `strict`. Needs no checkpoint, so that every
// command reports it. A key is a parameter when `manifest` (the run's) or
// `published` (the card's own [generics], when they bind alone; may be
// null) lists it; without `published`, a key of a layer past a truncation
// is one when the same path at index 0 is.
std::vector<syntax::Diagnostic> audit_binding_paths(const std::vector<eval::ParameterInfo>& manifest,
                                                    const std::vector<eval::ParameterInfo>* published,
                                                    const Bindings& bindings, const std::string& model, bool strict);

}  // namespace linnet::nest
