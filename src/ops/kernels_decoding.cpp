// Kernel for `std.nn.decoding::argmax<*S, N, T>`: the first index of each
// row's maximum, as i32. The body takes the row maximum with a `max` that
// propagates NaN and then the least index whose element equals it; no
// element equals NaN, so a row holding a NaN yields N. The kernel returns
// the same, bit for bit.
#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

std::optional<eval::Value> run_argmax(const eval::NativeCall& call) {
  const int64_t n = dim_generic(call, "N");
  if (n == 0) return std::nullopt;  // the body's `max` over nothing reports it
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  Tensor result = Tensor::empty(DType::I32, shape_generic(call, "S"));
  const float* in = x.data<float>();
  int32_t* out = result.mutable_data<int32_t>();
  const int64_t rows = x.numel() / n;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(x.numel()))
  for (int64_t row = 0; row < rows; ++row) {
    const float* values = in + row * n;
    int64_t best = 0;
    bool has_nan = false;
    for (int64_t i = 0; i < n; ++i) {
      if (values[i] != values[i]) {
        has_nan = true;
        break;
      }
      if (values[i] > values[best]) best = i;
    }
    out[row] = static_cast<int32_t>(has_nan ? n : best);
  }
  return eval::Value::from_tensor(result);
}

}  // namespace

void register_decoding_kernels(RegistryOpTable& table) {
  register_f32_bf16(table, "std.nn.decoding::argmax", eval::NumericsPolicy::Equivalent,
                    "one pass per row, bit for bit the body", "one pass per row, bit for bit the body", &run_argmax);
}

}  // namespace linnet::ops::detail
