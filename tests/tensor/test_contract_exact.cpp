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
#include "linnet/tensor/threading.hpp"

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

namespace {

// c[m, n] = sum[k] a[m, k] * b (b laid out as `b_layout` says), checked
// against the defining sequence on every path the CPU supports.
enum class Layout { OutIn, InOut, Strided };

void check_matrix_product(std::mt19937& rng, int64_t m, int64_t n, int64_t k, Layout layout, bool special,
                          int64_t nan_term = -1) {
  const Tensor a = random_bf16(rng, {m, k}, special);
  // b as a [k, n] view: an [Out, In] weight transposed (terms contiguous),
  // a plain [In, Out] matrix (outputs contiguous), or every stride > 1.
  Tensor b;
  std::vector<int> contract_b{0};
  if (layout == Layout::OutIn) {
    b = random_bf16(rng, {n, k}, special);
    contract_b = {1};
  } else if (layout == Layout::InOut) {
    b = random_bf16(rng, {k, n}, special);
  } else {
    b = random_bf16(rng, {2 * k, 2 * n}, special).slice(0, 0, 2 * k, 2).slice(1, 1, 2 * n, 2);
  }
  if (nan_term >= 0) {
    // One NaN in the middle of the terms of output 0: every sum before it
    // goes the quick way, the rest of that tile the careful one.
    Tensor f = b.to(DType::F32).contiguous();
    f.mutable_data<float>()[layout == Layout::OutIn ? nan_term : nan_term * n] = NAN;
    b = f.to(DType::BF16);
  }
  const ContractionAxes axes{{}, {}, {1}, contract_b};
  const Tensor a32 = a.to(DType::F32), b32 = b.to(DType::F32);
  for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx512}) {
    if (!gemm::isa_supported(isa)) continue;
    gemm::override_isa(isa);
    const Tensor c = contract_rounding_each_step(a, b, axes).to(DType::F32);
    gemm::override_isa(std::nullopt);
    REQUIRE(c.shape() == Shape{m, n});
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        const std::vector<int64_t> b_index = layout == Layout::OutIn ? std::vector<int64_t>{col, 0}
                                                                     : std::vector<int64_t>{0, col};
        const float expected = reference(a32, b32, {row, 0}, b_index, {1}, contract_b);
        const float got = c.at<float>({row, col});
        INFO("path " << gemm::isa_name(isa) << ", " << m << " x " << n << " x " << k << ", layout "
                     << static_cast<int>(layout) << ", output " << row << ", " << col << ": " << got << " vs "
                     << expected);
        REQUIRE((same_bits(got, expected) || (std::isnan(got) && std::isnan(expected))));
      }
    }
  }
}

}  // namespace

TEST_CASE("contract_rounding_each_step at odd sizes and every layout of b", "[contract][exact]") {
  std::mt19937 rng(7);
  for (const Layout layout : {Layout::OutIn, Layout::InOut, Layout::Strided}) {
    for (const bool special : {false, true}) {
      check_matrix_product(rng, 1, 1, 1, layout, special);
      check_matrix_product(rng, 1, 1, 300, layout, special);
      check_matrix_product(rng, 2, 17, 1, layout, special);
      // Outputs and terms past whole 16 x 16 blocks, tiles and chunks.
      check_matrix_product(rng, 3, 81, 147, layout, special);
      check_matrix_product(rng, 1, 64, 128, layout, special);
      check_matrix_product(rng, 2, 130, 257, layout, special);
    }
    // A NaN in the second chunk of terms only, and in the last term.
    check_matrix_product(rng, 2, 70, 300, layout, false, 200);
    check_matrix_product(rng, 1, 33, 129, layout, false, 128);
  }
}

TEST_CASE("contract_rounding_each_step gives the same bits on 1 and 2 threads", "[contract][exact]") {
  std::mt19937 rng(11);
  // Large enough for threads (4 x 613 x 1031 multiply-adds).
  const Tensor a = random_bf16(rng, {4, 1031}, false);
  const Tensor b = random_bf16(rng, {613, 1031}, false);
  const ContractionAxes axes{{}, {}, {1}, {1}};
  const int threads = num_threads();
  set_num_threads(1);
  const Tensor one = contract_rounding_each_step(a, b, axes);
  set_num_threads(2);
  const Tensor two = contract_rounding_each_step(a, b, axes);
  set_num_threads(threads);
  REQUIRE(std::memcmp(one.raw_data(), two.raw_data(), static_cast<size_t>(one.numel()) * 2) == 0);
}

TEST_CASE("contract_rounding_each_step refuses what it does not compute", "[contract][exact]") {
  const Tensor a = Tensor::from_vector(std::vector<float>{1, 2}, {2});
  REQUIRE_THROWS_AS(contract_rounding_each_step(a, a, ContractionAxes{{}, {}, {0}, {0}}), TensorError);
}
