// Every command that reads a program agrees with `check` about whether it
// is valid: broken programs x {check, explain, spec-test, run}. `check` and
// `explain` report the same code at the same position; `spec-test` passes a
// case expecting that code; `run`, which meets the defect as it executes
// the entry, fails with the same code. And the prelude: every function
// `check` accepts, `run` runs, and the names neither knows both refuse.
#include <regex>

#include "cli_test_util.hpp"
#include "linnet/syntax/prelude.hpp"

using namespace cli_test;

namespace {

struct Broken {
  const char* name;
  const char* body;       // the statements of `pub fn f(x: Tensor[4; f32]) -> Tensor[4; f32]`
  const char* code;       // what every command reports
  const char* position;   // "line:column" of the defect in the file
  const char* also;       // a phrase the message holds (a did-you-mean, ...)
};

// The body sits on line 4 of the file, after 4 spaces.
const Broken kBroken[] = {
    {"undefined function", "    return frobnicate(x)\n", "E1201", "4:12", "cannot find function `frobnicate`"},
    {"a function upstream lacks", "    return erf(x)\n", "E1201", "4:12", "did you mean `gelu_erf`?"},
    {"a misspelled prelude function", "    return sqrtt(x)\n", "E1201", "4:12", "did you mean `sqrt`?"},
    {"a prelude function without a signature", "    return pad(x)\n", "E2190", "4:12",
     "`pad` has no specified signature"},
    {"a kernel builtin outside a kernel", "    return load(x)\n", "E2127", "4:12", "available only in a kernel"},
    {"dtypes that do not match", "    let n: i32 = 1\n    return x * n\n", "E2103", "5:12", "dtypes do not match"},
    {"an undefined local", "    return x + y\n", "E1201", "4:16", "`y`"},
};

std::string program_text(const Broken& broken) {
  return std::string("module broken\n\npub entry f(x: Tensor[4; f32]) -> Tensor[4; f32] {\n") + broken.body + "}\n";
}

// "error E1201" ... "broken.linnet:4:12" in a command's stderr.
void expect_reported(const Outcome& outcome, const Broken& broken, const std::string& command) {
  INFO(command << ": " << outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, std::string("error ") + broken.code));
  CHECK(contains(outcome.err, std::string("broken.linnet:") + broken.position));
  CHECK(contains(outcome.err, broken.also));
}

}  // namespace

TEST_CASE("check, explain, spec-test and run agree on broken programs", "[agreement]") {
  for (const Broken& broken : kBroken) {
    DYNAMIC_SECTION(broken.name) {
      ScratchDir dir;
      const std::string file = dir.write("broken.linnet", program_text(broken));
      expect_reported(run_linnet({"check", file}), broken, "check");
      expect_reported(run_linnet({"explain", file, "--entry", "f"}), broken, "explain");
      expect_reported(run_linnet({"run", file, "--entry", "f", "--input", "x=[1,2,3,4]"}), broken, "run");

      dir.write("spec/manifest.toml", std::string("version = 1\n\n[[case]]\nfile = \"broken.linnet\"\nexpect = "
                                                  "\"error\"\ncode = \"") +
                                          broken.code + "\"\n");
      dir.write("spec/broken.linnet", program_text(broken));
      const Outcome spec = run_linnet({"spec-test", "--no-progress", dir.file("spec")});
      INFO(spec.out << spec.err);
      CHECK(spec.status == 0);
      CHECK(contains(spec.out, "1 passed, 0 failed"));
    }
  }
}

TEST_CASE("explain and run refuse a program check refuses in code the entry never reaches", "[agreement]") {
  // A function nothing calls: `run` never meets it, but `check` rejects the
  // program, and so do `explain` and `run`, before any work.
  ScratchDir dir;
  const std::string file = dir.write("broken.linnet", R"(module broken

fn unused(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return frobnicate(x)
}

pub entry f(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return x
}
)");
  const Outcome check = run_linnet({"check", file});
  const Outcome explain = run_linnet({"explain", file, "--entry", "f"});
  const Outcome run = run_linnet({"run", file, "--entry", "f", "--input", "x=[1,2,3,4]"});
  INFO(check.err << explain.err << run.err);
  CHECK(check.status == 1);
  CHECK(explain.status == 1);
  CHECK(run.status == 1);
  // The same diagnostic, word for word (check adds its summary line).
  const std::string diagnostic = check.err.substr(0, check.err.find("checked "));
  CHECK(contains(diagnostic, "error E1201"));
  CHECK(explain.err == diagnostic);
  CHECK(run.err == diagnostic);
  CHECK(run.out.empty());
}

