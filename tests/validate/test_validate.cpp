// `linnet validate` as a library: every golden case passes with its card,
// in f32 and in bf16, and each check measures what it says it does.
#include <catch2/catch.hpp>

#include "linnet/validate/report.hpp"
#include "linnet/validate/validate.hpp"
#include "test_validate_support.hpp"

using namespace linnet;
using validate_test::golden_cases;
using validate_test::source_path;

namespace {

validate::Report run_case(const validate_test::GoldenCase& golden_case, tensor::DType dtype,
                          eval::NumericsPolicy numerics = eval::NumericsPolicy::Exact) {
  validate::ValidateOptions options;
  options.card = source_path("nest/" + golden_case.card);
  options.golden_dir = source_path("golden/" + golden_case.golden);
  options.std_dir = source_path("stdlib");
  options.dtype = dtype;
  options.numerics = numerics;
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

TEST_CASE("every golden case passes in bf16", "[validate][golden][bf16]") {
  for (const auto& golden_case : golden_cases()) {
    const validate::Report report = run_case(golden_case, tensor::DType::BF16);
    INFO(validate::render_text(report));
    REQUIRE(report.checks.size() == expected_checks(golden_case.card));
    CHECK(report.pass());
    // bf16 logits are not f32's: the differences are real but small.
    const auto& forward = check_named(report, "forward");
    CHECK(*forward.max_abs_diff > 0);
    CHECK(*forward.mean_abs_diff <= 0.01);
    CHECK(forward.argmax_agreement() >= 0.9);
    if (report.checks.size() == 3) {
      // generate is compared up to where bf16 greedy decoding first departs
      // from the f32 reference, and there it must agree on every token.
      const auto& decode = check_named(report, "decode");
      const auto& generate = check_named(report, "generate");
      CHECK(generate.argmax_matches == generate.positions);
      CHECK(generate.positions <= decode.positions);
      if (decode.tokens_equal == std::optional<bool>(true)) CHECK(generate.positions == decode.positions);
    }
  }
}

TEST_CASE("the default tolerances are issue 7's", "[validate]") {
  const validate::Tolerances f32 = validate::default_tolerances(tensor::DType::F32);
  CHECK(f32.max_abs_diff == std::optional<double>(1e-4));
  CHECK(!f32.mean_abs_diff);
  CHECK(f32.min_argmax_agreement == 1.0);
  CHECK(f32.tokens_must_match);
  const validate::Tolerances bf16 = validate::default_tolerances(tensor::DType::BF16);
  CHECK(!bf16.max_abs_diff);
  CHECK(bf16.mean_abs_diff == std::optional<double>(0.01));
  CHECK(bf16.min_argmax_agreement == 0.9);
  CHECK(!bf16.tokens_must_match);
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
