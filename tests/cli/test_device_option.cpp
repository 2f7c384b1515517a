// `--device` on the commands: a clear exit-1 error where CUDA cannot run
// (not built, or no device), and `explain --device cuda` from the CUDA
// table's registrations, which needs a CUDA build but no GPU. What to expect
// is read from the same library calls the commands make, so the test holds
// on machines with and without CUDA.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "cli_test_util.hpp"
#include "linnet/nest/device.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using linnet::nest::Device;

namespace {

bool cuda_built() {
  try {
    linnet::nest::op_table_for(Device::Cuda);
    return true;
  } catch (const linnet::nest::DeviceUnavailable&) {
    return false;
  }
}

const std::vector<std::string> kGoldenRun = {"nest/mistral-7b-instruct-v0.3", "--weights", "golden/mistral-a",
                                             "--bind", "Vocab=512", "--bind", "H=64", "--bind", "Heads=4",
                                             "--bind", "KvHeads=2", "--bind", "Inner=176", "--bind", "Layers=2",
                                             "--bind", "Batch=1", "--bind", "MaxSeq=64", "--bind", "T=f32",
                                             "--input", "tokens=[[1,2,3]]", "--numerics", "equivalent"};

}  // namespace

TEST_CASE("--device cuda without a usable GPU is an error with exit status 1", "[cli][device]") {
  const std::optional<std::string> reason = linnet::nest::device_unavailable(Device::Cuda);
  if (!reason) {
    WARN("a CUDA device is usable here: the gpu suite covers --device cuda");
    return;
  }
  std::vector<std::string> arguments = {"run"};
  arguments.insert(arguments.end(), kGoldenRun.begin(), kGoldenRun.end());
  arguments.insert(arguments.end(), {"--device", "cuda"});
  const cli_test::Outcome outcome = run_linnet(arguments);
  INFO(outcome.err);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "error: --device cuda: "));
  CHECK(contains(outcome.err, cuda_built() ? "CUDA device" : "built without CUDA support"));
  CHECK(outcome.out.empty());  // nothing loaded, nothing ran

  const cli_test::Outcome validate =
      run_linnet({"validate", "nest/mistral-7b-instruct-v0.3", "golden/mistral-a", "--device", "cuda"});
  CHECK(validate.status == 1);
  CHECK(contains(validate.err, "error: --device cuda: "));
  const cli_test::Outcome generate =
      run_linnet({"generate", "nest/mistral-7b-instruct-v0.3", "--tokens", "1,2", "--device", "cuda"});
  CHECK(generate.status == 1);
  CHECK(contains(generate.err, "error: --device cuda: "));
}

TEST_CASE("--device names cpu or cuda; cpu runs as before", "[cli][device]") {
  std::vector<std::string> arguments = {"run"};
  arguments.insert(arguments.end(), kGoldenRun.begin(), kGoldenRun.end());
  arguments.insert(arguments.end(), {"--device", "cpu"});
  const cli_test::Outcome cpu = run_linnet(arguments);
  INFO(cpu.err);
  CHECK(cpu.status == 0);
  arguments.back() = "tpu";
  CHECK(run_linnet(arguments).status == 2);
}

TEST_CASE("explain --device cuda shows which ops run on the GPU and which on the CPU", "[cli][device]") {
  const cli_test::Outcome outcome =
      run_linnet({"explain", "nest/mistral-7b-instruct-v0.3", "--numerics", "equivalent", "--device", "cuda"});
  INFO(outcome.err);
  if (!cuda_built()) {
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "built without CUDA support"));
    return;
  }
  REQUIRE(outcome.status == 0);
  CHECK(contains(outcome.out, "op table cuda+cpu"));
  CHECK(contains(outcome.out, "std.nn.linear::linear"));
  CHECK(contains(outcome.out, "cuda native: bf16 kernel"));
  // Mistral's forward: every native op has a CUDA kernel but silu, whose
  // CPU kernel runs on the host as its body did before it had one.
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    if (contains(line, "cpu native")) CHECK(contains(line, "std.nn.activations::silu"));
  }
  // GPT-OSS decodes with the MXFP4 expert products, which have no CUDA
  // kernel: their CPU kernel reads host copies.
  const cli_test::Outcome decode = run_linnet(
      {"explain", "nest/gpt-oss-20b", "--entry", "decode", "--numerics", "equivalent", "--device", "cuda"});
  REQUIRE(decode.status == 0);
  CHECK(contains(decode.out, "cpu native: bf16 kernel"));
  CHECK(contains(decode.out, "inputs read on the host (no cuda kernel)"));
  const cli_test::Outcome exact = run_linnet({"explain", "nest/mistral-7b-instruct-v0.3", "--device", "cuda"});
  CHECK(exact.status == 0);
  CHECK_FALSE(contains(exact.out, "cuda native"));
}
