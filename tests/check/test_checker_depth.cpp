// Programs far deeper than any model: a chain of tens of thousands of
// functions or sub-blocks. The checker walks them without recursing on the
// C++ stack (a segfault before), and refuses a block tree deeper than the
// interpreter instantiates, at the member where `linnet run` would stop.
#include <catch2/catch.hpp>

#include "checker_test_util.hpp"

namespace {

using linnet::check::testing::run_checker;
using linnet::check::testing::TempDir;

// c0 calls c1 calls ... c<count>: acyclic, so no E2119. (Not `f`: f16,
// f32 and f64 are prelude names.)
std::string call_chain(int count) {
  std::string text = "module m\n";
  for (int i = 0; i < count; ++i) {
    text += "fn c" + std::to_string(i) + "(x: f32) -> f32 { return c" + std::to_string(i + 1) + "(x) }\n";
  }
  text += "fn c" + std::to_string(count) + "(x: f32) -> f32 { return x }\n";
  return text + "pub entry g(x: f32) -> f32 { return c0(x) }\n";
}

// B0 holds B1 holds ... B<count>; Root holds B0.
std::string block_chain(int count) {
  std::string text = "module m\n";
  for (int i = 0; i < count; ++i) {
    text += "block B" + std::to_string(i) + " {\n  sub inner: B" + std::to_string(i + 1) +
            "\n  pub fn f(x: f32) -> f32 { return inner.f(x) }\n}\n";
  }
  text += "block B" + std::to_string(count) + " {\n  pub fn f(x: f32) -> f32 { return x }\n}\n";
  return text + "block Root {\n  sub b: B0\n  entry run(x: f32) -> f32 { return b.f(x) }\n}\n";
}

}  // namespace

TEST_CASE("a call chain of 50000 functions is checked without overflowing the stack", "[check][depth]") {
  TempDir dir;
  const auto run = run_checker({dir.write("chain.linnet", call_chain(50000))});
  CHECK(run.errors.empty());
}

TEST_CASE("recursion through a long chain is still found", "[check][depth]") {
  TempDir dir;
  std::string text = call_chain(20000);
  const std::string last = "fn c20000(x: f32) -> f32 { return x }";
  text.replace(text.find(last), last.size(), "fn c20000(x: f32) -> f32 { return c0(x) }");
  const auto run = run_checker({dir.write("cycle.linnet", text)});
  REQUIRE(run.errors == std::vector<std::string>{"E2119"});
  CHECK(run.text.find("indirectly recursive") != std::string::npos);
}

TEST_CASE("a block tree deeper than the interpreter instantiates is E2119 at the member", "[check][depth]") {
  TempDir dir;
  linnet::check::DriverOptions options;
  options.root = "Root";
  // Root + 255 blocks + the last = 257 levels: one too many.
  const auto deep = run_checker({dir.write("deep.linnet", block_chain(255))}, options);
  REQUIRE(deep.errors == std::vector<std::string>{"E2119"});
  CHECK(deep.text.find("blocks nest deeper than 256 levels") != std::string::npos);
  // 256 levels is the most that runs.
  const auto fits = run_checker({dir.write("fits.linnet", block_chain(254))}, options);
  CHECK(fits.errors.empty());
  // Far deeper: a diagnostic, not a segfault.
  const auto far = run_checker({dir.write("far.linnet", block_chain(50000))}, options);
  CHECK(far.errors == std::vector<std::string>{"E2119"});
}
