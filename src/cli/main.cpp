// The `linnet` command line: parses global options, dispatches to a subcommand,
// and maps outcomes to upstream's exit codes (0 ok, 1 input errors, 2 usage).
#include <cstdlib>
#include <iostream>

#include "command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"linnet: reference interpreter and validation harness for the Linnet tensor language"};
  app.require_subcommand(1);
  app.fallthrough();  // global options (--std) may also follow the subcommand
  app.set_version_flag("--version", std::string("linnet 0.1.0 (language 0.1)"));

  linnet::cli::CommandContext context;
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
  linnet::cli::add_synth_weights_command(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return 2;
  }
  return context.exit_code;
}
