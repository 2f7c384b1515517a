// Contractions against a plain loop over random shapes, layouts and axis
// roles (a property test), plus the bf16, integer and error paths.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <random>

#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

// out[batch..., free_a..., free_b...] = sum over contracted of a * b, in double.
std::vector<double> loop_contract(const Tensor& a, const Tensor& b, const ContractionAxes& axes) {
  const Tensor a64 = a.to(DType::F64);
  const Tensor b64 = b.to(DType::F64);
  std::vector<int> free_a, free_b;
  for (int axis = 0; axis < a.rank(); ++axis) {
    if (std::count(axes.batch_a.begin(), axes.batch_a.end(), axis) == 0 &&
        std::count(axes.contract_a.begin(), axes.contract_a.end(), axis) == 0)
      free_a.push_back(axis);
  }
  for (int axis = 0; axis < b.rank(); ++axis) {
    if (std::count(axes.batch_b.begin(), axes.batch_b.end(), axis) == 0 &&
        std::count(axes.contract_b.begin(), axes.contract_b.end(), axis) == 0)
      free_b.push_back(axis);
  }
  // Odometers over the output axes and the contracted axes.
  Shape out_shape, sum_shape;
  for (int axis : axes.batch_a) out_shape.push_back(a.shape()[axis]);
  for (int axis : free_a) out_shape.push_back(a.shape()[axis]);
  for (int axis : free_b) out_shape.push_back(b.shape()[axis]);
  for (int axis : axes.contract_a) sum_shape.push_back(a.shape()[axis]);
  auto unflatten = [](int64_t flat, const Shape& shape) {
    std::vector<int64_t> index(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      index[i] = flat % shape[i];
      flat /= shape[i];
    }
    return index;
  };
  std::vector<double> out;
  for (int64_t o = 0; o < shape_numel(out_shape); ++o) {
    const std::vector<int64_t> oi = unflatten(o, out_shape);
    std::vector<int64_t> ia(a.rank()), ib(b.rank());
    size_t p = 0;
    for (size_t i = 0; i < axes.batch_a.size(); ++i, ++p) {
      ia[axes.batch_a[i]] = oi[p];
      ib[axes.batch_b[i]] = oi[p];
    }
    for (int axis : free_a) ia[axis] = oi[p++];
    for (int axis : free_b) ib[axis] = oi[p++];
    double total = 0;
    for (int64_t s = 0; s < shape_numel(sum_shape); ++s) {
      const std::vector<int64_t> si = unflatten(s, sum_shape);
      for (size_t i = 0; i < si.size(); ++i) {
        ia[axes.contract_a[i]] = si[i];
        ib[axes.contract_b[i]] = si[i];
      }
      total += a64.at<double>(ia) * b64.at<double>(ib);
    }
    out.push_back(total);
  }
  return out;
}

// A tensor of `shape` whose memory order is a random permutation of its axes,
// so that operands arrive in many layouts.
Tensor random_layout(const Shape& shape, std::mt19937& generator, DType dtype) {
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), generator);
  Shape stored(shape.size());
  for (size_t i = 0; i < order.size(); ++i) stored[i] = shape[order[i]];
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int>(i);
  const Tensor data = Tensor::from_vector(random_floats(shape_numel(stored), generator()), stored, dtype);
  return data.permute(inverse);
}

}  // namespace

TEST_CASE("contract matches a plain loop on random shapes and layouts", "[contract]") {
  std::mt19937 generator(42);
  for (int trial = 0; trial < 60; ++trial) {
    // Choose how many axes of each role, their extents, then place them at random positions.
    const int batch = generator() % 3, contracted = 1 + generator() % 2, free_a = generator() % 3,
              free_b = generator() % 3;
    auto extent = [&] { return int64_t(1 + generator() % 6); };
    Shape batch_extents, contract_extents;
    for (int i = 0; i < batch; ++i) batch_extents.push_back(extent());
    for (int i = 0; i < contracted; ++i) contract_extents.push_back(extent());
    // Axis roles in random order for each operand.
    auto build = [&](int free_count, std::vector<int>& batch_axes, std::vector<int>& contract_axes) {
      std::vector<int> roles;  // 0..batch-1: batch i; 100+i: contracted i; -1: free
      for (int i = 0; i < batch; ++i) roles.push_back(i);
      for (int i = 0; i < contracted; ++i) roles.push_back(100 + i);
      for (int i = 0; i < free_count; ++i) roles.push_back(-1);
      std::shuffle(roles.begin(), roles.end(), generator);
      Shape shape(roles.size());
      batch_axes.assign(batch, 0);
      contract_axes.assign(contracted, 0);
      for (size_t axis = 0; axis < roles.size(); ++axis) {
        if (roles[axis] >= 100) {
          contract_axes[roles[axis] - 100] = static_cast<int>(axis);
          shape[axis] = contract_extents[roles[axis] - 100];
        } else if (roles[axis] >= 0) {
          batch_axes[roles[axis]] = static_cast<int>(axis);
          shape[axis] = batch_extents[roles[axis]];
        } else {
          shape[axis] = extent();
        }
      }
      return shape;
    };
    ContractionAxes axes;
    const Shape shape_a = build(free_a, axes.batch_a, axes.contract_a);
    const Shape shape_b = build(free_b, axes.batch_b, axes.contract_b);
    for (DType dtype : {DType::F32, DType::F64}) {
      const Tensor a = random_layout(shape_a, generator, dtype);
      const Tensor b = random_layout(shape_b, generator, dtype);
      INFO("trial " << trial << ": " << a.describe() << " x " << b.describe());
      const Tensor result = contract(a, b, axes);
      const std::vector<double> expected = loop_contract(a, b, axes);
      const std::vector<double> got = result.to_vector<double>();
      REQUIRE(got.size() == expected.size());
      const double tolerance = dtype == DType::F32 ? 1e-5 : 1e-12;
      for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - expected[i]) <= tolerance * 8);
    }
  }
}

