// `linnet run`, `linnet generate` and `linnet inspect --parameters` as a user
// runs them: on the cards and the golden checkpoints, with their exit
// statuses (0 ok, 1 problems with the input, 2 a bad command line).
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "cli_test_util.hpp"
#include "linnet/nest/inputs.hpp"
#include "linnet/tensor/npz.hpp"
#include "nest/test_run_golden.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

const std::string kMistral = "nest/mistral-7b-instruct-v0.3";

// `run`/`generate` arguments for a card on a golden checkpoint.
std::vector<std::string> golden_arguments(const std::string& command, const std::string& card,
                                          const std::string& golden) {
  std::vector<std::string> arguments{command, card, "--weights", "golden/" + golden};
  for (const std::string& bind : nest_test::golden_binds(golden)) {
    arguments.push_back("--bind");
    arguments.push_back(bind);
  }
  return arguments;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("linnet run: forward on a golden checkpoint, written to .npz", "[cli][run]") {
  ScratchDir scratch;
  const linnet::tensor::Tensor tokens = nest_test::expected_tensor("mistral-a", "tokens");
  const std::string tokens_file = scratch.file("tokens.npy");
  linnet::tensor::write_npy(tokens_file, linnet::nest::npy_from_tensor(tokens));
  const std::string out = scratch.file("out.npz");
  const cli_test::Outcome outcome = run_linnet(golden_arguments("run", kMistral, "mistral-a") +
                                               std::vector<std::string>{"--input", "tokens=@" + tokens_file, "--out",
                                                                        out, "--stats"});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(contains(outcome.out, "card: mistral-7b-instruct-v0.3"));
  CHECK(contains(outcome.out, "bound 21 tensors (stored as 21 bf16); config dtype bfloat16, rope theta 1e+06"));
  // At T=f32 the norms' weights are widened copies; the matrices stay as stored.
  CHECK(contains(outcome.out, "5 widened to a copy"));
  CHECK(contains(outcome.out, "16 kept as stored and read as f32"));
  CHECK(contains(outcome.out, "forward: f32[1, 16, 512]"));
  CHECK(contains(outcome.out, "[0, 15] top-5:"));
  CHECK(contains(outcome.out, "peak resident memory"));
  CHECK(contains(outcome.out, "call forward"));
  // The kernels' time by op, the largest first: every native op of the
  // forward with its number of runs (2 layers of 7 products and the head).
  const size_t kernels = outcome.out.find("  native kernel time ");
  REQUIRE(kernels != std::string::npos);
  std::istringstream lines(outcome.out.substr(outcome.out.find('\n', kernels) + 1));
  std::map<std::string, std::string> runs_by_op;
  double previous_seconds = 1e30;
  for (std::string line; std::getline(lines, line) && line.rfind("    ", 0) == 0;) {
    std::istringstream fields(line);
    std::string op, seconds, unit, in, runs;
    fields >> op >> seconds >> unit >> in >> runs;
    CHECK(std::stod(seconds) <= previous_seconds);
    previous_seconds = std::stod(seconds);
    runs_by_op[op] = runs;
  }
  CHECK(runs_by_op["std.nn.linear::linear"] == "15");
  CHECK(runs_by_op["std.nn.embedding::embedding"] == "1");
  CHECK(runs_by_op.count("std.nn.norm::rms_norm") == 1);
  const auto arrays = linnet::tensor::read_npz(out);
  REQUIRE(arrays.count("forward") == 1);
  const double difference = nest_test::max_abs_difference(linnet::nest::tensor_from_npy(arrays.at("forward")),
                                                          nest_test::expected_tensor("mistral-a", "logits_f32"));
  CHECK(difference < 1e-4);
  // Outputs are stored, not deflated (as numpy.savez): the local header's
  // compression method (bytes 8-9) is 0 and the file holds every byte.
  std::ifstream archive(out, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(archive)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 10);
  CHECK(bytes[8] == 0);
  CHECK(bytes[9] == 0);
  CHECK(bytes.size() > size_t{16} * 512 * sizeof(float));
}

TEST_CASE("linnet run: literal inputs, another entry, a bf16 run", "[cli][run]") {
  const cli_test::Outcome outcome = run_linnet(
      golden_arguments("run", kMistral, "mistral-a") +
      std::vector<std::string>{"--bind", "T=bf16", "--entry", "prefill", "--input", "tokens=5,9,2", "--input", "pos=0"});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(contains(outcome.out, "21 mapped without a copy"));
  CHECK(contains(outcome.out, "prefill: bf16[1, 512]"));
  CHECK(contains(outcome.out, "[0] top-5:"));
}

TEST_CASE("linnet run --load: the same outputs mapped, with the packed tensors copied, or all copied",
          "[cli][run]") {
  ScratchDir scratch;
  std::map<std::string, linnet::tensor::NpyArray> logits;
  for (const std::string load : {"map", "packed", "copy"}) {
    INFO("--load " << load);
    const std::string out = scratch.file(load + ".npz");
    const cli_test::Outcome outcome =
        run_linnet({"run", "nest/gpt-oss-20b", "--weights", "golden/gptoss-a", "--bind-from",
                    "golden/gptoss-a/meta.json", "--bind", "B=1", "--bind", "S=5", "--random-inputs", "--load", load,
                    "--out", out, "--stats"});
    INFO(outcome.err);
    REQUIRE(outcome.status == 0);
    // 33 bf16 tensors (17 widened now, 16 kept as stored) and 8 u8 ones.
    if (load == "map") CHECK(contains(outcome.out, "8 mapped without a copy"));
    if (load == "packed") CHECK(contains(outcome.out, "8 copied into memory (--load packed)"));
    if (load == "copy") CHECK(contains(outcome.out, "0 mapped without a copy"));
    if (load == "copy") CHECK(contains(outcome.out, "8 copied into memory (--load copy)"));
    logits[load] = linnet::tensor::read_npz(out).at("forward");
  }
  REQUIRE(!logits.at("map").data.empty());
  CHECK(logits.at("map").data == logits.at("packed").data);  // bit for bit
  CHECK(logits.at("map").data == logits.at("copy").data);
  CHECK(run_linnet({"run", kMistral, "--load", "mmap"}).status == 2);
}

TEST_CASE("linnet run --script: calls on one instance, outputs by position", "[cli][run]") {
  ScratchDir scratch;
  const std::string script = scratch.write("calls.json", R"([
    {"entry": "prefill", "inputs": {"tokens": [[5, 9, 2]], "pos": 0}},
    {"entry": "decode", "inputs": {"token": [[7]], "pos": 3}}
  ])");
  const std::string out = scratch.file("calls.npz");
  const cli_test::Outcome outcome = run_linnet(golden_arguments("run", kMistral, "mistral-a") +
                                               std::vector<std::string>{"--script", script, "--out", out});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  const auto arrays = linnet::tensor::read_npz(out);
  CHECK(arrays.count("0_prefill") == 1);
  CHECK(arrays.count("1_decode") == 1);
}

