// Runs the built `linnet` (LINNET_BINARY) with arguments and captures its
// exit status, stdout and stderr, for command-level tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "temp_dir.hpp"

namespace cli_test {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string source_path(const std::string& relative) { return std::string(LINNET_SOURCE_DIR) + "/" + relative; }

// A directory removed when the test ends.
// A scratch folder for one test, removed with its files at the end.
struct ScratchDir : linnet_test::TempDir {
  ScratchDir() : TempDir("linnet-cli") {}
};

inline std::string quote(const std::string& argument) {
  std::string quoted = "'";
  for (char c : argument) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `linnet ARGS...`, run from the repository root, with `environment`
// ("NAME=VALUE") added to the environment.
inline Outcome run_linnet(const std::vector<std::string>& arguments, const std::vector<std::string>& environment = {}) {
  ScratchDir scratch;
  std::string command = "cd " + quote(LINNET_SOURCE_DIR) + " && env";
  for (const std::string& setting : environment) command += " " + quote(setting);
  command += " " + quote(LINNET_BINARY);
  for (const std::string& argument : arguments) command += " " + quote(argument);
  command += " >" + quote(scratch.file("out")) + " 2>" + quote(scratch.file("err")) + " </dev/null";
  const int raw = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = read_file(scratch.file("out"));
  outcome.err = read_file(scratch.file("err"));
  return outcome;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The Mistral card copied into `scratch` (as `card`).
inline std::string copied_card(const ScratchDir& scratch) {
  const std::string card = scratch.file("card");
  std::filesystem::copy(source_path("nest/mistral-7b-instruct-v0.3"), card, std::filesystem::copy_options::recursive);
  return card;
}

// The Mistral card copied into `scratch` with the first `from` in its
// `file` replaced by `to`.
inline std::string defective_card(const ScratchDir& scratch, const std::string& file, const std::string& from,
                                  const std::string& to) {
  const std::string card = copied_card(scratch);
  std::string changed = read_file(card + "/" + file);
  const size_t at = changed.find(from);
  REQUIRE(at != std::string::npos);
  changed.replace(at, from.size(), to);
  std::ofstream(card + "/" + file) << changed;
  return card;
}

}  // namespace cli_test
