// The exit-status table of docs/commands.md, row by row, for every command:
// 0 success, 1 a problem with the input, 2 a wrong command line.
#include <sys/stat.h>

#include "cli_test_util.hpp"
#include "nest/test_run_golden.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

const std::string kQwen = "nest/qwen3-8b";

std::vector<std::string> with_golden(std::vector<std::string> arguments, const std::string& golden = "qwen3-a") {
  arguments.insert(arguments.end(), {"--weights", "golden/" + golden});
  for (const std::string& bind : nest_test::golden_binds(golden)) arguments.insert(arguments.end(), {"--bind", bind});
  return arguments;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect(const std::vector<std::string>& arguments, int status, const std::string& says = "") {
  const cli_test::Outcome outcome = run_linnet(arguments);
  std::string line = "linnet";
  for (const std::string& argument : arguments) line += " " + argument;
  INFO(line << "\nexit " << outcome.status << "\nstderr:\n" << outcome.err);
  CHECK(outcome.status == status);
  if (!says.empty()) CHECK(contains(outcome.err + outcome.out, says));
  CHECK(!contains(outcome.err, "what():"));
}

}  // namespace

TEST_CASE("exit 2: unknown commands and flags are named", "[cli][exit]") {
  expect({"chek", kQwen}, 2, "unknown command `chek`; did you mean `check`?");
  expect({}, 2);
  for (const char* command : {"check", "run", "explain", "validate", "inspect", "spec-test"}) {
    expect({command, "nest/qwen3-8b", "--no-such-flag"}, 2, "--no-such-flag");
  }
  expect({"generate", "nest/qwen3-8b", "--tokens", "1", "--no-such-flag"}, 2, "--no-such-flag");
  expect({"run", kQwen, "--entyr", "forward"}, 2, "did you mean `--entry`?");
}

TEST_CASE("exit 2: a path that does not exist", "[cli][exit]") {
  expect({"check", "no/such/path"}, 2);
  expect({"run", "no/such/card"}, 2);
  expect({"generate", "no/such/card", "--tokens", "1"}, 2);
  expect({"explain", "no/such/card"}, 2);
  expect({"validate", "no/such/card", "golden/qwen3-a"}, 2);
  expect({"validate", kQwen, "no/such/golden"}, 2);
  expect({"inspect", "--parameters", "no/such/card"}, 2);
  expect({"inspect", "--tokens", "no/such/file.linnet"}, 2);
  expect({"spec-test", "no/such/dir"}, 2);
  expect({"run", kQwen, "--weights", "no/such/weights", "--input", "tokens=1"}, 2, "--weights `no/such/weights`");
  expect({"generate", kQwen, "--weights", "no/such/weights", "--tokens", "1"}, 2, "--weights");
  expect({"inspect", "--parameters", kQwen, "--weights", "no/such/weights"}, 2, "--weights");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1", "--out", "/no/such/dir/x.npz"},
         2, "does not exist");
}

TEST_CASE("exit 2: an unknown entry, an unknown or repeated input", "[cli][exit]") {
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--entry", "forwrd", "--input", "tokens=1"}, 2,
         "did you mean `forward`?");
  expect({"explain", kQwen, "--entry", "forwrd"}, 2, "did you mean `forward`?");
  expect({"check", kQwen, "--entry", "forwrd"}, 2, "did you mean `forward`?");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokns=1"}, 2, "did you mean `tokens`?");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1", "--input", "tokens=2"}, 2,
         "given twice");
}

