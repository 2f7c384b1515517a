// The prelude, function by function. Float functions are compared with
// correctly rounded references from gen_prelude.py (f32 within a few ulps,
// as libm's float functions are not all correctly rounded; bf16 within one
// bf16 step); everything else is exact and worked out by hand.
#include <cmath>
#include <limits>

#include "eval_test_util.hpp"
#include "prelude_reference.inc"

using namespace eval_test;

TEST_CASE("float functions in f32 and bf16", "[prelude]") {
  for (const FloatFunctionReference& reference : float_function_references()) {
    const std::string name = reference.name;
    auto program = load_source("pub fn f<N: Dim, T: Float>(x: Tensor[N; T]) -> Tensor[N; T] {\n    return " + name +
                               "(x)\n}\npub fn literal() -> f32 {\n    return cast<f32>(" + name + "(0.5))\n}\n");
    INFO("function " << name);
    const Shape shape{static_cast<int64_t>(reference.f32_inputs.size())};
    const Tensor r32 = call_tensor(program, "f", {v(f32(reference.f32_inputs, shape))});
    REQUIRE(r32.dtype() == DType::F32);
    const auto got32 = values(r32);
    for (size_t i = 0; i < got32.size(); ++i) {
      const double expected = reference.f32_expected[i];
      CHECK(std::abs(got32[i] - expected) <= 4 * std::abs(expected) * std::numeric_limits<float>::epsilon() + 1e-30);
    }
    const Tensor r16 = call_tensor(program, "f", {v(bf16(reference.bf16_inputs, shape))});
    REQUIRE(r16.dtype() == DType::BF16);
    const auto got16 = values(r16);
    for (size_t i = 0; i < got16.size(); ++i) {
      const double expected = reference.bf16_expected[i];
      CHECK(std::abs(got16[i] - expected) <= std::abs(expected) * (1.0 / 128) + 1e-30);
    }
    // On a literal the function is folded in f64.
    const double folded = call_tensor(program, "literal", {}).item().to<double>();
    CHECK(folded == Approx(values(call_tensor(program, "f", {v(f64({0.5}, {1}))}))[0]));
  }
}

TEST_CASE("float functions refuse integers", "[prelude][errors]") {
  auto program = load_source("pub fn f(x: Tensor[2; i32]) -> Tensor[2; i32] {\n    return exp(x)\n}\n");
  expect_error([&] { call(program, "f", {v(i32({1, 2}, {2}))}); }, "E2104");
}

TEST_CASE("cast", "[prelude]") {
  auto program = load_source(R"(
pub fn to_i32(x: Tensor[5; f32]) -> Tensor[5; i32] {
    return cast<i32>(x)
}
pub fn to_u8(x: Tensor[3; i32]) -> Tensor[3; u8] {
    return cast<u8>(x)
}
pub fn to_bf16(x: Tensor[4; f32]) -> Tensor[4; bf16] {
    return cast<bf16>(x)
}
pub fn to_bool(x: Tensor[3; f32]) -> Tensor[3; bool] {
    return cast<bool>(x)
}
pub fn from_bool(x: Tensor[2; bool]) -> Tensor[2; f32] {
    return cast<f32>(x)
}
pub fn literal_cast() -> (f32, i32, u32) {
    return (cast<f32>(3), cast<i32>(-2.75), cast<u32>(7))
}
)");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Truncation toward zero, saturation at the range, NaN to 0.
  CHECK(values(call_tensor(program, "to_i32", {v(f32({-1.7f, 2.9f, 3e9f, -3e9f, nan}, {5}))})) ==
        std::vector<double>{-1, 2, 2147483647, -2147483648.0, 0});
  // Integer to integer wraps: 300 - 256 = 44, -1 -> 255.
  CHECK(values(call_tensor(program, "to_u8", {v(i32({300, -1, 7}, {3}))})) == std::vector<double>{44, 255, 7});
  // Round to nearest even: 1 + 2^-8 is halfway to 1 + 2^-7 and goes down to
  // 1 (even); 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6
  // (even) and goes up; 0.1 rounds to 0.10009765625.
  CHECK(values(call_tensor(program, "to_bf16", {v(f32({1.00390625f, 1.01171875f, 0.1f, -2.0f}, {4}))})) ==
        std::vector<double>{1.0, 1.015625, 0.10009765625, -2.0});
  CHECK(values(call_tensor(program, "to_bool", {v(f32({0, -0.5f, 2}, {3}))})) == std::vector<double>{0, 1, 1});
  CHECK(values(call_tensor(program, "from_bool", {v(boolean({true, false}, {2}))})) == std::vector<double>{1, 0});
  Value literal = call(program, "literal_cast", {});
  CHECK(literal.elements()[0].tensor().dtype() == DType::F32);
  CHECK(literal.elements()[0].tensor().item().to<double>() == 3.0);
  CHECK(literal.elements()[1].tensor().item().to<int64_t>() == -2);
  CHECK(literal.elements()[2].tensor().dtype() == DType::U32);
}

