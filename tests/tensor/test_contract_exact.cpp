// contract_rounding_each_step: bit for bit the sequence `exact` numerics
// defines for a bf16 `sum[k] a * b` (every product and partial sum rounded,
// terms in row-major order of the contracted axes as listed), on every
// product path the CPU supports, with several contracted axes listed out of
// storage order, a batch axis, outputs that are not a multiple of the tile
// and terms that are not a multiple of the chunk, and values that make
// zeros of both signs, infinities and NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/kernels.hpp"

using namespace linnet::tensor;

namespace {

Tensor random_bf16(std::mt19937& rng, const Shape& shape, bool special) {
  std::uniform_real_distribution<float> values(-2.0f, 2.0f);
  std::uniform_int_distribution<int> pick(0, 199);
  std::vector<float> data(static_cast<size_t>(shape_numel(shape)));
  for (float& v : data) {
    v = round_to_bf16(values(rng));
    if (!special) continue;
    const int choice = pick(rng);
    if (choice == 0) v = INFINITY;
    else if (choice == 1) v = -0.0f;
    else if (choice == 2) v = 0.0f;
    else if (choice == 3) v = 1e30f;  // products overflow to infinity
  }
  return Tensor::from_vector(data, shape).to(DType::BF16);
}

// The defining sequence, one output at a time, in plain scalar code.
float reference(const Tensor& a, const Tensor& b, const std::vector<int64_t>& a_index,
                const std::vector<int64_t>& b_index, const std::vector<int>& contract_a,
                const std::vector<int>& contract_b) {
  std::vector<int64_t> ai = a_index, bi = b_index;
  std::vector<int64_t> extents;
  int64_t terms = 1;
  for (int axis : contract_a) {
    extents.push_back(a.shape()[axis]);
    terms *= a.shape()[axis];
  }
  float total = 0;
  for (int64_t term = 0; term < terms; ++term) {
    int64_t rest = term;
    for (size_t d = extents.size(); d-- > 0;) {
      ai[static_cast<size_t>(contract_a[d])] = rest % extents[d];
      bi[static_cast<size_t>(contract_b[d])] = rest % extents[d];
      rest /= extents[d];
    }
    const float product = round_to_bf16(a.at<float>(ai) * b.at<float>(bi));
    total = term == 0 ? product : round_to_bf16(total + product);
  }
  return total;
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

}  // namespace

TEST_CASE("contract_rounding_each_step is the exact bf16 sum bit for bit", "[contract][exact]") {
  std::mt19937 rng(41);
  for (const bool special : {false, true}) {
    // a [batch 2, m 3, k1 5, k2 61]; b [k2 61, batch 2, n 70, k1 5];
    // contracted in the listed order (k2, k1): k2 is the outer term index.
    const Tensor a = random_bf16(rng, {2, 3, 5, 61}, special);
    const Tensor b = random_bf16(rng, {61, 2, 70, 5}, special);
    const ContractionAxes axes{{0}, {1}, {3, 2}, {0, 3}};
    const Tensor a32 = a.to(DType::F32), b32 = b.to(DType::F32);
    for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx512}) {
      if (!gemm::isa_supported(isa)) continue;
      gemm::override_isa(isa);
      const Tensor c = contract_rounding_each_step(a, b, axes).to(DType::F32);
      gemm::override_isa(std::nullopt);
      REQUIRE(c.shape() == Shape{2, 3, 70});
      for (int64_t batch = 0; batch < 2; ++batch) {
        for (int64_t m = 0; m < 3; ++m) {
          for (int64_t n = 0; n < 70; ++n) {
            const float expected = reference(a32, b32, {batch, m, 0, 0}, {0, batch, n, 0}, axes.contract_a,
                                             axes.contract_b);
            const float got = c.at<float>({batch, m, n});
            INFO("path " << gemm::isa_name(isa) << ", output " << batch << ", " << m << ", " << n << ": " << got
                         << " vs " << expected);
            REQUIRE((same_bits(got, expected) || (std::isnan(got) && std::isnan(expected))));
          }
        }
      }
    }
  }
}

TEST_CASE("contract_rounding_each_step refuses what it does not compute", "[contract][exact]") {
  const Tensor a = Tensor::from_vector(std::vector<float>{1, 2}, {2});
  REQUIRE_THROWS_AS(contract_rounding_each_step(a, a, ContractionAxes{{}, {}, {0}, {0}}), TensorError);
}
