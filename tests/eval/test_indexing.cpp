// Indexing outside index notation: integer positions (compile-time and
// runtime), slices with steps, `...`, gathers by an integer tensor, and
// block arrays. Expected values by hand.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("selections, slices with steps and ellipsis", "[indexing]") {
  auto program = load_source(R"(
pub fn parts(x: Tensor[2, 3, 4; i32]) -> (Tensor[4; i32], Tensor[2, 3, 2; i32], Tensor[2, 3, 2; i32], Tensor[3, 4; i32]) {
    return (x[1, 2], x[..., 0::2], x[:, :, 1:4:2], x[1, ...])
}
pub fn last<S: Dim>(x: Tensor[2, S, 3; i32]) -> Tensor[2, 3; i32] {
    return x[:, S - 1, :]
}
pub fn clipped(x: Tensor[5; i32]) -> (Tensor[2; i32], Tensor[0; i32]) {
    return (x[3:9], x[4:2])
}
pub fn at(x: Tensor[5; i32], i: i64) -> i32 {
    return x[i]
}
pub fn taken(x: Tensor[4, 2; i32], rows: Tensor[3; i32]) -> Tensor[3, 2; i32] {
    return x[rows]
}
pub fn two_ellipses(x: Tensor[2, 3, 4; i32]) -> Tensor[3; i32] {
    return x[..., 0, ...]
}
pub fn zero_step(x: Tensor[5; i32]) -> Tensor[5; i32] {
    return x[0:5:0]
}
)");
  std::vector<int32_t> counting(24);
  for (int i = 0; i < 24; ++i) counting[static_cast<size_t>(i)] = i;
  Tensor x = i32(counting, {2, 3, 4});
  Value p = call(program, "parts", {v(x)});
  // x[a, b, c] = 12 a + 4 b + c.
  CHECK(values(p.elements()[0].tensor()) == std::vector<double>{20, 21, 22, 23});
  CHECK(values(p.elements()[1].tensor()) ==
        std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
  CHECK(values(p.elements()[2].tensor()) ==
        std::vector<double>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23});
  CHECK(p.elements()[3].tensor().shape() == Shape{3, 4});
  CHECK(p.elements()[3].tensor().at<int64_t>({0, 0}) == 12);
  // `last` reads y[:, S - 1, :] of a [2, S, 3] tensor, here with S = 2.
  Tensor y = i32(std::vector<int32_t>(counting.begin(), counting.begin() + 12), {2, 2, 3});
  CHECK(values(call_tensor(program, "last", {v(y)})) == std::vector<double>{3, 4, 5, 9, 10, 11});
  Value c = call(program, "clipped", {v(i32({0, 1, 2, 3, 4}, {5}))});
  CHECK(values(c.elements()[0].tensor()) == std::vector<double>{3, 4});
  CHECK(c.elements()[1].tensor().numel() == 0);
  CHECK(call_tensor(program, "at", {v(i32({5, 6, 7, 8, 9}, {5})), Value::scalar(DType::I64, int64_t{3})}).item().to<int64_t>() == 8);
  CHECK(values(call_tensor(program, "taken", {v(i32({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2})), v(i32({3, 0, 3}, {3}))})) ==
        std::vector<double>{6, 7, 0, 1, 6, 7});
  expect_error([&] { call(program, "taken", {v(i32({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2})), v(i32({4, 0, 0}, {3}))}); },
               "E6001");
  expect_error([&] { call(program, "two_ellipses", {v(x)}); }, "E2209");
  expect_error([&] { call(program, "zero_step", {v(i32({0, 1, 2, 3, 4}, {5}))}); }, "E2209");
}

TEST_CASE("block arrays are indexed by one compile-time integer", "[indexing]") {
  auto program = load_source(R"(
pub block Unit<N: Dim> {
    param weight: Tensor[N; f32]
    pub fn forward(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return x * weight
    }
}
pub block Chain<N: Dim> {
    sub units: [Unit<N>; 3]
    pub entry second(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return units[1].forward(x)
    }
    pub entry past_end(x: Tensor[N; f32]) -> Tensor[N; f32] {
        return units[3].forward(x)
    }
}
)");
  linnet::eval::MapParameterSource weights;
  for (int i = 0; i < 3; ++i) weights.set("units." + std::to_string(i) + ".weight", f32({float(i + 1), 1}, {2}));
  auto chain = program->instantiate("Chain", {{"N", dim(2)}}, weights);
  EntryInputs inputs;
  inputs.positional = {v(f32({5, 5}, {2}))};
  CHECK(values(program->call(*chain, "second", inputs).tensor()) == std::vector<double>{10, 5});
  expect_error([&] { program->call(*chain, "past_end", inputs); }, "E2209");
}