namespace {

// A well-typed call of every prelude function, as the body of
// `pub fn f(x: Tensor[2, 3; f32], n: i32) -> T` (T as written here).
struct PreludeCall {
  const char* name;
  const char* result;
  const char* body;
};

const PreludeCall kPreludeCalls[] = {
    {"cast", "Tensor[2, 3; i32]", "return cast<i32>(x)"},
    {"reshape", "Tensor[3, 2; f32]", "return reshape(x, [3, 2])"},
    {"permute", "Tensor[3, 2; f32]", "return permute(x, [1, 0])"},
    {"broadcast_to", "Tensor[4, 2, 3; f32]", "return broadcast_to(x, [4, 2, 3])"},
    {"concat", "Tensor[4, 3; f32]", "return concat(x, x, axis = 0)"},
    {"iota", "Tensor[5; i64]", "return iota(5)"},
    {"fill", "Tensor[2; f32]", "return fill<f32>([2], 1.5)"},
    {"cumsum", "Tensor[2, 3; f32]", "return cumsum(x, axis = 1)"},
    {"exp", "Tensor[2, 3; f32]", "return exp(x)"},
    {"log", "Tensor[2, 3; f32]", "return log(x)"},
    {"sqrt", "Tensor[2, 3; f32]", "return sqrt(x)"},
    {"rsqrt", "Tensor[2, 3; f32]", "return rsqrt(x)"},
    {"sin", "Tensor[2, 3; f32]", "return sin(x)"},
    {"cos", "Tensor[2, 3; f32]", "return cos(x)"},
    {"tanh", "Tensor[2, 3; f32]", "return tanh(x)"},
    {"abs", "Tensor[2, 3; f32]", "return abs(x)"},
    {"min", "Tensor[2, 3; f32]", "return min(x, x)"},
    {"max", "Tensor[2, 3; f32]", "return max(x, x)"},
    {"shl", "i32", "return shl(n, n)"},
    {"shr", "i32", "return shr(n, n)"},
    {"select", "Tensor[2, 3; f32]", "return select(x > 0.0, x, x)"},
};

// The prelude names the specification gives no signature: both refuse them.
const char* const kUnspecified[] = {"pad", "gather", "scatter"};

std::string prelude_program(const char* result, const char* body) {
  return std::string("module calls\n\npub entry f(x: Tensor[2, 3; f32], n: i32) -> ") + result + " {\n    " + body +
         "\n}\n";
}

}  // namespace

TEST_CASE("check and run accept the same prelude functions", "[agreement][prelude]") {
  // One table covers the one list both read (linnet/syntax/prelude.hpp): a
  // function added there without a call here fails this test.
  std::vector<std::string> covered;
  for (const PreludeCall& call : kPreludeCalls) covered.push_back(call.name);
  for (const char* name : kUnspecified) covered.push_back(name);
  std::vector<std::string> listed = linnet::syntax::prelude_functions();
  std::sort(covered.begin(), covered.end());
  std::sort(listed.begin(), listed.end());
  CHECK(covered == listed);

  for (const PreludeCall& call : kPreludeCalls) {
    DYNAMIC_SECTION(call.name) {
      ScratchDir dir;
      const std::string file = dir.write("calls.linnet", prelude_program(call.result, call.body));
      const Outcome check = run_linnet({"check", file});
      INFO(check.err);
      CHECK(check.status == 0);
      const Outcome run =
          run_linnet({"run", file, "--entry", "f", "--input", "x=[[1,2,3],[4,5,6]]", "--input", "n=1"});
      INFO(run.err);
      CHECK(run.status == 0);
    }
  }
  for (const char* name : kUnspecified) {
    DYNAMIC_SECTION(name) {
      ScratchDir dir;
      const std::string file =
          dir.write("calls.linnet", prelude_program("Tensor[2, 3; f32]", (std::string("return ") + name + "(x)").c_str()));
      for (const char* command : {"check", "run"}) {
        const Outcome outcome =
            std::string(command) == "check"
                ? run_linnet({"check", file})
                : run_linnet({"run", file, "--entry", "f", "--input", "x=[[1,2,3],[4,5,6]]", "--input", "n=1"});
        INFO(command << ": " << outcome.err);
        CHECK(outcome.status == 1);
        CHECK(contains(outcome.err, "error E2190"));
        CHECK(contains(outcome.err, "has no specified signature"));
      }
    }
  }
}

