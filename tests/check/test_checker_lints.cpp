// Lints (W1001-W1003) and the rules around them: `_` exempts a name, and no
// lint is reported for a program with errors.
#include <catch2/catch.hpp>

#include <algorithm>

#include "checker_test_util.hpp"

namespace {

using linnet::check::testing::run_checker;
using linnet::check::testing::TempDir;

long count(const std::vector<std::string>& codes, const std::string& code) {
  return std::count(codes.begin(), codes.end(), code);
}

const char* kUnused = R"(module lints

use std.nn.linear::{linear, Linear}
use std.nn.softmax::{softmax}

pub block Model<H: Dim> {
    param weight: Tensor[H; f32]
    param _spare: Tensor[H; f32]
    buffer table: Tensor[H; f32]
    sub unused_child: Linear<H, H, f32>

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {
        let unused = x * 2.0
        let _kept = x * 3.0
        var also_unused = x
        return softmax(x * weight)
    }
}
)";

}  // namespace

TEST_CASE("unused imports, locals and members are linted", "[check][lint]") {
  TempDir dir;
  const auto run = run_checker({dir.write("lints.linnet", kUnused)});
  INFO(run.text);
  REQUIRE(run.errors.empty());
  CHECK(count(run.warnings, "W1001") == 1);  // `linear`; `Linear` types a sub, `softmax` is called
  CHECK(count(run.warnings, "W1002") == 2);  // `unused`, `also_unused`; `_kept` is exempt
  CHECK(count(run.warnings, "W1003") == 2);  // `table` and `unused_child`; `_spare` is exempt
  CHECK(run.text.find("warning W1002: unused local `unused`") != std::string::npos);
  CHECK(run.text.find("prefix it with `_` to keep it") != std::string::npos);
}

TEST_CASE("a member used only by a parent block is not unused", "[check][lint]") {
  TempDir dir;
  const auto run = run_checker({dir.write("parent.linnet", R"(module parent

block Child<H: Dim> {
    param weight: Tensor[H; f32]
}

pub block Model<H: Dim> {
    sub child: Child<H>

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x * child.weight
    }
}
)")});
  INFO(run.text);
  CHECK(run.errors.empty());
  CHECK(run.warnings.empty());
}

TEST_CASE("lints are reported only for error-free programs", "[check][lint]") {
  TempDir dir;
  std::string broken = kUnused;
  broken.replace(broken.find("return softmax(x * weight)"), 26, "return softmax(x * missing)");
  const auto run = run_checker({dir.write("broken.linnet", broken)});
  CHECK(run.has_error("E1201"));
  CHECK(run.warnings.empty());
}
