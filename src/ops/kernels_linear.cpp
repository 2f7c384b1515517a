// Kernels for `std.nn.linear::linear` and `std.linalg::{matmul, batched_matmul}`:
// matrix products with f32 accumulation (Eigen), rounded to T once per
// product, as the bodies' `sum[i] x * w` is evaluated under `equivalent`.
//
// linear's weight is `[Out, In]` and may be a large borrowed checkpoint
// tensor, so it is never widened whole: the output is computed in tiles of
// kTileRows rows by kTileOutputs outputs, and a bf16 weight is widened one
// panel of kTileOutputs rows at a time into a per-thread buffer. Tiles have
// fixed sizes, so every output is summed in the same order whatever the
// number of threads (Eigen, inside the kernels' parallel regions, multiplies
// each tile on one thread).
#include <Eigen/Core>

#include <algorithm>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;

constexpr int64_t kTileRows = 256;
constexpr int64_t kTileOutputs = 64;

// y[rows, Out] = x[rows, In] * weight[Out, In]^T in f32; weight is a
// contiguous f32 or bf16 tensor.
void multiply_by_transposed(const float* x, int64_t rows, int64_t in, const Tensor& weight, float* y) {
  const int64_t out = weight.extent(0);
  if (rows == 0 || out == 0) return;
  if (in == 0) {
    std::fill(y, y + rows * out, 0.0f);
    return;
  }
  const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
  const int64_t output_tiles = (out + kTileOutputs - 1) / kTileOutputs;
  const int64_t tiles = row_tiles * output_tiles;
  const bool widen = weight.dtype() == DType::BF16;
  const float* weight_f32 = widen ? nullptr : weight.data<float>();
  const tensor::bf16_t* weight_bf16 = widen ? weight.data<tensor::bf16_t>() : nullptr;
  MatrixMap result(y, rows, out);

  // A parallel region whenever threads are worth it: inside one, Eigen
  // multiplies on the calling thread, so every tile is summed the same way
  // whatever the thread count. Below the threshold Eigen runs single-threaded
  // anyway (its own threshold is higher).
#pragma omp parallel if (tensor::worth_threads(rows * out * in))
  {
    std::vector<float> panel(widen ? static_cast<size_t>(kTileOutputs * in) : 0);
#pragma omp for schedule(dynamic)
    for (int64_t tile = 0; tile < tiles; ++tile) {
      // Output tiles outermost, so consecutive tiles of a thread reuse its panel.
      const int64_t first_output = (tile / row_tiles) * kTileOutputs;
      const int64_t first_row = (tile % row_tiles) * kTileRows;
      const int64_t outputs = std::min(kTileOutputs, out - first_output);
      const int64_t tile_rows = std::min(kTileRows, rows - first_row);
      const float* panel_data = weight_f32 ? weight_f32 + first_output * in : panel.data();
      if (widen) {
        const tensor::bf16_t* source = weight_bf16 + first_output * in;
        for (int64_t i = 0; i < outputs * in; ++i) panel[static_cast<size_t>(i)] = source[i].to_float();
      }
      ConstMatrixMap inputs(x + first_row * in, tile_rows, in);
      ConstMatrixMap weights(panel_data, outputs, in);
      result.block(first_row, first_output, tile_rows, outputs).noalias() = inputs * weights.transpose();
    }
  }
}

// `linear<*S, In, Out, T>(x, weight, bias)`: the body rounds the product to
// T, then adds the bias in T (a second rounding).
std::optional<eval::Value> run_linear(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const Rounding round = rounding_for(dtype);
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  const Tensor weight = tensor_argument(call, "weight").contiguous();
  const std::optional<Tensor> bias = optional_tensor_argument(call, "bias");
  const int64_t in = dim_generic(call, "In");
  const int64_t out = dim_generic(call, "Out");
  Shape result_shape = shape_generic(call, "S");
  const int64_t rows = tensor::shape_numel(result_shape);
  result_shape.push_back(out);
  Tensor result = Tensor::empty(DType::F32, result_shape);
  float* y = result.mutable_data<float>();
  multiply_by_transposed(x.data<float>(), rows, in, weight, y);
  const int64_t count = rows * out;
  if (bias) {
    const Tensor offsets = contiguous_f32(*bias);
    const float* b = offsets.data<float>();
#pragma omp parallel for if (count > 65536)
    for (int64_t i = 0; i < count; ++i) y[i] = round(round(y[i]) + b[i % out]);
  }
  return eval::Value::from_tensor(to_dtype(result, dtype));
}