TEST_CASE("linnet run --script: a mistake anywhere stops it before the first call", "[cli][run]") {
  ScratchDir scratch;
  const std::string script = scratch.write("calls.json", R"([
    {"entry": "prefill", "inputs": {"tokens": [[5, 9, 2]], "pos": 0}},
    {"entry": "decode", "inputs": {"token": [[7]], "position": 3}}
  ])");
  const cli_test::Outcome outcome =
      run_linnet(golden_arguments("run", kMistral, "mistral-a") + std::vector<std::string>{"--script", script});
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "script call 1: entry `decode` has no parameter `position`; it takes token, pos"));
  CHECK_FALSE(contains(outcome.out, "0_prefill"));
}

TEST_CASE("linnet generate: greedy tokens equal the reference's", "[cli][generate]") {
  const linnet::tensor::Tensor tokens = nest_test::expected_tensor("qwen3-a", "tokens");
  const std::vector<int32_t> generated = nest_test::expected_tensor("qwen3-a", "generated").to_vector<int32_t>();
  std::string prompt, expected;
  for (int32_t token : tokens.to_vector<int32_t>()) prompt += (prompt.empty() ? "" : ",") + std::to_string(token);
  for (int32_t token : generated) expected += (expected.empty() ? "" : " ") + std::to_string(token);
  const cli_test::Outcome outcome =
      run_linnet(golden_arguments("generate", "nest/qwen3-8b", "qwen3-a") +
                 std::vector<std::string>{"--tokens", prompt, "--max-new", std::to_string(generated.size())});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK(outcome.out == expected + "\n");
  CHECK_FALSE(contains(outcome.err, "generating:"));  // no progress line off a terminal

  // Sampling is repeatable by seed.
  const std::vector<std::string> sampled =
      golden_arguments("generate", "nest/qwen3-8b", "qwen3-a") +
      std::vector<std::string>{"--tokens", prompt, "--max-new", "3", "--temperature", "0.9", "--seed", "11"};
  const cli_test::Outcome first = run_linnet(sampled);
  const cli_test::Outcome second = run_linnet(sampled);
  REQUIRE(first.status == 0);
  CHECK(first.out == second.out);
  CHECK(count_of(first.out, " ") == 2);
}