TEST_CASE("exit 2: malformed values", "[cli][exit]") {
  expect({"run", kQwen, "--bind", "Vocab"}, 2);
  expect({"check", kQwen, "--bind", "Vocab"}, 2);
  expect({"explain", kQwen, "--bind", "Vocab"}, 2);
  expect({"inspect", "--parameters", kQwen, "--bind", "Vocab"}, 2);
  for (const char* tokens : {"1,,2", "", "a", "-1", "1,2,"}) expect({"generate", kQwen, "--tokens", tokens}, 2);
  for (const char* temperature : {"nan", "inf", "-1", "1e-320"}) {
    expect({"generate", kQwen, "--tokens", "1", "--temperature", temperature}, 2, "--temperature");
  }
  expect({"generate", kQwen, "--tokens", "1", "--seed", "-1"}, 2);
  expect({"run", kQwen, "--seed", "-1"}, 2);
  expect({"run", kQwen, "--max-loop-iterations", "0"}, 2, "--max-loop-iterations");
  expect({"validate", kQwen, "golden/qwen3-a", "--max-abs", "nan"}, 2);
}

TEST_CASE("validate: --bind T= picks the dtype as --dtype does, never silently overridden", "[cli][exit]") {
  // T picks the reference logits: a `--bind T=bf16` that ran at f32 would
  // compare the wrong run and pass.
  const cli_test::Outcome bound = run_linnet({"validate", kQwen, "golden/qwen3-a", "--bind", "T=bf16"});
  INFO(bound.err);
  CHECK(bound.status == 0);
  CHECK(contains(bound.out, "T = bf16"));
  expect({"validate", kQwen, "golden/qwen3-a", "--dtype", "bf16", "--bind", "T=f32"}, 2,
         "--bind T=f32 disagrees with --dtype bf16");
  expect({"validate", kQwen, "golden/qwen3-a", "--bind", "T=f16"}, 2, "validate compares at T = f32 or bf16");
}

TEST_CASE("exit 2: numbers are read whole, never wrapped, saturated or taken as 0 when empty", "[cli][exit]") {
  // A seed is any 64-bit unsigned integer: 2^64 is not 2^64 - 1, -1 is not 2^64 - 1, `` is not 0.
  for (const char* seed : {"18446744073709551616", "-1", "", " 3", "0x10", "1e3", "+5", "nan"}) {
    expect({"generate", kQwen, "--tokens", "1", "--seed", seed}, 2, "--seed: `" + std::string(seed) + "` is not an integer");
    expect({"run", kQwen, "--seed", seed}, 2, "--seed:");
    expect({"synth-weights", kQwen, "--out", "/tmp/never-written", "--seed", seed}, 2, "--seed:");
  }
  for (const char* count : {"", "0", "-3", "9223372036854775808", "18446744073709551616", "1.5", "2e3"}) {
    expect({"generate", kQwen, "--tokens", "1", "--max-new", count}, 2, "--max-new");
    expect({"run", kQwen, "--max-loop-iterations", count}, 2, "--max-loop-iterations");
  }
  for (const char* id : {"", "-1", "2147483648", "4294967296"}) {
    expect({"generate", kQwen, "--tokens", "1", "--eos", id}, 2, "--eos: `" + std::string(id) + "`");
  }
  for (const char* number : {"", " ", "1,5", "0.5x"}) {
    expect({"generate", kQwen, "--tokens", "1", "--temperature", number}, 2, "--temperature: `");
    expect({"validate", kQwen, "golden/qwen3-a", "--max-abs", number}, 2, "--max-abs: `");
    expect({"validate", kQwen, "golden/qwen3-a", "--min-argmax", number}, 2, "--min-argmax: `");
  }
  // No 300-digit range from the option parser in any of these messages.
  const cli_test::Outcome eos = run_linnet({"generate", kQwen, "--tokens", "1", "--eos", "-1"});
  CHECK(!contains(eos.err, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"));
}

TEST_CASE("exit 2: --out in a directory nobody may create files in, found before the run", "[cli][exit]") {
  // /proc and /sys refuse new files even to root, whom access() tells they
  // are writable: the write used to fail only after the whole run (exit 1).
  for (const char* out : {"/proc/x.npz", "/sys/x.npy"}) {
    expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1", "--out", out}, 2,
           "--out `" + std::string(out) + "` is not writable");
    expect(with_golden({"generate", kQwen}) + std::vector<std::string>{"--tokens", "1", "--out", out}, 2,
           "is not writable");
  }
  // A writable place leaves no probe file behind.
  ScratchDir scratch;
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1", "--out", scratch.file("a.npz")},
         0);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(scratch.file("a.npz")).parent_path())) {
    CHECK(entry.path().filename() == "a.npz");
  }
}

