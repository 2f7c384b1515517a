// Focused checks of rules whose diagnostics carry more than a code: what an
// E2201 says about the two domains, the facts an unprovable relation lists,
// a scan's stacked type, inference through shape packs, and the solver-backed
// proofs the cards lean on (rewrites, exact quotients, slice extents).
#include <catch2/catch.hpp>

#include "checker_test_util.hpp"

namespace {

using linnet::check::testing::run_checker;
using linnet::check::testing::TempDir;

linnet::check::testing::CheckRun check_source(const std::string& text) {
  TempDir dir;
  return run_checker({dir.write("case.linnet", text)});
}

}  // namespace

TEST_CASE("an incompatible contraction names both domains", "[check][rules]") {
  const auto run = check_source(R"(module m

pub fn bad<M: Dim, K1: Dim, K2: Dim, N: Dim>(a: Tensor[M, K1; f32], b: Tensor[K2, N; f32]) -> Tensor[M, N; f32] {
    let c[m, n] = sum[k] a[m, k] * b[k, n]
    return c
}
)");
  REQUIRE(run.errors == std::vector<std::string>{"E2201"});
  CHECK(run.text.find("^^^^^^ reduction index `k` has incompatible domains") != std::string::npos);
  CHECK(run.text.find("- used here with a different extent") != std::string::npos);
  CHECK(run.text.find("note: `a` binds `k` to K1") != std::string::npos);
  CHECK(run.text.find("note: `b` binds `k` to K2") != std::string::npos);
}

TEST_CASE("proofs use rewrites, exact quotients and slice extents", "[check][rules]") {
  const auto run = check_source(R"(module m

fn blocks<E: Dim, G: Dim>(x: Tensor[E, G * 32; f32]) -> Tensor[E, G * 32; f32] {
    return x
}

pub fn rewrite<E: Dim, H: Dim, Blocks: Dim>(x: Tensor[E, H; f32]) -> Tensor[E, Blocks * 32; f32]
where H == Blocks * 32 {
    return blocks<E, Blocks>(x)
}

pub fn quotient<B: Dim, Vocab: Dim, Shards: Dim>(x: Tensor[B, Shards * (Vocab / Shards); f32]) -> Tensor[B, Vocab; f32]
where
    Shards > 0,
    Vocab % Shards == 0
{
    return x
}

pub fn packed<P: Dim, Batch: Dim>(x: Tensor[P + Batch, 8; f32], y: Tensor[2 * Batch; f32]) -> (Tensor[Batch, 8; f32], Tensor[Batch; f32], Tensor[Batch; f32]) {
    return (x[P:P + Batch, :], y[0::2], y[1::2])
}
)");
  INFO(run.text);
  CHECK(run.errors.empty());
}

TEST_CASE("a missing fact is named with the facts searched and a suggestion", "[check][rules]") {
  const auto run = check_source(R"(module m

pub fn bad<H: Dim, N: Dim>(x: Tensor[H; f32]) -> Tensor[N, H / N; f32]
where N > 0 {
    return reshape(x, [N, H / N])
}
)");
  REQUIRE(run.errors == std::vector<std::string>{"E2203"});
  CHECK(run.text.find("needed: `H == N * (H / N)`") != std::string::npos);
  CHECK(run.text.find("facts searched: `N > 0` (where clause of `bad`)") != std::string::npos);
  CHECK(run.text.find("help: add `where H % N == 0` to `bad`") != std::string::npos);
}

TEST_CASE("shape packs bind from arguments and are written out in results", "[check][rules]") {
  const auto ok = check_source(R"(module m

fn widen<*S: Shape, H: Dim>(x: Tensor[*S, H; bf16]) -> Tensor[*S, H; f32] {
    return cast<f32>(x)
}

pub fn use_it<B: Dim, S: Dim>(x: Tensor[B, S, 4; bf16]) -> Tensor[B, S, 4; f32] {
    let explicit = widen<[B, S], 4>(x)
    return widen(x) + explicit
}
)");
  INFO(ok.text);
  CHECK(ok.errors.empty());
}

TEST_CASE("a scan stacks what it yields", "[check][rules]") {
  const auto ok = check_source(R"(module m

pub fn run<T: Dim, H: Dim>(xs: Tensor[T, H; f32]) -> (Tensor[T, H; f32], Tensor[T; f32]) {
    var h = xs[0]
    let both = for t in 0..T {
        h = h + xs[t]
        yield (h, sum[i] h[i])
    }
    return both
}
)");
  // `xs[0]` needs `T > 0`.
  CHECK(ok.has_error("E2209"));

  const auto fixed = check_source(R"(module m

pub fn run<T: Dim, H: Dim>(xs: Tensor[T, H; f32]) -> (Tensor[T, H; f32], Tensor[T; f32])
where T > 0 {
    var h = xs[0]
    let both = for t in 0..T {
        h = h + xs[t]
        yield (h, sum[i] h[i])
    }
    return both
}
)");
  INFO(fixed.text);
  CHECK(fixed.errors.empty());
}

TEST_CASE("literals adopt only dtypes that can hold them", "[check][rules]") {
  CHECK(check_source("module m\npub fn f(x: i32) -> i32 {\n    return x * 0.5\n}\n").has_error("E2101"));
  CHECK(check_source("module m\npub fn f(x: i8) -> i8 {\n    return x + 128\n}\n").has_error("E2105"));
  CHECK(check_source("module m\npub fn f(x: f16) -> f16 {\n    return x + 1e6\n}\n").has_error("E2105"));
  CHECK(check_source("module m\npub fn f(x: bool) -> bool {\n    return x == 1\n}\n").has_error("E2101"));
  const auto ok = check_source("module m\npub fn f(x: bf16, n: u8) -> (bf16, u8) {\n    return (x * 2 + 0.5, n + 255)\n}\n");
  INFO(ok.text);
  CHECK(ok.errors.empty());
}

TEST_CASE("state is assigned only by its own block, with its declared type", "[check][rules]") {
  const auto ok = check_source(R"(module m

block Cache<N: Dim> {
    state keys: Tensor[N; f32]

    pub fn put(x: Tensor[N; f32]) -> Tensor[N; f32] {
        keys = keys + x
        return keys
    }
}

pub block Model<N: Dim> {
    sub cache: Cache<N>

    pub entry step(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return cache.put(x) + cache.keys
    }
}
)");
  INFO(ok.text);
  CHECK(ok.errors.empty());

  const auto wrong = check_source(R"(module m

block Cache<N: Dim> {
    state keys: Tensor[N; f32]

    pub fn put(x: Tensor[N, 2; f32]) -> Tensor[N; f32] {
        keys = x
        return keys
    }
}
)");
  CHECK(wrong.has_error("E2109"));
}
