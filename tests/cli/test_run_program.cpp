// `linnet run` on plain programs (a .linnet file, no card, no checkpoint):
// module-level entries, block entries with --root, random inputs, and the
// mistakes a user makes, with their exit statuses (0 ok, 1 a problem with
// the program or its inputs, 2 a bad command line).
#include "cli_test_util.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/tensor/npz.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;
using linnet::tensor::Tensor;

namespace {

// A module-level entry whose generics come from its inputs, and one that
// hands back what it is given (to look at random inputs).
const char* const kModuleProgram = R"(module demo.plain

pub entry scale_rows<R: Dim, C: Dim>(x: Tensor[R, C; f32], factor: f32) -> Tensor[R, C; f32] {
    return x * factor
}

pub entry echo<N: Dim>(
    values: Tensor[N, 3; f32],
    counts: Tensor[N; i32],
    flags: Tensor[N; bool],
    pos: i64,
) -> (Tensor[N, 3; f32], Tensor[N; i32], Tensor[N; bool], i64) {
    return (values, counts, flags, pos)
}
)";

// A block with state that accumulates across calls; one with an optional
// parameter (runs without weights); one with a required parameter.
const char* const kBlockProgram = R"(module demo.blocks

pub block Accumulator<N: Dim> {
    state total: Tensor[N; f32]

    pub entry add(x: Tensor[N; f32]) -> Tensor[N; f32] {
        total = total + x
        return total
    }
}

pub block Shifted<N: Dim> {
    param shift: Tensor[N; f32]? = none

    pub entry run(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return match shift {
            some(s) => x + s
            none => x * 2.0
        }
    }
}

pub block Scaled<N: Dim> {
    param scale: Tensor[N; f32]

    pub entry run(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return x * scale
    }
}
)";

std::vector<float> floats_of(const linnet::tensor::NpyArray& array) {
  return linnet::nest::tensor_from_npy(array).to_vector<float>();
}

}  // namespace

TEST_CASE("linnet run PROGRAM: a module-level entry, generics inferred from its inputs", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string program = scratch.write("plain.linnet", kModuleProgram);
  const std::string out = scratch.file("out.npz");
  const cli_test::Outcome outcome = run_linnet({"run", program, "--entry", "scale_rows", "--input", "x=[[1, 2], [3, 4]]",
                                                "--input", "factor=2.5", "--out", out, "--stats"});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(contains(outcome.out, "program: " + program));
  CHECK(contains(outcome.out, "module: demo.plain"));
  CHECK(contains(outcome.out, "scale_rows"));
  CHECK(contains(outcome.out, "wrote 1 array to " + out));
  CHECK(contains(outcome.out, "call scale_rows"));
  const auto arrays = linnet::tensor::read_npz(out);
  REQUIRE(arrays.count("scale_rows") == 1);
  CHECK(arrays.at("scale_rows").shape == std::vector<int64_t>{2, 2});
  CHECK(floats_of(arrays.at("scale_rows")) == std::vector<float>{2.5f, 5.0f, 7.5f, 10.0f});
}

TEST_CASE("linnet run PROGRAM --root: a block entry whose state carries between calls", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string program = scratch.write("blocks.linnet", kBlockProgram);
  const std::string script =
      scratch.write("calls.json", R"([{"entry": "add", "inputs": {"x": [1, 2, 3]}},
                                      {"entry": "add", "inputs": {"x": [10, 20, 30]}},
                                      {"reset": true, "entry": "add", "inputs": {"x": [5, 5, 5]}}])");
  const std::string out = scratch.file("out.npz");
  const cli_test::Outcome outcome =
      run_linnet({"run", program, "--root", "Accumulator", "--bind", "N=3", "--script", script, "--out", out});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(contains(outcome.out, "block: demo.blocks::Accumulator"));
  const auto arrays = linnet::tensor::read_npz(out);
  REQUIRE(arrays.count("0_add") == 1);
  REQUIRE(arrays.count("1_add") == 1);
  REQUIRE(arrays.count("2_add") == 1);
  CHECK(floats_of(arrays.at("0_add")) == std::vector<float>{1, 2, 3});
  CHECK(floats_of(arrays.at("1_add")) == std::vector<float>{11, 22, 33});  // the state kept the first call's sum
  CHECK(floats_of(arrays.at("2_add")) == std::vector<float>{5, 5, 5});     // after the reset
}

TEST_CASE("linnet run PROGRAM --root: an optional parameter is absent without weights", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string program = scratch.write("blocks.linnet", kBlockProgram);
  const std::string out = scratch.file("out.npy");
  const cli_test::Outcome outcome = run_linnet(
      {"run", program, "--root", "Shifted", "--bind", "N=2", "--entry", "run", "--input", "x=1,-3", "--out", out});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(floats_of(linnet::tensor::read_npy(out)) == std::vector<float>{2, -6});
}

