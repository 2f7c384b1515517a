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

TEST_CASE("a defaulted Dim generic a method's result does not fit is reported where the type is written",
          "[check][help]") {
  const std::string block = R"(module m

block Proj<H: Dim, Out: Dim = 8> {
    param w: Tensor[Out, H; f32]

    pub fn forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, Out; f32] {
        let y[s, o] = sum[h] x[s, h] * w[o, h]
        return y
    }
}

pub block Model<H: Dim> {
    sub proj: Proj<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, H; f32] {
)";
  SECTION("a broadcast with the result") {
    const auto run = check_source(block + "        let y = proj.forward(x)\n        return x + y\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2207"});
    CHECK(contains(run.text, "error E2207: `Proj<H>` leaves `Out` of `Proj` at its default (`Out = 8`), but the result "
                             "of `Proj.forward` is used where another value is needed"));
    CHECK(contains(run.text, "case.linnet:13:15"));
    CHECK(contains(run.text, "shape [S, 8] here does not broadcast with [S, H]"));
    CHECK(contains(run.text, "help: pass it: `Proj<H, H>`"));
  }
  SECTION("a declared type of a `let`") {
    const auto run = check_source(block + "        let y: Tensor[S, H; f32] = proj.forward(x)\n        return y\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2202"});
    CHECK(contains(run.text, "case.linnet:13:15"));
    CHECK(contains(run.text, "help: pass it: `Proj<H, H>`"));
  }
  SECTION("a result that fits at the default is no error") {
    const auto run = check_source(block + "        let y: Tensor[S, 8; f32] = proj.forward(x)\n        return x\n    }\n}\n");
    INFO(run.text);
    CHECK(run.errors.empty());
  }
  SECTION("a mismatch the default does not explain is reported where it is") {
    const auto run = check_source(block + "        let y: Tensor[H, H; f32] = proj.forward(x)\n        return x\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2202"});
    CHECK(contains(run.text, "case.linnet:16:"));
    CHECK_FALSE(contains(run.text, "leaves `Out`"));
  }
}

TEST_CASE("a defaulted dtype in a method's result is reported where the type is written", "[check][help]") {
  const std::string block = R"(module m

block Wide<H: Dim, T: Float = bf16> {
    param w: Tensor[H; T]

    pub fn forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, H; T] {
        return cast<T>(x)
    }
}

pub block Model<H: Dim> {
    sub wide: Wide<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, H; f32] {
)";
  SECTION("an operator") {
    const auto run = check_source(block + "        let y = wide.forward(x)\n        return x + y\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2103"});
    CHECK(contains(run.text, "error E2103: `Wide<H>` leaves `T` of `Wide` at its default (`T = bf16`)"));
    CHECK(contains(run.text, "case.linnet:12:15"));
    CHECK(contains(run.text, "help: pass it: `Wide<H, f32>`"));
  }
  SECTION("the returned value") {
    const auto run = check_source(block + "        return wide.forward(x)\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2101"});
    CHECK(contains(run.text, "case.linnet:12:15"));
    CHECK(contains(run.text, "help: pass it: `Wide<H, f32>`"));
  }
}

TEST_CASE("a defaulted Dim generic in a compound argument shape is reported where the type is written",
          "[check][help]") {
  const auto run = check_source(R"(module m

block Split<H: Dim, Heads: Dim = 4> where Heads > 0 {
    param w: Tensor[H; f32]

    pub fn forward<S: Dim>(x: Tensor[S, Heads, 2 * Heads; f32]) -> Tensor[S, Heads; f32] {
        let y[s, h] = sum[d] x[s, h, d]
        return y
    }
}

pub block Model<H: Dim, Heads: Dim> where Heads > 0 {
    sub split: Split<H>

    pub entry forward<S: Dim>(x: Tensor[S, Heads, 2 * Heads; f32]) -> Tensor[S, Heads; f32] {
        let a = split.forward(x)
        let b = split.forward(x)
        return a + b
    }
}
)");
  INFO(run.text);
  // Once, at the declaration; not at either call.
  REQUIRE(run.errors == std::vector<std::string>{"E2202"});
  CHECK(contains(run.text, "`Split<H>` leaves `Heads` of `Split` at its default (`Heads = 4`)"));
  CHECK(contains(run.text, "case.linnet:13:16"));
  CHECK(contains(run.text, "help: pass it: `Split<H, Heads>`"));
}

TEST_CASE("a where clause broken at a defaulted generic says the argument may be missing", "[check][help]") {
  const auto run = check_source(R"(module m

block Split<H: Dim, Heads: Dim = 4> where H % Heads == 0, Heads > 0 {
    param w: Tensor[H; f32]
}

pub block Model<H: Dim> {
    sub split: Split<H>

    pub entry forward(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x
    }
}
)");
  INFO(run.text);
  REQUIRE(run.errors == std::vector<std::string>{"E2206"});
  CHECK(contains(run.text, "case.linnet:8:16"));
  CHECK(contains(run.text, "the clause holds a generic left to its default here (`Heads = 4`)"));
}

