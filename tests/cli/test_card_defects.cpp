// A card defect is reported by every command that reads the card (check,
// run, generate, explain, validate, inspect --parameters, synth-weights)
// with the same code, message and position: each command below gets a copy
// of the Mistral card with one defect, and their first diagnostic lines and
// `-->` positions must be one and the same.
#include <fstream>
#include <sys/stat.h>
#include <sstream>

#include "cli_test_util.hpp"

using cli_test::contains;
using cli_test::defective_card;
using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

// The first line of stderr that starts with `kind` ("error E", "warning
// E") and the first `-->` line after it.
std::string first_finding(const std::string& err, const std::string& kind) {
  std::istringstream lines(err);
  std::string line, finding, position;
  while (std::getline(lines, line)) {
    if (finding.empty() && line.starts_with(kind)) finding = line;
    const size_t arrow = line.find("--> ");
    if (!finding.empty() && position.empty() && arrow != std::string::npos) position = line.substr(arrow);
  }
  return finding + "\n" + position;
}

std::string first_diagnostic(const std::string& err) { return first_finding(err, "error E"); }

// Every command that reads the card, on `card`, with the generics of the
// mistral-a golden where the command takes them from --bind (`out` holds
// synth-weights' output).
std::vector<std::vector<std::string>> card_commands(const std::string& card, const ScratchDir& out) {
  const std::vector<std::string> sizes = {"--bind", "Vocab=512", "--bind", "H=64", "--bind", "Heads=4",
                                          "--bind", "KvHeads=2", "--bind", "Inner=176", "--bind", "Layers=2",
                                          "--bind", "MaxSeq=64", "--bind", "T=f32"};
  std::vector<std::vector<std::string>> commands = {
      {"check", card},
      {"run", card, "--weights", "golden/mistral-a", "--input", "tokens=1,2"},
      {"generate", card, "--weights", "golden/mistral-a", "--tokens", "1,2", "--max-new", "1"},
      {"explain", card},
      {"validate", card, "golden/mistral-a", "--no-progress"},
      {"inspect", "--parameters", card},
      {"synth-weights", card, "--out", out.file("weights")},
  };
  for (std::vector<std::string>& command : commands) {
    if (command[0] == "run" || command[0] == "generate" || command[0] == "inspect" || command[0] == "synth-weights") {
      command.insert(command.end(), sizes.begin(), sizes.end());
    }
  }
  return commands;
}