TEST_CASE("contract covers matmul, linear and attention scores", "[contract]") {
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  // c[m, n] = sum[k] a[m, k] * b[k, n]
  CHECK(contract(a, b, {{}, {}, {1}, {0}}).to_vector<float>() == std::vector<float>{58, 64, 139, 154});
  CHECK(matmul(a, b).to_vector<float>() == std::vector<float>{58, 64, 139, 154});
  // y[*s, o] = sum[i] x[*s, i] * w[o, i] with w stored [Out, In].
  const Tensor x = iota(2 * 2 * 3, DType::F32).reshape({2, 2, 3});
  const Tensor w = Tensor::from_vector<float>({1, 0, 0, 0, 1, 1}, {2, 3});
  const Tensor y = contract(x, w, {{}, {}, {2}, {1}});
  CHECK(y.shape() == Shape{2, 2, 2});
  CHECK(y.to_vector<float>() == std::vector<float>{0, 3, 3, 9, 6, 15, 9, 21});
  // score[b, h, q, k] = sum[d] q[b, h, q, d] * k[b, h, k, d]
  const Tensor q = Tensor::from_vector(random_floats(2 * 3 * 4 * 5, 1), {2, 3, 4, 5});
  const Tensor k = Tensor::from_vector(random_floats(2 * 3 * 6 * 5, 2), {2, 3, 6, 5});
  const ContractionAxes scores_axes{{0, 1}, {0, 1}, {3}, {3}};
  const Tensor scores = contract(q, k, scores_axes);
  CHECK(scores.shape() == Shape{2, 3, 4, 6});
  const std::vector<double> expected = loop_contract(q, k, scores_axes);
  const std::vector<float> got = scores.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - expected[i]) < 1e-5);
  // Batched matmul with a broadcast batch axis.
  const Tensor shared = Tensor::from_vector<float>({1, 0, 0, 1}, {2, 2});
  const Tensor stack = iota(3 * 2 * 2, DType::F32).reshape({3, 2, 2});
  CHECK(matmul(stack, shared).to_vector<float>() == stack.to_vector<float>());
  CHECK(matmul(shared.reshape({1, 2, 2}), stack).to_vector<float>() == stack.to_vector<float>());
}

TEST_CASE("bf16 contraction widens to f32 and rounds once", "[contract]") {
  // 256 + 1 + 1 + ... in f32 is exact; rounding each partial sum to bf16 would lose the ones.
  std::vector<float> row(10, 1.0f);
  row[0] = 256.0f;
  const Tensor a = Tensor::from_vector(row, {1, 10}, DType::BF16);
  const Tensor b = Tensor::from_vector(std::vector<float>(10, 1.0f), {10, 1}, DType::BF16);
  const Tensor c = matmul(a, b);
  CHECK(c.dtype() == DType::BF16);
  CHECK(c.item().to<float>() == 264.0f);  // 265 rounded to bf16 (spacing 2 above 256): 264
  CHECK(matmul(a, b, DType::F32).item().to<float>() == 265.0f);
  // Random bf16 operands: the result is the f32 product rounded.
  const Tensor p = Tensor::from_vector(random_floats(7 * 9, 3), {7, 9}, DType::BF16);
  const Tensor r = Tensor::from_vector(random_floats(9 * 5, 4), {9, 5}, DType::F16);
  const Tensor p32 = p.to(DType::F32);
  CHECK(half_bits(matmul(p, p.permute({1, 0}))) == half_bits(matmul(p32, p32.permute({1, 0})).to(DType::BF16)));
  const Tensor r32 = r.to(DType::F32);
  CHECK(half_bits(matmul(r.permute({1, 0}), r)) == half_bits(matmul(r32.permute({1, 0}), r32).to(DType::F16)));
}

