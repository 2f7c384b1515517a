// `linnet validate` as a library: every golden case passes with its card,
// in f32 and in bf16, and each check measures what it says it does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>

#include "linnet/nest/session.hpp"
#include "linnet/tensor/npz.hpp"
#include "linnet/validate/report.hpp"
#include "linnet/validate/validate.hpp"
#include "test_validate_support.hpp"

using namespace linnet;
using validate_test::golden_cases;
using validate_test::source_path;

namespace {

// With the library's default options (numerics `equivalent`).
validate::Report run_case(const validate_test::GoldenCase& golden_case, tensor::DType dtype,
                          const std::string& golden_dir = "") {
  validate::ValidateOptions options;
  options.card = source_path("nest/" + golden_case.card);
  options.golden_dir = golden_dir.empty() ? source_path("golden/" + golden_case.golden) : golden_dir;
  options.std_dir = source_path("stdlib");
  options.dtype = dtype;
  return validate::validate_card(options);
}

const validate::CheckResult& check_named(const validate::Report& report, const std::string& name) {
  for (const validate::CheckResult& check : report.checks)
    if (check.name == name) return check;
  FAIL("the report has no `" << name << "` check:\n" << validate::render_text(report));
  throw std::logic_error("unreachable");
}

// Positions and steps of each case (golden/*/meta.json: S and N).
int64_t prompt_length(const std::string& golden) {
  return golden == "mistral-trunc" ? 12 : golden == "gptoss-a" ? 24 : 16;
}
int64_t generated_steps(const std::string& golden) {
  return golden == "mistral-trunc" ? 6 : golden == "gptoss-a" ? 10 : 12;
}

// gpt-oss-20b declares no `generate` entry.
size_t expected_checks(const std::string& card) { return card == "gpt-oss-20b" ? 2 : 3; }

}  // namespace

TEST_CASE("every golden case passes in f32 with every argmax and token equal", "[validate][golden]") {
  for (const auto& golden_case : golden_cases()) {
    const validate::Report report = run_case(golden_case, tensor::DType::F32);
    INFO(validate::render_text(report));
    CHECK(report.case_name == golden_case.golden);
    CHECK(report.card == golden_case.card);
    REQUIRE(report.checks.size() == expected_checks(golden_case.card));
    CHECK(report.pass());

    const auto& forward = check_named(report, "forward");
    CHECK(forward.positions == prompt_length(golden_case.golden));
    CHECK(forward.argmax_matches == forward.positions);
    CHECK(*forward.max_abs_diff < 1e-5);  // the references' own agreement (golden/README.md)
    CHECK(!forward.tokens_equal);

    const auto& decode = check_named(report, "decode");
    CHECK(decode.positions == generated_steps(golden_case.golden));
    CHECK(*decode.max_abs_diff < 1e-5);
    CHECK(decode.tokens_equal == std::optional<bool>(true));

    if (report.checks.size() == 3) {
      const auto& generate = check_named(report, "generate");
      CHECK(generate.positions == generated_steps(golden_case.golden));
      CHECK(generate.tokens_equal == std::optional<bool>(true));
      CHECK(!generate.max_abs_diff);
    } else {
      REQUIRE(report.notes.size() == 1);
      CHECK(report.notes[0] == "generate: not run, the card declares no `generate` entry");
    }
  }
}

TEST_CASE("every golden case passes in bf16, within transformers' own bf16 envelope", "[validate][golden][bf16]") {
  for (const auto& golden_case : golden_cases()) {
    const validate::Report report = run_case(golden_case, tensor::DType::BF16);
    INFO(validate::render_text(report));
    REQUIRE(report.checks.size() == expected_checks(golden_case.card));
    CHECK(report.numerics == eval::NumericsPolicy::Equivalent);
    CHECK(report.pass());
    CHECK(report.uncompared_checks().empty());
    // bf16 logits are not transformers' bf16 bit for bit, but they land
    // about as far from them as transformers' bf16 is from its own f32.
    for (const std::string name : {"forward", "decode"}) {
      const auto& check = check_named(report, name);
      REQUIRE(check.envelope_mean_abs_diff);
      REQUIRE(check.envelope_max_abs_diff);
      CHECK(*check.envelope_mean_abs_diff > 0);
      CHECK(*check.max_abs_diff > 0);
      CHECK(*check.envelope_ratio() <= 1.25);
      CHECK(*check.max_abs_diff <= 1.5 * *check.envelope_max_abs_diff);
      CHECK(check.argmax_agreement() >= 0.95);
      REQUIRE(check.equal_share);
      CHECK(*check.equal_share > 0.1);  // many logits land on transformers' exact bf16 value
    }
    CHECK(check_named(report, "decode").description.find("decode_logits_bf16") != std::string::npos);
    if (report.checks.size() == 3) {
      // generate is compared up to where transformers' own bf16 greedy
      // decoding first departs from the f32 tokens.
      const auto& generate = check_named(report, "generate");
      CHECK(generate.compared);
      CHECK(generate.positions > 0);
      CHECK(generate.positions <= generated_steps(golden_case.golden));
    }
    const std::string text = validate::render_text(report);
    CHECK(text.find("fidelity (against transformers' bf16)") != std::string::npos);
    CHECK(text.find("numerics equivalent") != std::string::npos);
  }
}