TEST_CASE("explain refuses an --entry that names neither a function nor Block.method", "[agreement]") {
  ScratchDir dir;
  const std::string file =
      dir.write("ok.linnet", "module m\n\npub entry f(x: Tensor[4; f32]) -> Tensor[4; f32] {\n    return x\n}\n");
  CHECK(run_linnet({"explain", file, "--entry", "f"}).status == 0);
  for (const char* entry : {".f", "f.", "a.b.c"}) {
    const Outcome outcome = run_linnet({"explain", file, "--entry", entry});
    INFO(entry << ": " << outcome.err);
    CHECK(outcome.status == 2);
    CHECK(contains(outcome.err, "is neither FUNCTION nor Block.method"));
  }
}

TEST_CASE("check names a path that is no file or directory as what it is", "[agreement]") {
  // It said "no such file or directory" of /dev/null, which exists.
  const Outcome outcome = run_linnet({"check", "/dev/null"});
  INFO(outcome.err);
  CHECK(outcome.status == 2);
  CHECK(contains(outcome.err, "`/dev/null` is a character device, not a file"));
  CHECK_FALSE(contains(outcome.err, "no such file"));
}

namespace {

// Every command that evaluates or inspects a card, each asked for work
// that does not reach the card's `hidden_packed` entry, at the golden
// case's sizes (its meta.json through --bind-from), plus `extra`.
std::vector<std::vector<std::string>> card_commands(const std::string& card, const ScratchDir& out,
                                                    const std::vector<std::string>& extra) {
  const std::string meta = "golden/mistral-a/meta.json";
  std::vector<std::vector<std::string>> commands = {
      {"run", card, "--weights", "golden/mistral-a", "--input", "tokens=1,2", "--bind-from", meta},
      {"generate", card, "--weights", "golden/mistral-a", "--tokens", "1,2", "--max-new", "1", "--bind-from", meta},
      {"inspect", "--parameters", card, "--bind-from", meta},
      {"synth-weights", card, "--out", out.file("weights"), "--bind-from", meta},
      {"validate", card, "golden/mistral-a", "--no-progress"},
  };
  for (std::vector<std::string>& command : commands) command.insert(command.end(), extra.begin(), extra.end());
  return commands;
}

// check's diagnostics, without its summary line.
std::string check_diagnostics(const Outcome& check) { return check.err.substr(0, check.err.find("checked ")); }

// `text` without the note naming where the generics came from ("bound by
// ..."), which differs by command: --bind, --bind-from, a golden's meta.json.
std::string without_origin_note(const std::string& text) {
  std::string kept;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(start, end - start);
    if (line.find("bound by ") == std::string::npos) kept += line;
    start = end;
  }
  return kept;
}

}  // namespace

TEST_CASE("every command refuses a card with a defect in an entry it does not run, as check does",
          "[agreement][card]") {
  // `hidden_packed` is run by none of the commands below; before, only
  // `check` and `explain` refused the card, and the others ran it.
  ScratchDir scratch;
  const std::string card =
      defective_card(scratch, "src/lib.linnet", "return packed_states(tokens, positions, segments)",
                     "return packed_states(tokens, positions, segmnts)");
  const Outcome check = run_linnet({"check", card});
  INFO(check.err);
  REQUIRE(check.status == 1);
  const std::string diagnostic = check_diagnostics(check);
  CHECK(contains(diagnostic, "error E1201"));
  CHECK(contains(diagnostic, "segmnts"));
  CHECK(contains(diagnostic, "src/lib.linnet:"));
  std::vector<std::vector<std::string>> commands = card_commands(card, scratch, {});
  commands.push_back({"explain", card});
  for (const std::vector<std::string>& command : commands) {
    const Outcome outcome = run_linnet(command);
    INFO(command[0] << ": exit " << outcome.status << "\n" << outcome.err);
    CHECK(outcome.status == 1);
    // Word for word (validate prefixes its own line naming the card and the case).
    CHECK(contains(outcome.err, diagnostic));
    CHECK(outcome.out.empty());
  }
  CHECK_FALSE(std::filesystem::exists(scratch.file("weights")));
}

