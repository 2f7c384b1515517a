// Explained command-line mistakes (usage_errors.hpp).
#include "usage_errors.hpp"

#include <sstream>

#include "linnet/syntax/suggest.hpp"

namespace linnet::cli {

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(command->get_name());
  }
  return names;
}

// Every --long name of `command` and of the app above it (global options).
std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* at = &command; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    }
  }
  return names;
}

// The subcommand the command line names: its first word that is not an
// option (or the value of --std); null when there is none or it is unknown.
const CLI::App* named_subcommand(const CLI::App& app, int argc, const char* const* argv, std::string& word) {
  for (int i = 1; i < argc; ++i) {
    word = argv[i];
    if (word == "--std") {
      ++i;  // its value
      continue;
    }
    if (word.starts_with("-")) continue;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (command->get_name() == word) return command;
    }
    return nullptr;
  }
  word.clear();
  return nullptr;
}

}  // namespace

std::optional<std::string> unknown_subcommand(const CLI::App& app, int argc, const char* const* argv) {
  std::string word;
  if (named_subcommand(app, argc, argv, word) != nullptr || word.empty()) return std::nullopt;
  const std::vector<std::string> names = subcommand_names(app);
  std::string message = "error: unknown command `" + word + "`" + syntax::did_you_mean(word, names) + "\n";
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return message + "  the commands are: " + list + " (see `linnet --help`)\n";
}

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error, int argc,
                                const char* const* argv) {
  std::string message = std::string("error: ") + error.what() + "\n";
  // (Not get_name(): an error raised by a subcommand carries the subcommand's name.)
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return message;
  std::string word;
  const CLI::App* named = named_subcommand(app, argc, argv, word);
  const CLI::App* command = named != nullptr ? named : &app;
  std::istringstream words(error.what());
  std::string text;
  const std::vector<std::string> flags = flag_names(*command);
  while (words >> text) {
    if (!text.starts_with("--")) continue;
    const std::string flag = text.substr(0, text.find('='));
    if (std::optional<std::string> near = syntax::closest_name(flag, flags)) {
      message += "  `" + flag + "`: did you mean `" + *near + "`?\n";
    }
  }
  return message;
}

}  // namespace linnet::cli