TEST_CASE("abs, min and max", "[prelude]") {
  auto program = load_source(R"(
pub fn ints(a: Tensor[3; i32], b: Tensor[3; i32]) -> (Tensor[3; i32], Tensor[3; i32], Tensor[3; i32]) {
    return (abs(a), min(a, b), max(a, 0))
}
pub fn floats(a: Tensor[3; bf16]) -> (Tensor[3; bf16], Tensor[3; bf16]) {
    return (abs(a), min(max(a, -1.0), 1.0))
}
pub fn dims<A: Dim, B: Dim>() -> Tensor[min(A, B), max(A, B); i64] {
    return fill<i64>([min(A, B), max(A, B)], abs(0 - 2))
}
)");
  Value r = call(program, "ints", {v(i32({-3, 4, 0}, {3})), v(i32({1, 5, -2}, {3}))});
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{3, 4, 0});
  CHECK(values(r.elements()[1].tensor()) == std::vector<double>{-3, 4, -2});
  CHECK(values(r.elements()[2].tensor()) == std::vector<double>{0, 4, 0});
  Value f = call(program, "floats", {v(bf16({-0.5f, 3.0f, -7.0f}, {3}))});
  CHECK(f.elements()[0].tensor().dtype() == DType::BF16);
  CHECK(values(f.elements()[0].tensor()) == std::vector<double>{0.5, 3, 7});
  CHECK(values(f.elements()[1].tensor()) == std::vector<double>{-0.5, 1, -1});
  Tensor d = call_tensor(program, "dims", {}, {{"A", dim(3)}, {"B", dim(2)}});
  CHECK(d.shape() == Shape{2, 3});
  CHECK(values(d) == std::vector<double>(6, 2.0));
}

TEST_CASE("select", "[prelude]") {
  auto program = load_source(R"(
pub fn choose(c: Tensor[3; bool], a: Tensor[3; f32]) -> Tensor[3; f32] {
    return select(c, a, -1.0)
}
pub fn broadcast(c: Tensor[2, 1; bool], a: Tensor[3; i64], b: i64) -> Tensor[2, 3; i64] {
    return select(c, a, b)
}
pub fn not_bool(c: Tensor[3; i32], a: Tensor[3; f32]) -> Tensor[3; f32] {
    return select(c, a, a)
}
)");
  CHECK(values(call_tensor(program, "choose", {v(boolean({true, false, true}, {3})), v(f32({1, 2, 3}, {3}))})) ==
        std::vector<double>{1, -1, 3});
  CHECK(values(call_tensor(program, "broadcast", {v(boolean({false, true}, {2, 1})), v(i64({1, 2, 3}, {3})),
                                                  Value::scalar(DType::I64, int64_t{9})})) ==
        std::vector<double>{9, 9, 9, 1, 2, 3});
  expect_error([&] { call(program, "not_bool", {v(i32({1, 0, 1}, {3})), v(f32({1, 2, 3}, {3}))}); }, "E2114");
}

