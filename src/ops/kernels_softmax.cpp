// Kernel for `std.nn.softmax::softmax<*S, N, T>`: along the last axis, in
// f32, the row maximum subtracted before exponentiating, each exponential
// divided by the row's sum, rounded to T once -- the body's steps in the
// body's order, one row per thread.
#include <cmath>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

std::optional<eval::Value> run_softmax(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t n = dim_generic(call, "N");
  if (n == 0) return std::nullopt;  // the body's `max` over nothing reports it
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  Tensor result = Tensor::empty(DType::F32, x.shape());
  const float* in = x.data<float>();
  float* out = result.mutable_data<float>();
  const int64_t rows = x.numel() / n;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(x.numel()))
  for (int64_t row = 0; row < rows; ++row) {
    const float* values = in + row * n;
    float* probs = out + row * n;
    float peak = values[0];
    for (int64_t i = 1; i < n; ++i) peak = max_propagating_nan(peak, values[i]);
    float total = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      probs[i] = std::exp(values[i] - peak);
      total += probs[i];
    }
    for (int64_t i = 0; i < n; ++i) probs[i] = probs[i] / total;
  }
  return eval::Value::from_tensor(to_dtype(result, dtype));
}

}  // namespace

void register_softmax_kernels(RegistryOpTable& table) {
  register_f32_bf16(table, "std.nn.softmax::softmax", eval::NumericsPolicy::Equivalent,
                    "the body's steps in f32, one row per thread",
                    "the body's steps in f32, rounded to bf16 once, as frameworks compute a bf16 softmax",
                    &run_softmax);
}

}  // namespace linnet::ops::detail