void every_command_says(const std::string& card, const std::string& expected) {
  ScratchDir out;
  std::string first;
  for (const std::vector<std::string>& command : card_commands(card, out)) {
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

namespace {

// Every command that reads the card warns alike and still succeeds; under
// --strict (every one of them) the same is an error, exit 1.
void every_command_warns(const std::string& card, const std::string& expected) {
  ScratchDir out;
  std::string first;
  for (std::vector<std::string> command : card_commands(card, out)) {
    const cli_test::Outcome outcome = run_linnet(command);
    INFO(command[0] << ": exit " << outcome.status << "\n" << outcome.err);
    CHECK(outcome.status == 0);
    const std::string said = first_finding(outcome.err, "warning E");
    CHECK(contains(said, expected));
    if (first.empty()) first = said;
    CHECK(said == first);
    command.push_back("--strict");
    const cli_test::Outcome strict = run_linnet(command);
    INFO("--strict: exit " << strict.status << "\n" << strict.err);
    CHECK(strict.status == 1);
    CHECK(first_diagnostic(strict.err) == "error" + said.substr(std::string("warning").size()));
    CHECK_FALSE(contains(strict.err, "warning E"));
  }
}

}  // namespace

TEST_CASE("a bindings.json key that names no parameter is E6003 at its position in every command", "[cli][card]") {
  // `norm.wieght` binds a tensor that `norm.weight` reads anyway: nothing was said.
  ScratchDir scratch;
  const std::string card = defective_card(scratch, "bindings.json", "\"norm.weight\": \"model.norm.weight\",",
                                          "\"norm.weight\": \"model.norm.weight\",\n\"norm.wieght\": \"model.norm.weight\",");
  every_command_warns(card, "warning E6003: `" + card + "/bindings.json` binds `norm.wieght`, which is no parameter of "
                            "`llama::Model`; did you mean `norm.weight`?");
  const cli_test::Outcome checked = run_linnet({"check", card});
  CHECK(contains(checked.err, "--> " + card + "/bindings.json:4:1"));
}

TEST_CASE("a bindings.json key past the published layers is no parameter, one of a truncated run's layers is", "[cli][card]") {
  ScratchDir scratch;
  // Layer 40 of a 32-layer model; the run below binds Layers=2, and its
  // layers 2..31 are still the card's.
  const std::string card =
      defective_card(scratch, "bindings.json", "\"norm.weight\": \"model.norm.weight\",",
                     "\"norm.weight\": \"model.norm.weight\",\n\"layers.40.mlp.up.weight\": \"model.norm.weight\",");
  const cli_test::Outcome checked = run_linnet({"check", card});
  CHECK(checked.status == 0);
  CHECK(contains(checked.err, "binds `layers.40.mlp.up.weight`, which is no parameter"));
  CHECK(!contains(checked.err, "layers.31"));
  const cli_test::Outcome shipped = run_linnet({"check", "--strict", "nest/mistral-7b-instruct-v0.3"});
  INFO(shipped.err);
  CHECK(shipped.status == 0);
}

TEST_CASE("an unknown nest.toml key or table is E5001 at its position in every command", "[cli][card]") {
  {
    ScratchDir scratch;
    every_command_warns(defective_card(scratch, "nest.toml", "entry = \"forward\"", "entry = \"forward\"\nentyr = 1"),
                        "warning E5001: [source] `entyr` is not a nest.toml key; did you mean `entry`?");
  }
  {
    ScratchDir scratch;
    every_command_warns(defective_card(scratch, "nest.toml", "[weights]", "[weigths]\nx = 1\n[weights]"),
                        "warning E5001: the table `[weigths]` is not a nest.toml table; did you mean `[weights]`?");
  }
}

TEST_CASE("a [check] key that is no entry's generic is E5001 at its position in every command", "[cli][card]") {
  ScratchDir scratch;
  every_command_warns(defective_card(scratch, "nest.toml", "S = 8", "S = 8\nStpes = 3"),
                      "warning E5001: [check] `Stpes` is a generic of no entry of `llama::Model`; did you mean `Steps`?");
}

TEST_CASE("validate names meta.json, not --bind, for a bad generic of the golden case", "[cli][card]") {
  ScratchDir scratch;
  const std::string golden = scratch.file("case");
  std::filesystem::copy(cli_test::source_path("golden/mistral-a"), golden, std::filesystem::copy_options::recursive);
  std::string meta = cli_test::read_file(golden + "/meta.json");
  const size_t at = meta.find("\"linnet_generics\"");
  REQUIRE(at != std::string::npos);
  const size_t h = meta.find("\"H\": 64", at);
  REQUIRE(h != std::string::npos);
  meta.replace(h, 7, "\"H\": -64");
  std::ofstream(golden + "/meta.json") << meta;
  const cli_test::Outcome outcome = run_linnet({"validate", "nest/mistral-7b-instruct-v0.3", golden, "--no-progress"});
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "error E2111: `H=-64` from `" + golden + "/meta.json` (linnet_generics)"));
  CHECK(!contains(outcome.err, "--bind H=-64"));

  // A generic named with an ESC in meta.json is quoted escaped (E6007).
  meta.replace(meta.find("\"H\": -64"), 8, "\"\\u001b[2J\": [1]");
  std::ofstream(golden + "/meta.json") << meta;
  const cli_test::Outcome escaped = run_linnet({"validate", "nest/mistral-7b-instruct-v0.3", golden, "--no-progress"});
  INFO(escaped.err);
  CHECK(escaped.status == 1);
  CHECK(contains(escaped.err, "error E6007: "));
  CHECK(contains(escaped.err, "\\u{1b}[2J"));
  CHECK(escaped.err.find('\x1b') == std::string::npos);
}

TEST_CASE("a malformed checkpoint or golden file is E6007 in every command, text and JSON", "[cli][card]") {
  const std::vector<std::string> sizes = {"--bind", "Vocab=512", "--bind", "H=64", "--bind", "Heads=4",
                                          "--bind", "KvHeads=2", "--bind", "Inner=176", "--bind", "Layers=2",
                                          "--bind", "MaxSeq=64", "--bind", "T=f32"};
  const std::string card = "nest/mistral-7b-instruct-v0.3";
  ScratchDir scratch;
  const std::string broken = scratch.file("broken");
  std::filesystem::copy(cli_test::source_path("golden/mistral-a"), broken, std::filesystem::copy_options::recursive);
  // A header length past the file, and a config.json that is not JSON.
  std::string weights = cli_test::read_file(broken + "/model.safetensors");
  weights[6] = '\x7f';
  std::ofstream(broken + "/model.safetensors", std::ios::binary) << weights;
  std::ofstream(broken + "/config.json") << "{not json";
  std::vector<std::vector<std::string>> commands = {
      {"run", card, "--weights", broken, "--input", "tokens=1,2"},
      {"generate", card, "--weights", broken, "--tokens", "1,2", "--max-new", "1"},
      {"inspect", "--parameters", card, "--weights", broken},
  };
  for (std::vector<std::string>& command : commands) {
    command.insert(command.end(), sizes.begin(), sizes.end());
    const cli_test::Outcome outcome = run_linnet(command);
    INFO(command[0] << ": exit " << outcome.status << "\n" << outcome.err);
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E6007: "));
  }
  std::vector<std::string> json = {"inspect", "--parameters", card, "--weights", broken, "--json"};
  json.insert(json.end(), sizes.begin(), sizes.end());
  const cli_test::Outcome listed = run_linnet(json);
  CHECK(contains(listed.out, "\"code\": \"E6007\""));
  const cli_test::Outcome validated = run_linnet({"validate", card, broken, "--no-progress"});
  CHECK(validated.status == 1);
  CHECK(contains(validated.err, "error E6007"));

  // A config.json that is not JSON is said with its code, and ignored.
  const std::string config_only = scratch.file("config-only");
  std::filesystem::copy(cli_test::source_path("golden/mistral-a"), config_only, std::filesystem::copy_options::recursive);
  std::ofstream(config_only + "/config.json") << "{not json";
  std::vector<std::string> run = {"run", card, "--weights", config_only, "--input", "tokens=1,2"};
  run.insert(run.end(), sizes.begin(), sizes.end());
  const cli_test::Outcome warned = run_linnet(run);
  CHECK(warned.status == 0);
  CHECK(contains(warned.err, "warning E6007: ignoring the checkpoint's config"));

  // An input .npy that is no array is E6004, an input that does not fit.
  const std::string npy = scratch.write("in.npy", "\x93NUMPY but not really");
  std::vector<std::string> with_input = {"run", card, "--weights", "golden/mistral-a", "--input", "tokens=@" + npy};
  with_input.insert(with_input.end(), sizes.begin(), sizes.end());
  const cli_test::Outcome input = run_linnet(with_input);
  CHECK(input.status == 1);
  CHECK(contains(input.err, "error E6004: input `tokens`"));

  // An expected.npz that is no archive.
  std::ofstream(config_only + "/expected.npz") << "PK not a zip";
  const cli_test::Outcome npz = run_linnet({"validate", card, config_only, "--no-progress"});
  CHECK(npz.status == 1);
  CHECK(contains(npz.err, "error E6007: "));
}

