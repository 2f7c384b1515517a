// `linnet validate --mxfp4`: std.quant::dequantize_mxfp4, as its body and
// as the op table's kernel, bit for bit against transformers.
#include <catch2/catch.hpp>

#include "linnet/tensor/npz.hpp"
#include "linnet/validate/golden.hpp"
#include "linnet/validate/mxfp4.hpp"
#include "test_validate_support.hpp"

using namespace linnet;
using cli_test::run_linnet;
using cli_test::ScratchDir;
using validate_test::source_path;

TEST_CASE("dequantize_mxfp4 is bit-exact, body and kernel, f32 and bf16", "[validate][mxfp4]") {
  const validate::Mxfp4Report report =
      validate::validate_mxfp4(source_path("golden/mxfp4-dequant"), source_path("stdlib"));
  CHECK(report.case_name == "mxfp4-dequant");
  REQUIRE(report.comparisons.size() == 4);
  for (const validate::Mxfp4Comparison& row : report.comparisons) {
    INFO(row.implementation << " " << tensor::dtype_name(row.dtype));
    CHECK(row.ran == row.implementation);
    CHECK(row.elements == 4 * 192 * 16);
    CHECK(row.differing == 0);
  }
  CHECK(report.pass());

  const cli_test::Outcome outcome = run_linnet({"validate", "--mxfp4", "golden/mxfp4-dequant", "--json"});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.status == 0);
  CHECK(outcome.out.find("\"name\": \"native bf16\"") != std::string::npos);
  CHECK(outcome.out.find("\"pass\": true}\n") != std::string::npos);
}

TEST_CASE("one changed reference bit is counted, per dtype, and fails", "[validate][mxfp4]") {
  ScratchDir scratch;
  const std::string golden = scratch.file("mxfp4");
  validate_test::copy_tree(source_path("golden/mxfp4-dequant"), golden);
  auto arrays = tensor::read_npz(golden + "/expected.npz");
  arrays.at("f32").data.at(5 * 4) ^= std::byte{1};  // the lowest mantissa bit of element 5
  tensor::write_npz(golden + "/expected.npz", arrays);

  const validate::Mxfp4Report report = validate::validate_mxfp4(golden, source_path("stdlib"));
  CHECK(!report.pass());
  for (const validate::Mxfp4Comparison& row : report.comparisons) {
    CHECK(row.differing == (row.dtype == tensor::DType::F32 ? 1 : 0));
  }
  const cli_test::Outcome outcome = run_linnet({"validate", "--mxfp4", golden});
  INFO(outcome.out << outcome.err);
  CHECK(outcome.status == 1);
  CHECK(outcome.err.find("differs from the reference bits") != std::string::npos);

  // A missing member is an error, not a count.
  arrays.erase("bf16_bits");
  tensor::write_npz(golden + "/expected.npz", arrays);
  CHECK_THROWS_WITH(validate::validate_mxfp4(golden, source_path("stdlib")), Catch::Contains("`bf16_bits`"));
}