TEST_CASE("under `fast` Mistral and Qwen3 reproduce transformers' bf16 logits bit for bit", "[validate][golden][bf16]") {
  // `fast` rounds attention where PyTorch's eager attention does; every
  // other op already rounds where transformers does (docs/ops.md).
  for (const auto& golden_case : golden_cases()) {
    if (golden_case.card == "gpt-oss-20b") continue;  // its card's norm and experts round elsewhere
    validate::ValidateOptions options;
    options.card = source_path("nest/" + golden_case.card);
    options.golden_dir = source_path("golden/" + golden_case.golden);
    options.std_dir = source_path("stdlib");
    options.dtype = tensor::DType::BF16;
    options.numerics = eval::NumericsPolicy::Fast;
    const validate::Report report = validate::validate_card(options);
    INFO(validate::render_text(report));
    CHECK(report.pass());
    for (const std::string name : {"forward", "decode"}) {
      const auto& check = check_named(report, name);
      CHECK(check.equal_share == std::optional<double>(1.0));
      CHECK(check.argmax_agreement() == 1.0);
    }
  }
}

TEST_CASE("under `exact` bf16 lands outside the envelope and fails the default tolerances", "[validate][bf16]") {
  // The bodies of `linear` and `matmul` accumulate in bf16: that is what
  // they mean, and why commands default to `equivalent`.
  validate::ValidateOptions options;
  options.card = source_path("nest/qwen3-8b");
  options.golden_dir = source_path("golden/qwen3-a");
  options.std_dir = source_path("stdlib");
  options.dtype = tensor::DType::BF16;
  options.numerics = eval::NumericsPolicy::Exact;
  const validate::Report report = validate::validate_card(options);
  INFO(validate::render_text(report));
  CHECK(!report.pass());
  CHECK(*check_named(report, "forward").envelope_ratio() > 2.0);
}

TEST_CASE("commands and the library run models under `equivalent` by default", "[validate]") {
  CHECK(validate::ValidateOptions{}.numerics == eval::NumericsPolicy::Equivalent);
  CHECK(nest::SessionOptions{}.numerics == eval::NumericsPolicy::Equivalent);
  CHECK(!nest::SessionOptions{}.cast_weights);
}

TEST_CASE("a card with one wrong constant fails in bf16 as in f32", "[validate][bf16][harness]") {
  // Qwen3's RMSNorm epsilon 1e-6 changed to the stdlib default 1e-5: the
  // fixed bf16 limits of old (mean 0.01) let it pass; the envelope does not.
  cli_test::ScratchDir scratch;
  const std::string card = scratch.file("qwen3-8b");
  validate_test::copy_tree(source_path("nest/qwen3-8b"), card);
  validate_test::replace_once(card + "/src/norm.linnet", "rms_norm(x, weight, 1e-6)", "rms_norm(x, weight, 1e-5)");
  for (const tensor::DType dtype : {tensor::DType::F32, tensor::DType::BF16}) {
    validate::ValidateOptions options;
    options.card = card;
    options.golden_dir = source_path("golden/qwen3-a");
    options.std_dir = source_path("stdlib");
    options.dtype = dtype;
    const validate::Report report = validate::validate_card(options);
    INFO(validate::render_text(report));
    CHECK(!report.pass());
    const std::vector<std::string> failed = report.failed_checks();
    CHECK(std::find(failed.begin(), failed.end(), "forward") != failed.end());
    if (dtype == tensor::DType::BF16) {
      CHECK(check_named(report, "forward").failures.at(0).find("the envelope") != std::string::npos);
      // and it would have passed the fixed fallback limits
      CHECK(*check_named(report, "forward").mean_abs_diff <= 0.01);
    }
  }
}

