// Diagnostics that say where the mistake is and what to write: a generic
// argument left out (reported where the type is written, not at its uses),
// a missing `use` of a standard library name, misspelled names and modules,
// shape errors that suggest no `where` clause equating independent generics,
// and a short list of the facts searched.
#include <catch2/catch.hpp>

#include "checker_test_util.hpp"

namespace {

using linnet::check::testing::run_checker;
using linnet::check::testing::TempDir;

linnet::check::testing::CheckRun check_source(const std::string& text, const linnet::check::DriverOptions& options = {}) {
  TempDir dir;
  return run_checker({dir.write("case.linnet", text)}, options);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a defaulted generic the uses do not fit is reported where the type is written", "[check][help]") {
  const auto run = check_source(R"(module m
use std.nn.norm::{RmsNorm}

pub block Model<H: Dim, T: Float> {
    sub norm: RmsNorm<H>
    sub final_norm: RmsNorm<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; T]) -> Tensor[S, H; T] {
        let a = norm.forward(x)
        let b = norm.forward(x)
        let c = final_norm.forward(x)
        return a + b + c
    }
}
)");
  INFO(run.text);
  // One per declaration that leaves `T` out, none at the three uses.
  REQUIRE(run.errors == std::vector<std::string>{"E2101", "E2101"});
  CHECK(contains(run.text, "error E2101: `RmsNorm<H>` leaves `T` of `RmsNorm` at its default (`T = bf16`)"));
  CHECK(contains(run.text, "case.linnet:5:15"));
  CHECK(contains(run.text, "case.linnet:6:21"));
  CHECK(contains(run.text, "help: pass it: `RmsNorm<H, T>`"));
  CHECK_FALSE(contains(run.text, "case.linnet:9:"));
}

TEST_CASE("a defaulted generic that fits its uses is no error", "[check][help]") {
  const auto run = check_source(R"(module m
use std.nn.norm::{RmsNorm}

pub block Model<H: Dim> {
    sub norm: RmsNorm<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; bf16]) -> Tensor[S, H; bf16] {
        return norm.forward(x)
    }
}
)");
  INFO(run.text);
  CHECK(run.errors.empty());
}

TEST_CASE("too few generic arguments name every missing parameter", "[check][help]") {
  const auto run = check_source(R"(module m

block Inner<H: Dim, W: Dim, T: Float> {
    param w: Tensor[H, W; T]
}

pub block Model<H: Dim, T: Float> {
    sub inner: Inner<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; T]) -> Tensor[S, H; T] {
        return x
    }
}
)");
  INFO(run.text);
  REQUIRE(run.errors == std::vector<std::string>{"E2111"});
  CHECK(contains(run.text, "`Inner` is missing values for its generic parameters `W` and `T`"));
  CHECK(contains(run.text, "case.linnet:8:16"));
  CHECK(contains(run.text, "help: write them out: `Inner<H, W, T>`"));
}

TEST_CASE("a standard library name used without its `use` gets the `use` to add", "[check][help]") {
  const auto run = check_source(R"(module m

pub block Model<H: Dim> {
    sub norm: RmsNorm<H, f32>

    pub entry forward(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return rms_norm(x, norm.weight)
    }
}
)");
  INFO(run.text);
  CHECK(contains(run.text, "help: `RmsNorm` is in the standard library: add `use std.nn.norm::{RmsNorm}`"));
  CHECK(contains(run.text, "help: `rms_norm` is in the standard library: add `use std.nn.norm::{rms_norm}`"));
}

TEST_CASE("a misspelled name in scope gets a did-you-mean", "[check][help]") {
  const auto run = check_source(R"(module m

pub entry main(x: f32) -> f32 {
    let value = x
    return valeu
}
)");
  INFO(run.text);
  REQUIRE(run.errors == std::vector<std::string>{"E1201"});
  CHECK(contains(run.text, "help: did you mean `value`?"));
}

TEST_CASE("a misspelled module gets a did-you-mean", "[check][help]") {
  for (const std::string path : {"std.nn.nrom", "std.nnn.norm"}) {
    const auto run = check_source("module m\nuse " + path + "::{RmsNorm}\n\npub entry main(x: f32) -> f32 {\n    return x\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E1202"});
    CHECK(contains(run.text, "help: did you mean `std.nn.norm`?"));
  }
}

TEST_CASE("a shape mismatch of two independent generics suggests no `where` clause", "[check][help]") {
  const auto run = check_source(R"(module m

pub fn bad<Vocab: Dim, H: Dim>(logits: Tensor[Vocab; f32], hidden: Tensor[H; f32]) -> Tensor[H; f32] {
    return logits + hidden
}
)");
  INFO(run.text);
  REQUIRE(!run.errors.empty());
  CHECK_FALSE(contains(run.text, "where Vocab == H"));
  CHECK_FALSE(contains(run.text, "where H == Vocab"));
  CHECK(contains(run.text, "are independent: check which tensor or generic is meant here"));
}

TEST_CASE("the facts searched are listed briefly, in full with --verbose", "[check][help]") {
  const std::string source = R"(module m

pub fn bad<H: Dim, N: Dim, A: Dim, B: Dim, C: Dim>(x: Tensor[H; f32]) -> Tensor[N, H / N; f32]
where N > 0, A > 0, B > 0, C > 0, A > B {
    return reshape(x, [N, H / N])
}
)";
  const auto brief = check_source(source);
  INFO(brief.text);
  CHECK(contains(brief.text, "more (`linnet check --verbose` lists them)"));
  linnet::check::DriverOptions verbose;
  verbose.verbose = true;
  const auto full = check_source(source, verbose);
  INFO(full.text);
  CHECK_FALSE(contains(full.text, "--verbose"));
  CHECK(contains(full.text, "`A > B`"));
  // Still the suggestion that settles it.
  CHECK(contains(brief.text, "help: add `where H % N == 0` to `bad`"));
}

TEST_CASE("a plain program's unbound generic is not told about cards", "[check][help]") {
  TempDir dir;
  const std::string file = dir.write("plain.linnet", R"(module plain

pub block Model<H: Dim, N: Dim> {
    param w: Tensor[H; f32]

    pub entry forward(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x * w
    }
}
)");
  linnet::check::DriverOptions options;
  options.bindings = {"H=4"};
  const auto run = run_checker({file}, options);
  INFO(run.text);
  REQUIRE(run.errors == std::vector<std::string>{"E2110"});
  CHECK(contains(run.text, "help: bind it: `--bind N=...`"));
  CHECK_FALSE(contains(run.text, "card"));
  CHECK_FALSE(contains(run.text, "nest.toml"));
}
