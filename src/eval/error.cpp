// EvalError: a runtime failure as one diagnostic.
#include "linnet/eval/error.hpp"

namespace linnet::eval {

EvalError::EvalError(syntax::Diagnostic diagnostic)
    : std::runtime_error(diagnostic.code.empty() ? diagnostic.message : diagnostic.code + ": " + diagnostic.message),
      diagnostic_(std::move(diagnostic)) {}

}  // namespace linnet::eval
