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
// On CPUs with AVX-512 a row runs sixteen lanes at a time (rope_avx512.cpp),
// the same operations in the same order.
#include <type_traits>

#include "kernel_support.hpp"
#include "rope_vector.hpp"

namespace linnet::ops::detail {

namespace {

inline float widened(float value) { return value; }
inline float widened(tensor::bf16_t value) { return value.to_float(); }

// Rotates rows of x (element type E: f32, or bf16 read and written as
// bf16, with no f32 copies of x or of the result); the tables are f32.
template <class E>
void rotate_rows(const E* in, const float* c, const float* s, E* out, int64_t H, int64_t S, int64_t D,
                 int64_t rows, int64_t table_batch_stride) {
  const int64_t half = D / 2;
  // The body's three roundings to T: the two products and their sum (the
  // last one is the store for bf16). In f32 the sum of two products must
  // not become one fused multiply-add (the body rounds each product); the
  // default build's baseline x86-64 flags have no FMA to contract into.
  const auto round = [](float value) {
    if constexpr (std::is_same_v<E, tensor::bf16_t>) {
      return tensor::round_to_bf16(value);
    } else {
      return value;
    }
  };
  static const bool vector_rows = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx512vl");
#pragma omp parallel for schedule(static) if (tensor::worth_threads(rows * D))
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / (H * S);
    const int64_t position = row % S;
    const E* values = in + row * D;
    const float* cos_row = c + (b * table_batch_stride + position) * D;
    const float* sin_row = s + (b * table_batch_stride + position) * D;
    E* rotated = out + row * D;
    if (vector_rows) {
      if constexpr (std::is_same_v<E, tensor::bf16_t>) {
        rope_row_bf16_avx512(reinterpret_cast<const uint16_t*>(values), cos_row, sin_row,
                             reinterpret_cast<uint16_t*>(rotated), D);
      } else {
        rope_row_f32_avx512(values, cos_row, sin_row, rotated, D);
      }
      continue;
    }
    for (int64_t d = 0; d < D; ++d) {
      const float value = widened(values[d]);
      const float turned = d < half ? -widened(values[d + half]) : widened(values[d - half]);
      const float sum = round(value * cos_row[d]) + round(turned * sin_row[d]);
      if constexpr (std::is_same_v<E, tensor::bf16_t>) {
        rotated[d] = tensor::bf16_t::from_float(sum);
      } else {
        rotated[d] = sum;
      }
    }
  }
}

// Rotates `x` [B, H, S, D]; the tables for (b, s) start at
// cos + (b * table_batch_stride + s) * D.
// Nothing (the body runs) for an x whose dtype is not T.
std::optional<eval::Value> rotate(const Tensor& x_in, const Tensor& cos_in, const Tensor& sin_in,
                                  int64_t table_batch_stride, DType dtype) {
  if (dtype != DType::F32 && dtype != DType::BF16) rounding_for(dtype);  // throws
  if (x_in.dtype() != dtype) return std::nullopt;
  const Tensor x = x_in.contiguous();
  const Tensor cos_table = contiguous_f32(cos_in);
  const Tensor sin_table = contiguous_f32(sin_in);
  const int64_t B = x.extent(0), H = x.extent(1), S = x.extent(2), D = x.extent(3);
  Tensor result = Tensor::empty(dtype, x.shape());
  const int64_t rows = B * H * S;
  if (dtype == DType::BF16) {
    rotate_rows(x.data<tensor::bf16_t>(), cos_table.data<float>(), sin_table.data<float>(),
                result.mutable_data<tensor::bf16_t>(), H, S, D, rows, table_batch_stride);
  } else {
    rotate_rows(x.data<float>(), cos_table.data<float>(), sin_table.data<float>(), result.mutable_data<float>(), H, S,
                D, rows, table_batch_stride);
  }
  return eval::Value::from_tensor(std::move(result));
}

std::optional<eval::Value> run_rope(const eval::NativeCall& call) {
  return rotate(tensor_argument(call, "x"), tensor_argument(call, "cos_table"), tensor_argument(call, "sin_table"), 0,
                dtype_generic(call, "T"));
}

std::optional<eval::Value> run_rope_rows(const eval::NativeCall& call) {
  return rotate(tensor_argument(call, "x"), tensor_argument(call, "cos_rows"), tensor_argument(call, "sin_rows"),
                dim_generic(call, "S"), dtype_generic(call, "T"));
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
