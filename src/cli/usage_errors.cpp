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

}  // namespace

std::optional<std::string> unknown_subcommand(const CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--std") {
      ++i;  // its value
      continue;
    }
    if (word.starts_with("-")) continue;
    const std::vector<std::string> names = subcommand_names(app);
    for (const std::string& name : names) {
      if (name == word) return std::nullopt;
    }
    std::string message = "error: unknown command `" + word + "`" + syntax::did_you_mean(word, names) + "\n";
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return message + "  the commands are: " + list + " (see `linnet --help`)\n";
  }
  return std::nullopt;
}

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error) {
  std::string message = std::string("error: ") + error.what() + "\n";
  if (error.get_name() != "ExtrasError") return message;
  // The command whose extras these are: the innermost parsed subcommand.
  const CLI::App* command = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : command->get_subcommands()) {
      command = sub;
      deeper = true;
      break;
    }
  }
  std::istringstream words(error.what());
  std::string word;
  const std::vector<std::string> flags = flag_names(*command);
  while (words >> word) {
    if (!word.starts_with("--")) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (std::optional<std::string> near = syntax::closest_name(flag, flags)) {
      message += "  `" + flag + "`: did you mean `" + *near + "`?\n";
    }
  }
  return message;
}

}  // namespace linnet::cli
