// Kernels for `std.nn.loss::{log_softmax, token_log_probs, cross_entropy}`.
// Results are f32 whatever T is; each row's maximum and log-sum-exp are
// taken in f32 in index order, the body's steps in the body's order. A
// target outside 0..V is left to the body, which reports it.
#include <cmath>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

// Row maximum and log(sum exp(x - max)) of one row.
struct RowStatistics {
  float peak;
  float log_total;
};

RowStatistics row_statistics(const float* values, int64_t length) {
  float peak = values[0];
  for (int64_t i = 1; i < length; ++i) peak = max_propagating_nan(peak, values[i]);
  float total = 0.0f;
  for (int64_t i = 0; i < length; ++i) total += std::exp(values[i] - peak);
  return {peak, std::log(total)};
}

std::optional<eval::Value> run_log_softmax(const eval::NativeCall& call) {
  const int64_t v = dim_generic(call, "V");
  if (v == 0) return std::nullopt;  // the body's `max` over nothing reports it
  const Tensor logits = contiguous_f32(tensor_argument(call, "logits"));
  Tensor result = Tensor::empty(DType::F32, logits.shape());
  const float* in = logits.data<float>();
  float* out = result.mutable_data<float>();
  const int64_t rows = logits.numel() / v;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(logits.numel()))
  for (int64_t row = 0; row < rows; ++row) {
    const float* values = in + row * v;
    const RowStatistics stats = row_statistics(values, v);
    for (int64_t i = 0; i < v; ++i) out[row * v + i] = values[i] - stats.peak - stats.log_total;
  }
  return eval::Value::from_tensor(result);
}

// log p(targets[n]) of every row, or nothing when a target is out of range.
std::optional<std::vector<float>> target_log_probs(const eval::NativeCall& call) {
  const int64_t n = dim_generic(call, "N"), v = dim_generic(call, "V");
  const Tensor targets = contiguous_i64(tensor_argument(call, "targets"));
  const int64_t* target = targets.data<int64_t>();
  for (int64_t row = 0; row < n; ++row) {
    if (target[row] < 0 || target[row] >= v) return std::nullopt;
  }
  const Tensor logits = contiguous_f32(tensor_argument(call, "logits"));
  const float* in = logits.data<float>();
  std::vector<float> picked(static_cast<size_t>(n));
#pragma omp parallel for schedule(static) if (tensor::worth_threads(n * v))
  for (int64_t row = 0; row < n; ++row) {
    const float* values = in + row * v;
    const RowStatistics stats = row_statistics(values, v);
    picked[static_cast<size_t>(row)] = values[target[row]] - stats.peak - stats.log_total;
  }
  return picked;
}

std::optional<eval::Value> run_token_log_probs(const eval::NativeCall& call) {
  const std::optional<std::vector<float>> picked = target_log_probs(call);
  if (!picked) return std::nullopt;
  return eval::Value::from_tensor(Tensor::from_vector(*picked, {static_cast<int64_t>(picked->size())}));
}

// sum over n of -(weights[n] * log p(targets[n])), in f32, in row order.
std::optional<eval::Value> run_cross_entropy(const eval::NativeCall& call) {
  const std::optional<std::vector<float>> picked = target_log_probs(call);
  if (!picked) return std::nullopt;
  const Tensor weights = contiguous_f32(tensor_argument(call, "weights"));
  const float* weight = weights.data<float>();
  float loss = 0.0f;
  for (size_t row = 0; row < picked->size(); ++row) loss += -(weight[row] * (*picked)[row]);
  return eval::Value::from_tensor(Tensor::scalar(DType::F32, loss));
}

}  // namespace

void register_loss_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  const std::string module = "std.nn.loss::";
  const std::string summary = "the body's steps in f32, one row per thread";
  register_f32_bf16(table, module + "log_softmax", equivalent, summary, summary, &run_log_softmax);
  register_f32_bf16(table, module + "token_log_probs", equivalent, summary, summary, &run_token_log_probs);
  register_f32_bf16(table, module + "cross_entropy", equivalent, summary, summary, &run_cross_entropy);
}

}  // namespace linnet::ops::detail
