// Each subcommand lives in its own file and registers itself on the CLI11 app.
// A command's callback stores its exit status in `CommandContext::exit_code`:
// 0 success, 1 errors in the input, 2 command-line mistakes (upstream's convention).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "linnet/dist/communicator.hpp"

namespace linnet::cli {

struct CommandContext {
  std::string std_dir;  // --std / LINNET_STD / the project's stdlib
  // The processes of this run (several under mpirun); cards run across them.
  std::shared_ptr<dist::Communicator> communicator;
  int exit_code = 0;
};

void add_inspect_command(CLI::App& app, CommandContext& context);
void add_check_command(CLI::App& app, CommandContext& context);
void add_spec_test_command(CLI::App& app, CommandContext& context);
void add_run_command(CLI::App& app, CommandContext& context);
void add_generate_command(CLI::App& app, CommandContext& context);
void add_explain_command(CLI::App& app, CommandContext& context);
void add_validate_command(CLI::App& app, CommandContext& context);
void add_tokenize_command(CLI::App& app, CommandContext& context);
void add_synth_weights_command(CLI::App& app, CommandContext& context);

}  // namespace linnet::cli
