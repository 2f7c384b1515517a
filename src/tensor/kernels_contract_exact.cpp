// contract_rounding_each_step (kernels.hpp): the bf16 contraction as
// `exact` numerics defines it, every product and every partial sum rounded,
// the terms in row-major order of the contracted axes. Rather than one
// whole-tensor multiply and add per term (the interpreter's generic way),
// each output keeps its running sum in a register lane while the terms go
// by: outputs in tiles of kExactTileOutputs, the b values of a tile packed
// per chunk of terms (widened to f32, whatever b's strides), and the sums of
// every a row for that tile carried across the chunks. Each output's sum
// follows the same sequence of roundings as the generic way, so the result
// is the same bit for bit; tiles are split over threads, which changes no
// order.
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "exact_sum_internal.hpp"
#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::tensor {

namespace detail {

void exact_steps_scalar(float* acc, const uint16_t* a, const float* tile, int64_t count) {
  for (int64_t k = 0; k < count; ++k) {
    const float weight = bf16_bits_to_float(a[k]);
    const float* row = tile + k * kExactTileOutputs;
    for (int64_t j = 0; j < kExactTileOutputs; ++j) acc[j] = round_to_bf16(acc[j] + round_to_bf16(weight * row[j]));
  }
}

}  // namespace detail

namespace {

// Terms per packed chunk: a chunk's tile (chunk x 64 f32, 32 KiB) stays in L1.
constexpr int64_t kChunk = 128;

void require(bool ok, ErrorKind kind, const std::string& message) {
  if (!ok) throw TensorError(kind, "contract_rounding_each_step: " + message);
}

}  // namespace

Tensor contract_rounding_each_step(const Tensor& a, const Tensor& b, const ContractionAxes& axes) {
  require(a.dtype() == DType::BF16 && b.dtype() == DType::BF16, ErrorKind::UnsupportedDType,
          "needs two bf16 tensors, got " + a.describe() + " and " + b.describe());
  require(axes.batch_a.size() == axes.batch_b.size() && axes.contract_a.size() == axes.contract_b.size(),
          ErrorKind::InvalidArgument, "a and b must list as many batch and contracted axes");
  std::vector<bool> used_a(a.rank(), false), used_b(b.rank(), false);
  auto mark = [](const Tensor& t, const std::vector<int>& listed, std::vector<bool>& used) {
    for (int axis : listed) {
      require(axis >= 0 && axis < t.rank() && !used[axis], ErrorKind::InvalidAxis,
              "axis " + std::to_string(axis) + " of " + t.describe() + " is out of range or listed twice");
      used[axis] = true;
    }
  };
  mark(a, axes.batch_a, used_a);
  mark(a, axes.contract_a, used_a);
  mark(b, axes.batch_b, used_b);
  mark(b, axes.contract_b, used_b);
  for (size_t i = 0; i < axes.batch_a.size(); ++i) {
    require(a.shape()[axes.batch_a[i]] == b.shape()[axes.batch_b[i]], ErrorKind::ShapeMismatch,
            "batch axes of different extents");
  }
  for (size_t i = 0; i < axes.contract_a.size(); ++i) {
    require(a.shape()[axes.contract_a[i]] == b.shape()[axes.contract_b[i]], ErrorKind::ShapeMismatch,
            "contracted axes of different extents");
  }

  // [batch, M, K] of a and [batch, K, N] of b, K in the listed order (the
  // row-major order of the terms), as contract() lays them out.
  Shape shape;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int> order_a(axes.batch_a), order_b(axes.batch_b);
  for (int axis : axes.batch_a) {
    shape.push_back(a.shape()[axis]);
    batch *= a.shape()[axis];
  }
  for (int axis = 0; axis < a.rank(); ++axis) {
    if (!used_a[axis]) {
      order_a.push_back(axis);
      shape.push_back(a.shape()[axis]);
      m *= a.shape()[axis];
    }
  }
  order_a.insert(order_a.end(), axes.contract_a.begin(), axes.contract_a.end());
  order_b.insert(order_b.end(), axes.contract_b.begin(), axes.contract_b.end());
  for (int axis : axes.contract_a) k *= a.shape()[axis];
  for (int axis = 0; axis < b.rank(); ++axis) {
    if (!used_b[axis]) {
      order_b.push_back(axis);
      shape.push_back(b.shape()[axis]);
      n *= b.shape()[axis];
    }
  }
  require(k > 0, ErrorKind::InvalidArgument, "a sum of no terms has no first term to round");
  Tensor result = Tensor::empty(DType::F32, {batch, m, n});
  if (batch * m * n == 0) return result.reshape(shape).to(DType::BF16);

  const Tensor left = a.permute(order_a).reshape({batch, m, k}).contiguous();
  const Tensor right = b.permute(order_b).reshape({batch, k, n});
  const uint16_t* a_bits = static_cast<const uint16_t*>(left.raw_data());
  const uint16_t* b_bits = static_cast<const uint16_t*>(right.raw_data());
  const int64_t b_batch = right.strides()[0], b_term = right.strides()[1], b_output = right.strides()[2];
  float* out = result.mutable_data<float>();

  const auto steps = gemm::active_isa() >= gemm::Isa::Avx512 ? &detail::exact_steps_avx512 : &detail::exact_steps_scalar;
  constexpr int64_t kTile = detail::kExactTileOutputs;
  const int64_t tiles_per_batch = (n + kTile - 1) / kTile;
  const int64_t tiles = batch * tiles_per_batch;
#pragma omp parallel if (worth_threads(batch * m * n * k))
  {
    std::vector<float> packed(static_cast<size_t>(kChunk * kTile));
    std::vector<float> sums(static_cast<size_t>(m * kTile));
#pragma omp for schedule(dynamic)
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t index = tile / tiles_per_batch;
      const int64_t first = (tile % tiles_per_batch) * kTile;
      const int64_t width = std::min(kTile, n - first);
      // -0 is the identity of rounded addition (-0 + x is x for every x,
      // zeros of either sign included), so every sum starts there and the
      // first term needs no special case.
      std::fill(sums.begin(), sums.end(), -0.0f);
      for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
        const int64_t count = std::min(kChunk, k - k0);
        // Packed [term][output]; each output's terms read along b's
        // terms (contiguous for a [Out, In] weight), the padding zero.
        const uint16_t* base = b_bits + index * b_batch + k0 * b_term + first * b_output;
        for (int64_t j = 0; j < kTile; ++j) {
          float* target = packed.data() + j;
          if (j >= width) {
            for (int64_t t = 0; t < count; ++t) target[t * kTile] = 0.0f;
            continue;
          }
          const uint16_t* source = base + j * b_output;
          for (int64_t t = 0; t < count; ++t) target[t * kTile] = bf16_bits_to_float(source[t * b_term]);
        }
        for (int64_t row = 0; row < m; ++row) {
          steps(sums.data() + row * kTile, a_bits + (index * m + row) * k + k0, packed.data(), count);
        }
      }
      for (int64_t row = 0; row < m; ++row) {
        std::copy(sums.begin() + row * kTile, sums.begin() + row * kTile + width, out + (index * m + row) * n + first);
      }
    }
  }
  return result.reshape(shape).to(DType::BF16);
}

}  // namespace linnet::tensor
