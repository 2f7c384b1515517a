// Reductions against plain loops, accumulator dtypes, identities of empty
// reductions, argmax/argmin tie and NaN rules.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>

#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

// Reference: reduce a [d0, d1, d2] f32 tensor over `axes` (in that order,
// sequentially, in float) with `combine`, starting from `init` (or from the
// first element when init is empty).
std::vector<float> loop_reduce(const std::vector<float>& x, const Shape& shape, const std::vector<int>& axes,
                               const std::function<float(float, float)>& combine, std::optional<float> init) {
  std::vector<int> kept;
  for (int a = 0; a < 3; ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) kept.push_back(a);
  std::vector<int> order = kept;
  order.insert(order.end(), axes.begin(), axes.end());
  int64_t kept_count = 1, reduced_count = 1;
  for (int a : kept) kept_count *= shape[a];
  for (int a : axes) reduced_count *= shape[a];
  std::vector<float> out;
  for (int64_t o = 0; o < kept_count; ++o) {
    std::optional<float> acc = init;
    for (int64_t r = 0; r < reduced_count; ++r) {
      // Decompose (o, r) into an index over `order`, then into x's flat position.
      int64_t index[3];
      int64_t rest = r;
      for (size_t i = order.size(); i-- > kept.size();) {
        index[order[i]] = rest % shape[order[i]];
        rest /= shape[order[i]];
      }
      rest = o;
      for (size_t i = kept.size(); i-- > 0;) {
        index[order[i]] = rest % shape[order[i]];
        rest /= shape[order[i]];
      }
      const float v = x[(index[0] * shape[1] + index[1]) * shape[2] + index[2]];
      acc = acc ? combine(*acc, v) : v;
    }
    out.push_back(*acc);
  }
  return out;
}

}  // namespace

TEST_CASE("reductions match plain loops on random shapes and axis sets", "[reduce]") {
  std::mt19937 generator(5);
  const std::vector<std::vector<int>> axis_sets = {{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {2, 0}, {0, 1, 2}, {}};
  for (int trial = 0; trial < 12; ++trial) {
    const Shape shape = {1 + int64_t(generator() % 7), 1 + int64_t(generator() % 9), 1 + int64_t(generator() % 11)};
    const std::vector<float> values = random_floats(shape_numel(shape), 100 + trial, -2.0f, 2.0f);
    // Reduce a permuted copy too, so the reduced axes are strided.
    const Tensor x = Tensor::from_vector(values, shape);
    for (const auto& axes : axis_sets) {
      INFO("shape " << shape_to_string(shape) << " axes " << axes.size());
      CHECK(reduce(ReduceOp::Sum, x, axes).to_vector<float>() ==
            loop_reduce(values, shape, axes, std::plus<float>(), 0.0f));
      CHECK(reduce(ReduceOp::Prod, x, axes).to_vector<float>() ==
            loop_reduce(values, shape, axes, std::multiplies<float>(), 1.0f));
      CHECK(reduce(ReduceOp::Max, x, axes).to_vector<float>() ==
            loop_reduce(values, shape, axes, [](float a, float b) { return std::max(a, b); }, std::nullopt));
      CHECK(reduce(ReduceOp::Min, x, axes).to_vector<float>() ==
            loop_reduce(values, shape, axes, [](float a, float b) { return std::min(a, b); }, std::nullopt));
    }
    // The same reductions on a transposed view of the same data.
    const Tensor t = Tensor::from_vector(values, shape).permute({2, 0, 1}).contiguous().permute({1, 2, 0});
    CHECK(reduce(ReduceOp::Sum, t, {1, 2}).to_vector<float>() ==
          loop_reduce(values, shape, {1, 2}, std::plus<float>(), 0.0f));
  }
}

TEST_CASE("sum keeps the remaining axes in order", "[reduce]") {
  const Tensor x = iota(24, DType::I64).reshape({2, 3, 4});
  const Tensor s = reduce(ReduceOp::Sum, x, {1});
  CHECK(s.shape() == Shape{2, 4});
  CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{12, 15, 18, 21, 48, 51, 54, 57});
  CHECK(reduce(ReduceOp::Sum, x, {0, 1, 2}).shape() == Shape{});
  CHECK(reduce(ReduceOp::Sum, x, {-1}).to_vector<int64_t>() == std::vector<int64_t>{6, 22, 38, 54, 70, 86});
  CHECK_THROWS_AS(reduce(ReduceOp::Sum, x, {1, 1}), TensorError);
  CHECK_THROWS_AS(reduce(ReduceOp::Sum, x, {3}), TensorError);
}

