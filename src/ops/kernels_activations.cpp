// Kernels for `std.nn.activations::silu` (`x / (1 + exp(-x))`) and
// `sigmoid` (`1 / (1 + exp(-x))`), in f32, rounded to T once. Each body is
// six elementwise passes (widen, negate, exp, add, divide, round), each
// making a tensor of the whole input (at a 512-token Mistral prompt, six
// 29 MB f32 tensors per layer for silu; GPT-OSS's expert activation calls
// sigmoid on [512, 4, 2880]); a kernel makes the same steps per element in
// one pass, in the same f32 operations (std::exp as the body's `exp`, then
// the add and the division, no contraction possible), so it agrees with
// the body bit for bit. When the input is dead after the call (the gate
// projection in SwiGLU) the result is written over it.
#include <cmath>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

inline float silu_f32(float value) { return value / (1.0f + std::exp(-value)); }
inline float sigmoid_f32(float value) { return 1.0f / (1.0f + std::exp(-value)); }

// One pass of `activation` over x's elements, rounded to T once.
template <float (*activation)(float)>
std::optional<eval::Value> run_elementwise(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const Tensor& argument = tensor_argument(call, "x");
  if (argument.dtype() != dtype || (dtype != DType::F32 && dtype != DType::BF16)) return std::nullopt;
  const bool in_place = argument.is_contiguous() && held_by_call_alone(argument);
  const Tensor x = argument.is_contiguous() ? argument : argument.contiguous();
  Tensor result = in_place ? argument : Tensor::empty(dtype, x.shape());
  const int64_t count = x.numel();
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
                    &run_elementwise<silu_f32>);
  register_f32_bf16(table, "std.nn.activations::sigmoid", eval::NumericsPolicy::Equivalent,
                    "bit for bit the body, in one pass", "bit for bit the body: f32 steps, rounded to bf16 once",
                    &run_elementwise<sigmoid_f32>);
}

}  // namespace linnet::ops::detail
