// Kernels for `std.nn.activations::silu` (`x / (1 + exp(-x))`) and
// `sigmoid` (`1 / (1 + exp(-x))`), in f32, rounded to T once. Each body is
// six elementwise passes (widen, negate, exp, add, divide, round), each
// making a tensor of the whole input (at a 512-token Mistral prompt, six
// 29 MB f32 tensors per layer for silu; GPT-OSS's expert activation calls
// sigmoid on [512, 4, 2880]); a kernel makes the same steps per element in
// one pass, in the same f32 operations (std::exp as the body's `exp`, then
// the add and the division, no contraction possible), so it agrees with
// the body bit for bit. When the input is dead after the call (the gate
// projection in SwiGLU) the result is written over it. On CPUs with
// AVX-512F the same steps run sixteen lanes at a time, with an exponential
// that gives expf's bits (activations_avx512.cpp), once checked against the
// C library in use.
#include <cmath>

#include "activations_vector.hpp"
#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

inline float silu_f32(float value) { return value / (1.0f + std::exp(-value)); }
inline float sigmoid_f32(float value) { return 1.0f / (1.0f + std::exp(-value)); }

// Whether activations_avx512.cpp can stand in for the scalar loop here.
bool vector_activations() {
  static const bool usable = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl") && vector_exp_agrees_avx512();
  return usable;
}

// Elements per unit of the vector loop's threads: whole vectors, and a unit
// small enough to split a 4099-element input.
constexpr int64_t kVectorChunk = 1024;

// One pass of `activation` over x's elements, rounded to T once.
template <float (*activation)(float), Activation kind>
std::optional<eval::Value> run_elementwise(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const Tensor& argument = tensor_argument(call, "x");
  if (argument.dtype() != dtype || (dtype != DType::F32 && dtype != DType::BF16)) return std::nullopt;
  const bool in_place = argument.is_contiguous() && held_by_call_alone(call, "x");
  const Tensor x = argument.is_contiguous() ? argument : argument.contiguous();
  Tensor result = in_place ? argument : Tensor::empty(dtype, x.shape());
  const int64_t count = x.numel();
  if (vector_activations()) {
    const int64_t chunks = (count + kVectorChunk - 1) / kVectorChunk;
    const bool bf16 = dtype == DType::BF16;
    const auto* in = static_cast<const std::byte*>(x.raw_data());
    auto* out = static_cast<std::byte*>(result.raw_mutable_data());
    const size_t element = bf16 ? 2 : 4;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count))
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const int64_t first = chunk * kVectorChunk;
      const int64_t size = std::min(kVectorChunk, count - first);
      const size_t at = static_cast<size_t>(first) * element;
      if (bf16) {
        activation_bf16_avx512(kind, reinterpret_cast<const uint16_t*>(in + at), reinterpret_cast<uint16_t*>(out + at),
                               size);
      } else {
        activation_f32_avx512(kind, reinterpret_cast<const float*>(in + at), reinterpret_cast<float*>(out + at), size);
      }
    }
    return eval::Value::from_tensor(std::move(result));
  }
  if (dtype == DType::BF16) {
    const tensor::bf16_t* in = x.data<tensor::bf16_t>();
    tensor::bf16_t* out = result.mutable_data<tensor::bf16_t>();
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count))
    for (int64_t i = 0; i < count; ++i) out[i] = tensor::bf16_t::from_float(activation(in[i].to_float()));
  } else {
    const float* in = x.data<float>();
    float* out = result.mutable_data<float>();
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count))
    for (int64_t i = 0; i < count; ++i) out[i] = activation(in[i]);
  }
  return eval::Value::from_tensor(std::move(result));
}

}  // namespace

void register_activation_kernels(RegistryOpTable& table) {
  register_f32_bf16(table, "std.nn.activations::silu", eval::NumericsPolicy::Equivalent,
                    "bit for bit the body, in one pass", "bit for bit the body: f32 steps, rounded to bf16 once",
                    &run_elementwise<silu_f32, Activation::Silu>);
  register_f32_bf16(table, "std.nn.activations::sigmoid", eval::NumericsPolicy::Equivalent,
                    "bit for bit the body, in one pass", "bit for bit the body: f32 steps, rounded to bf16 once",
                    &run_elementwise<sigmoid_f32, Activation::Sigmoid>);
}

}  // namespace linnet::ops::detail