TEST_CASE("the accumulator dtype decides the rounding", "[reduce]") {
  // 1000 ones: a bf16 accumulator stops at 256 (256 + 1 rounds back to 256).
  const Tensor ones = Tensor::from_vector(std::vector<float>(1000, 1.0f), {1000}, DType::BF16);
  const Tensor in_bf16 = reduce(ReduceOp::Sum, ones, {0});
  CHECK(in_bf16.dtype() == DType::BF16);
  CHECK(in_bf16.item().to<float>() == 256.0f);
  const Tensor in_f32 = reduce(ReduceOp::Sum, ones, {0}, DType::F32);
  CHECK(in_f32.dtype() == DType::F32);
  CHECK(in_f32.item().to<float>() == 1000.0f);
  // Integers wrap in the accumulator: 200 + 100 in u8 is 44; in i32 it is 300.
  const Tensor bytes = Tensor::from_vector<uint8_t>({200, 100}, {2});
  CHECK(reduce(ReduceOp::Sum, bytes, {0}).item().to<int>() == 44);
  CHECK(reduce(ReduceOp::Sum, bytes, {0}, DType::I32).item().to<int>() == 300);
  CHECK(reduce(ReduceOp::Prod, Tensor::from_vector<int8_t>({16, 16}, {2}), {0}).item().to<int>() == 0);
  // f32 sum of squares in f64 (a norm's statistic).
  const Tensor v = Tensor::from_vector<float>({3, 4}, {2});
  CHECK(reduce(ReduceOp::Sum, mul(v, v), {0}, DType::F64).item().to<double>() == 25.0);
}

TEST_CASE("any and all take bool; max and min propagate NaN", "[reduce]") {
  const Tensor flags = Tensor::from_vector<bool>({false, true, false, false, false, false}, {2, 3});
  CHECK(reduce(ReduceOp::Any, flags, {1}).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK(reduce(ReduceOp::All, flags, {0}).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK(reduce(ReduceOp::All, binary(BinaryOp::Eq, flags, flags), {0, 1}).item().to<bool>());
  CHECK_THROWS_AS(reduce(ReduceOp::Any, Tensor::zeros(DType::F32, {2}), {0}), TensorError);
  CHECK_THROWS_AS(reduce(ReduceOp::Sum, flags, {0}), TensorError);
  const Tensor with_nan = Tensor::from_vector<float>({1, NAN, 3, 4, 5, 6}, {2, 3});
  const std::vector<float> highest = reduce(ReduceOp::Max, with_nan, {1}).to_vector<float>();
  CHECK(std::isnan(highest[0]));
  CHECK(highest[1] == 6.0f);
  CHECK(std::isnan(reduce(ReduceOp::Min, with_nan, {0, 1}).item().to<float>()));
}

TEST_CASE("empty reductions give the identity, or an error for max/min", "[reduce]") {
  const Tensor nothing = Tensor::zeros(DType::F32, {3, 0});
  CHECK(reduce(ReduceOp::Sum, nothing, {1}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(reduce(ReduceOp::Prod, nothing, {1}).to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK(reduce(ReduceOp::All, Tensor::zeros(DType::Bool, {0}), {0}).item().to<bool>());
  CHECK_FALSE(reduce(ReduceOp::Any, Tensor::zeros(DType::Bool, {0}), {0}).item().to<bool>());
  CHECK_THROWS_AS(reduce(ReduceOp::Max, nothing, {1}), TensorError);
  CHECK(reduce(ReduceOp::Sum, nothing, {0}).shape() == Shape{0});
}

TEST_CASE("argmax and argmin: first wins, NaN wins", "[reduce]") {
  const Tensor x = Tensor::from_vector<float>({1, 5, 5, 2, 0, 7, 7, -1}, {2, 4});
  const Tensor best = argmax(x, 1);
  CHECK(best.dtype() == DType::I64);
  CHECK(best.to_vector<int64_t>() == std::vector<int64_t>{1, 1});
  CHECK(argmin(x, 1).to_vector<int64_t>() == std::vector<int64_t>{0, 3});
  CHECK(argmax(x, 0).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, 0});
  const Tensor nan = Tensor::from_vector<float>({1, NAN, 9, NAN}, {4});
  CHECK(argmax(nan, 0).item().to<int64_t>() == 1);
  CHECK(argmin(nan, 0).item().to<int64_t>() == 1);
  // bf16 logits (a greedy decoding step) and integers.
  const Tensor logits = Tensor::from_vector<float>({0.1f, 0.3f, 0.2f, 0.3f}, {1, 4}, DType::BF16);
  CHECK(argmax(logits, -1).to_vector<int64_t>() == std::vector<int64_t>{1});
  CHECK(argmax(Tensor::from_vector<uint64_t>({3, UINT64_MAX, 2}, {3}), 0).item().to<int>() == 1);
  CHECK_THROWS_AS(argmax(Tensor::zeros(DType::F32, {2, 0}), 1), TensorError);
  // A large case against a loop.
  const std::vector<float> values = random_floats(300 * 257, 9);
  const std::vector<int64_t> found = argmax(Tensor::from_vector(values, {300, 257}), 1).to_vector<int64_t>();
  for (int64_t row = 0; row < 300; ++row) {
    const auto begin = values.begin() + row * 257;
    CHECK(found[row] == std::max_element(begin, begin + 257) - begin);
  }
}