TEST_CASE("exit 2: tokenize and inspect refuse empty id items, missing paths and directories", "[cli][exit]") {
  // --decode follows the --tokens rules: `1,,2` is not 1, 2 (it decoded as such).
  for (const char* ids : {"1,,2", "1,2,", ",1", "[1,2", "[[1]]", "[]", "-1"}) {
    expect({"tokenize", "golden/qwen3-a", "--decode", ids}, 2, "--decode `" + std::string(ids) + "`");
  }
  expect({"tokenize", "golden/qwen3-a", "--decode", "[1, 2, 3]"}, 0);
  expect({"tokenize", "golden/qwen3-a", "--decode", "1 2 3"}, 0);
  expect({"tokenize", "no/such/tokenizer", "hello"}, 2, "`no/such/tokenizer` does not exist");
  // A directory read as an empty source file (exit 0).
  expect({"inspect", "--tokens", "golden"}, 2, "`golden` is a directory");
  expect({"inspect", "--ast", "golden"}, 2, "`golden` is a directory");
}

TEST_CASE("exit 2: --bind-from names one card's generics", "[cli][exit]") {
  const std::string meta = "golden/qwen3-a/meta.json";
  expect({"check", kQwen, "nest/mistral-7b-instruct-v0.3", "--bind-from", meta}, 2, "the generics of one card");
  expect({"check", "docs/examples/model.linnet", "--bind-from", meta}, 2, "is no card directory");
  expect({"explain", "docs/examples/model.linnet", "--entry", "loss", "--bind-from", meta}, 2, "is no card directory");
  expect({"check", kQwen, "--bind-from", "golden/qwen3-a/absent.json"}, 2, "does not exist");
  expect({"explain", kQwen, "--bind-from", "golden/qwen3-a"}, 2, "is a directory, not a file");
  expect({"check", kQwen, "--bind-from", meta}, 0);
  expect({"explain", kQwen, "--bind-from", meta}, 0);
}

TEST_CASE("exit 2: a --script that does not exist or is a directory", "[cli][exit]") {
  // Both exited 1, the directory as "the script is not valid JSON (Empty)".
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--script", "no/such/calls.json"}, 2,
         "--script `no/such/calls.json` does not exist");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--script", "golden"}, 2,
         "--script `golden` is a directory");
}

TEST_CASE("exit 2: an empty name or path is refused, not taken as the option left out", "[cli][exit]") {
  // `--entry ''` ran the default entry, `--bind-from ''` bound nothing, `--out ''` wrote nothing.
  const std::string empty = "the value is empty";
  expect({"check", kQwen, "--root", ""}, 2, "--root: " + empty);
  expect({"check", kQwen, "--entry", ""}, 2, "--entry: " + empty);
  expect({"explain", kQwen, "--entry", ""}, 2, "--entry: " + empty);
  expect({"explain", kQwen, "--root", ""}, 2, "--root: " + empty);
  expect({"run", kQwen, "--entry", ""}, 2, "--entry: " + empty);
  expect({"run", kQwen, "--bind-from", ""}, 2, "--bind-from: " + empty);
  expect({"run", kQwen, "--out", ""}, 2, "--out: " + empty);
  expect({"run", kQwen, "--script", ""}, 2, "--script: " + empty);
  expect({"generate", kQwen, "--tokens", "1", "--out", ""}, 2, "--out: " + empty);
  expect({"inspect", "--parameters", kQwen, "--bind-from", ""}, 2, "--bind-from: " + empty);
  expect({"synth-weights", kQwen, "--out", ""}, 2, "--out: " + empty);
}