TEST_CASE("a misspelled prelude function gets a did-you-mean", "[check][help]") {
  const auto run = check_source(R"(module m

pub entry main<H: Dim>(x: Tensor[H; f32]) -> Tensor[H; f32] {
    let y = rsqrtt(x)
    return reshpe(y, [H])
}
)");
  INFO(run.text);
  REQUIRE(run.errors == std::vector<std::string>{"E1201", "E1201"});
  CHECK(contains(run.text, "help: did you mean `rsqrt`?"));
  CHECK(contains(run.text, "help: did you mean `reshape`?"));
}

TEST_CASE("a misspelled standard library name gets a did-you-mean", "[check][help]") {
  SECTION("in a `use`") {
    const auto run = check_source("module m\nuse std.nn.norm::{RmsNrom}\n\npub entry main(x: f32) -> f32 {\n    return x\n}\n");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E1201"});
    CHECK(contains(run.text, "module `std.nn.norm` has no item `RmsNrom`; did you mean `RmsNorm`?"));
  }
  SECTION("used without its `use`") {
    const auto run = check_source(R"(module m

pub entry main<H: Dim>(x: Tensor[H; f32], w: Tensor[H; f32]) -> Tensor[H; f32] {
    return rms_nrom(x, w)
}
)");
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E1201"});
    CHECK(contains(run.text, "help: did you mean `rms_norm`? it is in the standard library: add `use std.nn.norm::{rms_norm}`"));
  }
}

TEST_CASE("an unknown generic in --bind is an error for a plain program", "[check][help]") {
  TempDir dir;
  SECTION("module-level entries") {
    const std::string file = dir.write("plain.linnet", R"(module plain

pub entry main<Hidden: Dim>(x: Tensor[Hidden; f32]) -> Tensor[Hidden; f32] {
    return x
}
)");
    linnet::check::DriverOptions options;
    options.bindings = {"Hiden=4"};
    const auto run = run_checker({file}, options);
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2111"});
    CHECK(contains(run.text, "`--bind Hiden=4`: `plain` has no generic `Hiden`; did you mean `Hidden`?"));
    CHECK(contains(run.text, "its entries have the generic Hidden"));
  }
  SECTION("a root block") {
    const std::string file = dir.write("plain.linnet", R"(module plain

pub block Model<Hidden: Dim> {
    pub entry forward(x: Tensor[Hidden; f32]) -> Tensor[Hidden; f32] {
        return x
    }
}
)");
    linnet::check::DriverOptions options;
    options.bindings = {"Hidden=4", "Layers=2"};
    const auto run = run_checker({file}, options);
    INFO(run.text);
    REQUIRE(run.errors == std::vector<std::string>{"E2111"});
    CHECK(contains(run.text, "`--bind Layers=2`: `plain::Model` has no generic `Layers`"));
    CHECK(contains(run.text, "`plain::Model` has generics Hidden"));
  }
}

TEST_CASE("a defaulted generic whose result goes straight into another call is reported where the type is written",
          "[check][help]") {
  const std::string blocks = R"(module m

fn pair<S: Dim, H: Dim>(a: Tensor[S, H; f32], b: Tensor[S, H; f32]) -> Tensor[S, H; f32] {
    return a + b
}

block Wide<H: Dim, T: Float = bf16> {
    param w: Tensor[H; T]

    pub fn forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, H; T] {
        return cast<T>(x)
    }
}

block Proj<H: Dim, Out: Dim = 8> {
    param w: Tensor[Out, H; f32]

    pub fn forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, Out; f32] {
        let y[s, o] = sum[h] x[s, h] * w[o, h]
        return y
    }
}

pub block Model<H: Dim> {
    sub wide: Wide<H>
    sub proj: Proj<H>

    pub entry forward<S: Dim>(x: Tensor[S, H; f32]) -> Tensor[S, H; f32] {
)";
  SECTION("a dtype") {
    const auto run = check_source(blocks + "        return pair(x, wide.forward(x))\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors.size() == 1);
    CHECK(contains(run.text, "`Wide<H>` leaves `T` of `Wide` at its default (`T = bf16`)"));
    CHECK(contains(run.text, "case.linnet:25:15"));
    CHECK(contains(run.text, "argument `b` of `pair` is"));
    CHECK(contains(run.text, "help: pass it: `Wide<H, f32>`"));
  }
  SECTION("an axis") {
    const auto run = check_source(blocks + "        return pair(x, proj.forward(x))\n    }\n}\n");
    INFO(run.text);
    REQUIRE(run.errors.size() == 1);
    CHECK(contains(run.text, "`Proj<H>` leaves `Out` of `Proj` at its default (`Out = 8`)"));
    CHECK(contains(run.text, "case.linnet:26:15"));
    CHECK(contains(run.text, "help: pass it: `Proj<H, H>`"));
  }
  SECTION("a mismatch the default does not explain stays at the call") {
    const auto run = check_source(blocks + "        return pair(x, cast<f32>(wide.forward(x)) + 1.0 > x)\n    }\n}\n");
    INFO(run.text);
    REQUIRE_FALSE(run.errors.empty());
    CHECK_FALSE(contains(run.text, "leaves `T`"));
  }
}
