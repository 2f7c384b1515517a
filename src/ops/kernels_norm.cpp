// Kernels for `std.nn.norm::{rms_norm, layer_norm}`: the statistics of each
// row in f32 (sums in index order), the normalized row rounded to T, then
// the weight (and bias) applied in T -- the roundings the bodies make,
// at the same places. Each row is computed whole by one thread.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernel_support.hpp"
#include "linnet/tensor/gemm.hpp"
#include "norm_vector.hpp"

namespace linnet::ops::detail {

namespace {

// An element of a row as f32, and an f32 result stored as the row's dtype
// (for bf16, the rounding to T the body makes last).
inline float widened(float value) { return value; }
inline float widened(tensor::bf16_t value) { return value.to_float(); }
template <class E>
E stored(float value) {
  if constexpr (std::is_same_v<E, tensor::bf16_t>) {
    return tensor::bf16_t::from_float(value);
  } else {
    return value;
  }
}

// Each row's sum of squares, in index order, for `count` (at most
// kRowsAtOnce) rows of h elements from `in`. A row's sum is one chain of
// dependent additions, so one row at a time waits on the adder's latency
// for every element (a [512, 2880] prompt's whole norm took 1.8 ms, 0.9
// with this and the vector row step); the rows of
// a block run their chains side by side, each still in index order, so
// every sum keeps its bits.
constexpr int64_t kRowsAtOnce = 8;

template <class E>
void sums_of_squares(const E* in, int64_t h, int64_t count, float* sums) {
  if (count == kRowsAtOnce) {
    float lanes[kRowsAtOnce] = {};
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t r = 0; r < kRowsAtOnce; ++r) {
        const float value = widened(in[r * h + i]);
        lanes[r] += value * value;
      }
    }
    for (int64_t r = 0; r < kRowsAtOnce; ++r) sums[r] = lanes[r];
    return;
  }
  for (int64_t r = 0; r < count; ++r) {
    float squares = 0.0f;
    for (int64_t i = 0; i < h; ++i) squares += widened(in[r * h + i]) * widened(in[r * h + i]);
    sums[r] = squares;
  }
}

// rms_norm over rows of h elements of type E (f32, or bf16 read and
// written as bf16: no f32 copies of the input or the result).
template <class E>
void rms_norm_rows(const E* in, const float* gain, E* out, int64_t rows, int64_t h, float eps) {
  // The kernels' path (tensor::gemm's, which tests may override to hold
  // the scalar and vector rows to the same bits).
  const tensor::gemm::Isa isa = tensor::gemm::active_isa();
  const bool vector_rows = isa == tensor::gemm::Isa::Avx512 || isa == tensor::gemm::Isa::Avx512Bf16;
  const float count = static_cast<float>(h);
  const int64_t blocks = (rows + kRowsAtOnce - 1) / kRowsAtOnce;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(rows * h))
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t first = block * kRowsAtOnce;
    const int64_t block_rows = std::min(kRowsAtOnce, rows - first);
    float squares[kRowsAtOnce];
    sums_of_squares(in + first * h, h, block_rows, squares);
    for (int64_t r = 0; r < block_rows; ++r) {
      const E* values = in + (first + r) * h;
      const float inverse_rms = 1.0f / std::sqrt(squares[r] / count + eps);
      E* normalized = out + (first + r) * h;
      if constexpr (std::is_same_v<E, tensor::bf16_t>) {
        if (vector_rows) {
          rms_scale_row_bf16_avx512(reinterpret_cast<const uint16_t*>(values), gain, inverse_rms,
                                    reinterpret_cast<uint16_t*>(normalized), h);
          continue;
        }
      }
      for (int64_t i = 0; i < h; ++i) {
        // round(round(x * inverse_rms) * gain) in T; `stored` makes the outer rounding.
        float scaled = widened(values[i]) * inverse_rms;
        if constexpr (std::is_same_v<E, tensor::bf16_t>) scaled = tensor::round_to_bf16(scaled);
        normalized[i] = stored<E>(scaled * gain[i]);
      }
    }
  }
}

// `x / sqrt(mean(x^2) + eps)`, rounded to T, times weight in T.
std::optional<eval::Value> run_rms_norm(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t h = dim_generic(call, "H");
  const Tensor& argument = tensor_argument(call, "x");
  if (argument.dtype() != dtype || (dtype != DType::F32 && dtype != DType::BF16)) return std::nullopt;
  const Tensor x = argument.contiguous();
  const Tensor weight = contiguous_f32(tensor_argument(call, "weight"));
  const float eps = static_cast<float>(float_argument(call, "eps"));
  Tensor result = Tensor::empty(dtype, x.shape());
  if (h == 0) return eval::Value::from_tensor(result);
  const int64_t rows = x.numel() / h;
  if (dtype == DType::BF16) {
    rms_norm_rows(x.data<tensor::bf16_t>(), weight.data<float>(), result.mutable_data<tensor::bf16_t>(), rows, h, eps);
  } else {
    rms_norm_rows(x.data<float>(), weight.data<float>(), result.mutable_data<float>(), rows, h, eps);
  }
  return eval::Value::from_tensor(result);
}

// `(x - mean) / sqrt(variance + eps)`, rounded to T, times weight in T,
// plus bias in T when there is one.
std::optional<eval::Value> run_layer_norm(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t h = dim_generic(call, "H");
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  const Tensor weight = contiguous_f32(tensor_argument(call, "weight"));
  const std::optional<Tensor> bias_argument = optional_tensor_argument(call, "bias");
  const Tensor bias = bias_argument ? contiguous_f32(*bias_argument) : Tensor();
  const float eps = static_cast<float>(float_argument(call, "eps"));
  Tensor result = Tensor::empty(DType::F32, x.shape());
  if (h == 0) return eval::Value::from_tensor(to_dtype(result, dtype));
  const float* in = x.data<float>();
  const float* gain = weight.data<float>();
  const float* shift = bias_argument ? bias.data<float>() : nullptr;
  float* out = result.mutable_data<float>();
  const int64_t rows = x.numel() / h;
  const float count = static_cast<float>(h);
  with_rounding(dtype, [&](auto round) {
#pragma omp parallel for schedule(static) if (tensor::worth_threads(x.numel()))
    for (int64_t row = 0; row < rows; ++row) {
      const float* values = in + row * h;
      float* normalized = out + row * h;
      float total = 0.0f;
      for (int64_t i = 0; i < h; ++i) total += values[i];
      const float mean = total / count;
      float squares = 0.0f;
      for (int64_t i = 0; i < h; ++i) {
        const float centered = values[i] - mean;
        squares += centered * centered;
      }
      const float inverse_std = 1.0f / std::sqrt(squares / count + eps);
      for (int64_t i = 0; i < h; ++i) {
        const float scaled = round(round((values[i] - mean) * inverse_std) * gain[i]);
        normalized[i] = shift ? round(scaled + shift[i]) : scaled;
      }
    }
  });
  return eval::Value::from_tensor(to_dtype(result, dtype));
}

}  // namespace

void register_norm_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  register_f32_bf16(table, "std.nn.norm::rms_norm", equivalent, "row statistics in f32, one row per thread",
                    "row statistics in f32; rounded to bf16 before and after the weight, as the body does",
                    &run_rms_norm);
  register_f32_bf16(table, "std.nn.norm::layer_norm", equivalent, "row statistics in f32, one row per thread",
                    "row statistics in f32; rounded to bf16 before and after the weight and after the bias, as "
                    "the body does",
                    &run_layer_norm);
}

}  // namespace linnet::ops::detail