TEST_CASE("control bytes and invalid UTF-8 of a card are escaped in snippets, carets still under them", "[cli][card]") {
  ScratchDir scratch;
  const std::string card = defective_card(scratch, "nest.toml", "entry = \"forward\"",
                                          "entry = \"forward\"\n\x1b[31m\x01\xff = 1");
  for (const char* flag : {"--json", ""}) {
    std::vector<std::string> command = {"check", card};
    if (*flag) command.push_back(flag);
    const cli_test::Outcome outcome = run_linnet(command);
    INFO(outcome.out << outcome.err);
    CHECK(outcome.status == 1);
    for (char raw : {'\x1b', '\x01', '\xff'}) {
      CHECK(outcome.err.find(raw) == std::string::npos);
      CHECK(outcome.out.find(raw) == std::string::npos);
    }
    if (!*flag) {
      // The line as shown, and the carets under the same escaped character
      // the position names (column 6, the \x01 after `ESC[31m`).
      const std::string shown = "| \\u{1b}[31m\\u{1}\\xff = 1\n";
      const size_t line = outcome.err.find(shown);
      REQUIRE(line != std::string::npos);
      CHECK(contains(outcome.err, "nest.toml:16:6"));
      const size_t line_start = outcome.err.rfind('\n', line) + 1;
      const size_t caret_line = line + shown.size();
      const size_t caret = outcome.err.find('^', caret_line);
      CHECK(caret - caret_line == outcome.err.find("\\u{1}", line) - line_start);
    }
  }
}

TEST_CASE("thousands of wrong bindings.json or nest.toml keys are listed up to 20, then counted", "[cli][card]") {
  // 20,000 wrong keys took minutes of "did you mean" searches and printed
  // 20,000 warnings.
  std::string keys, toml_keys;
  for (int i = 0; i < 3000; ++i) {
    keys += "\n\"bogus." + std::to_string(i) + ".weight\": \"model.norm.weight\",";
    toml_keys += "\nextra" + std::to_string(i) + " = 1";
  }
  ScratchDir scratch;
  const std::string card =
      defective_card(scratch, "bindings.json", "\"norm.weight\": \"model.norm.weight\",",
                     "\"norm.weight\": \"model.norm.weight\"," + keys);
  std::string manifest = cli_test::read_file(card + "/nest.toml");
  manifest.replace(manifest.find("entry = \"forward\""), 17, "entry = \"forward\"" + toml_keys);
  std::ofstream(card + "/nest.toml") << manifest;
  const cli_test::Outcome outcome = run_linnet({"check", card});
  CHECK(outcome.status == 0);
  CHECK(contains(outcome.err, "warning E6003: and 2980 more keys of `" + card + "/bindings.json` name no parameter"));
  CHECK(contains(outcome.err, "warning E5001: and 2980 more keys nest.toml does not define"));
  CHECK(contains(outcome.err, "0 errors, 42 warnings"));
}

TEST_CASE("a card's source or bindings file that is a FIFO is E5001 at its position, never opened", "[cli][card]") {
  for (const char* file : {"src/lib.linnet", "bindings.json"}) {
    ScratchDir scratch;
    const std::string card = defective_card(scratch, "nest.toml", "[model]", "[model]");
    std::filesystem::remove(card + "/" + file);
    REQUIRE(::mkfifo((card + "/" + file).c_str(), 0600) == 0);
    every_command_says(card, std::string("` = \"") + file + "\" is a FIFO (named pipe), not a file");
  }
}
