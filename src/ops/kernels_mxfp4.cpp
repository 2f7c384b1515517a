// Kernels for std.quant's MXFP4 items: dequantize_mxfp4 and the four expert
// products (mxfp4_experts, mxfp4_experts_shared, mxfp4_linear_experts_shared,
// mxfp4_combine_experts), over the in-place kernels of mxfp4.hpp: the packed
// bytes are read where they lie (a checkpoint's mapping), only the chosen
// experts are touched, and no expert is dequantized whole.
//
// Dequantization is exact in f32 and bf16, so dequantize_mxfp4 agrees with
// its body bit for bit. The products accumulate in f32 in mxfp4.hpp's lane
// order (not the body's), and round to T once, as the bodies do.
//
// Every dimension must be positive and every expert in range, else the call
// is left to the body (which reports a bad expert, or in
// mxfp4_combine_experts' dense form lets it contribute nothing).
#include <span>
#include <vector>

#include "kernel_support.hpp"
#include "linnet/ops/mxfp4.hpp"

namespace linnet::ops::detail {

namespace {

// The packed weights of a call, as views of its `blocks` and `scales`
// arguments (contiguous already for checkpoint tensors, so nothing is
// copied). The tensors are kept so the views stay valid.
struct PackedWeights {
  Tensor blocks, scales;
  Mxfp4Experts view;
};

std::optional<PackedWeights> packed_weights(const eval::NativeCall& call) {
  const int64_t experts = dim_generic(call, "E"), rows = dim_generic(call, "Out"), groups = dim_generic(call, "G");
  if (experts <= 0 || rows <= 0 || groups <= 0) return std::nullopt;
  PackedWeights packed;
  packed.blocks = tensor_argument(call, "blocks").contiguous();
  packed.scales = tensor_argument(call, "scales").contiguous();
  packed.view = Mxfp4Experts{
      std::span<const uint8_t>(packed.blocks.data<uint8_t>(), static_cast<size_t>(packed.blocks.numel())),
      std::span<const uint8_t>(packed.scales.data<uint8_t>(), static_cast<size_t>(packed.scales.numel())),
      experts, rows, groups};
  return packed;
}

std::optional<eval::Value> run_dequantize(const eval::NativeCall& call) {
  const std::optional<PackedWeights> packed = packed_weights(call);
  if (!packed) return std::nullopt;
  const DType dtype = dtype_generic(call, "T");
  Tensor result = Tensor::empty(dtype, {packed->view.experts, packed->view.rows, packed->view.row_length()});
  dequantize_mxfp4(packed->view, dtype,
                   std::span<std::byte>(static_cast<std::byte*>(result.raw_mutable_data()),
                                        static_cast<size_t>(result.numel()) * result.element_size()));
  return eval::Value::from_tensor(result);
}

// Which product a registration runs.
enum class Product { Experts, ExpertsShared, LinearExpertsShared, CombineExperts };

template <Product Kind>
std::optional<eval::Value> run_product(const eval::NativeCall& call) {
  const std::optional<PackedWeights> packed = packed_weights(call);
  if (!packed) return std::nullopt;
  const int64_t rows = dim_generic(call, "R"), slots = dim_generic(call, "K");
  if (rows <= 0 || slots <= 0) return std::nullopt;
  const Tensor experts = contiguous_i64(tensor_argument(call, "experts"));
  const int64_t* expert = experts.data<int64_t>();
  for (int64_t i = 0; i < experts.numel(); ++i) {
    if (expert[i] < 0 || expert[i] >= packed->view.experts) return std::nullopt;
  }
  const ExpertChoice choice{std::span<const int64_t>(expert, static_cast<size_t>(experts.numel())), rows, slots};
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  const std::span<const float> inputs(x.data<float>(), static_cast<size_t>(x.numel()));
  const int64_t outputs = packed->view.rows;

  Tensor result;
  if constexpr (Kind == Product::CombineExperts) {
    const Tensor mixing = contiguous_f32(tensor_argument(call, "weights"));
    result = Tensor::empty(DType::F32, {rows, outputs});
    mxfp4_combine_experts_f32(packed->view, inputs, choice,
                              std::span<const float>(mixing.data<float>(), static_cast<size_t>(mixing.numel())),
                              std::span<float>(result.mutable_data<float>(), static_cast<size_t>(result.numel())));
  } else {
    result = Tensor::empty(DType::F32, {rows, slots, outputs});
    const std::span<float> out(result.mutable_data<float>(), static_cast<size_t>(result.numel()));
    if constexpr (Kind == Product::Experts) mxfp4_experts_f32(packed->view, inputs, choice, out);
    if constexpr (Kind == Product::ExpertsShared) mxfp4_experts_shared_f32(packed->view, inputs, choice, out);
    if constexpr (Kind == Product::LinearExpertsShared) {
      mxfp4_linear_experts_shared_f32(packed->view, inputs, choice, out);
    }
  }
  // One rounding to T, the body's final cast (mxfp4.hpp's _bf16 variants
  // round the same way).
  return eval::Value::from_tensor(to_dtype(result, dtype_generic(call, "T")));
}

}  // namespace

void register_mxfp4_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  const std::string module = "std.quant::";
  register_f32_bf16(table, module + "dequantize_mxfp4", equivalent, "table lookup, bit for bit the body",
                    "table lookup, bit for bit the body", &run_dequantize);
  const std::string f32_summary = "packed bytes read in place, chosen experts only, f32 accumulation in 8 lanes";
  const std::string bf16_summary = f32_summary + ", rounded to bf16 once";
  register_f32_bf16(table, module + "mxfp4_experts", equivalent, f32_summary, bf16_summary,
                    &run_product<Product::Experts>);
  register_f32_bf16(table, module + "mxfp4_experts_shared", equivalent, f32_summary, bf16_summary,
                    &run_product<Product::ExpertsShared>);
  register_f32_bf16(table, module + "mxfp4_linear_experts_shared", equivalent, f32_summary, bf16_summary,
                    &run_product<Product::LinearExpertsShared>);
  register_f32_bf16(table, module + "mxfp4_combine_experts", equivalent, f32_summary, bf16_summary,
                    &run_product<Product::CombineExperts>);
}

}  // namespace linnet::ops::detail
