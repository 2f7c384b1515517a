// Contractions as (batched) matrix products. Each operand is viewed as a
// stack of matrices, [batch, free, contracted] for a and [batch, contracted,
// free] for b, without copying whenever its strides already describe such a
// stack with one unit-stride dimension (Eigen's row- or column-major maps);
// otherwise that operand alone is copied into that order. f32/f64 products go
// to Eigen directly; bf16/f16 ones are widened to f32 block by block and then
// go to Eigen; integer ones use a plain wrapping loop.
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <string>

#include "contraction_plan.hpp"
#include "dispatch.hpp"
#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::tensor {

namespace {

using detail::ContractionPlan;
using detail::plan_contraction;
using Index = Eigen::Index;

// How one batch's matrix of `rows` x `cols` sits in memory.
struct MatrixLayout {
  bool row_major = true;
  int64_t leading = 0;  // elements between consecutive rows (row-major) or columns (column-major)
};

// The Eigen-compatible layout of a rows x cols matrix with the given element
// strides, if there is one. Extent-1 dimensions may have any stride.
std::optional<MatrixLayout> matrix_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    return MatrixLayout{true, rows == 1 ? cols : row_stride};
  }
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    return MatrixLayout{false, cols == 1 ? rows : col_stride};
  }
  return std::nullopt;
}

// An operand as [batch, rows, cols] with a layout Eigen can map.
struct MatrixStack {
  Tensor tensor;  // rank 3
  MatrixLayout layout;
};

MatrixStack as_matrix_stack(const Tensor& x, const std::vector<int>& order, int64_t batch, int64_t rows, int64_t cols) {
  Tensor stacked = x.permute(order).reshape({batch, rows, cols});
  auto layout = matrix_layout(rows, cols, stacked.strides()[1], stacked.strides()[2]);
  if (!layout) {
    stacked = stacked.contiguous();
    layout = matrix_layout(rows, cols, stacked.strides()[1], stacked.strides()[2]);
  }
  return {stacked, *layout};
}

template <class T, int Order>
using ConstMatrixMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using OutputMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Unaligned,
                             Eigen::OuterStride<>>;

template <class T, int OrderA, int OrderB>
void multiply_one(const T* a, const T* b, T* c, Index m, Index n, Index k, Index lda, Index ldb, Index ldc) {
  ConstMatrixMap<T, OrderA> left(a, m, k, Eigen::OuterStride<>(lda));
  ConstMatrixMap<T, OrderB> right(b, k, n, Eigen::OuterStride<>(ldb));
  OutputMap<T> result(c, m, n, Eigen::OuterStride<>(ldc));
  result.noalias() = left * right;
}

// c (row-major, leading dimension ldc) = a * b for the given layouts.
template <class T>
void multiply_layouts(const T* a, MatrixLayout la, const T* b, MatrixLayout lb, T* c, Index m, Index n, Index k,
                      Index ldc) {
  if (la.row_major) {
    if (lb.row_major) multiply_one<T, Eigen::RowMajor, Eigen::RowMajor>(a, b, c, m, n, k, la.leading, lb.leading, ldc);
    else multiply_one<T, Eigen::RowMajor, Eigen::ColMajor>(a, b, c, m, n, k, la.leading, lb.leading, ldc);
  } else {
    if (lb.row_major) multiply_one<T, Eigen::ColMajor, Eigen::RowMajor>(a, b, c, m, n, k, la.leading, lb.leading, ldc);
    else multiply_one<T, Eigen::ColMajor, Eigen::ColMajor>(a, b, c, m, n, k, la.leading, lb.leading, ldc);
  }
}

// Whether a loop over `batch` products should give each thread whole
// products (Eigen then stays single-threaded inside the parallel region)
// rather than let Eigen split each large product over the threads.
bool parallel_over_batches(int64_t batch, int64_t m, int64_t n, int64_t k) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const bool small = m * n * k < 64 * 64 * 64;
  return batch > 1 && worth_threads(batch * m * n * k) && (batch >= threads || small);
}

// c[batch] = a[batch] * b[batch] for every batch, with T = float or double:
// Eigen reads the operands in place.
template <class T>
void multiply_float(const MatrixStack& a, const MatrixStack& b, Tensor& c, int64_t batch, int64_t m, int64_t n,
                    int64_t k) {
  const T* a_base = static_cast<const T*>(a.tensor.raw_data());
  const T* b_base = static_cast<const T*>(b.tensor.raw_data());
  T* c_base = static_cast<T*>(c.raw_mutable_data());
  const int64_t a_batch = a.tensor.strides()[0];
  const int64_t b_batch = b.tensor.strides()[0];
  auto one = [&](int64_t i) {
    multiply_layouts<T>(a_base + i * a_batch, a.layout, b_base + i * b_batch, b.layout, c_base + i * m * n, m, n, k, n);
  };
  if (parallel_over_batches(batch, m, n, k)) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < batch; ++i) one(i);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// A block of a bf16/f16 matrix widened to f32, kept in the source's