TEST_CASE("linnet inspect --parameters lists what a checkpoint must supply", "[cli][inspect]") {
  const cli_test::Outcome text =
      run_linnet({"inspect", "--parameters", kMistral, "--bind", "Layers=2", "--bind", "T=f32"});
  INFO(text.err);
  REQUIRE(text.status == 0);
  CHECK(contains(text.out, "llama::Model<"));
  CHECK(contains(text.out, "param embedding.weight -> model.embed_tokens.weight: f32[32768, 4096]"));
  CHECK(contains(text.out, "param layers.1.mlp.down.weight -> model.layers.1.mlp.down_proj.weight: f32[4096, 14336]"));
  CHECK_FALSE(contains(text.out, "layers.2."));
  CHECK(contains(text.out, "param lm_head.bias: f32[32768] (optional)"));  // Linear's bias, absent for Mistral
  CHECK(contains(text.out, "21 required tensors of "));

  const cli_test::Outcome json = run_linnet({"inspect", "--parameters", "nest/gpt-oss-20b", "--json", "--bind", "Layers=2"});
  INFO(json.err);
  REQUIRE(json.status == 0);
  CHECK(contains(json.out, "\"root\": \"gpt_oss::Model\""));
  CHECK(contains(json.out, R"("path": "pairs.0.sliding.mlp.gate_up_blocks", "tensor": "model.layers.0.mlp.experts.gate_up_proj_blocks", "kind": "param", "dtype": "u8", "shape": [32, 5760, 90, 16], "optional": false)"));
  CHECK(contains(json.out, R"("path": "pairs.0.sliding.self_attn.q_proj.bias")"));
  CHECK(contains(json.out, "\"optional\": true"));
}

