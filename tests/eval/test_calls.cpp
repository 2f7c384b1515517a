// Calls: explicit generic arguments, defaults, inference of generics from
// argument shapes (bare generics, packs, and elements such as `G * 32`,
// `2 * Inner` or `P + Batch`), named and default arguments, and the
// diagnostics for arguments or results that do not fit.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("generics are inferred from argument shapes and dtypes", "[calls]") {
  auto program = load_source(R"(
fn blocks_of<G: Dim, T: Float>(x: Tensor[G * 32; T]) -> Tensor[G, 32; T] {
    return reshape(x, [G, 32])
}
pub fn call_blocks(x: Tensor[96; f32]) -> Tensor[3, 32; f32] {
    return blocks_of(x)
}
fn halves<Inner: Dim>(x: Tensor[2 * Inner; i32]) -> Tensor[Inner; i32] {
    return x[0::2]
}
pub fn call_halves(x: Tensor[6; i32]) -> Tensor[3; i32] {
    return halves(x)
}
fn tail<P: Dim, Batch: Dim>(x: Tensor[P + Batch; i32], steps: Tensor[Batch; i32]) -> Tensor[P; i32] {
    return x[0:P]
}
pub fn call_tail(x: Tensor[7; i32], steps: Tensor[2; i32]) -> Tensor[5; i32] {
    return tail(x, steps)
}
fn count_leading<*S: Shape, N: Dim>(x: Tensor[*S, N; f32]) -> Tensor[*S; f32] {
    let total[*s] = sum[n] x[*s, n]
    return total
}
pub fn call_pack(x: Tensor[2, 3, 4; f32]) -> Tensor[2, 3; f32] {
    return count_leading(x)
}
pub fn call_scalar(x: Tensor[3; f32]) -> Tensor[3; f32] {
    return scale_by(x, 2.0)
}
fn scale_by<N: Dim, T: Float>(x: Tensor[N; T], k: T) -> Tensor[N; T] {
    return x * k
}
)");
  Tensor x96 = Tensor::from_vector(std::vector<float>(96, 1.0f), {96});
  CHECK(call_tensor(program, "call_blocks", {v(x96)}).shape() == Shape{3, 32});
  CHECK(values(call_tensor(program, "call_halves", {v(i32({1, 2, 3, 4, 5, 6}, {6}))})) ==
        std::vector<double>{1, 3, 5});
  CHECK(values(call_tensor(program, "call_tail", {v(i32({1, 2, 3, 4, 5, 6, 7}, {7})), v(i32({0, 0}, {2}))})) ==
        std::vector<double>{1, 2, 3, 4, 5});
  std::vector<float> ones(24, 1.0f);
  Tensor c = call_tensor(program, "call_pack", {v(Tensor::from_vector(ones, {2, 3, 4}))});
  CHECK(c.shape() == Shape{2, 3});
  CHECK(values(c) == std::vector<double>(6, 4.0));
  CHECK(values(call_tensor(program, "call_scalar", {v(f32({1, 2, 3}, {3}))})) == std::vector<double>{2, 4, 6});
}

