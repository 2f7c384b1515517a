// The static checker before a command's work (see program_check.hpp).
#include "linnet/nest/program_check.hpp"

#include "linnet/check/driver.hpp"

namespace linnet::nest {

ProgramCheck check_program(const syntax::Program& program, const syntax::SourceManager& sources,
                           syntax::Diagnostics& diagnostics, const ProgramCheckRequest& request) {
  check::DriverOptions options;
  options.root = request.root;
  options.bindings = request.binds;
  options.bindings_origins = request.binds_origins;
  // Lints as `check` runs them: warnings, which fail only under --strict.
  options.lint = true;
  const size_t errors_before = diagnostics.error_count() + diagnostics.suppressed();
  const size_t warnings_before = diagnostics.warning_count();
  const check::DriverResult checked = check::run_check(program, sources, diagnostics, {request.target}, options);
  if (checked.bad_request) return ProgramCheck::BadRequest;
  if (diagnostics.error_count() + diagnostics.suppressed() > errors_before) return ProgramCheck::Failed;
  if (request.strict && diagnostics.warning_count() > warnings_before) return ProgramCheck::Failed;
  return ProgramCheck::Passed;
}

}  // namespace linnet::nest