// orientation so that reading it stays sequential.
struct WidenedBlock {
  Tensor buffer;  // f32, counted by the allocator like any tensor
  MatrixLayout layout;
};

// Rows [row0, row0 + rows) and columns [col0, col0 + cols) of matrix `index`
// of a half-precision stack, as f32.
template <class S>
WidenedBlock widen_block(const MatrixStack& stack, int64_t index, int64_t row0, int64_t rows, int64_t col0,
                         int64_t cols) {
  const int64_t row_stride = stack.tensor.strides()[1];
  const int64_t col_stride = stack.tensor.strides()[2];
  const S* base = static_cast<const S*>(stack.tensor.raw_data()) + index * stack.tensor.strides()[0] +
                  row0 * row_stride + col0 * col_stride;
  const bool row_major = stack.layout.row_major;
  // Walk `outer` lines of `inner` elements along the unit-stride dimension.
  const int64_t outer = row_major ? rows : cols;
  const int64_t inner = row_major ? cols : rows;
  const int64_t outer_stride = row_major ? row_stride : col_stride;
  const int64_t inner_stride = row_major ? col_stride : row_stride;
  WidenedBlock block{Tensor::empty(DType::F32, {outer, inner}), MatrixLayout{row_major, inner}};
  float* out = block.buffer.mutable_data<float>();
  const bool parallel = !omp_in_parallel() && outer > 1 && outer * inner > (int64_t{1} << 16);
#pragma omp parallel for if (parallel) schedule(static)
  for (int64_t line = 0; line < outer; ++line) {
    const S* source = base + line * outer_stride;
    float* target = out + line * inner;
    for (int64_t i = 0; i < inner; ++i) target[i] = detail::load(source[i * inner_stride]);
  }
  return block;
}

// A stack of row vectors times matrices with few rows (m == 1, k at most
// kFewTerms, b's rows contiguous): c[i, 0, o] = sum over j of a[i, 0, j] *
// b[i, j, o], widened, added from zero in increasing j, a multiplication
// then an addition per term. That is the order, and the operations, of
// Eigen's column-major matrix-vector product, which is what multiply_layouts
// runs for such a product (the row vector times the matrix, transposed), so
// the bits are the same; but Eigen is reached through a widened copy of
// each operand per batch, and a prompt's `sum[k] weight[r, k] * rows[r, k,
// h]` (a router's weights over each token's few experts) has a batch per
// token: GPT-OSS's 512-token statement took 4.3-4.9 ms per layer that
// way, 2.9-3.6 ms with the loop below (docs/performance.md).
constexpr int64_t kFewTerms = 16;

bool few_terms(const MatrixStack& b, int64_t m, int64_t n, int64_t k) {
  // Below 20 rows + columns Eigen takes its coefficient-based product instead.
  return m == 1 && k <= kFewTerms && k + 1 + n >= 20 && b.layout.row_major && b.tensor.strides()[2] == 1;
}

template <class S>
void multiply_few_terms(const MatrixStack& a, const MatrixStack& b, Tensor& c, int64_t batch, int64_t n,
                        int64_t k) {
  const S* a_base = static_cast<const S*>(a.tensor.raw_data());
  const S* b_base = static_cast<const S*>(b.tensor.raw_data());
  float* c_base = c.mutable_data<float>();
  const int64_t a_batch = a.tensor.strides()[0], a_term = a.tensor.strides()[2];
  const int64_t b_batch = b.tensor.strides()[0], b_row = b.tensor.strides()[1];
#pragma omp parallel for schedule(static) if (worth_threads(batch * n * k))
  for (int64_t i = 0; i < batch; ++i) {
    float* out = c_base + i * n;
    for (int64_t o = 0; o < n; ++o) out[o] = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      const float weight = detail::load(a_base[i * a_batch + j * a_term]);
      const S* row = b_base + i * b_batch + j * b_row;
      for (int64_t o = 0; o < n; ++o) out[o] += weight * detail::load(row[o]);
    }
  }
}

// bf16/f16 products: widen to f32 block by block (the larger operand in
// slices of about kBlockElements elements, so a large weight never exists
// whole in f32), multiply in f32 into c (f32).
template <class S>
void multiply_half(const MatrixStack& a, const MatrixStack& b, Tensor& c, int64_t batch, int64_t m, int64_t n,
                   int64_t k) {
  constexpr int64_t kBlockElements = int64_t{1} << 22;  // 16 MiB of f32
  float* c_base = c.mutable_data<float>();
  const bool slice_b = n >= m;
  const int64_t slice = std::max<int64_t>(64, kBlockElements / std::max<int64_t>(k, 1));
  auto one = [&](int64_t i) {
    float* c_i = c_base + i * m * n;
    if (slice_b) {
      const WidenedBlock left = widen_block<S>(a, i, 0, m, 0, k);
      for (int64_t n0 = 0; n0 < n; n0 += slice) {
        const int64_t width = std::min(slice, n - n0);
        const WidenedBlock right = widen_block<S>(b, i, 0, k, n0, width);
        multiply_layouts<float>(left.buffer.data<float>(), left.layout, right.buffer.data<float>(), right.layout,
                                c_i + n0, m, width, k, n);
      }
    } else {
      const WidenedBlock right = widen_block<S>(b, i, 0, k, 0, n);
      for (int64_t m0 = 0; m0 < m; m0 += slice) {
        const int64_t height = std::min(slice, m - m0);
        const WidenedBlock left = widen_block<S>(a, i, m0, height, 0, k);
        multiply_layouts<float>(left.buffer.data<float>(), left.layout, right.buffer.data<float>(), right.layout,
                                c_i + m0 * n, height, n, k, n);
      }
    }
  };
  if (parallel_over_batches(batch, m, n, k)) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < batch; ++i) one(i);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// Integer products accumulate in their own dtype, wrapping.