TEST_CASE("reshape, permute and broadcast_to", "[prelude]") {
  auto program = load_source(R"(
pub fn shapes(x: Tensor[2, 3; i32]) -> (Tensor[3, 2; i32], Tensor[3, 2; i32], Tensor[2, 2, 3; i32]) {
    return (reshape(x, [3, 2]), permute(x, [1, 0]), broadcast_to(reshape(x, [1, 2, 3]), [2, 2, 3]))
}
pub fn rotate(x: Tensor[2, 3, 4; i32]) -> Tensor[4, 2, 3; i32] {
    return permute(x, [2, 0, 1])
}
pub fn bad_count(x: Tensor[2, 3; i32]) -> Tensor[4, 2; i32] {
    return reshape(x, [4, 2])
}
pub fn bad_axes(x: Tensor[2, 3; i32]) -> Tensor[2, 3; i32] {
    return permute(x, [0, 0])
}
pub fn bad_broadcast(x: Tensor[2, 3; i32]) -> Tensor[2, 4; i32] {
    return broadcast_to(x, [2, 4])
}
)");
  Tensor x = i32({1, 2, 3, 4, 5, 6}, {2, 3});
  Value r = call(program, "shapes", {v(x)});
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(values(r.elements()[1].tensor()) == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(values(r.elements()[2].tensor()) == std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  std::vector<int32_t> counting(24);
  for (int i = 0; i < 24; ++i) counting[static_cast<size_t>(i)] = i;
  Tensor rotated = call_tensor(program, "rotate", {v(i32(counting, {2, 3, 4}))});
  // y[d, a, b] = x[a, b, d] = 12 a + 4 b + d.
  CHECK(rotated.at<int64_t>({3, 1, 2}) == 12 + 8 + 3);
  CHECK(rotated.at<int64_t>({0, 0, 1}) == 4);
  expect_error([&] { call(program, "bad_count", {v(x)}); }, "E2203");
  expect_error([&] { call(program, "bad_axes", {v(x)}); }, "E2210");
  expect_error([&] { call(program, "bad_broadcast", {v(x)}); }, "E2207");
}

TEST_CASE("concat", "[prelude]") {
  auto program = load_source(R"(
pub fn last(a: Tensor[2, 1; f32], b: Tensor[2, 2; f32]) -> Tensor[2, 3; f32] {
    return concat(a, b, axis = -1)
}
pub fn first(a: Tensor[1, 2; f32], b: Tensor[2, 2; f32], c: Tensor[1, 2; f32]) -> Tensor[4, 2; f32] {
    return concat(a, b, c, axis = 0)
}
pub fn no_axis(a: Tensor[2; f32]) -> Tensor[4; f32] {
    return concat(a, a)
}
pub fn mixed(a: Tensor[2; f32], b: Tensor[2; bf16]) -> Tensor[4; f32] {
    return concat(a, b, axis = 0)
}
pub fn misfit(a: Tensor[2, 2; f32], b: Tensor[3, 1; f32]) -> Tensor[2, 3; f32] {
    return concat(a, b, axis = 1)
}
)");
  CHECK(values(call_tensor(program, "last", {v(f32({1, 2}, {2, 1})), v(f32({3, 4, 5, 6}, {2, 2}))})) ==
        std::vector<double>{1, 3, 4, 2, 5, 6});
  CHECK(values(call_tensor(program, "first", {v(f32({1, 2}, {1, 2})), v(f32({3, 4, 5, 6}, {2, 2})),
                                              v(f32({7, 8}, {1, 2}))})) ==
        std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  expect_error([&] { call(program, "no_axis", {v(f32({1, 2}, {2}))}); }, "E2102");
  expect_error([&] { call(program, "mixed", {v(f32({1, 2}, {2})), v(bf16({1, 2}, {2}))}); }, "E2103");
  expect_error([&] { call(program, "misfit", {v(f32({1, 2, 3, 4}, {2, 2})), v(f32({1, 2, 3}, {3, 1}))}); }, "E2202");
}

TEST_CASE("iota, fill and cumsum", "[prelude]") {
  auto program = load_source(R"(
pub fn ramps<N: Dim>() -> (Tensor[N; i64], Tensor[N; i32], Tensor[N; f32], Tensor[N; u8]) {
    return (iota(N), iota<i32>(N), iota<f32>(N), iota<u8>(N))
}
pub fn constants(k: u32) -> (Tensor[2, 2; bf16], Tensor[3; bool], Tensor[2; u32]) {
    return (fill<bf16>([2, 2], 0.1), fill<bool>([3], true), fill<u32>([2], k))
}
pub fn inferred(k: i32) -> Tensor[2; i32] {
    return fill([2], k)
}
pub fn running(x: Tensor[2, 3; i32]) -> (Tensor[2, 3; i32], Tensor[2, 3; i32]) {
    return (cumsum(x), cumsum(x, axis = 0))
}
pub fn running_bf16(x: Tensor[4; bf16]) -> Tensor[4; bf16] {
    return cumsum(x)
}
)");
  Value r = call(program, "ramps", {}, {{"N", dim(4)}});
  CHECK(r.elements()[0].tensor().dtype() == DType::I64);
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{0, 1, 2, 3});
  CHECK(r.elements()[1].tensor().dtype() == DType::I32);
  CHECK(r.elements()[2].tensor().dtype() == DType::F32);
  CHECK(values(r.elements()[2].tensor()) == std::vector<double>{0, 1, 2, 3});
  CHECK(r.elements()[3].tensor().dtype() == DType::U8);
  Value c = call(program, "constants", {Value::scalar(DType::U32, uint32_t{7})});
  CHECK(values(c.elements()[0].tensor()) == std::vector<double>(4, 0.10009765625));
  CHECK(values(c.elements()[1].tensor()) == std::vector<double>{1, 1, 1});
  CHECK(values(c.elements()[2].tensor()) == std::vector<double>{7, 7});
  CHECK(values(call_tensor(program, "inferred", {scalar_i32(-4)})) == std::vector<double>{-4, -4});
  Value s = call(program, "running", {v(i32({1, 2, 3, 4, 5, 6}, {2, 3}))});
  CHECK(values(s.elements()[0].tensor()) == std::vector<double>{1, 3, 6, 4, 9, 15});
  CHECK(values(s.elements()[1].tensor()) == std::vector<double>{1, 2, 3, 5, 7, 9});
  // In bf16 every partial sum rounds: 256 + 1 = 257 needs 9 bits and rounds
  // to 256 (even), so adding 1 twice more leaves 256.
  CHECK(values(call_tensor(program, "running_bf16", {v(bf16({256, 1, 1, 1}, {4}))})) ==
        std::vector<double>{256, 256, 256, 256});
}