TEST_CASE("linnet run PROGRAM: random inputs suit their dtype and repeat with the seed", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string program = scratch.write("plain.linnet", kModuleProgram);
  auto run_with_seed = [&](const std::string& seed, const std::string& out) {
    const cli_test::Outcome outcome = run_linnet({"run", program, "--entry", "echo", "--bind", "N=6", "--random-inputs",
                                                  "--seed", seed, "--out", out});
    INFO(outcome.err);
    REQUIRE(outcome.status == 0);
    return linnet::tensor::read_npz(out);
  };
  const auto first = run_with_seed("7", scratch.file("a.npz"));
  const auto again = run_with_seed("7", scratch.file("b.npz"));
  const auto other = run_with_seed("8", scratch.file("c.npz"));

  REQUIRE(first.count("echo_0") == 1);
  const std::vector<float> values = floats_of(first.at("echo_0"));
  REQUIRE(values.size() == 18);
  for (float value : values) {
    CHECK(value >= -1.0f);
    CHECK(value < 1.0f);
  }
  const std::vector<int64_t> counts = linnet::nest::tensor_from_npy(first.at("echo_1")).to_vector<int64_t>();
  REQUIRE(counts.size() == 6);
  for (int64_t count : counts) {
    CHECK(count >= 0);
    CHECK(count < 8);
  }
  CHECK(first.at("echo_2").dtype == linnet::tensor::DType::Bool);
  // An integer scalar is a position below the smallest bound dimension (N = 6).
  const int64_t position = linnet::nest::tensor_from_npy(first.at("echo_3")).to_vector<int64_t>().front();
  CHECK(position >= 0);
  CHECK(position < 6);

  for (const char* name : {"echo_0", "echo_1", "echo_2", "echo_3"}) {
    CHECK(first.at(name).data == again.at(name).data);
  }
  CHECK(first.at("echo_0").data != other.at("echo_0").data);

  // `--input NAME=random` for one input, a literal for the others.
  const cli_test::Outcome mixed =
      run_linnet({"run", program, "--entry", "scale_rows", "--bind", "R=2", "--bind", "C=3", "--input", "x=random",
                  "--input", "factor=0", "--seed", "7", "--out", scratch.file("d.npy")});
  INFO(mixed.err);
  REQUIRE(mixed.status == 0);
  CHECK(floats_of(linnet::tensor::read_npy(scratch.file("d.npy"))) == std::vector<float>(6, 0.0f));
}

TEST_CASE("linnet run PROGRAM: mistakes are diagnostics", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string plain = scratch.write("plain.linnet", kModuleProgram);
  const std::string blocks = scratch.write("blocks.linnet", kBlockProgram);

  SECTION("a block that needs weights, run without them, lists what it needs") {
    const cli_test::Outcome outcome =
        run_linnet({"run", blocks, "--root", "Scaled", "--bind", "N=4", "--entry", "run", "--input", "x=random"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E6003: `demo.blocks::Scaled` needs weights for 1 tensor"));
    CHECK(contains(outcome.err, "needs param `scale`: f32[4]"));
    CHECK(contains(outcome.err, "--weights"));
    CHECK(outcome.out.empty());
  }
  SECTION("an --input the entry does not take is a command-line mistake") {
    const cli_test::Outcome outcome =
        run_linnet({"run", plain, "--entry", "scale_rows", "--input", "y=1", "--input", "factor=1"});
    CHECK(outcome.status == 2);
    CHECK(contains(outcome.err, "error: `--input y=...`: entry `scale_rows` has no parameter `y`; it takes x, factor"));
  }
  SECTION("a random input whose shape the generics do not decide") {
    const cli_test::Outcome outcome = run_linnet({"run", plain, "--entry", "scale_rows", "--random-inputs"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "input `x`: cannot make a random `Tensor[R, C; f32]`: `R` has no value"));
    CHECK(contains(outcome.err, "--bind R=..."));
  }
  SECTION("no --entry: the entries are listed") {
    const cli_test::Outcome outcome = run_linnet({"run", plain});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "`demo.plain` has entries `scale_rows` and `echo`; pass --entry NAME"));
  }
  SECTION("block entries without --root: the blocks are named") {
    const cli_test::Outcome outcome = run_linnet({"run", blocks, "--entry", "add"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "the program has no module-level entries"));
    CHECK(contains(outcome.err, "Accumulator (add)"));
    CHECK(contains(outcome.err, "--root BLOCK"));
  }
  SECTION("a missing generic of the root block") {
    const cli_test::Outcome outcome = run_linnet({"run", blocks, "--root", "Accumulator", "--entry", "add"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "`demo.blocks::Accumulator` needs a value for generic `N`"));
  }
  SECTION("misspelled --entry and --root get the nearest name") {
    const cli_test::Outcome entry = run_linnet({"run", plain, "--entry", "scale_row"});
    CHECK(entry.status == 2);
    CHECK(contains(entry.err, "has no entry `scale_row`; did you mean `scale_rows`?"));
    const cli_test::Outcome root = run_linnet({"run", blocks, "--root", "Scaeld"});
    CHECK(contains(root.err, "the program declares no block `Scaeld`; did you mean `Scaled`?"));
    // Messages about a plain program never mention cards or nest.toml.
    CHECK_FALSE(contains(entry.err + root.err, "nest.toml"));
    CHECK_FALSE(contains(entry.err + root.err, "card"));
  }
  SECTION("command-line mistakes") {
    CHECK(run_linnet({"run", scratch.write("notes.txt", "hello")}).status == 2);
    CHECK(run_linnet({"run", "nest/mistral-7b-instruct-v0.3", "--root", "Model"}).status == 2);
  }
}

TEST_CASE("a misspelled prelude function gets a did-you-mean from run and check", "[cli][run][program]") {
  ScratchDir scratch;
  const std::string program = scratch.write("typo.linnet", R"(module typo

pub entry main<H: Dim>(x: Tensor[H; f32]) -> Tensor[H; f32] {
    return rsqrtt(x)
}
)");
  const cli_test::Outcome run = run_linnet({"run", program, "--entry", "main", "--input", "x=1,2"});
  INFO(run.err);
  CHECK(run.status == 1);
  const cli_test::Outcome check = run_linnet({"check", program});
  INFO(check.err);
  CHECK(check.status == 1);
  CHECK(contains(check.err, "help: did you mean `rsqrt`?"));
  // run checks the program as check does, before running it: the same diagnostic.
  CHECK(run.err == check.err.substr(0, check.err.find("checked ")));
}
