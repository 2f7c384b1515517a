// Command-line mistakes explained: an unknown subcommand named (with the
// nearest known one), and an unknown flag with the nearest flag of its
// command. The option parser (CLI11) reports both, but without naming the
// subcommand or suggesting a spelling.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace linnet::cli {

// Before parsing: when the first word that is not an option (or the value
// of --std) names no subcommand, the message for it; else nothing.
std::optional<std::string> unknown_subcommand(const CLI::App& app, int argc, const char* const* argv);

// After a parse error: the error's message, with "did you mean" for each
// unexpected `--flag` close to one the command takes.
// `argv` names the subcommand whose flags are candidates.
std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error, int argc,
                                const char* const* argv);

}  // namespace linnet::cli
