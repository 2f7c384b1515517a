// A card run as two MPI processes (mpirun -np 2 ... --bind Shards=2): the
// same forward logits as one process, one diagnostic for a failure on
// every rank, and rank 0 alone at the terminal. Built only with MPI
// (LINNET_MPIEXEC is the launcher CMake found); the one-process refusals
// need no MPI.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cli_test_util.hpp"
#include "linnet/tensor/npz.hpp"

using cli_test::run_linnet;
using cli_test::source_path;

namespace {

// The tiny Qwen3 golden checkpoint in f32, as `run` flags.
std::vector<std::string> qwen3_f32(const std::string& tokens) {
  return {"run",          source_path("nest/qwen3-8b"), "--weights",      source_path("golden/qwen3-a"),
          "--bind",       "Vocab=512",                  "--bind",         "H=64",
          "--bind",       "Heads=4",                    "--bind",         "KvHeads=2",
          "--bind",       "HeadDim=32",                 "--bind",         "Inner=160",
          "--bind",       "Layers=2",                   "--bind",         "MaxSeq=64",
          "--bind",       "T=f32",                      "--input",        "tokens=" + tokens};
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("one process refuses a Shards above 1", "[cli][mpi]") {
  std::vector<std::string> arguments = qwen3_f32("[[1,2,3]]");
  arguments.insert(arguments.end(), {"--bind", "Shards=2"});
  const cli_test::Outcome outcome = run_linnet(arguments);
  CHECK(outcome.status == 1);
  CHECK(outcome.err.find("error E2111: `Shards` is 2, but this run has 1 process") != std::string::npos);
}

#ifdef LINNET_MPIEXEC

namespace {

// `mpirun -np 2 linnet ARGS...` from the repository root; with
// `rank_one_arguments`, rank 1 runs those instead (`-np 1 ... : -np 1 ...`).
cli_test::Outcome run_two_processes(const std::vector<std::string>& arguments,
                                    const std::vector<std::string>& rank_one_arguments = {}) {
  cli_test::ScratchDir scratch;
  auto linnet_with = [](const std::vector<std::string>& list) {
    std::string text = cli_test::quote(LINNET_BINARY);
    for (const std::string& argument : list) text += " " + cli_test::quote(argument);
    return text;
  };
  std::string command = "cd " + cli_test::quote(LINNET_SOURCE_DIR) + " && " + cli_test::quote(LINNET_MPIEXEC) +
                        " --oversubscribe --allow-run-as-root ";
  command += rank_one_arguments.empty()
                 ? "-np 2 " + linnet_with(arguments)
                 : "-np 1 " + linnet_with(arguments) + " : -np 1 " + linnet_with(rank_one_arguments);
  command += " >" + cli_test::quote(scratch.file("out")) + " 2>" + cli_test::quote(scratch.file("err")) + " </dev/null";
  const int raw = std::system(command.c_str());
  cli_test::Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = cli_test::read_file(scratch.file("out"));
  outcome.err = cli_test::read_file(scratch.file("err"));
  return outcome;
}

std::vector<float> floats_of(const linnet::tensor::NpyArray& array) {
  REQUIRE(array.dtype == linnet::tensor::DType::F32);
  std::vector<float> values(array.element_count());
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

}  // namespace

TEST_CASE("two processes compute the one-process f32 forward within 1e-5", "[cli][mpi]") {
  cli_test::ScratchDir scratch;
  const std::string tokens = "[[5,17,300,2,9,77,431,12,0,511]]";
  std::vector<std::string> one = qwen3_f32(tokens);
  one.insert(one.end(), {"--out", scratch.file("one.npy")});
  std::vector<std::string> two = qwen3_f32(tokens);
  two.insert(two.end(), {"--bind", "Shards=2", "--out", scratch.file("two.npy")});
  // Rank 1 is told another --out, to see that it writes nothing.
  std::vector<std::string> rank_one = qwen3_f32(tokens);
  rank_one.insert(rank_one.end(), {"--bind", "Shards=2", "--out", scratch.file("rank1.npy")});

  const cli_test::Outcome single = run_linnet(one);
  REQUIRE(single.status == 0);
  const cli_test::Outcome split = run_two_processes(two, rank_one);
  INFO(split.err);
  REQUIRE(split.status == 0);
  // Rank 0 alone prints and writes.
  CHECK(count_of(split.out, "card: qwen3-8b") == 1);
  CHECK_FALSE(std::filesystem::exists(scratch.file("rank1.npy")));
  CHECK(split.out.find("process 0 of 2: its part of") != std::string::npos);

  const linnet::tensor::NpyArray expected = linnet::tensor::read_npy(scratch.file("one.npy"));
  const linnet::tensor::NpyArray actual = linnet::tensor::read_npy(scratch.file("two.npy"));
  REQUIRE(actual.shape == expected.shape);
  const std::vector<float> a = floats_of(expected);
  const std::vector<float> b = floats_of(actual);
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, static_cast<double>(std::abs(a[i] - b[i])));
  CHECK(largest <= 1e-5);
}

TEST_CASE("a failure on every process is one diagnostic and one exit status", "[cli][mpi]") {
  // Two processes without --bind Shards=2.
  const cli_test::Outcome unbound = run_two_processes(qwen3_f32("[[1,2,3]]"));
  CHECK(unbound.status == 1);
  CHECK(count_of(unbound.err, "error E2111") == 1);
  CHECK(unbound.err.find("`Shards` is not bound") != std::string::npos);

  // A card without Shards cannot split.
  const cli_test::Outcome no_shards =
      run_two_processes({"validate", source_path("nest/gpt-oss-20b"), source_path("golden/gptoss-a")});
  CHECK(no_shards.status == 1);
  CHECK(count_of(no_shards.err, "has no generic `Shards`") == 1);
}

TEST_CASE("a failure on one process while the other waits in a collective stops both, with its diagnostic",
          "[cli][mpi]") {
  // Rank 1 is given a token past the vocabulary: it fails in the embedding
  // while rank 0 waits for it in the first all_reduce.
  std::vector<std::string> fine = qwen3_f32("[[1,2,3]]");
  fine.insert(fine.end(), {"--bind", "Shards=2"});
  std::vector<std::string> failing = qwen3_f32("[[1,2,700]]");
  failing.insert(failing.end(), {"--bind", "Shards=2"});
  const cli_test::Outcome outcome = run_two_processes(fine, failing);
  CHECK(outcome.status == 1);
  CHECK(count_of(outcome.err, "error E6001") == 1);
  CHECK(outcome.err.find("value 700") != std::string::npos);
  CHECK(outcome.err.find("process 1 of 2 failed while the others wait") != std::string::npos);
}

#endif