TEST_CASE("explicit generic arguments, defaults and shape-pack arguments", "[calls]") {
  auto program = load_source(R"(
fn widen<R: Dim, N: Dim, Shards: Dim = 1, T: Float = f32>(x: Tensor[R, N; T]) -> Tensor[R, Shards * N; T] {
    let one = reshape(x, [R, 1, N])
    return reshape(broadcast_to(one, [R, Shards, N]), [R, Shards * N])
}
pub fn explicit(x: Tensor[2, 3; f32]) -> Tensor[2, 6; f32] {
    return widen<2, 3, 2, f32>(x)
}
pub fn defaults(x: Tensor[2, 3; f32]) -> Tensor[2, 3; f32] {
    return widen(x)
}
pub fn computed<B: Dim, S: Dim>(x: Tensor[B * S, 3; f32]) -> Tensor[B * S, 9; f32] {
    return widen<B * S, 3, 3>(x)
}
fn rows_scaled<*S: Shape, N: Dim, T: Float>(x: Tensor[*S, N; T], scale: Tensor[*S; f32]) -> Tensor[*S, N; T] {
    let y[*s, n] = x[*s, n] * cast<T>(scale[*s])
    return y
}
pub fn with_pack(x: Tensor[4, 2; f32], s: Tensor[4; f32]) -> Tensor[4, 2; f32] {
    return rows_scaled<[4], 2, f32>(x, s)
}
pub fn no_default() -> Tensor[3; i64] {
    return need<3>()
}
fn need<N: Dim, M: Dim>() -> Tensor[N; i64] {
    return iota<i64>(N)
}
)");
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(values(call_tensor(program, "explicit", {v(x)})) ==
        std::vector<double>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  CHECK(values(call_tensor(program, "defaults", {v(x)})) == values(x));
  CHECK(call_tensor(program, "computed", {v(x)}, {{"B", dim(1)}, {"S", dim(2)}}).shape() == Shape{2, 9});
  CHECK(values(call_tensor(program, "with_pack", {v(f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})),
                                                  v(f32({1, 0, 2, -1}, {4}))})) ==
        std::vector<double>{1, 2, 0, 0, 10, 12, -7, -8});
  auto error = expect_error([&] { call(program, "no_default", {}); }, "E2110");
  CHECK(error.diagnostic().message.find("`M`") != std::string::npos);
}

TEST_CASE("arguments that do not fit name the call, the parameter and both shapes", "[calls][errors]") {
  auto program = load_source(R"(
fn heads<B: Dim, S: Dim, N: Dim, D: Dim>(x: Tensor[B, S, N * D; f32]) -> Tensor[B, N, S, D; f32] {
    return permute(reshape(x, [B, S, N, D]), [0, 2, 1, 3])
}
pub fn caller(x: Tensor[1, 2, 6; f32]) -> Tensor[1, 4, 2, 2; f32] {
    return heads<1, 2, 4, 2>(x)
}
fn same<N: Dim>(a: Tensor[N; f32], b: Tensor[N; f32]) -> Tensor[N; f32] {
    return a + b
}
pub fn mismatched(a: Tensor[3; f32], b: Tensor[4; f32]) -> Tensor[3; f32] {
    return same(a, b)
}
fn lies<N: Dim>(a: Tensor[N; f32]) -> Tensor[N; f32] {
    return concat(a, a, axis = 0)
}
pub fn wrong_result(a: Tensor[2; f32]) -> Tensor[2; f32] {
    return lies(a)
}
fn takes_two(a: Tensor[2; f32], b: f32) -> Tensor[2; f32] {
    return a * b
}
pub fn named(a: Tensor[2; f32]) -> Tensor[2; f32] {
    return takes_two(b = 3.0, a = a)
}
pub fn twice(a: Tensor[2; f32]) -> Tensor[2; f32] {
    return takes_two(a, a = a)
}
pub fn missing(a: Tensor[2; f32]) -> Tensor[2; f32] {
    return takes_two(a)
}
)");
  auto shape = expect_error([&] { call(program, "caller", {v(f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {1, 2, 6}))}); },
                            "E2202");
  const std::string text = notes_of(shape);
  CHECK(text.find("argument `x`") != std::string::npos);
  CHECK(text.find("heads") != std::string::npos);
  CHECK(text.find("Tensor[1, 2, 8; f32]") != std::string::npos);
  CHECK(text.find("f32[1, 2, 6]") != std::string::npos);
  auto pair = expect_error([&] { call(program, "mismatched", {v(f32({1, 2, 3}, {3})), v(f32({1, 2, 3, 4}, {4}))}); },
                           "E2202");
  CHECK(notes_of(pair).find("argument `b`") != std::string::npos);
  auto result = expect_error([&] { call(program, "wrong_result", {v(f32({1, 2}, {2}))}); }, "E2202");
  CHECK(notes_of(result).find("the result of `test::lies`") != std::string::npos);
  CHECK(values(call_tensor(program, "named", {v(f32({1, 2}, {2}))})) == std::vector<double>{3, 6});
  expect_error([&] { call(program, "twice", {v(f32({1, 2}, {2}))}); }, "E2102");
  expect_error([&] { call(program, "missing", {v(f32({1, 2}, {2}))}); }, "E2102");
}