template <class I>
void multiply_integer(const MatrixStack& a, const MatrixStack& b, Tensor& c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  const I* a_base = static_cast<const I*>(a.tensor.raw_data());
  const I* b_base = static_cast<const I*>(b.tensor.raw_data());
  I* c_base = static_cast<I*>(c.raw_mutable_data());
  const int64_t a_batch = a.tensor.strides()[0], a_row = a.tensor.strides()[1], a_col = a.tensor.strides()[2];
  const int64_t b_batch = b.tensor.strides()[0], b_row = b.tensor.strides()[1], b_col = b.tensor.strides()[2];
  const bool parallel = batch * m * n * k > (int64_t{1} << 16);
#pragma omp parallel for collapse(2) if (parallel) schedule(static)
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t row = 0; row < m; ++row) {
      const I* a_row_start = a_base + i * a_batch + row * a_row;
      for (int64_t col = 0; col < n; ++col) {
        const I* b_col_start = b_base + i * b_batch + col * b_col;
        I acc{0};
        for (int64_t j = 0; j < k; ++j) {
          acc = detail::wrapping_add(acc, detail::wrapping_mul(a_row_start[j * a_col], b_col_start[j * b_row]));
        }
        c_base[(i * m + row) * n + col] = acc;
      }
    }
  }
}

}  // namespace

Tensor contract(const Tensor& a, const Tensor& b, const ContractionAxes& axes, std::optional<DType> out_dtype) {
  if (a.dtype() != b.dtype()) {
    throw TensorError(ErrorKind::DTypeMismatch,
                      "contract: operands have different dtypes (" + a.describe() + " and " + b.describe() + ")");
  }
  if (a.dtype() == DType::Bool) throw TensorError(ErrorKind::UnsupportedDType, "contract of bool tensors");
  const ContractionPlan plan = plan_contraction(a, b, axes, "contract");
  const Shape& shape = plan.shape;
  const int64_t batch = plan.batch, m = plan.m, n = plan.n, k = plan.k;

  const DType result_dtype = out_dtype.value_or(a.dtype());
  // bf16/f16 multiply in f32 (one rounding at the end); the rest natively.
  const DType compute = a.dtype() == DType::BF16 || a.dtype() == DType::F16 ? DType::F32 : a.dtype();
  if (batch * m * n == 0 || k == 0) return Tensor::zeros(compute, shape).to(result_dtype);
  Tensor product = Tensor::empty(compute, {batch, m, n});
  const MatrixStack left = as_matrix_stack(a, plan.order_a, batch, m, k);
  const MatrixStack right = as_matrix_stack(b, plan.order_b, batch, k, n);
  detail::visit_dtype(a.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      multiply_float<S>(left, right, product, batch, m, n, k);
    } else if constexpr (detail::is_half_v<S>) {
      if (few_terms(right, m, n, k)) {
        multiply_few_terms<S>(left, right, product, batch, n, k);
      } else {
        multiply_half<S>(left, right, product, batch, m, n, k);
      }
    } else if constexpr (std::is_integral_v<S>) {
      multiply_integer<S>(left, right, product, batch, m, n, k);
    }
  });
  return product.reshape(shape).to(result_dtype);
}

Tensor matmul(const Tensor& a, const Tensor& b, std::optional<DType> out_dtype) {
  if (a.rank() < 2 || b.rank() < 2) {
    throw TensorError(ErrorKind::ShapeMismatch,
                      "matmul needs operands of rank 2 or more, got " + a.describe() + " and " + b.describe());
  }
  // Broadcast the leading (batch) axes of both to a common shape.
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  const Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b);
  Shape full_a = batch, full_b = batch;
  full_a.insert(full_a.end(), a.shape().end() - 2, a.shape().end());
  full_b.insert(full_b.end(), b.shape().end() - 2, b.shape().end());
  const Tensor left = a.broadcast_to(full_a);
  const Tensor right = b.broadcast_to(full_b);
  const int batch_rank = static_cast<int>(batch.size());
  ContractionAxes axes;
  for (int axis = 0; axis < batch_rank; ++axis) {
    axes.batch_a.push_back(axis);
    axes.batch_b.push_back(axis);
  }
  axes.contract_a = {batch_rank + 1};
  axes.contract_b = {batch_rank};
  return contract(left, right, axes, out_dtype);
}

}  // namespace linnet::tensor
