// `--cast-weights` on `run`, `generate` and `validate`: a checkpoint stored
// in f32 (as GPT-2 and many older checkpoints are) run at T = bf16. The
// test rewrites a golden checkpoint in f32 -- every bf16 value widened
// exactly -- so that rounding it back to bf16 must give the original
// checkpoint's results bit for bit.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "linnet/nest/checkpoint.hpp"
#include "linnet/tensor/half.hpp"
#include "nest/safetensors_builder.hpp"
#include "test_validate_support.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using cli_test::ScratchDir;
using validate_test::source_path;

namespace {

// `from`'s model.safetensors with every bf16 tensor widened to f32 (the
// rest as stored), written to `to`.
void write_f32_checkpoint(const std::string& from, const std::string& to) {
  const linnet::nest::Checkpoint checkpoint = linnet::nest::Checkpoint::open(from);
  std::vector<linnet::nest::testing::TensorSpec> tensors;
  for (const std::string& name : checkpoint.names()) {
    const linnet::nest::TensorRecord& record = *checkpoint.find(name);
    linnet::nest::testing::TensorSpec spec{name, record.format_dtype, record.shape,
                                           std::vector<std::byte>(record.bytes.begin(), record.bytes.end())};
    if (record.format_dtype == "BF16") {
      spec.dtype = "F32";
      spec.data.resize(record.bytes.size() * 2);
      for (size_t i = 0; i < record.bytes.size() / 2; ++i) {
        uint16_t bits = 0;
        std::memcpy(&bits, record.bytes.data() + 2 * i, 2);
        const float value = linnet::tensor::bf16_bits_to_float(bits);
        std::memcpy(spec.data.data() + 4 * i, &value, 4);
      }
    }
    tensors.push_back(std::move(spec));
  }
  const std::vector<std::byte> bytes = linnet::nest::testing::well_formed(tensors);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  REQUIRE(out);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A copy of golden/qwen3-a whose checkpoint is stored in f32.
std::string f32_golden(const ScratchDir& scratch) {
  const std::string golden = scratch.file("qwen3-a-f32");
  validate_test::copy_tree(source_path("golden/qwen3-a"), golden);
  write_f32_checkpoint(source_path("golden/qwen3-a/model.safetensors"), golden + "/model.safetensors");
  return golden;
}

// The lines of a validate report from the table on (the first lines name
// the case's directory, which differs between the copies).
std::string from_table(const std::string& report) { return report.substr(report.find("check ")); }

const std::vector<std::string> qwen3_binds = {"--bind", "Vocab=512",  "--bind", "H=64",      "--bind",
                                              "Heads=4", "--bind",    "KvHeads=2", "--bind", "HeadDim=32",
                                              "--bind", "Inner=160",  "--bind",  "Layers=2", "--bind",
                                              "MaxSeq=64", "--bind",  "T=bf16"};

std::vector<std::string> with_binds(std::vector<std::string> arguments) {
  arguments.insert(arguments.end(), qwen3_binds.begin(), qwen3_binds.end());
  return arguments;
}

}  // namespace

TEST_CASE("an f32 checkpoint at T = bf16 is refused, with --cast-weights named", "[validate][cli][cast]") {
  ScratchDir scratch;
  const std::string golden = f32_golden(scratch);
  const cli_test::Outcome refused = run_linnet({"validate", "nest/qwen3-8b", golden, "--dtype", "bf16"});
  INFO(refused.out << refused.err);
  CHECK(refused.status == 1);
  CHECK(contains(refused.err, "dtype f32"));
  CHECK(contains(refused.err, "help: pass --cast-weights"));
  // f32 at T = f32 needs nothing.
  CHECK(run_linnet({"validate", "nest/qwen3-8b", golden}).status == 0);
}

TEST_CASE("validate --cast-weights on an f32 checkpoint gives the bf16 checkpoint's results", "[validate][cli][cast]") {
  ScratchDir scratch;
  const std::string golden = f32_golden(scratch);
  const cli_test::Outcome cast =
      run_linnet({"validate", "nest/qwen3-8b", golden, "--dtype", "bf16", "--cast-weights"});
  const cli_test::Outcome stored = run_linnet({"validate", "nest/qwen3-8b", "golden/qwen3-a", "--dtype", "bf16"});
  INFO(cast.out << cast.err);
  CHECK(cast.status == 0);
  REQUIRE(stored.status == 0);
  // Rounding the widened values back is exact: the same logits, bit for bit.
  CHECK(from_table(cast.out) == from_table(stored.out));
}

TEST_CASE("run and generate --cast-weights on an f32 checkpoint", "[validate][cli][cast]") {
  ScratchDir scratch;
  const std::string golden = f32_golden(scratch);
  const std::vector<std::string> run = {"run", "nest/qwen3-8b", "--input", "tokens=[[1,2,3]]", "--weights"};

  std::vector<std::string> refused = run;
  refused.push_back(golden);
  const cli_test::Outcome no_flag = run_linnet(with_binds(refused));
  CHECK(no_flag.status == 1);
  CHECK(contains(no_flag.err, "--cast-weights"));

  std::vector<std::string> cast = refused;
  cast.push_back("--cast-weights");
  std::vector<std::string> stored = run;
  stored.push_back("golden/qwen3-a");
  const cli_test::Outcome cast_run = run_linnet(with_binds(cast));
  const cli_test::Outcome stored_run = run_linnet(with_binds(stored));
  INFO(cast_run.out << cast_run.err);
  REQUIRE(cast_run.status == 0);
  REQUIRE(stored_run.status == 0);
  CHECK(contains(cast_run.out, "cast to a copy (--cast-weights)"));
  CHECK(contains(cast_run.out, "numerics: equivalent"));
  // The logits' summary lines are the same.
  CHECK(cast_run.out.substr(cast_run.out.find("forward:")) == stored_run.out.substr(stored_run.out.find("forward:")));

  const std::vector<std::string> generate = {"generate", "nest/qwen3-8b", "--tokens", "5,6,7", "--max-new", "4",
                                             "--weights"};
  std::vector<std::string> generate_cast = generate;
  generate_cast.push_back(golden);
  std::vector<std::string> generate_refused = generate_cast;
  generate_cast.push_back("--cast-weights");
  std::vector<std::string> generate_stored = generate;
  generate_stored.push_back("golden/qwen3-a");
  const cli_test::Outcome cast_tokens = run_linnet(with_binds(generate_cast));
  const cli_test::Outcome stored_tokens = run_linnet(with_binds(generate_stored));
  INFO(cast_tokens.err);
  CHECK(cast_tokens.status == 0);
  CHECK(cast_tokens.out == stored_tokens.out);
  CHECK(run_linnet(with_binds(generate_refused)).status == 1);
}
