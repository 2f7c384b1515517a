// The `linnet` command line: parses global options, dispatches to a subcommand,
// and maps outcomes to upstream's exit codes (0 ok, 1 input errors, 2 usage).
#include <cstdlib>
#include <iostream>
#include <new>

#include "command.hpp"
#include "linnet/dist/processes.hpp"
#include "linnet/tensor/allocator.hpp"
#include "linnet/tensor/threading.hpp"
#include "processes.hpp"
#include "usage_errors.hpp"

namespace {

// The run's commands; the status of this process (processes.hpp decides the run's).
int run_command(int argc, char** argv, linnet::cli::CommandContext& context) {
  CLI::App app{"linnet: reference interpreter and validation harness for the Linnet tensor language"};
  app.require_subcommand(1);
  app.fallthrough();  // global options (--std) may also follow the subcommand
  app.set_version_flag("--version", std::string("linnet 0.1.0 (language 0.1)"));

  const char* from_env = std::getenv("LINNET_STD");
  context.std_dir = from_env && *from_env ? from_env : LINNET_DEFAULT_STD;
  app.add_option("--std", context.std_dir, "standard library folder (default: $LINNET_STD, else the project's stdlib/)");

  linnet::cli::add_check_command(app, context);
  linnet::cli::add_inspect_command(app, context);
  linnet::cli::add_spec_test_command(app, context);
  linnet::cli::add_run_command(app, context);
  linnet::cli::add_generate_command(app, context);
  linnet::cli::add_explain_command(app, context);
  linnet::cli::add_validate_command(app, context);
  linnet::cli::add_tokenize_command(app, context);
  linnet::cli::add_synth_weights_command(app, context);

  if (std::optional<std::string> unknown = linnet::cli::unknown_subcommand(app, argc, argv)) {
    std::cerr << *unknown;
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    std::cerr << linnet::cli::explain_parse_error(app, error, argc, argv) << "Run with --help for more information.\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // Last resorts: every layer maps its own failures to diagnostics; these
    // keep anything that slips through from ending in std::terminate.
    std::cerr << "error E6005: out of memory\n";
    return 1;
  } catch (const std::exception& failure) {
    std::cerr << "error: internal error (please report it): " << failure.what() << '\n';
    return 1;
  }
  return context.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Restarts once with short OpenMP idle spinning (threading.hpp), before MPI starts.
  linnet::tensor::bound_idle_spinning(argv);
  linnet::tensor::keep_freed_heap_memory();
  // Under mpirun this process is one of several (docs/commands.md, "Running across processes").
  std::unique_ptr<linnet::dist::Processes> started;
  try {
    started = linnet::dist::start_processes(argc, argv);
  } catch (const linnet::dist::LaunchError& failure) {
    if (linnet::dist::launch_environment().rank == 0) std::cerr << "error: " << failure.what() << '\n';
    return 2;
  }
  linnet::cli::RunProcesses processes(std::move(started));
  linnet::cli::CommandContext context;
  context.communicator = processes.group();
  return processes.finish(run_command(argc, argv, context));
}