TEST_CASE("exit 1: --max-new as large as 2^63 - 1 is refused against MaxSeq, not wrapped", "[cli][exit]") {
  // prompt + max-new - 1 wrapped negative and passed the MaxSeq check, so the
  // run decoded to the end of the caches and failed deep in the card (E6001).
  expect(with_golden({"generate", kQwen}) + std::vector<std::string>{"--tokens", "1,2", "--max-new",
                                                                      "9223372036854775807"},
         1, "need more than 2^63 cache positions, but MaxSeq is bound to");
}

TEST_CASE("exit 1: problems with the input", "[cli][exit]") {
  // A generic the root block lacks, named by --bind (E2111), for every command that reads a card.
  expect({"check", kQwen, "--bind", "Vocabb=3"}, 1, "did you mean `Vocab`?");
  expect({"inspect", "--parameters", kQwen, "--bind", "Vocabb=3"}, 1, "did you mean `Vocab`?");
  expect({"explain", kQwen, "--bind", "Vocabb=3"}, 1, "did you mean `Vocab`?");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--bind", "Vocabb=3", "--input", "tokens=1"}, 1,
         "did you mean `Vocab`?");
  // The same for a plain program, whose entries are module-level or a block's:
  // E2111 and a did-you-mean from every command.
  ScratchDir scratch;
  const std::string module_entries = scratch.write("entries.linnet",
                                                   "module entries\n\npub entry main<Hidden: Dim>(x: Tensor[Hidden; f32]) "
                                                   "-> Tensor[Hidden; f32] {\n    return x\n}\n");
  const std::string block_entries = scratch.write("blocks.linnet",
                                                  "module blocks\n\npub block Model<Hidden: Dim> {\n    pub entry "
                                                  "forward(x: Tensor[Hidden; f32]) -> Tensor[Hidden; f32] {\n        "
                                                  "return x\n    }\n}\n");
  expect({"check", module_entries, "--bind", "Hiden=3"}, 1, "E2111: `--bind Hiden=3`: `entries` has no generic `Hiden`; did you mean `Hidden`?");
  expect({"check", module_entries, "--bind", "Unknown=1"}, 1, "E2111: `--bind Unknown=1`: `entries` has no generic `Unknown`");
  expect({"run", module_entries, "--bind", "Hiden=3", "--input", "x=1,2,3"}, 1, "did you mean `Hidden`?");
  expect({"explain", module_entries, "--entry", "main", "--bind", "Hiden=3"}, 1, "did you mean `Hidden`?");
  expect({"check", block_entries, "--bind", "Hidden=3", "--bind", "Hiden=3"}, 1,
         "E2111: `--bind Hiden=3`: `blocks::Model` has no generic `Hiden`; did you mean `Hidden`?");
  expect({"run", block_entries, "--root", "Model", "--bind", "Hiden=3", "--input", "x=1,2,3"}, 1, "did you mean `Hidden`?");
  // A runtime limit (E6005) and a value that does not fit its parameter.
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--bind", "MaxSeq=9223372036854775807", "--input",
                                                                 "tokens=1"},
         1, "E6005");
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1.5"}, 1);
  // A program `check` refuses, in a function the entry never calls: refused
  // before any work (test_command_agreement.cpp: every command, and cards).
  const std::string unreached = scratch.write("unreached.linnet",
                                              "module unreached\n\nfn never(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
                                              "    return frobnicate(x)\n}\n\npub entry main(x: Tensor[4; f32]) -> "
                                              "Tensor[4; f32] {\n    return x\n}\n");
  expect({"check", unreached}, 1, "error E1201: cannot find function `frobnicate`");
  expect({"run", unreached, "--entry", "main", "--input", "x=[1,2,3,4]"}, 1,
         "error E1201: cannot find function `frobnicate`");
  expect({"explain", unreached, "--entry", "main"}, 1, "error E1201: cannot find function `frobnicate`");
  // Warnings under --strict (an unused local, W1002); without it they pass.
  const std::string lint = scratch.write("lint.linnet",
                                         "module lint\n\npub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
                                         "    let unused = x + x\n    return x\n}\n");
  const std::vector<std::vector<std::string>> lint_commands = {
      {"check", lint},
      {"run", lint, "--entry", "main", "--input", "x=[1,2,3,4]"},
      {"explain", lint, "--entry", "main"},
  };
  for (const std::vector<std::string>& command : lint_commands) {
    expect(command, 0, "warning W1002");
    expect(command + std::vector<std::string>{"--strict"}, 1, "warning W1002");
  }
}

