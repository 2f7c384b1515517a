// `linnet validate` on the command line: the JSON document, the exit
// status, and proof that the harness can fail -- a damaged checkpoint and
// a one-character change to a card each make it exit 1 naming the check.
#include <catch2/catch.hpp>

#include <simdjson.h>

#include "linnet/tensor/npz.hpp"
#include "test_validate_support.hpp"

using cli_test::run_linnet;
using cli_test::ScratchDir;
using validate_test::source_path;

namespace {

// The JSON object's members in order, and each check's.
std::vector<std::string> keys_of(simdjson::dom::object object) {
  std::vector<std::string> keys;
  for (auto [key, value] : object) keys.emplace_back(key);
  return keys;
}

}  // namespace

TEST_CASE("--json prints the object issue 7 specifies", "[validate][cli]") {
  const cli_test::Outcome outcome = run_linnet({"validate", "nest/qwen3-8b", "golden/qwen3-a", "--dtype", "bf16", "--json"});
  INFO(outcome.out << outcome.err);
  REQUIRE(outcome.status == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  REQUIRE(parser.parse(outcome.out).get(document) == simdjson::SUCCESS);
  simdjson::dom::object object;
  REQUIRE(document.get(object) == simdjson::SUCCESS);
  // Issue 7's members, then what issue 13 adds.
  CHECK(keys_of(object) == std::vector<std::string>{"case", "card", "dtype", "checks", "pass", "numerics"});
  CHECK(std::string_view(object["numerics"]) == "equivalent");
  CHECK(std::string_view(object["case"]) == "qwen3-a");
  CHECK(std::string_view(object["card"]) == "qwen3-8b");
  CHECK(std::string_view(object["dtype"]) == "bf16");
  CHECK(bool(object["pass"]) == true);
  simdjson::dom::array checks;
  REQUIRE(object["checks"].get(checks) == simdjson::SUCCESS);
  std::vector<std::string> names;
  for (simdjson::dom::element check : checks) {
    simdjson::dom::object fields;
    REQUIRE(check.get(fields) == simdjson::SUCCESS);
    CHECK(keys_of(fields) == std::vector<std::string>{"name", "max_abs_diff", "mean_abs_diff", "argmax_agreement",
                                                      "tokens_equal", "pass", "envelope_max_abs_diff",
                                                      "envelope_mean_abs_diff", "envelope_ratio", "equal_share",
                                                      "compared"});
    names.emplace_back(std::string_view(fields["name"]));
    CHECK(fields["pass"].is_bool());
    CHECK(fields["argmax_agreement"].is_number());
  }
  CHECK(names == std::vector<std::string>{"forward", "decode", "generate"});
  // forward makes no tokens; generate compares no logits.
  CHECK(checks.at(0)["tokens_equal"].is_null());
  CHECK(checks.at(0)["max_abs_diff"].is_number());
  CHECK(checks.at(1)["tokens_equal"].is_bool());
  CHECK(checks.at(2)["max_abs_diff"].is_null());
  CHECK(checks.at(2)["tokens_equal"].is_bool());
  // The fidelity report: forward and decode against transformers' bf16, with its envelope.
  for (size_t i = 0; i < 2; ++i) {
    CHECK(checks.at(i)["envelope_mean_abs_diff"].is_number());
    CHECK(checks.at(i)["envelope_ratio"].is_number());
    CHECK(checks.at(i)["equal_share"].is_number());
  }
  CHECK(checks.at(2)["envelope_ratio"].is_null());
}

TEST_CASE("a perturbed checkpoint fails validation, naming the check", "[validate][cli][harness]") {
  // The final norm's first eight weights negated: every logit moves.
  ScratchDir scratch;
  const std::string golden = scratch.file("mistral-a");
  validate_test::copy_tree(source_path("golden/mistral-a"), golden);
  validate_test::negate_bf16_values(golden + "/model.safetensors", "model.norm.weight", 8);
  const cli_test::Outcome outcome = run_linnet({"validate", "nest/mistral-7b-instruct-v0.3", golden});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.status == 1);
  CHECK(outcome.out.find("FAIL: forward") != std::string::npos);
  CHECK(outcome.err.find("failed checks: forward, decode") != std::string::npos);
  CHECK(outcome.err.find("forward: max abs diff") != std::string::npos);
}

