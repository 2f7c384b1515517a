// Kernels for `std.nn.rope::rope` and `rope_rows`: x * cos + rotate_half(x) * sin,
// where rotate_half maps the halves [a, b] of the last axis to [-b, a].
//
// The bodies are three elementwise operations in T, each rounded to T; the
// kernels round at the same three places, so they agree with the bodies
// bit for bit (a product of two bf16 values is exact in f32, and f32's 24
// bits make rounding a sum first to f32 and then to bf16 the same as
// rounding it once).
//
// rope_rows is a `fn` in the standard library, which the interpreter never
// offers to a dispatcher; its kernel is registered so that it runs once the
// library declares it an `op`, and is tested against the function's body.
#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

// Rotates `x` [B, H, S, D]; the tables for (b, s) start at
// cos + (b * table_batch_stride + s) * D.
Tensor rotate(const Tensor& x_in, const Tensor& cos_in, const Tensor& sin_in, int64_t table_batch_stride,
              DType dtype) {
  const Tensor x = contiguous_f32(x_in);
  const Tensor cos_table = contiguous_f32(cos_in);
  const Tensor sin_table = contiguous_f32(sin_in);
  const int64_t B = x.extent(0), H = x.extent(1), S = x.extent(2), D = x.extent(3);
  const int64_t half = D / 2;
  Tensor result = Tensor::empty(DType::F32, x.shape());
  const float* in = x.data<float>();
  const float* c = cos_table.data<float>();
  const float* s = sin_table.data<float>();
  float* out = result.mutable_data<float>();
  const int64_t rows = B * H * S;
  with_rounding(dtype, [&](auto round) {
#pragma omp parallel for schedule(static) if (tensor::worth_threads(result.numel()))
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t b = row / (H * S);
      const int64_t position = row % S;
      const float* values = in + row * D;
      const float* cos_row = c + (b * table_batch_stride + position) * D;
      const float* sin_row = s + (b * table_batch_stride + position) * D;
      float* rotated = out + row * D;
      for (int64_t d = 0; d < D; ++d) {
        const float turned = d < half ? -values[d + half] : values[d - half];
        rotated[d] = round(round(values[d] * cos_row[d]) + round(turned * sin_row[d]));
      }
    }
  });
  return to_dtype(result, dtype);
}

std::optional<eval::Value> run_rope(const eval::NativeCall& call) {
  return eval::Value::from_tensor(rotate(tensor_argument(call, "x"), tensor_argument(call, "cos_table"),
                                         tensor_argument(call, "sin_table"), 0, dtype_generic(call, "T")));
}

std::optional<eval::Value> run_rope_rows(const eval::NativeCall& call) {
  return eval::Value::from_tensor(rotate(tensor_argument(call, "x"), tensor_argument(call, "cos_rows"),
                                         tensor_argument(call, "sin_rows"), dim_generic(call, "S"),
                                         dtype_generic(call, "T")));
}

}  // namespace

void register_rope_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  register_f32_bf16(table, "std.nn.rope::rope", equivalent, "bit for bit the body",
                    "bit for bit the body: its three bf16 roundings", &run_rope);
  register_f32_bf16(table, "std.nn.rope::rope_rows", equivalent, "bit for bit the body",
                    "bit for bit the body: its three bf16 roundings", &run_rope_rows);
}

}  // namespace linnet::ops::detail