TEST_CASE("wrong generics are diagnostics with exit status 1", "[cli][run]") {
  SECTION("a where clause that does not hold") {
    const cli_test::Outcome outcome = run_linnet(golden_arguments("run", kMistral, "mistral-a") +
                                                 std::vector<std::string>{"--bind", "H=66", "--input", "tokens=1"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E2206"));
    CHECK(contains(outcome.err, "H % Heads == 0"));
    CHECK(outcome.out.empty());
  }
  SECTION("an unknown generic") {
    const cli_test::Outcome outcome = run_linnet({"inspect", "--parameters", kMistral, "--bind", "Hidden=64"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E2111: `--bind Hidden=64`: `llama::Model` has no generic `Hidden`"));
  }
  SECTION("a generic without a value") {
    ScratchDir scratch;
    const std::string card = scratch.file("card");
    nest_test::copy_card(cli_test::source_path(kMistral), card);
    scratch.write("card/nest.toml", "[source]\npath = \"src/lib.linnet\"\nroot = \"Model\"\n[generics]\nVocab = 8\n");
    const cli_test::Outcome outcome = run_linnet({"inspect", "--parameters", card});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E2111: `llama::Model` needs a value for generics `H, Heads, KvHeads, Inner, "
                                "Layers, Batch, MaxSeq`"));
  }
  SECTION("weights that do not fit: every problem, then exit 1") {
    const cli_test::Outcome outcome = run_linnet({"run", kMistral, "--weights", "golden/qwen3-a", "--bind", "Layers=2",
                                                  "--bind", "T=f32", "--input", "tokens=1"});
    CHECK(outcome.status == 1);
    CHECK(count_of(outcome.err, "error E6003") > 5);
    CHECK(contains(outcome.err, "do not bind to the checkpoint"));
  }
  SECTION("no weights in the Hugging Face cache") {
    ScratchDir home;
    const cli_test::Outcome outcome = run_linnet({"run", kMistral, "--bind", "Layers=1", "--input", "tokens=1"},
                                                 {"HF_HOME=" + home.file("hf"), "HF_HUB_CACHE="});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "no weights for card `mistral-7b-instruct-v0.3`"));
    CHECK(contains(outcome.err, home.file("hf") + "/hub/models--mistralai--Mistral-7B-Instruct-v0.3/snapshots/"
                                                  "c170c708c41dac9275d15a8fff4eca08d52bab71"));
  }
  SECTION("weights found in the Hugging Face cache") {
    // A snapshot laid out as huggingface_hub does, holding the golden file
    // under the name the card lists.
    ScratchDir home;
    const std::string snapshot =
        home.file("hub/models--mistralai--Mistral-7B-Instruct-v0.3/snapshots/c170c708c41dac9275d15a8fff4eca08d52bab71");
    std::filesystem::create_directories(snapshot);
    for (const char* shard : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                              "model-00003-of-00003.safetensors"}) {
      // Three shards; the golden tensors all sit in the first, the others are empty files' worth of tensors.
      if (std::string(shard) == "model-00001-of-00003.safetensors") {
        std::filesystem::copy_file(cli_test::source_path("golden/mistral-a/model.safetensors"), snapshot + "/" + shard);
      } else {
        std::ofstream(snapshot + "/" + shard, std::ios::binary) << std::string("\x02\0\0\0\0\0\0\0{}", 10);
      }
    }
    std::vector<std::string> arguments{"run", kMistral, "--input", "tokens=1,2"};
    for (const std::string& bind : nest_test::golden_binds("mistral-a")) arguments.insert(arguments.end(), {"--bind", bind});
    const cli_test::Outcome outcome = run_linnet(arguments, {"HF_HOME=" + home.file(""), "HF_HUB_CACHE="});
    INFO(outcome.err);
    CHECK(outcome.status == 0);
    CHECK(contains(outcome.out, "weights: " + snapshot));
  }
  SECTION("an input that does not fit the entry") {
    const cli_test::Outcome outcome =
        run_linnet(golden_arguments("run", kMistral, "mistral-a") + std::vector<std::string>{"--input", "tokens=1.5"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "input `tokens`: `Tensor[B, S; i32]` takes integers"));
  }
  SECTION("a token past the vocabulary is a runtime error, not a crash") {
    const cli_test::Outcome outcome =
        run_linnet(golden_arguments("run", kMistral, "mistral-a") + std::vector<std::string>{"--input", "tokens=600"});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome.err, "error E6001"));
  }
}

TEST_CASE("command-line mistakes exit with status 2", "[cli][run]") {
  CHECK(run_linnet({"run"}).status == 2);
  CHECK(run_linnet({"run", "no/such/card"}).status == 2);
  CHECK(run_linnet({"run", kMistral, "--numerics", "sloppy"}).status == 2);
  CHECK(run_linnet({"run", kMistral, "--input", "tokens"}).status == 2);
  CHECK(run_linnet({"run", kMistral, "--bind", "Layers"}).status == 2);
  CHECK(run_linnet({"inspect", "--parameters", kMistral, "--bind", "=2"}).status == 2);
  CHECK(run_linnet({"run", kMistral, "--out", "logits.txt"}).status == 2);
  CHECK(run_linnet({"run", kMistral, "--script", "a.json", "--input", "tokens=1"}).status == 2);
  CHECK(run_linnet({"generate", kMistral}).status == 2);  // --tokens is required
  CHECK(run_linnet({"generate", kMistral, "--tokens", "1,x"}).status == 2);
  CHECK(run_linnet({"generate", kMistral, "--tokens", "1", "--max-new", "0"}).status == 2);
  CHECK(run_linnet({"inspect", "--parameters", "no/such/card"}).status == 2);
}