TEST_CASE("the checker runs at the generics the command uses, --bind-from's and --bind's", "[agreement][card]") {
  // H = 66 breaks the root's `H % Heads == 0` (Heads = 4 from meta.json):
  // `check` at the same generics and every command say it alike.
  ScratchDir scratch;
  const std::string card = copied_card(scratch);
  const Outcome check =
      run_linnet({"check", card, "--bind", "Vocab=512", "--bind", "H=64", "--bind", "Heads=4", "--bind", "KvHeads=2",
                  "--bind", "Inner=176", "--bind", "Layers=2", "--bind", "Batch=1", "--bind", "MaxSeq=64", "--bind",
                  "T=f32", "--bind", "H=66"});
  INFO(check.err);
  REQUIRE(check.status == 1);
  const std::string diagnostic = check_diagnostics(check);
  CHECK(contains(diagnostic, "error E2206: the bindings break `H % Heads == 0`"));
  // check and explain take the same file with --bind-from.
  CHECK(contains(diagnostic, "bound by the card's nest.toml and --bind"));
  const Outcome check_from =
      run_linnet({"check", card, "--bind-from", "golden/mistral-a/meta.json", "--bind", "H=66"});
  CHECK(check_from.status == 1);
  // The same diagnostic, whose note names the file the other generics came from.
  CHECK(without_origin_note(check_diagnostics(check_from)) == without_origin_note(diagnostic));
  CHECK(contains(check_from.err, "bound by the card's nest.toml, `--bind-from golden/mistral-a/meta.json` and --bind"));
  std::vector<std::vector<std::string>> commands = card_commands(card, scratch, {"--bind", "H=66"});
  commands.push_back({"explain", card, "--bind-from", "golden/mistral-a/meta.json", "--bind", "H=66"});
  for (const std::vector<std::string>& command : commands) {
    const Outcome outcome = run_linnet(command);
    INFO(command[0] << ": exit " << outcome.status << "\n" << outcome.err);
    CHECK(outcome.status == 1);
    CHECK(contains(without_origin_note(outcome.err), without_origin_note(diagnostic)));
    // validate takes the generics from the golden's meta.json, the others from --bind-from.
    CHECK(contains(outcome.err, command[0] == "validate" ? "golden/mistral-a/meta.json` (linnet_generics) and --bind"
                                                         : "`--bind-from golden/mistral-a/meta.json` and --bind"));
  }
  // The same card at sizes that hold runs.
  const Outcome run = run_linnet(card_commands(card, scratch, {}).front());
  INFO(run.err);
  CHECK(run.status == 0);
}

TEST_CASE("run checks a plain program as check does, with its --root and --bind", "[agreement]") {
  // `Scaled<N>` breaks its where clause only at N = 3.
  ScratchDir dir;
  const std::string block = dir.write("block.linnet", R"(module even

pub block Scaled<N: Dim>
where
    N % 2 == 0
{
    pub entry f(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return x
    }
}
)");
  const Outcome odd_check = run_linnet({"check", block, "--root", "Scaled", "--bind", "N=3"});
  const Outcome odd_run =
      run_linnet({"run", block, "--root", "Scaled", "--bind", "N=3", "--entry", "f", "--input", "x=[1,2,3]"});
  INFO(odd_check.err << odd_run.err);
  CHECK(odd_check.status == 1);
  CHECK(odd_run.status == 1);
  CHECK(contains(check_diagnostics(odd_check), "error E2206"));
  CHECK(odd_run.err == check_diagnostics(odd_check));
  const Outcome even_run =
      run_linnet({"run", block, "--root", "Scaled", "--bind", "N=2", "--entry", "f", "--input", "x=[1,2]"});
  INFO(even_run.err);
  CHECK(even_run.status == 0);

  // Module-level entries instantiate no block: their --bind values are the
  // entry's generics, not the `Cache` block's, and the program is checked
  // as `check FILE` checks it.
  const Outcome module_level = run_linnet(
      {"run", "docs/examples/model.linnet", "--entry", "loss", "--bind", "B=2", "--bind", "N=3", "--random-inputs"});
  INFO(module_level.err);
  CHECK(module_level.status == 0);
  CHECK(module_level.err.empty());
}

TEST_CASE("the checker's warnings are warnings in every command, and fail it under --strict", "[agreement][strict]") {
  // An unused local is a lint: check warns; --strict fails.
  ScratchDir dir;
  const std::string file = dir.write("lint.linnet", R"(module lint

pub entry f(x: Tensor[4; f32]) -> Tensor[4; f32] {
    let unused = x + x
    return x
}
)");
  const Outcome check = run_linnet({"check", file});
  INFO(check.err);
  REQUIRE(check.status == 0);
  REQUIRE(contains(check.err, "warning"));
  const std::string warning = check_diagnostics(check);
  const std::vector<std::vector<std::string>> commands = {
      {"run", file, "--entry", "f", "--input", "x=[1,2,3,4]"},
      {"explain", file, "--entry", "f"},
  };
  for (const std::vector<std::string>& command : commands) {
    const Outcome plain = run_linnet(command);
    INFO(command[0] << ": " << plain.err);
    CHECK(plain.status == 0);
    CHECK(plain.err == warning);
    std::vector<std::string> strict = command;
    strict.push_back("--strict");
    const Outcome failed = run_linnet(strict);
    INFO(command[0] << " --strict: " << failed.err);
    CHECK(failed.status == 1);
    CHECK(failed.err == warning);
    CHECK(failed.out.empty());
  }
  CHECK(run_linnet({"check", "--strict", file}).status == 1);
}
