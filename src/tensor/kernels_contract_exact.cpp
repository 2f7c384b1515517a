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
// order. While no input of a tile's sums is NaN, the steps skip the NaN
// check in every rounding (exact_sum_internal.hpp says why that keeps the
// bits).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "contraction_plan.hpp"
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

bool exact_pack_scalar(float* tile, const uint16_t* source, int64_t term_stride, int64_t output_stride, int64_t width,
                       int64_t count) {
  bool nan = false;
  for (int64_t j = 0; j < kExactTileOutputs; ++j) {
    float* target = tile + j;
    if (j >= width) {
      for (int64_t t = 0; t < count; ++t) target[t * kExactTileOutputs] = 0.0f;
      continue;
    }
    const uint16_t* line = source + j * output_stride;
    for (int64_t t = 0; t < count; ++t) {
      const float value = bf16_bits_to_float(line[t * term_stride]);
      nan = nan || std::isnan(value);
      target[t * kExactTileOutputs] = value;
    }
  }
  return nan;
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
  const detail::ContractionPlan plan = detail::plan_contraction(a, b, axes, "contract_rounding_each_step");
  const int64_t batch = plan.batch, m = plan.m, n = plan.n, k = plan.k;
  require(k > 0, ErrorKind::InvalidArgument, "a sum of no terms has no first term to round");
  Tensor result = Tensor::empty(DType::F32, {batch, m, n});
  if (batch * m * n == 0) return result.reshape(plan.shape).to(DType::BF16);

  const Tensor left = a.permute(plan.order_a).reshape({batch, m, k}).contiguous();
  const Tensor right = b.permute(plan.order_b).reshape({batch, k, n});
  const uint16_t* a_bits = static_cast<const uint16_t*>(left.raw_data());
  const uint16_t* b_bits = static_cast<const uint16_t*>(right.raw_data());
  const int64_t b_batch = right.strides()[0], b_term = right.strides()[1], b_output = right.strides()[2];
  float* out = result.mutable_data<float>();

  const bool avx512 = gemm::active_isa() >= gemm::Isa::Avx512;
  const auto pack = avx512 ? &detail::exact_pack_avx512 : &detail::exact_pack_scalar;
  const auto steps = avx512 ? &detail::exact_steps_avx512 : &detail::exact_steps_scalar;
  const auto steps_no_nan = avx512 ? &detail::exact_steps_avx512_no_nan : &detail::exact_steps_scalar;
  // Whether each batch's rows of a hold a NaN (then its sums take the
  // rounding that checks for NaN throughout).
  std::vector<char> a_has_nan(static_cast<size_t>(batch), 0);
  for (int64_t index = 0; index < batch; ++index) {
    const uint16_t* rows = a_bits + index * m * k;
    for (int64_t i = 0; i < m * k && !a_has_nan[index]; ++i) a_has_nan[index] = (rows[i] & 0x7FFF) > 0x7F80;
  }
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
      bool nan_seen = a_has_nan[index] != 0;
      for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
        const int64_t count = std::min(kChunk, k - k0);
        // Packed [term][output]; the padding zero.
        const uint16_t* base = b_bits + index * b_batch + k0 * b_term + first * b_output;
        // A NaN once seen stays in the sums: the later chunks check too.
        nan_seen = pack(packed.data(), base, b_term, b_output, width, count) || nan_seen;
        const auto step = nan_seen ? steps : steps_no_nan;
        for (int64_t row = 0; row < m; ++row) {
          step(sums.data() + row * kTile, a_bits + (index * m + row) * k + k0, packed.data(), count);
        }
      }
      for (int64_t row = 0; row < m; ++row) {
        std::copy(sums.begin() + row * kTile, sums.begin() + row * kTile + width, out + (index * m + row) * n + first);
      }
    }
  }
  return result.reshape(plan.shape).to(DType::BF16);
}

}  // namespace linnet::tensor