TEST_CASE("where clauses are checked with the bound generics", "[calls][errors]") {
  auto program = load_source(R"(
fn split<H: Dim, N: Dim>(x: Tensor[H; f32]) -> Tensor[N, H / N; f32]
where N > 0, H % N == 0 {
    return reshape(x, [N, H / N])
}
pub fn good(x: Tensor[6; f32]) -> Tensor[3, 2; f32] {
    return split<6, 3>(x)
}
pub fn bad(x: Tensor[6; f32]) -> Tensor[4, 1; f32] {
    return split<6, 4>(x)
}
)");
  CHECK(call_tensor(program, "good", {v(f32({1, 2, 3, 4, 5, 6}, {6}))}).shape() == Shape{3, 2});
  auto error = expect_error([&] { call(program, "bad", {v(f32({1, 2, 3, 4, 5, 6}, {6}))}); }, "E2206");
  CHECK(notes_of(error).find("H % N == 0") != std::string::npos);
}

TEST_CASE("module functions of an imported module and of the standard library", "[calls]") {
  auto program = load_source(R"(
use std.nn.softmax::{softmax}
use std.nn.activations
pub fn probabilities(x: Tensor[2, 3; f32]) -> Tensor[2, 3; f32] {
    return softmax(x)
}
pub fn positive(x: Tensor[3; f32]) -> Tensor[3; f32] {
    return activations.relu(x)
}
)");
  Tensor p = call_tensor(program, "probabilities", {v(f32({0, 0, 0, 1, 2, 3}, {2, 3}))});
  const auto row = values(p);
  CHECK(row[0] == Approx(1.0 / 3));
  const double total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(row[5] == Approx(std::exp(3.0) / total));
  CHECK(values(call_tensor(program, "positive", {v(f32({-1, 0, 2}, {3}))})) == std::vector<double>{0, 0, 2});
  // A standard-library op called directly by its qualified name.
  Tensor direct = call_tensor(program, "std.nn.activations::relu", {v(f32({-3, 3}, {2}))});
  CHECK(values(direct) == std::vector<double>{0, 3});
}

TEST_CASE("type aliases and structs", "[calls]") {
  auto program = load_source(R"(
type Hidden<B: Dim, S: Dim, H: Dim, T: Float = f32> = Tensor[B, S, H; T]
struct Pair<T: DType> {
    key: Tensor[2; T]
    value: Tensor[2; T]
}
fn width<B: Dim, S: Dim, H: Dim>(x: Hidden<B, S, H>) -> Hidden<B, S, H> {
    return x * cast<f32>(H)
}
pub fn through_alias(x: Tensor[1, 2, 3; f32]) -> Tensor[1, 2, 3; f32] {
    return width(x)
}
pub fn wrong_alias(x: Tensor[1, 2, 3; bf16]) -> Tensor[1, 2, 3; bf16] {
    return width(x)
}
fn combine<T: DType>(pair: Pair<T>) -> Tensor[2; T] {
    return pair.key + pair.value
}
pub fn build(a: Tensor[2; i32], b: Tensor[2; i32]) -> Tensor[2; i32] {
    let pair = Pair(value = b, key = a)
    return combine(pair) + pair.key
}
pub fn mismatched(a: Tensor[2; i32], b: Tensor[2; f32]) -> Tensor[2; i32] {
    let pair = Pair(key = a, value = b)
    return pair.key
}
)");
  CHECK(values(call_tensor(program, "through_alias", {v(f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}))})) ==
        std::vector<double>{3, 6, 9, 12, 15, 18});
  expect_error([&] { call(program, "wrong_alias", {v(bf16({1, 2, 3, 4, 5, 6}, {1, 2, 3}))}); }, "E2103");
  CHECK(values(call_tensor(program, "build", {v(i32({1, 2}, {2})), v(i32({10, 20}, {2}))})) ==
        std::vector<double>{12, 24});
  expect_error([&] { call(program, "mismatched", {v(i32({1, 2}, {2})), v(f32({1, 2}, {2}))}); }, "E2103");
}