TEST_CASE("exit 0: success", "[cli][exit]") {
  expect({"check", kQwen}, 0, "checked ");
  expect({"inspect", "--parameters", kQwen}, 0);
  expect({"explain", kQwen}, 0);
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=[[1,2,3]]"}, 0, "forward:");
  expect(with_golden({"generate", kQwen}) + std::vector<std::string>{"--tokens", "1,2", "--max-new", "2"}, 0);
  expect({"--version"}, 0, "linnet");
}

TEST_CASE("exit 2: a path that exists but is no file to read is said to be what it is, and a FIFO never blocks",
          "[cli][exit]") {
  // `check /dev/null` said "no such file"; a FIFO as --weights or --script
  // would have waited forever for a writer.
  ScratchDir scratch;
  const std::string fifo = scratch.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string card = "nest/mistral-7b-instruct-v0.3";
  for (const std::string& path : {std::string("/dev/null"), fifo}) {
    const std::string kind = path == fifo ? "is a FIFO (named pipe), not a" : "is a character device, not a";
    expect({"check", path}, 2, "`" + path + "` " + kind + " file");
    expect({"explain", path}, 2, kind);
    expect({"run", card, "--weights", path, "--input", "tokens=1"}, 2, "--weights `" + path + "` " + kind);
    expect({"generate", card, "--weights", path, "--tokens", "1"}, 2, "--weights `" + path + "` " + kind);
    expect({"inspect", "--parameters", card, "--weights", path}, 2, kind);
    expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--script", path}, 2, "--script `" + path + "` " + kind);
    expect({"run", card, "--bind-from", path}, 2, "--bind-from `" + path + "` " + kind);
    expect({"tokenize", path, "hello"}, 2, kind);
    expect({"validate", card, path}, 2, kind + " directory");
    expect({"inspect", "--tokens", path}, 2, kind);
  }
  // --out a FIFO: the writability probe waited for a reader forever.
  REQUIRE(::mkfifo((fifo + ".npz").c_str(), 0600) == 0);
  expect(with_golden({"run", kQwen}) + std::vector<std::string>{"--input", "tokens=1", "--out", fifo + ".npz"}, 2,
         "--out `" + fifo + ".npz` is a FIFO (named pipe), not a file");
  // A card whose nest.toml is a FIFO: E5001, at once.
  const std::string fifo_card = scratch.file("card");
  std::filesystem::copy(cli_test::source_path(card), fifo_card, std::filesystem::copy_options::recursive);
  std::filesystem::remove(fifo_card + "/nest.toml");
  REQUIRE(::mkfifo((fifo_card + "/nest.toml").c_str(), 0600) == 0);
  expect({"check", fifo_card}, 1, "is a FIFO");
  expect({"run", fifo_card}, 1, "is a FIFO");
  // An unreadable file (unless root, whom permissions do not stop).
  if (::geteuid() != 0) {
    const std::string locked = scratch.write("locked.linnet", "module locked\n");
    REQUIRE(::chmod(locked.c_str(), 0) == 0);
    expect({"check", locked}, 2, "cannot be read: Permission denied");
  }
}
