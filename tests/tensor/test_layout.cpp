// select, concat, iota, fill, assign and cumsum.
#include <catch2/catch.hpp>

#include "tensor_test_util.hpp"

using namespace tensor_test;

TEST_CASE("select chooses elementwise with broadcasting", "[layout]") {
  const Tensor cond = Tensor::from_vector<bool>({true, false, true}, {3});
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::scalar(DType::F32, -1.0);
  CHECK(select(cond, a, b).to_vector<float>() == std::vector<float>{1, -1, 3, 4, -1, 6});
  // A causal mask: keep where key position <= query position.
  const Tensor positions = iota(4, DType::I32);
  const Tensor mask = binary(BinaryOp::Le, positions.reshape({1, 4}), positions.reshape({4, 1}));
  const Tensor masked = select(mask, Tensor::zeros(DType::BF16, {4, 4}), Tensor::scalar(DType::BF16, -INFINITY));
  CHECK(masked.at<float>({1, 1}) == 0.0f);
  CHECK(masked.at<float>({1, 2}) == -INFINITY);
  CHECK(masked.dtype() == DType::BF16);
  CHECK_THROWS_AS(select(a, a, a), TensorError);                                      // condition not bool
  CHECK_THROWS_AS(select(cond, a, Tensor::scalar(DType::F64, 0.0)), TensorError);     // dtypes differ
  for (DType dtype : kAllDTypes) {
    const Tensor x = Tensor::from_vector<int64_t>({1, 0}, {2}, dtype);
    const Tensor y = Tensor::from_vector<int64_t>({0, 1}, {2}, dtype);
    CHECK(select(Tensor::from_vector<bool>({false, true}, {2}), x, y).to_vector<int64_t>() ==
          std::vector<int64_t>{0, 0});
  }
}

TEST_CASE("concat joins along any axis", "[layout]") {
  const Tensor a = iota(6, DType::I64).reshape({2, 3});
  const Tensor b = iota(4, DType::I64).reshape({2, 2});
  const Tensor joined = concat({a, b}, -1);
  CHECK(joined.shape() == Shape{2, 5});
  CHECK(joined.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 0, 1, 3, 4, 5, 2, 3});
  const Tensor rows = concat({a, a.slice(0, 1, 2), a.permute({1, 0}).permute({1, 0})}, 0);
  CHECK(rows.shape() == Shape{5, 3});
  CHECK(rows.select(0, 2).to_vector<int64_t>() == std::vector<int64_t>{3, 4, 5});
  // rotate_half style: concat of a negated half and the other half.
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 4}, DType::BF16);
  const Tensor rotated = concat({unary(UnaryOp::Neg, x.slice(1, 2, 4)), x.slice(1, 0, 2)}, 1);
  CHECK(rotated.to_vector<float>() == std::vector<float>{-3, -4, 1, 2});
  CHECK(concat({a, Tensor::zeros(DType::I64, {0, 3})}, 0).shape() == Shape{2, 3});
  try {
    concat({a, b}, 0);
    FAIL("extents differ on axis 1");
  } catch (const TensorError& error) {
    CHECK(error.kind() == ErrorKind::ShapeMismatch);
    CHECK(error.axis() == 1);
  }
  CHECK_THROWS_AS(concat({a, a.to(DType::I32)}, 0), TensorError);
  CHECK_THROWS_AS(concat({}, 0), TensorError);
}

TEST_CASE("iota and fill in several dtypes", "[layout]") {
  CHECK(iota(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(iota(4, DType::BF16).to_vector<float>() == std::vector<float>{0, 1, 2, 3});
  CHECK(iota(0, DType::I32).numel() == 0);
  // i32 is written directly (a decode step's `iota<i32>(MaxSeq)`), the
  // same values as the i64 positions cast.
  const Tensor positions = iota(32768, DType::I32);
  CHECK(positions.dtype() == DType::I32);
  CHECK(positions.to_vector<int32_t>() == cast(iota(32768), DType::I32).to_vector<int32_t>());
  CHECK(iota(1, DType::I32).to_vector<int32_t>() == std::vector<int32_t>{0});
  // 257 is not a bf16 value: it rounds to the even neighbour 256.
  CHECK(iota(258, DType::BF16).at<float>({257}) == 256.0f);
  CHECK_THROWS_AS(iota(3, DType::Bool), TensorError);
  CHECK_THROWS_AS(iota(-1), TensorError);
  CHECK(fill({2, 2}, DType::F16, 0.1).to_vector<float>() == std::vector<float>(4, round_to_f16(0.1f)));
  CHECK(fill({3}, DType::I8, -1).to_vector<int8_t>() == std::vector<int8_t>{-1, -1, -1});
  CHECK(fill({2}, DType::U32, -1).to_vector<uint32_t>() == std::vector<uint32_t>{UINT32_MAX, UINT32_MAX});
  CHECK(fill({2}, DType::Bool, true).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(fill({}, DType::F64, 2.5).item().to<double>() == 2.5);
}

TEST_CASE("assign writes a broadcast source into a view", "[layout]") {
  Tensor cache = Tensor::zeros(DType::I16, {3, 4});
  Tensor column = cache.slice(1, 1, 2);
  assign(column, Tensor::from_vector<int16_t>({7, 8, 9}, {3, 1}));
  CHECK(cache.to_vector<int16_t>() == std::vector<int16_t>{0, 7, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0});
  Tensor transposed = cache.permute({1, 0});
  assign(transposed, Tensor::from_vector<int16_t>({1, 2, 3}, {3}));
  CHECK(cache.select(0, 2).to_vector<int16_t>() == std::vector<int16_t>{3, 3, 3, 3});
  CHECK_THROWS_AS(assign(cache, Tensor::zeros(DType::I32, {3, 4})), TensorError);
  CHECK_THROWS_AS(assign(cache, Tensor::zeros(DType::I16, {4, 3})), TensorError);
}

TEST_CASE("cumsum along an axis with an accumulator dtype", "[layout]") {
  const Tensor x = iota(6, DType::I32).reshape({2, 3});
  CHECK(cumsum(x, 1).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 3, 3, 7, 12});
  CHECK(cumsum(x, 0).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 5, 7});
  CHECK(cumsum(x, -1, DType::F64).dtype() == DType::F64);
  // bf16 accumulation rounds every partial sum: 256 + 1 stays 256 in bf16, not in f32.
  const Tensor ones = Tensor::from_vector<float>(std::vector<float>(300, 1.0f), {300}, DType::BF16);
  CHECK(cumsum(ones, 0).at<float>({299}) == 256.0f);
  CHECK(cumsum(ones, 0, DType::F32).at<float>({299}) == 300.0f);
  // Wrapping integer accumulation.
  CHECK(cumsum(Tensor::from_vector<uint8_t>({200, 100}, {2}), 0).to_vector<uint8_t>() ==
        std::vector<uint8_t>{200, 44});
  CHECK_THROWS_AS(cumsum(Tensor::zeros(DType::Bool, {3}), 0), TensorError);
  CHECK(cumsum(Tensor::zeros(DType::F32, {0, 3}), 0).shape() == Shape{0, 3});
}