TEST_CASE("a stack of row vectors with few terms keeps the f32 product's bits", "[contract]") {
  // out[r, h] = sum[k] w[r, k] * rows[r, k, h]: a batch per r of a 1 x k
  // vector times a k x h matrix, which runs as a plain loop for k <= 16
  // and must give what Eigen's product of the widened operands gives.
  const int64_t batch = 37;
  for (int64_t k : {1, 2, 4, 7, 16, 17}) {
    for (int64_t h : {19, 64, 333}) {
      for (DType type : {DType::BF16, DType::F16}) {
        CAPTURE(k, h, dtype_name(type));
        const Tensor weights = Tensor::from_vector(random_floats(batch * k, 31 + k), {batch, k}, type);
        const Tensor rows = Tensor::from_vector(random_floats(batch * k * h, 41 + h), {batch, k, h}, type);
        const ContractionAxes axes{{0}, {0}, {1}, {1}};
        const Tensor got = contract(weights, rows, axes, DType::F32);
        const Tensor want = contract(weights.to(DType::F32), rows.to(DType::F32), axes);
        REQUIRE(got.shape() == Shape{batch, h});
        CHECK(got.to_vector<float>() == want.to_vector<float>());
        // The weights transposed in memory (a strided row vector).
        const Tensor strided = weights.permute({1, 0}).contiguous().permute({1, 0});
        CHECK(contract(strided, rows, axes, DType::F32).to_vector<float>() == want.to_vector<float>());
      }
    }
  }
}

TEST_CASE("large bf16 operands are widened in slices", "[contract]") {
  // k = 65536 makes a slice 64 columns (or rows) wide, so both operands'
  // slicing paths run several times, including a ragged last slice.
  constexpr int64_t k = 65536;
  const Tensor wide_a = Tensor::from_vector(random_floats(2 * k, 21), {2, k}, DType::BF16);
  const Tensor wide_b = Tensor::from_vector(random_floats(130 * k, 22), {130, k}, DType::BF16);  // stored [N, K]
  for (const auto& [a, b] : {std::pair{wide_a, wide_b}, std::pair{wide_b, wide_a}}) {
    const Tensor result = contract(a, b, {{}, {}, {1}, {1}}, DType::F32);
    const Tensor expected = contract(a.to(DType::F32), b.to(DType::F32), {{}, {}, {1}, {1}});
    REQUIRE(result.shape() == expected.shape());
    const std::vector<float> got = result.to_vector<float>();
    const std::vector<float> want = expected.to_vector<float>();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - want[i])));
    CHECK(worst < 1e-3);  // sums of 65536 products of magnitude < 1: only the summation order may differ
  }
}

TEST_CASE("integer contraction wraps in its dtype", "[contract]") {
  const Tensor a = Tensor::from_vector<int8_t>({100, 100, 1, 2}, {2, 2});
  const Tensor b = Tensor::from_vector<int8_t>({1, 1, 1, 1}, {2, 2});
  // 100 + 100 = 200 wraps to -56 in i8.
  CHECK(matmul(a, b).to_vector<int8_t>() == std::vector<int8_t>{-56, -56, 3, 3});
  const Tensor wide = matmul(a.to(DType::I32), b.to(DType::I32));
  CHECK(wide.to_vector<int32_t>() == std::vector<int32_t>{200, 200, 3, 3});
}

TEST_CASE("contract checks axes and extents", "[contract]") {
  const Tensor a = Tensor::zeros(DType::F32, {2, 3});
  const Tensor b = Tensor::zeros(DType::F32, {4, 5});
  try {
    contract(a, b, {{}, {}, {1}, {0}});
    FAIL("contracted extents 3 and 4 differ");
  } catch (const TensorError& error) {
    CHECK(error.kind() == ErrorKind::ShapeMismatch);
    CHECK(error.axis() == 1);
  }
  CHECK_THROWS_AS(contract(a, b, {{}, {}, {1, 1}, {0, 1}}), TensorError);
  CHECK_THROWS_AS(contract(a, b, {{}, {}, {2}, {0}}), TensorError);
  CHECK_THROWS_AS(contract(a, b.to(DType::F64), {{}, {}, {1}, {0}}), TensorError);
  CHECK_THROWS_AS(contract(a, b, {{0}, {}, {}, {}}), TensorError);
  CHECK_THROWS_AS(matmul(Tensor::zeros(DType::F32, {3}), b), TensorError);
  // A contracted extent of zero gives zeros.
  CHECK(contract(Tensor::zeros(DType::F32, {2, 0}), Tensor::zeros(DType::F32, {0, 3}), {{}, {}, {1}, {0}})
            .to_vector<float>() == std::vector<float>(6, 0.0f));
}
