// A runtime error about a value given on the command line names the
// `--input` that gave it, not only the entry's declaration: an argument of
// the wrong shape, a token id past the vocabulary, a position past the
// model's tables.
#include "cli_test_util.hpp"

using cli_test::contains;
using cli_test::run_linnet;

namespace {

std::vector<std::string> run_golden(const std::vector<std::string>& extra) {
  std::vector<std::string> arguments{"run", "nest/mistral-7b-instruct-v0.3", "--bind-from",
                                     "golden/mistral-a/meta.json", "--weights", "golden/mistral-a"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return arguments;
}

}  // namespace

TEST_CASE("run: a token id past the vocabulary names its --input", "[cli][origins]") {
  const cli_test::Outcome outcome = run_linnet(run_golden({"--input", "tokens=1,2,99999"}));
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "E6001"));
  CHECK(contains(outcome.err, "the value 99999 is in the input `tokens` at [0, 2], given by `--input tokens=1,2,99999`"));
}

TEST_CASE("run: a position past the model's tables names its --input", "[cli][origins]") {
  const cli_test::Outcome outcome =
      run_linnet(run_golden({"--entry", "decode", "--input", "token=[[1]]", "--input", "pos=100"}));
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "E6001"));
  CHECK(contains(outcome.err, "the value 100 is the input `pos`, given by `--input pos=100`"));
}

TEST_CASE("run: an input of the wrong shape names its --input", "[cli][origins]") {
  const cli_test::Outcome outcome =
      run_linnet(run_golden({"--entry", "decode", "--input", "token=[[1,2]]", "--input", "pos=1"}));
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "argument `token` of `llama::Model.decode` does not fit its parameter"));
  CHECK(contains(outcome.err, "`token` was given by `--input token=[[1,2]]`"));
}

TEST_CASE("run: a long --input is cut short in the note", "[cli][origins]") {
  std::string tokens = "tokens=";
  for (int i = 0; i < 40; ++i) tokens += "1,";
  tokens += "70000";
  const cli_test::Outcome outcome = run_linnet(run_golden({"--input", tokens}));
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "the value 70000 is in the input `tokens` at [0, 40], given by `--input tokens=1,1,"));
  CHECK(contains(outcome.err, "...`"));
}

TEST_CASE("run --script: an input's value is traced to its call in the script", "[cli][origins]") {
  cli_test::ScratchDir scratch;
  const std::string script = scratch.write(
      "calls.json", R"([{"entry": "decode", "inputs": {"token": [[1]], "pos": 0}},
                        {"entry": "decode", "inputs": {"token": [[2]], "pos": 100}}])");
  const cli_test::Outcome outcome = run_linnet(run_golden({"--script", script}));
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "the value 100 is the input `pos`, given by `script call 1's \"inputs\".\"pos\"`"));
}

TEST_CASE("run: an empty input is named where the entry fails on it", "[cli][origins]") {
  // `tokens=[]` is a [1, 0] tensor; the card fails in a softmax over the
  // empty axis, far from the command line.
  for (const char* empty : {"tokens=[]", "tokens=[[]]"}) {
    const cli_test::Outcome outcome = run_linnet(run_golden({"--input", empty}));
    INFO(outcome.err);
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "note: the input `tokens` has no elements (shape [1, 0]), given by `--input " +
                                    std::string(empty) + "`"));
  }
}
