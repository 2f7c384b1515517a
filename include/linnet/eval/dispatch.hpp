// The hook through which native implementations stand in for `op` bodies.
//
// Before the interpreter runs the body of an `op`, it offers the call to the
// OpDispatcher in its options (when there is one). The dispatcher sees the
// op's declaration, its qualified name (`std.nn.linear::linear`), the bound
// generics, the argument values in parameter order (defaults filled in) and
// the numerics policy, and either returns the op's result or declines. The
// body remains the op's definition: a native implementation must compute the
// same function (bit for bit under `exact`; up to the rounding the policy
// allows otherwise). The interpreter checks a native result against the
// op's declared result type as it checks a body's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/value.hpp"
#include "linnet/syntax/ast.hpp"

namespace linnet::eval {

// How closely evaluation must follow the canonical bodies (upstream's
// `--numerics`).
enum class NumericsPolicy {
  // Op bodies as written, in the dtypes they name: an accumulation in bf16
  // rounds every partial sum to bf16.
  Exact,
  // Native kernels may stand in for ops, and sums in bf16/f16 accumulate in
  // f32 and round once, as framework operators do.
  Equivalent,
  // Also softmax, normalization and attention in the input dtype, as bf16
  // reference models run them (the native op table decides where).
  Fast,
};

const char* numerics_policy_name(NumericsPolicy policy);  // "exact", "equivalent", "fast"

struct NativeCall {
  const syntax::ast::FunctionItem& op;
  std::string qualified_name;              // "std.nn.linear::linear"
  const GenericBindings& generics;         // every generic of the op, bound
  const std::vector<Value>& arguments;     // in parameter order, defaults filled in
  NumericsPolicy policy;
};

class OpDispatcher {
 public:
  virtual ~OpDispatcher() = default;
  // The op's result computed natively, or nothing to run the body instead.
  virtual std::optional<Value> try_native(const NativeCall& call) = 0;
};

}  // namespace linnet::eval
