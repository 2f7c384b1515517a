// `linnet synth-weights`: the checkpoint it writes loads and runs for every
// card, is the same bytes for the same seed, and bad arguments get
// diagnostics.
#include "cli_test_util.hpp"

namespace {

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;
using cli_test::source_path;

struct TinyCard {
  std::string card;
  std::vector<std::string> generics;  // K=V
};

// Each card at tiny widths (those of its golden case).
std::vector<TinyCard> tiny_cards() {
  return {
      {"nest/mistral-7b-instruct-v0.3",
       {"Vocab=512", "H=64", "Heads=4", "KvHeads=2", "Inner=96", "Layers=2", "MaxSeq=64"}},
      {"nest/qwen3-8b",
       {"Vocab=512", "H=64", "Heads=4", "KvHeads=2", "HeadDim=32", "Inner=160", "Layers=2", "MaxSeq=64"}},
      {"nest/gpt-oss-20b",
       {"Vocab=512", "H=64", "Heads=4", "KvHeads=2", "HeadDim=16", "Inner=64", "Experts=8", "TopK=2", "Layers=2",
        "Window=8", "MaxSeq=64"}},
  };
}

std::vector<std::string> with_binds(std::vector<std::string> arguments, const std::vector<std::string>& generics) {
  for (const std::string& generic : generics) {
    arguments.push_back("--bind");
    arguments.push_back(generic);
  }
  return arguments;
}

}  // namespace

TEST_CASE("synth-weights writes a checkpoint that every card runs on, in bf16 and f32", "[synth-weights]") {
  for (const TinyCard& tiny : tiny_cards()) {
    for (const std::string dtype : {"bf16", "f32"}) {
      INFO(tiny.card << " T=" << dtype);
      ScratchDir scratch;
      const std::string out = scratch.file("ckpt");
      std::vector<std::string> generics = tiny.generics;
      generics.push_back("T=" + dtype);
      const cli_test::Outcome made =
          run_linnet(with_binds({"synth-weights", tiny.card, "--out", out, "--seed", "7"}, generics));
      REQUIRE(made.status == 0);
      CHECK(contains(made.out, "model.safetensors"));
      CHECK(std::filesystem::is_regular_file(out + "/config.json"));
      const std::string config = cli_test::read_file(out + "/config.json");
      CHECK(contains(config, "\"vocab_size\": 512"));
      CHECK(contains(config, "\"num_hidden_layers\": 2"));
      CHECK(contains(config, dtype == "bf16" ? "\"bfloat16\"" : "\"float32\""));

      const cli_test::Outcome ran = run_linnet(with_binds(
          {"run", tiny.card, "--weights", out, "--numerics", "equivalent", "--input", "tokens=[[1, 2, 3, 4]]"},
          generics));
      INFO(ran.err);
      REQUIRE(ran.status == 0);
      CHECK(contains(ran.out, "forward: " + dtype + "[1, 4, 512]"));
      // Random weights scaled by fan-in keep the logits finite and modest.
      CHECK_FALSE(contains(ran.out, "nan"));
      CHECK_FALSE(contains(ran.out, "inf"));
      CHECK(contains(ran.out, "mapped without a copy"));
    }
  }
}

TEST_CASE("synth-weights is deterministic in its seed", "[synth-weights]") {
  const TinyCard tiny = tiny_cards()[2];  // GPT-OSS: floating and MXFP4 tensors
  ScratchDir scratch;
  auto make = [&](const std::string& name, const std::string& seed) {
    const std::string out = scratch.file(name);
    REQUIRE(run_linnet(with_binds({"synth-weights", tiny.card, "--out", out, "--seed", seed}, tiny.generics)).status ==
            0);
    return cli_test::read_file(out + "/model.safetensors");
  };
  const std::string first = make("a", "11");
  const std::string again = make("b", "11");
  const std::string other = make("c", "12");
  CHECK(first.size() > 100000);
  CHECK(first == again);
  CHECK(first.size() == other.size());
  CHECK(first != other);
}

TEST_CASE("synth-weights writes optional tensors only where bindings.json names them", "[synth-weights]") {
  ScratchDir scratch;
  const TinyCard gptoss = tiny_cards()[2];
  const std::string out = scratch.file("g");
  REQUIRE(run_linnet(with_binds({"synth-weights", gptoss.card, "--out", out}, gptoss.generics)).status == 0);
  const std::string header = cli_test::read_file(out + "/model.safetensors").substr(0, 8000);
  CHECK(contains(header, "model.layers.0.self_attn.q_proj.bias"));  // named in bindings.json
  CHECK_FALSE(contains(header, "lm_head.bias"));                      // optional, not named
  CHECK(contains(header, "model.layers.0.mlp.experts.gate_up_proj_blocks"));
}