TEST_CASE("a one-character change to a card (its rope base) fails validation", "[validate][cli][harness]") {
  // THETA 1000000.0 -> 100000.0: one zero fewer.
  ScratchDir scratch;
  const std::string card = scratch.file("qwen3-8b");
  validate_test::copy_tree(source_path("nest/qwen3-8b"), card);
  validate_test::replace_once(card + "/src/rope.linnet", "THETA: f32 = 1000000.0", "THETA: f32 = 100000.0");
  const cli_test::Outcome outcome = run_linnet({"validate", card, "golden/qwen3-a", "--json"});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.status == 1);
  CHECK(outcome.out.find("\"name\": \"forward\", \"max_abs_diff\"") != std::string::npos);
  CHECK(outcome.out.find("\"pass\": false, \"numerics\": \"equivalent\"}\n") != std::string::npos);
  CHECK(outcome.err.find("failed checks: forward, decode") != std::string::npos);
}

TEST_CASE("bad command lines exit 2, bad golden cases exit 1 with the problem named", "[validate][cli]") {
  CHECK(run_linnet({"validate"}).status == 2);
  CHECK(run_linnet({"validate", "nest/qwen3-8b"}).status == 2);
  CHECK(run_linnet({"validate", "nest/qwen3-8b", "golden/qwen3-a", "--dtype", "f16"}).status == 2);
  CHECK(run_linnet({"validate", "nest/qwen3-8b", "golden/qwen3-a", "--numerics", "sloppy"}).status == 2);
  CHECK(run_linnet({"validate", "nest/qwen3-8b", "golden/qwen3-a", "--json", "--markdown"}).status == 2);
  CHECK(run_linnet({"validate", "nest/qwen3-8b", "golden/mxfp4-dequant", "--mxfp4", "golden/mxfp4-dequant"}).status == 2);

  const cli_test::Outcome missing_dir = run_linnet({"validate", "nest/qwen3-8b", "golden/no-such-case"});
  CHECK(missing_dir.status == 2);
  CHECK(missing_dir.err.find("golden/no-such-case") != std::string::npos);

  // An expected.npz without `generated`.
  ScratchDir scratch;
  const std::string golden = scratch.file("qwen3-a");
  validate_test::copy_tree(source_path("golden/qwen3-a"), golden);
  auto arrays = linnet::tensor::read_npz(golden + "/expected.npz");
  arrays.erase("generated");
  linnet::tensor::write_npz(golden + "/expected.npz", arrays);
  const cli_test::Outcome no_member = run_linnet({"validate", "nest/qwen3-8b", golden});
  INFO(no_member.err);
  CHECK(no_member.status == 1);
  CHECK(no_member.err.find("has no member `generated`") != std::string::npos);

  // logits_f32 cut to half the vocabulary: its shape no longer fits.
  arrays = linnet::tensor::read_npz(source_path("golden/qwen3-a/expected.npz"));
  linnet::tensor::NpyArray& logits = arrays.at("logits_f32");
  const size_t half_row = 256 * sizeof(float);
  std::vector<std::byte> halved;
  for (size_t row = 0; row < 16; ++row)
    halved.insert(halved.end(), logits.data.begin() + static_cast<std::ptrdiff_t>(row * 2 * half_row),
                  logits.data.begin() + static_cast<std::ptrdiff_t>(row * 2 * half_row + half_row));
  logits.data = halved;
  logits.shape = {1, 16, 256};
  linnet::tensor::write_npz(golden + "/expected.npz", arrays);
  const cli_test::Outcome wrong_shape = run_linnet({"validate", "nest/qwen3-8b", golden});
  INFO(wrong_shape.err);
  CHECK(wrong_shape.status == 1);
  CHECK(wrong_shape.err.find("generated_logits_f32") != std::string::npos);

  // Not JSON.
  cli_test::Outcome garbled;
  {
    std::ofstream(golden + "/meta.json") << "{ not json";
    garbled = run_linnet({"validate", "nest/qwen3-8b", golden});
  }
  CHECK(garbled.status == 1);
  CHECK(garbled.err.find("meta.json is not valid JSON") != std::string::npos);
}

TEST_CASE("--markdown prints a table in the cards' README style", "[validate][cli]") {
  const cli_test::Outcome outcome =
      run_linnet({"validate", "nest/gpt-oss-20b", "golden/gptoss-a", "--markdown", "--numerics", "equivalent"});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.status == 0);
  CHECK(outcome.out.find("| check | max abs logit difference | mean abs logit difference | argmax agreement |") !=
        std::string::npos);
  CHECK(outcome.out.find("| `forward` |") != std::string::npos);
  CHECK(outcome.out.find("| 24 / 24 positions |") != std::string::npos);
  CHECK(outcome.out.find("| 10 / 10 steps | yes | yes |") != std::string::npos);
}