// c[M, N] = a[M, K] * b[K, N] in f32, for each of `batches` stacked pairs,
// in tiles of kTileRows x kTileOutputs outputs.
Tensor stacked_products(const Tensor& a, const Tensor& b, int64_t batches, int64_t m, int64_t k, int64_t n,
                        Shape result_shape) {
  const Tensor left = contiguous_f32(a);
  const Tensor right = contiguous_f32(b);
  Tensor result = Tensor::zeros(DType::F32, result_shape);
  if (m == 0 || n == 0 || k == 0) return result;
  const float* a_data = left.data<float>();
  const float* b_data = right.data<float>();
  float* c_data = result.mutable_data<float>();
  const int64_t row_tiles = (m + kTileRows - 1) / kTileRows;
  const int64_t column_tiles = (n + kTileOutputs - 1) / kTileOutputs;
  const int64_t tiles = batches * row_tiles * column_tiles;
  // As in linear: a parallel region (when worth it) keeps Eigen on one
  // thread per tile, so results do not depend on the thread count.
#pragma omp parallel for schedule(dynamic) if (tensor::worth_threads(batches * m * n * k))
  for (int64_t tile = 0; tile < tiles; ++tile) {
    const int64_t batch = tile / (row_tiles * column_tiles);
    const int64_t first_row = (tile / column_tiles % row_tiles) * kTileRows;
    const int64_t first_column = (tile % column_tiles) * kTileOutputs;
    const int64_t rows = std::min(kTileRows, m - first_row);
    const int64_t columns = std::min(kTileOutputs, n - first_column);
    ConstMatrixMap lhs(a_data + batch * m * k, m, k);
    ConstMatrixMap rhs(b_data + batch * k * n, k, n);
    MatrixMap out(c_data + batch * m * n, m, n);
    out.block(first_row, first_column, rows, columns).noalias() =
        lhs.middleRows(first_row, rows) * rhs.middleCols(first_column, columns);
  }
  return result;
}

std::optional<eval::Value> run_matmul(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t m = dim_generic(call, "M"), k = dim_generic(call, "K"), n = dim_generic(call, "N");
  const Tensor product = stacked_products(tensor_argument(call, "a"), tensor_argument(call, "b"), 1, m, k, n, {m, n});
  return eval::Value::from_tensor(to_dtype(product, dtype));
}

std::optional<eval::Value> run_batched_matmul(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t m = dim_generic(call, "M"), k = dim_generic(call, "K"), n = dim_generic(call, "N");
  Shape shape = shape_generic(call, "B");
  const int64_t batches = tensor::shape_numel(shape);
  shape.push_back(m);
  shape.push_back(n);
  const Tensor product =
      stacked_products(tensor_argument(call, "a"), tensor_argument(call, "b"), batches, m, k, n, shape);
  return eval::Value::from_tensor(to_dtype(product, dtype));
}

}  // namespace

void register_linear_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  register_f32_bf16(table, "std.nn.linear::linear", equivalent,
                    "Eigen product, f32 accumulation, then the bias",
                    "Eigen product over bf16 weight panels widened to f32, rounded to bf16, then the bias added "
                    "and rounded, as the body does",
                    &run_linear);
  register_f32_bf16(table, "std.linalg::matmul", equivalent, "Eigen product, f32 accumulation",
                    "Eigen product of the widened operands, f32 accumulation, rounded to bf16 once", &run_matmul);
  register_f32_bf16(table, "std.linalg::batched_matmul", equivalent, "Eigen product per matrix, f32 accumulation",
                    "Eigen product per matrix of the widened operands, f32 accumulation, rounded to bf16 once",
                    &run_batched_matmul);
}

}  // namespace linnet::ops::detail