TEST_CASE("synth-weights --dtype sets the stored dtype of floating tensors", "[synth-weights]") {
  ScratchDir scratch;
  const TinyCard qwen = tiny_cards()[1];
  const std::string out = scratch.file("q");
  REQUIRE(run_linnet(with_binds({"synth-weights", qwen.card, "--out", out, "--dtype", "f32"}, qwen.generics)).status ==
          0);
  const std::string header = cli_test::read_file(out + "/model.safetensors").substr(0, 4000);
  CHECK(contains(header, "\"F32\""));
  CHECK_FALSE(contains(header, "\"BF16\""));
  std::vector<std::string> generics = qwen.generics;
  generics.push_back("T=f32");
  const cli_test::Outcome ran = run_linnet(
      with_binds({"run", qwen.card, "--weights", out, "--numerics", "equivalent", "--input", "tokens=[[5, 6]]"},
                 generics));
  INFO(ran.err);
  CHECK(ran.status == 0);
}

TEST_CASE("synth-weights diagnoses bad arguments", "[synth-weights]") {
  ScratchDir scratch;
  const TinyCard qwen = tiny_cards()[1];
  const std::string out = scratch.file("q");

  cli_test::Outcome outcome = run_linnet({"synth-weights", "nest/no-such-card", "--out", out});
  CHECK(outcome.status == 2);
  CHECK(contains(outcome.err, "`nest/no-such-card` does not exist; a card is a directory holding nest.toml"));

  outcome = run_linnet({"synth-weights", qwen.card});
  CHECK(outcome.status == 2);
  CHECK(contains(outcome.err, "--out"));

  outcome = run_linnet(with_binds({"synth-weights", qwen.card, "--out", out, "--dtype", "i32"}, qwen.generics));
  CHECK(outcome.status == 2);

  outcome = run_linnet({"synth-weights", qwen.card, "--out", out, "--bind", "H"});
  CHECK(outcome.status == 2);
  CHECK(contains(outcome.err, "NAME=VALUE"));

  outcome = run_linnet({"synth-weights", qwen.card, "--out", out, "--bind", "NoSuchGeneric=3"});
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "NoSuchGeneric"));

  // A `where` clause that fails: Heads must divide by KvHeads.
  std::vector<std::string> uneven = qwen.generics;
  uneven.push_back("KvHeads=3");  // the last --bind of a generic wins
  outcome = run_linnet(with_binds({"synth-weights", qwen.card, "--out", out}, uneven));
  CHECK(outcome.status == 1);
  CHECK_FALSE(outcome.err.empty());

  const std::string file = scratch.write("plain-file", "x");
  outcome = run_linnet(with_binds({"synth-weights", qwen.card, "--out", file}, qwen.generics));
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.err, "cannot create the directory"));
  CHECK_FALSE(std::filesystem::exists(out + "/model.safetensors"));
}

TEST_CASE("synth-weights refuses a checkpoint past the disk or a 64-bit count before writing a byte",
          "[synth-weights]") {
  const TinyCard mistral = tiny_cards()[0];
  ScratchDir scratch;
  const std::string out = scratch.file("huge");
  // 64 layers at H = Inner = 2^30: each matrix 2^62 bytes, their sum past
  // 2^64 (it wrapped, and the header's offsets with it).
  const cli_test::Outcome wrapped = run_linnet(with_binds(
      with_binds({"synth-weights", mistral.card, "--out", out}, mistral.generics),
      {"H=1073741824", "Inner=1073741824", "Layers=64"}));
  CHECK(wrapped.status == 1);
  CHECK(contains(wrapped.err, "need more bytes than a 64-bit count holds"));
  // Terabytes: it streamed until the disk was full.
  const cli_test::Outcome too_big = run_linnet(
      with_binds(with_binds({"synth-weights", mistral.card, "--out", out}, mistral.generics),
                 {"H=65536", "Inner=65536", "Layers=64"}));
  CHECK(too_big.status == 1);
  INFO(too_big.err);
  CHECK(contains(too_big.err, "error: the checkpoint needs "));
  CHECK(contains(too_big.err, " TB, but `" + out + "` has"));
  CHECK(!std::filesystem::exists(out + "/model.safetensors.partial"));
  CHECK(!std::filesystem::exists(out + "/model.safetensors"));
}
