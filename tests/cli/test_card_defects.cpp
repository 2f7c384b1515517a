// A card defect is reported by every command that reads the card (check,
// run, generate, explain, validate, inspect --parameters, synth-weights)
// with the same code, message and position: each command below gets a copy
// of the Mistral card with one defect, and their first diagnostic lines and
// `-->` positions must be one and the same.
#include <fstream>
#include <sstream>

#include "cli_test_util.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

// The card copied into `scratch` with the first `from` in `file` replaced by `to`.
std::string defective_card(const ScratchDir& scratch, const std::string& file, const std::string& from,
                           const std::string& to) {
  const std::string card = scratch.file("card");
  std::filesystem::copy(cli_test::source_path("nest/mistral-7b-instruct-v0.3"), card,
                        std::filesystem::copy_options::recursive);
  std::ifstream in(card + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  std::string changed = text.str();
  const size_t at = changed.find(from);
  REQUIRE(at != std::string::npos);
  changed.replace(at, from.size(), to);
  std::ofstream(card + "/" + file) << changed;
  return card;
}

// The first `error E...` line and the first `-->` line of stderr.
std::string first_diagnostic(const std::string& err) {
  std::istringstream lines(err);
  std::string line, error, position;
  while (std::getline(lines, line)) {
    if (error.empty() && line.starts_with("error E")) error = line;
    const size_t arrow = line.find("--> ");
    if (!error.empty() && position.empty() && arrow != std::string::npos) position = line.substr(arrow);
  }
  return error + "\n" + position;
}

void every_command_says(const std::string& card, const std::string& expected) {
  const std::vector<std::string> sizes = {"--bind", "Vocab=512", "--bind", "H=64", "--bind", "Heads=4",
                                          "--bind", "KvHeads=2", "--bind", "Inner=176", "--bind", "Layers=2",
                                          "--bind", "MaxSeq=64", "--bind", "T=f32"};
  ScratchDir out;
  std::vector<std::vector<std::string>> commands = {
      {"check", card},
      {"run", card, "--weights", "golden/mistral-a", "--input", "tokens=1,2"},
      {"generate", card, "--weights", "golden/mistral-a", "--tokens", "1,2", "--max-new", "1"},
      {"explain", card},
      {"validate", card, "golden/mistral-a", "--no-progress"},
      {"inspect", "--parameters", card},
      {"synth-weights", card, "--out", out.file("weights")},
  };
  std::string first;
  for (std::vector<std::string>& command : commands) {
    if (command[0] == "run" || command[0] == "generate" || command[0] == "inspect" || command[0] == "synth-weights") {
      command.insert(command.end(), sizes.begin(), sizes.end());
    }
    const cli_test::Outcome outcome = run_linnet(command);
    INFO(command[0] << ": exit " << outcome.status << "\n" << outcome.err);
    CHECK(outcome.status == 1);
    const std::string said = first_diagnostic(outcome.err);
    CHECK(contains(said, expected));
    if (first.empty()) first = said;
    CHECK(said == first);
  }
}

}  // namespace

TEST_CASE("a wrong [source] path is E5001 at its position in every command", "[cli][card]") {
  {
    ScratchDir scratch;
    every_command_says(defective_card(scratch, "nest.toml", "\"src/lib.linnet\"", "\"src/nope.linnet\""),
                       "error E5001: [source] `path` = \"src/nope.linnet\": the card has no such file");
  }
  {
    ScratchDir scratch;
    every_command_says(defective_card(scratch, "nest.toml", "\"src/lib.linnet\"", "\"src\""),
                       "error E5001: [source] `path` = \"src\" is a directory");
  }
  {
    ScratchDir scratch;
    every_command_says(defective_card(scratch, "nest.toml", "\"src/lib.linnet\"", "\"../../../../etc/passwd\""),
                       "is outside the card's directory");
  }
}

TEST_CASE("an empty [source] entry is E5001 in every command (check passed it, run refused it)", "[cli][card]") {
  ScratchDir scratch;
  every_command_says(defective_card(scratch, "nest.toml", "entry = \"forward\"", "entry = \"\""),
                     "error E5001: [source] `entry` is empty");
}

TEST_CASE("a TOML syntax error is E5001 at its position in explain too", "[cli][card]") {
  ScratchDir scratch;
  every_command_says(defective_card(scratch, "nest.toml", "H = 4096", "H = = 4096"),
                     "error E5001: nest.toml is not valid TOML");
}

TEST_CASE("a misspelled [source] root is suggested once, in every command", "[cli][card]") {
  ScratchDir scratch;
  const std::string card = defective_card(scratch, "nest.toml", "root = \"Model\"", "root = \"Modle\"");
  every_command_says(card, "error E5001: [source] root: the program declares no block `Modle`; did you mean `Model`?");
  const cli_test::Outcome checked = run_linnet({"check", card});
  CHECK(!contains(checked.err, "did you mean `Model`?; did you mean"));
}

TEST_CASE("a [weights] bindings file that is missing or a directory is E5001 at its position", "[cli][card]") {
  {
    ScratchDir scratch;
    every_command_says(defective_card(scratch, "nest.toml", "bindings = \"bindings.json\"", "bindings = \"nope.json\""),
                       "error E5001: [weights] `bindings` = \"nope.json\": the card has no such file");
  }
  {
    ScratchDir scratch;
    every_command_says(defective_card(scratch, "nest.toml", "bindings = \"bindings.json\"", "bindings = \"src\""),
                       "error E5001: [weights] `bindings` = \"src\" is a directory");
  }
}

TEST_CASE("a bad value from --bind-from is named as coming from that file, not as a --bind", "[cli][card]") {
  ScratchDir scratch;
  const std::string meta = scratch.write("meta.json", R"({"linnet_generics": {"H": -64, "T": "q9"}})");
  for (const char* command : {"run", "inspect"}) {
    std::vector<std::string> arguments =
        std::string(command) == "run"
            ? std::vector<std::string>{"run", "nest/mistral-7b-instruct-v0.3", "--weights", "golden/mistral-a",
                                       "--input", "tokens=1"}
            : std::vector<std::string>{"inspect", "--parameters", "nest/mistral-7b-instruct-v0.3"};
    arguments.insert(arguments.end(), {"--bind-from", meta, "--bind", "Layers=-1"});
    const cli_test::Outcome outcome = run_linnet(arguments);
    INFO(outcome.err);
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E2111: `H=-64` from `--bind-from " + meta + "`: `-64` is not a dimension"));
    CHECK(contains(outcome.err, "error E2111: `T=q9` from `--bind-from " + meta + "`: `q9` is not a dtype"));
    CHECK(contains(outcome.err, "error E2111: `--bind Layers=-1`: `-1` is not a dimension"));
  }
}