TEST_CASE("a golden without decode_logits_bf16 still validates in bf16, saying what was not checked",
          "[validate][bf16]") {
  cli_test::ScratchDir scratch;
  const std::string golden = scratch.file("mistral-a");
  validate_test::copy_tree(source_path("golden/mistral-a"), golden);
  std::map<std::string, tensor::NpyArray> arrays = tensor::read_npz(golden + "/expected.npz");
  REQUIRE(arrays.erase("decode_logits_bf16") == 1);
  tensor::write_npz(golden + "/expected.npz", arrays);
  const validate::Report report = run_case({"mistral-7b-instruct-v0.3", "mistral-a"}, tensor::DType::BF16, golden);
  const std::string text = validate::render_text(report);
  INFO(text);
  CHECK(report.pass());
  const auto& decode = check_named(report, "decode");
  CHECK(decode.description.find("generated_logits_f32") != std::string::npos);
  CHECK(!decode.envelope_mean_abs_diff);  // no bf16 steps, so no envelope: the fixed limit applies
  CHECK(check_named(report, "forward").envelope_mean_abs_diff);
  CHECK(text.find("no decode_logits_bf16") != std::string::npos);
}

TEST_CASE("a bf16 generate check that compares no step says so and is not a pass", "[validate][bf16]") {
  // transformers' bf16 made to choose another token than f32's at step 0.
  cli_test::ScratchDir scratch;
  const std::string golden = scratch.file("qwen3-a");
  validate_test::copy_tree(source_path("golden/qwen3-a"), golden);
  std::map<std::string, tensor::NpyArray> arrays = tensor::read_npz(golden + "/expected.npz");
  const tensor::NpyArray& generated = arrays.at("generated");
  int32_t first = 0;
  std::memcpy(&first, generated.data.data(), sizeof first);
  tensor::NpyArray& steps = arrays.at("decode_logits_bf16");
  const int64_t vocab = steps.shape.back();
  const int64_t other = (first + 1) % vocab;
  float* step0 = reinterpret_cast<float*>(steps.data.data());
  step0[other] = 1.0f;  // above every logit (they are within +-0.7)
  tensor::write_npz(golden + "/expected.npz", arrays);

  const validate::Report report = run_case({"qwen3-8b", "qwen3-a"}, tensor::DType::BF16, golden);
  const std::string text = validate::render_text(report);
  INFO(text);
  const auto& generate = check_named(report, "generate");
  CHECK(!generate.compared);
  CHECK(!generate.pass);
  CHECK(generate.positions == 0);
  CHECK(report.uncompared_checks() == std::vector<std::string>{"generate"});
  const std::vector<std::string> failed = report.failed_checks();
  CHECK(std::find(failed.begin(), failed.end(), "generate") == failed.end());
  CHECK(text.find("generate: compared no step") != std::string::npos);
}

TEST_CASE("a tolerance tighter than the measured difference fails the check that missed it", "[validate]") {
  validate::ValidateOptions options;
  options.card = source_path("nest/qwen3-8b");
  options.golden_dir = source_path("golden/qwen3-a");
  options.std_dir = source_path("stdlib");
  validate::Tolerances strict = validate::default_tolerances(tensor::DType::F32);
  strict.max_abs_diff = 0.0;  // f32 agrees to about 1e-7, never to the bit
  options.tolerances = strict;
  const validate::Report report = validate::validate_card(options);
  INFO(validate::render_text(report));
  CHECK(!report.pass());
  const std::vector<std::string> failed = report.failed_checks();
  REQUIRE(!failed.empty());
  CHECK(failed.front() == "forward");
  CHECK(check_named(report, "generate").pass);  // it compares tokens only
  CHECK(check_named(report, "forward").failures.at(0).find("max abs diff") != std::string::npos);
  CHECK(validate::render_text(report).find("FAIL: forward") != std::string::npos);
}

TEST_CASE("a case that is not a model case is refused with a clear error", "[validate]") {
  validate::ValidateOptions options;
  options.card = source_path("nest/qwen3-8b");
  options.golden_dir = source_path("golden/mxfp4-dequant");
  options.std_dir = source_path("stdlib");
  CHECK_THROWS_WITH(validate::validate_card(options), Catch::Contains("no linnet_generics"));
  options.golden_dir = source_path("golden/no-such-case");
  CHECK_THROWS_WITH(validate::validate_card(options), Catch::Contains("not a golden case directory"));
}
