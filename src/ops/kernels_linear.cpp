// Kernels for `std.nn.linear::linear` and `std.linalg::{matmul, batched_matmul}`:
// matrix products with f32 accumulation (tensor::gemm, the CPU's widest
// vector unit), rounded to T once per product, as the bodies' `sum[i] x * w`
// is evaluated under `equivalent`.
//
// linear's weight is `[Out, In]` and may be a large borrowed checkpoint
// tensor: gemm reads it in place, f32 or bf16 (a bf16 weight under T=f32 is
// widened as it is loaded, with the bits of a weight widened first). bf16
// operands are multiplied as bf16 (vdpbf16ps where the CPU has it). Every
// output is summed in an order that depends only on its two rows, so
// results do not depend on the number of threads.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernel_support.hpp"
#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/mapped_pages.hpp"

namespace linnet::ops::detail {

namespace {

namespace gemm = tensor::gemm;

// A product operand as gemm reads it: contiguous, f32 or bf16 (other
// dtypes are widened to f32).
Tensor product_operand(const Tensor& t) {
  if (t.dtype() == DType::F32 || t.dtype() == DType::BF16) return t.contiguous();
  return contiguous_f32(t);
}

gemm::Operand operand_of(const Tensor& t, int64_t stride) {
  return gemm::Operand{t.raw_data(), t.dtype() == DType::BF16, stride};
}

// Rows of weight per tile of weight_tiles_product. A tile must be a whole
// number of the product's blocks of outputs (`alignment`, see
// gemm::output_alignment) for its outputs to have the bits of the product
// with the whole weight: oneDNN's blocks of 128 outputs from 64 x rows on,
// single outputs below. Within that, a gemm block's worth (48 rows) when it
// fits 1 MiB, fewer for very long rows, and never less than one alignment.
int64_t tile_rows(int64_t in, size_t element, int64_t alignment) {
  int64_t fits = 48;
  if (in > 0) fits = static_cast<int64_t>((size_t{1} << 20) / (static_cast<size_t>(in) * element));
  if (alignment <= 1) return std::clamp<int64_t>(fits, 1, 48);
  return std::max<int64_t>(1, fits / alignment) * alignment;
}

// y = x w^T for a weight [out, in] whose elements are made on access (a
// dequantized MXFP4 expert stack, or a reordered copy of one): each thread
// makes a tile of rows into its own buffer and multiplies it, so the whole
// weight never exists. Tiles are whole blocks of the product's own split
// (tile_rows), so the result has the bits of the product with the whole
// weight (tests/ops/test_mxfp4_on_access.cpp holds it at 5 and 70 rows).
void weight_tiles_product(int64_t rows, int64_t out, int64_t in, gemm::Operand x, const Tensor& weight,
                          gemm::Destination y) {
  const size_t y_element = y.bf16 ? 2 : 4;
  const size_t element = weight.element_size();
  const bool w_bf16 = weight.dtype() == DType::BF16;
  const int64_t tile = tile_rows(in, element, gemm::output_alignment(rows, x.bf16, w_bf16));
  const int64_t tiles = (out + tile - 1) / tile;
  const bool threads = tensor::worth_threads(rows * out * in) && tiles > 1;
#pragma omp parallel if (threads)
  {
    std::vector<std::byte> buffer(static_cast<size_t>(std::min(tile, out) * in) * element);
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t first = t * tile, count = std::min(tile, out - first);
      weight.read_elements(first * in, count * in, buffer.data());
      const gemm::Operand w{buffer.data(), w_bf16, in};
      const gemm::Destination tile_y{static_cast<std::byte*>(y.data) + static_cast<size_t>(first) * y_element, y.bf16,
                                     y.stride, y.bias != nullptr ? y.bias + first : nullptr};
      gemm::gemm_bt_serial(rows, 0, count, in, x, w, tile_y);
    }
  }
}

// A weight that lies in the checkpoint's mapping is read whole by every
// product: mapped in 2 MiB pages where the kernel can
// (tensor::prefer_huge_pages).
constexpr size_t kHugePageWeightBytes = size_t{4} << 20;
void prefer_huge_pages_for(const Tensor& weight) {
  const std::optional<std::span<const std::byte>> bytes = mapped_bytes(weight);
  if (bytes && bytes->size() >= kHugePageWeightBytes) tensor::prefer_huge_pages(bytes->data(), bytes->size());
}

// `linear<*S, In, Out, T>(x, weight, bias)`. The body's `projected + offset`
// is one more term of the sum: the bias joins the f32 accumulator and the
// result rounds to T once, as `equivalent` evaluates a sum in a low
// precision and as PyTorch's addmm (F.linear with a bias) does. The body
// under `exact` rounds the product and then the addition; in f32 the two
// are the same bits.
std::optional<eval::Value> run_linear(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const Tensor x = product_operand(tensor_argument(call, "x"));
  const Tensor& given_weight = tensor_argument(call, "weight");
  prefer_huge_pages_for(given_weight);
  // An unmade f32 or bf16 weight is multiplied a tile at a time, never made.
  const bool by_tiles =
      given_weight.unmade() && (given_weight.dtype() == DType::F32 || given_weight.dtype() == DType::BF16);
  const Tensor weight = by_tiles ? given_weight : product_operand(given_weight);
  const std::optional<Tensor> bias = optional_tensor_argument(call, "bias");
  const int64_t in = dim_generic(call, "In");
  const int64_t out = dim_generic(call, "Out");
  Shape result_shape = shape_generic(call, "S");
  const int64_t rows = tensor::shape_numel(result_shape);
  result_shape.push_back(out);
  // The product stores T directly (f32 or bf16, the two the kernel is
  // registered for), the bias added to each f32 sum before its one
  // rounding: no f32 result to cast and no pass after the product.
  if (dtype != DType::F32 && dtype != DType::BF16) rounding_for(dtype);  // throws
  const std::optional<Tensor> offsets = bias ? std::optional<Tensor>(contiguous_f32(*bias)) : std::nullopt;
  Tensor result = Tensor::empty(dtype, result_shape);
  const gemm::Destination destination{result.raw_mutable_data(), dtype == DType::BF16, out,
                                      offsets ? offsets->data<float>() : nullptr};
  if (by_tiles) {
    weight_tiles_product(rows, out, in, operand_of(x, in), weight, destination);
  } else {
    gemm::gemm_bt(rows, out, in, operand_of(x, in), operand_of(weight, in), destination);
  }
  return eval::Value::from_tensor(result);
}

// c[M, N] = a[M, K] * b[K, N] with f32 sums, stored as `dtype` (f32, or
// each sum rounded once to bf16 as the product is stored: the bits of the
// f32 product cast afterwards, without that f32 product), for each of
// `batches` stacked pairs. gemm reads both operands along K, so b is
// transposed once into [N, K] (a copy the size of b, small beside the
// product).
Tensor stacked_products(const Tensor& a, const Tensor& b, DType dtype, int64_t batches, int64_t m, int64_t k,
                        int64_t n, Shape result_shape) {
  if (dtype != DType::F32 && dtype != DType::BF16) rounding_for(dtype);  // throws
  Tensor result = Tensor::zeros(dtype, result_shape);
  if (m == 0 || n == 0 || k == 0 || batches == 0) return result;
  const Tensor left = product_operand(a);
  const Tensor right = product_operand(b.reshape({batches, k, n}).permute({0, 2, 1}));
  const size_t element = left.dtype() == DType::BF16 ? 2 : 4;
  const size_t right_element = right.dtype() == DType::BF16 ? 2 : 4;
  const bool result_bf16 = dtype == DType::BF16;
  const size_t result_element = result_bf16 ? 2 : 4;
  const auto* a_bytes = static_cast<const char*>(left.raw_data());
  const auto* b_bytes = static_cast<const char*>(right.raw_data());
  auto* c_bytes = static_cast<char*>(result.raw_mutable_data());
  // Many small products (attention heads) go one per thread; a large one
  // splits its outputs over the threads itself.
  const bool per_thread = batches > 1 && m * n * k < (int64_t{1} << 21) && tensor::worth_threads(batches * m * n * k);
#pragma omp parallel for schedule(dynamic) if (per_thread)
  for (int64_t batch = 0; batch < batches; ++batch) {
    const gemm::Operand x{a_bytes + static_cast<size_t>(batch * m * k) * element, left.dtype() == DType::BF16, k};
    const gemm::Operand w{b_bytes + static_cast<size_t>(batch * n * k) * right_element, right.dtype() == DType::BF16,
                          k};
    const gemm::Destination c{c_bytes + static_cast<size_t>(batch * m * n) * result_element, result_bf16, n};
    gemm::gemm_bt(m, n, k, x, w, c);
  }
  return result;
}

std::optional<eval::Value> run_matmul(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t m = dim_generic(call, "M"), k = dim_generic(call, "K"), n = dim_generic(call, "N");
  return eval::Value::from_tensor(
      stacked_products(tensor_argument(call, "a"), tensor_argument(call, "b"), dtype, 1, m, k, n, {m, n}));
}

std::optional<eval::Value> run_batched_matmul(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t m = dim_generic(call, "M"), k = dim_generic(call, "K"), n = dim_generic(call, "N");
  Shape shape = shape_generic(call, "B");
  const int64_t batches = tensor::shape_numel(shape);
  shape.push_back(m);
  shape.push_back(n);
  return eval::Value::from_tensor(
      stacked_products(tensor_argument(call, "a"), tensor_argument(call, "b"), dtype, batches, m, k, n, shape));
}

}  // namespace

void register_linear_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  register_f32_bf16(table, "std.nn.linear::linear", equivalent,
                    "vector product (tensor::gemm), f32 accumulation, then the bias; a bf16 weight widened as it is loaded",
                    "bf16 product with f32 accumulation (vdpbf16ps where the CPU has it), the bias added to the f32 "
                    "sum, rounded to bf16 once (as PyTorch's addmm)",
                    &run_linear);
  register_f32_bf16(table, "std.linalg::matmul", equivalent, "vector product (tensor::gemm), f32 accumulation",
                    "bf16 product with f32 accumulation (vdpbf16ps where the CPU has it), rounded to bf16 once",
                    &run_matmul);
  register_f32_bf16(table, "std.linalg::batched_matmul", equivalent,
                    "vector product (tensor::gemm) per matrix, f32 accumulation",
                    "bf16 product per matrix with f32 accumulation (vdpbf16ps where the CPU has it), rounded to "
                    "bf16 once",
                    &run_batched_matmul);
}

}  // namespace linnet::ops::detail
