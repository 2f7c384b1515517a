// Numerics policies and the native-op hook. Under `exact` a bf16 sum rounds
// every partial sum to bf16; under `equivalent` it accumulates in f32 and
// rounds once. An OpDispatcher is offered every op call and may answer it.
#include <cmath>

#include "eval_test_util.hpp"

using namespace eval_test;
using linnet::eval::NativeCall;
using linnet::eval::NumericsPolicy;
using linnet::eval::OpDispatcher;
using linnet::eval::Options;

namespace {

const char* kSums = R"(
pub fn total<N: Dim>(x: Tensor[N; bf16]) -> bf16 {
    return sum[i] x[i]
}
pub fn dot<M: Dim, N: Dim>(a: Tensor[M, N; bf16], b: Tensor[N; bf16]) -> Tensor[M; bf16] {
    let y[m] = sum[n] a[m, n] * b[n]
    return y
}
)";

// 1 followed by four copies of 2^-8: each 1 + 2^-8 is a tie that rounds to
// 1 (even) in bf16, so the exact sum stays 1; in f32 the sum is
// 1 + 2^-6 = 1.015625, which bf16 holds.
Tensor ties() { return bf16({1, 0.00390625f, 0.00390625f, 0.00390625f, 0.00390625f}, {5}); }

}  // namespace

TEST_CASE("exact sums round every partial sum; equivalent sums accumulate in f32", "[numerics]") {
  Options exact;
  exact.numerics = NumericsPolicy::Exact;
  Options equivalent;
  equivalent.numerics = NumericsPolicy::Equivalent;
  auto strict = load_source(kSums, exact);
  auto loose = load_source(kSums, equivalent);
  CHECK(call_tensor(strict, "total", {v(ties())}).item().to<double>() == 1.0);
  CHECK(call_tensor(loose, "total", {v(ties())}).item().to<double>() == 1.015625);

  // The same as a contraction: rows of `a` times a vector of ones.
  std::vector<float> rows;
  for (int r = 0; r < 3; ++r) {
    for (float x : {1.0f, 0.00390625f, 0.00390625f, 0.00390625f, 0.00390625f}) rows.push_back(x);
  }
  Tensor a = bf16(rows, {3, 5});
  Tensor ones = bf16({1, 1, 1, 1, 1}, {5});
  CHECK(values(call_tensor(strict, "dot", {v(a), v(ones)})) == std::vector<double>{1, 1, 1});
  CHECK(values(call_tensor(loose, "dot", {v(a), v(ones)})) == std::vector<double>{1.015625, 1.015625, 1.015625});

  // The step-by-step form of an exact sum (for products too large to hold)
  // gives the same values as the materialised one.
  Options stepwise = exact;
  stepwise.exact_product_limit = 0;
  auto stepped = load_source(kSums, stepwise);
  std::mt19937 rng(7);
  Tensor big_a = random_tensor(rng, {4, 33}, DType::BF16);
  Tensor big_b = random_tensor(rng, {33}, DType::BF16);
  CHECK(values(call_tensor(stepped, "dot", {v(big_a), v(big_b)})) ==
        values(call_tensor(strict, "dot", {v(big_a), v(big_b)})));
  CHECK(values(call_tensor(stepped, "dot", {v(a), v(ones)})) == std::vector<double>{1, 1, 1});
}

namespace {

// Answers `std.nn.softmax::softmax` with a constant, so a test can see that
// the answer was used; declines every other op.
class ConstantSoftmax : public OpDispatcher {
 public:
  std::optional<Value> try_native(const NativeCall& call) override {
    offered.push_back(call.qualified_name);
    if (call.qualified_name != "std.nn.softmax::softmax") return std::nullopt;
    policies.push_back(call.policy);
    generic_n = call.generics.at("N").dim;
    const Tensor& x = call.arguments.at(0).tensor();
    if (wrong_shape) return Value::from_tensor(Tensor::zeros(x.dtype(), {1}));
    return Value::from_tensor(linnet::tensor::fill(x.shape(), x.dtype(), 0.25));
  }
  std::vector<std::string> offered;
  std::vector<NumericsPolicy> policies;
  int64_t generic_n = 0;
  bool wrong_shape = false;
};

}  // namespace

TEST_CASE("the op dispatcher is offered every op and its answers are checked", "[numerics]") {
  auto dispatcher = std::make_shared<ConstantSoftmax>();
  Options options;
  options.numerics = NumericsPolicy::Equivalent;
  options.dispatcher = dispatcher;
  auto program = load_source(R"(
use std.nn.softmax::{softmax}
use std.nn.activations::{relu}
fn helper(x: Tensor[2, 4; f32]) -> Tensor[2, 4; f32] {
    return relu(x)
}
pub fn run(x: Tensor[2, 4; f32]) -> Tensor[2, 4; f32] {
    return softmax(helper(x))
}
)",
                             options);
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  CHECK(values(call_tensor(program, "run", {v(x)})) == std::vector<double>(8, 0.25));
  // `relu` and `softmax` are ops and were offered; `helper` is a fn.
  CHECK(dispatcher->offered == std::vector<std::string>{"std.nn.activations::relu", "std.nn.softmax::softmax"});
  CHECK(dispatcher->policies == std::vector<NumericsPolicy>{NumericsPolicy::Equivalent});
  CHECK(dispatcher->generic_n == 4);
  CHECK(program->stats().at("std.nn.softmax::softmax").native == 1);
  CHECK(program->stats().at("std.nn.activations::relu").body == 1);
  dispatcher->wrong_shape = true;
  expect_error([&] { call(program, "run", {v(x)}); }, "E2202");
}

TEST_CASE("f32 contractions agree with a plain loop to rounding", "[numerics]") {
  auto program = load_source(R"(
pub fn project<B: Dim, S: Dim, H: Dim, O: Dim>(x: Tensor[B, S, H; f32], w: Tensor[O, H; f32]) -> Tensor[B, S, O; f32] {
    let y[b, s, o] = sum[h] x[b, s, h] * w[o, h]
    return y
}
)");
  std::mt19937 rng(3);
  Tensor x = random_tensor(rng, {2, 3, 40}, DType::F32);
  Tensor w = random_tensor(rng, {5, 40}, DType::F32);
  Tensor y = call_tensor(program, "project", {v(x), v(w)});
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t s = 0; s < 3; ++s) {
      for (int64_t o = 0; o < 5; ++o) {
        double expected = 0;
        for (int64_t h = 0; h < 40; ++h) expected += x.at<double>({b, s, h}) * w.at<double>({o, h});
        CHECK(y.at<double>({b, s, o}) == Approx(expected).margin(1e-5));
      }
    }
  }
}
