// Kernels for std.quant's MXFP4 items: dequantize_mxfp4 and the four expert
// products (mxfp4_experts, mxfp4_experts_shared, mxfp4_linear_experts_shared,
// mxfp4_combine_experts), over the in-place kernels of mxfp4.hpp: the packed
// bytes are read where they lie (a checkpoint's mapping), only the chosen
// experts are touched, and no expert is dequantized whole.
//
// Dequantization is exact in f32 and bf16, so dequantize_mxfp4 agrees with
// its body bit for bit. The products accumulate in f32 in mxfp4.hpp's
// orders (the lanes', or a grouped expert's matrix product's; not the
// body's), and round to T once, as the bodies do.
//
// Every dimension must be positive and every expert in range, else the call
// is left to the body (which reports a bad expert, or in
// mxfp4_combine_experts' dense form lets it contribute nothing).
#include <algorithm>
#include <memory>
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

// The dequantized values of packed experts, [E, Out, G * 32] in `dtype`,
// made a range at a time: whole rows decode straight into the output, a
// partial row through a one-row buffer. The same function as the whole
// dequantization, row by row, so every value has the same bits.
class DequantizedExperts final : public tensor::ElementSource {
 public:
  DequantizedExperts(PackedWeights packed, DType dtype) : packed_(std::move(packed)), dtype_(dtype) {}

  void read(size_t begin, size_t count, std::byte* out) const override {
    const size_t element = tensor::dtype_size(dtype_);
    const int64_t row_length = packed_.view.row_length();
    const size_t row_bytes = static_cast<size_t>(row_length) * element;
    size_t at = begin;
    const size_t end = begin + count;
    while (at < end) {
      const int64_t row = static_cast<int64_t>(at / row_bytes);
      const size_t inside = at % row_bytes;
      if (inside == 0 && end - at >= row_bytes) {
        const int64_t rows = static_cast<int64_t>((end - at) / row_bytes);
        decode_rows(row, rows, out);
        out += static_cast<size_t>(rows) * row_bytes;
        at += static_cast<size_t>(rows) * row_bytes;
        continue;
      }
      std::vector<std::byte> whole(row_bytes);
      decode_rows(row, 1, whole.data());
      const size_t part = std::min(row_bytes - inside, end - at);
      std::copy_n(whole.data() + inside, part, out);
      out += part;
      at += part;
    }
  }

 private:
  // Rows [first, first + rows) of the [E * Out, G * 32] values into `out`.
  void decode_rows(int64_t first, int64_t rows, std::byte* out) const {
    const auto groups = static_cast<size_t>(packed_.view.groups);
    const Mxfp4Experts part{
        packed_.view.blocks.subspan(static_cast<size_t>(first) * groups * kMxfp4BlockBytes,
                                    static_cast<size_t>(rows) * groups * kMxfp4BlockBytes),
        packed_.view.scales.subspan(static_cast<size_t>(first) * groups, static_cast<size_t>(rows) * groups), 1,
        rows, packed_.view.groups};
    dequantize_mxfp4(part, dtype_,
                     std::span<std::byte>(out, static_cast<size_t>(rows * part.row_length()) * tensor::dtype_size(dtype_)));
  }

  PackedWeights packed_;
  DType dtype_;
};

// The result is made on access (Storage::made_on_access): a product whose
// weight it is (linear, through a reshape or a reordering copy) decodes it
// a tile at a time, and only what reads it whole makes it whole.
std::optional<eval::Value> run_dequantize(const eval::NativeCall& call) {
  std::optional<PackedWeights> packed = packed_weights(call);
  if (!packed) return std::nullopt;
  const DType dtype = dtype_generic(call, "T");
  if (dtype != DType::F32 && dtype != DType::BF16 && dtype != DType::F16 && dtype != DType::F64) return std::nullopt;
  packed->view.validate();  // sizes checked now, not when the values are first read
  const Shape shape{packed->view.experts, packed->view.rows, packed->view.row_length()};
  const size_t bytes = static_cast<size_t>(tensor::shape_numel(shape)) * tensor::dtype_size(dtype);
  auto storage = tensor::Storage::made_on_access(bytes, std::make_shared<DequantizedExperts>(std::move(*packed), dtype));
  return eval::Value::from_tensor(
      Tensor::from_storage(std::move(storage), dtype, shape, tensor::contiguous_strides(shape), 0));
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

  const Shape shape = Kind == Product::CombineExperts ? Shape{rows, outputs} : Shape{rows, slots, outputs};
  std::optional<Tensor> mixing;
  if constexpr (Kind == Product::CombineExperts) mixing = contiguous_f32(tensor_argument(call, "weights"));
  const auto mixing_values = [&] {
    return std::span<const float>(mixing->data<float>(), static_cast<size_t>(mixing->numel()));
  };
  // T = bf16 takes mxfp4.hpp's _bf16 variants, which round each result
  // once (the body's final cast) and may multiply the bf16 inputs as bf16;
  // any other T the f32 results, rounded to T once.
  if (dtype_generic(call, "T") == DType::BF16) {
    Tensor result = Tensor::empty(DType::BF16, shape);
    const std::span<uint16_t> out(reinterpret_cast<uint16_t*>(result.mutable_data<tensor::bf16_t>()),
                                  static_cast<size_t>(result.numel()));
    if constexpr (Kind == Product::CombineExperts) {
      mxfp4_combine_experts_bf16(packed->view, inputs, choice, mixing_values(), out);
    }
    if constexpr (Kind == Product::Experts) mxfp4_experts_bf16(packed->view, inputs, choice, out);
    if constexpr (Kind == Product::ExpertsShared) mxfp4_experts_shared_bf16(packed->view, inputs, choice, out);
    if constexpr (Kind == Product::LinearExpertsShared) {
      mxfp4_linear_experts_shared_bf16(packed->view, inputs, choice, out);
    }
    return eval::Value::from_tensor(std::move(result));
  }
  Tensor result = Tensor::empty(DType::F32, shape);
  const std::span<float> out(result.mutable_data<float>(), static_cast<size_t>(result.numel()));
  if constexpr (Kind == Product::CombineExperts) {
    mxfp4_combine_experts_f32(packed->view, inputs, choice, mixing_values(), out);
  }
  if constexpr (Kind == Product::Experts) mxfp4_experts_f32(packed->view, inputs, choice, out);
  if constexpr (Kind == Product::ExpertsShared) mxfp4_experts_shared_f32(packed->view, inputs, choice, out);
  if constexpr (Kind == Product::LinearExpertsShared) {
    mxfp4_linear_experts_shared_f32(packed->view, inputs, choice, out);
  }
  return eval::Value::from_tensor(to_dtype(result, dtype_generic(call, "T")));
}

}  // namespace

void register_mxfp4_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  const std::string module = "std.quant::";
  register_f32_bf16(table, module + "dequantize_mxfp4", equivalent, "table lookup, bit for bit the body",
                    "table lookup, bit for bit the body", &run_dequantize);
  const std::string f32_summary =
      "packed bytes read in place, chosen experts only; f32 sums in 8 lanes, or for an expert 8+ slots chose "
      "one matrix product over decoded tiles (gemm's block order)";
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
