// Views share storage and only rewrite shape, strides and offset: permute,
// slice with steps, select, broadcast_to, expand_dims, reshape; contiguous()
// copies only when it must.
#include <catch2/catch.hpp>

#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

// 0, 1, 2, ... as i32 in the given shape.
Tensor counting(const Shape& shape) { return iota(shape_numel(shape), DType::I32).reshape(shape); }

}  // namespace

TEST_CASE("permute reorders axes without copying", "[views]") {
  const Tensor x = counting({2, 3, 4});
  const Tensor y = x.permute({2, 0, 1});
  CHECK(y.shape() == Shape{4, 2, 3});
  CHECK(y.strides() == Strides{1, 12, 4});
  CHECK(y.shares_storage_with(x));
  CHECK_FALSE(y.is_contiguous());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(y.at<int>({k, i, j}) == x.at<int>({i, j, k}));
  CHECK_THROWS_AS(x.permute({0, 0, 1}), TensorError);
  CHECK_THROWS_AS(x.permute({0, 1}), TensorError);
  CHECK_THROWS_AS(x.permute({0, 1, 3}), TensorError);
}

TEST_CASE("slice keeps the axis with start, stop and step", "[views]") {
  const Tensor x = counting({4, 10});
  const Tensor evens = x.slice(1, 0, 10, 2);  // x[:, 0::2]
  CHECK(evens.shape() == Shape{4, 5});
  CHECK(evens.shares_storage_with(x));
  CHECK(evens.to_vector<int32_t>()[0] == 0);
  CHECK(evens.at<int>({1, 4}) == 18);
  const Tensor odd_tail = x.slice(1, 3, 100, 3);  // stop past the extent is clamped: 3, 6, 9
  CHECK(odd_tail.shape() == Shape{4, 3});
  CHECK(odd_tail.at<int>({2, 2}) == 29);
  CHECK(x.slice(1, 7, 7).shape() == Shape{4, 0});
  CHECK(x.slice(1, 12, 20).shape() == Shape{4, 0});
  CHECK(x.slice(0, 1, 3).slice(1, 2, 4).to_vector<int32_t>() == std::vector<int32_t>{12, 13, 22, 23});
  CHECK_THROWS_AS(x.slice(1, 0, 5, 0), TensorError);
  CHECK_THROWS_AS(x.slice(1, -1, 5), TensorError);
  CHECK_THROWS_AS(x.slice(2, 0, 1), TensorError);
}

TEST_CASE("writes through a slice view land in the shared storage", "[views]") {
  Tensor cache = Tensor::zeros(DType::F32, {2, 4, 3});
  Tensor rows = cache.slice(1, 1, 3);  // positions 1 and 2
  assign(rows, Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));  // broadcast over axis 0
  CHECK(cache.at<float>({0, 1, 0}) == 1.0f);
  CHECK(cache.at<float>({1, 2, 2}) == 6.0f);
  CHECK(cache.at<float>({1, 0, 0}) == 0.0f);
  CHECK(cache.at<float>({1, 3, 2}) == 0.0f);
}

TEST_CASE("select drops an axis and checks the index", "[views]") {
  const Tensor x = counting({3, 4});
  const Tensor row = x.select(0, 2);
  CHECK(row.shape() == Shape{4});
  CHECK(row.to_vector<int32_t>() == std::vector<int32_t>{8, 9, 10, 11});
  const Tensor column = x.select(1, 1);
  CHECK(column.to_vector<int32_t>() == std::vector<int32_t>{1, 5, 9});
  CHECK(x.select(0, 1).select(0, 3).item().to<int>() == 7);
  try {
    x.select(1, 4);
    FAIL("select past the extent must throw");
  } catch (const TensorError& error) {
    CHECK(error.kind() == ErrorKind::IndexOutOfRange);
    CHECK(error.axis() == 1);
    CHECK(error.value() == 4);
    CHECK(error.extent() == 4);
  }
}

TEST_CASE("broadcast_to uses stride 0 and checks extents", "[views]") {
  const Tensor bias = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor wide = bias.broadcast_to({2, 4, 3});
  CHECK(wide.strides() == Strides{0, 0, 1});
  CHECK(wide.shares_storage_with(bias));
  CHECK(wide.at<float>({1, 3, 2}) == 3.0f);
  const Tensor column = Tensor::from_vector<float>({5, 6}, {2, 1});
  CHECK(column.broadcast_to({2, 3}).to_vector<float>() == std::vector<float>{5, 5, 5, 6, 6, 6});
  CHECK_THROWS_AS(bias.broadcast_to({2, 4}), TensorError);
  CHECK_THROWS_AS(bias.broadcast_to({}), TensorError);
  CHECK(Tensor::scalar(DType::I8, 3).broadcast_to({2, 2}).to_vector<int8_t>() == std::vector<int8_t>{3, 3, 3, 3});
}

TEST_CASE("expand_dims inserts an extent-1 axis", "[views]") {
  const Tensor x = counting({2, 3});
  CHECK(x.expand_dims(0).shape() == Shape{1, 2, 3});
  CHECK(x.expand_dims(1).shape() == Shape{2, 1, 3});
  CHECK(x.expand_dims(2).shape() == Shape{2, 3, 1});
  CHECK(x.expand_dims(1).is_contiguous());
  CHECK(x.expand_dims(2).to_vector<int32_t>() == x.to_vector<int32_t>());
  CHECK_THROWS_AS(x.expand_dims(3), TensorError);
}

TEST_CASE("reshape is a view when strides allow, a copy otherwise", "[views]") {
  const Tensor x = counting({2, 3, 4});
  const Tensor flat = x.reshape({6, 4});
  CHECK(flat.shares_storage_with(x));
  // Splitting and merging inside a non-contiguous tensor can still be a view.
  const Tensor t = x.permute({1, 0, 2});  // [3, 2, 4], strides [4, 12, 1]
  const auto split = t.try_view({3, 2, 2, 2});
  REQUIRE(split.has_value());
  CHECK(split->shares_storage_with(x));
  CHECK(split->to_vector<int32_t>() == t.to_vector<int32_t>());
  const Tensor cols = x.permute({0, 2, 1});  // [2, 4, 3]: merging the last two axes needs a copy
  CHECK_FALSE(cols.try_view({2, 12}).has_value());
  const Tensor merged = cols.reshape({2, 12});
  CHECK_FALSE(merged.shares_storage_with(x));
  CHECK(merged.to_vector<int32_t>() == cols.to_vector<int32_t>());
  // A stepped slice can gain extent-1 axes as a view.
  const Tensor stepped = x.slice(2, 0, 4, 2);
  const auto unit = stepped.try_view({2, 1, 3, 2, 1});
  REQUIRE(unit.has_value());
  CHECK(unit->to_vector<int32_t>() == stepped.to_vector<int32_t>());
  CHECK_THROWS_AS(x.reshape({5, 5}), TensorError);
  CHECK(Tensor::scalar(DType::F32, 2.5).reshape({1, 1}).at<float>({0, 0}) == 2.5f);
}

TEST_CASE("contiguous copies only when needed", "[views]") {
  const Tensor x = counting({3, 4});
  CHECK(x.contiguous().shares_storage_with(x));
  CHECK(x.slice(0, 1, 3).contiguous().shares_storage_with(x));  // whole rows stay dense
  const Tensor transposed = x.permute({1, 0});
  const Tensor dense = transposed.contiguous();
  CHECK_FALSE(dense.shares_storage_with(x));
  CHECK(dense.is_contiguous());
  CHECK(dense.to_vector<int32_t>() == std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(x.slice(1, 0, 4, 2).contiguous().to_vector<int32_t>() == std::vector<int32_t>{0, 2, 4, 6, 8, 10});
}

TEST_CASE("scalars and element access", "[views]") {
  const Tensor s = Tensor::scalar(DType::BF16, 1.0 / 3.0);
  CHECK(s.rank() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item().to<float>() == round_to_bf16(1.0f / 3.0f));
  CHECK(Tensor::scalar(DType::U8, 300).item().to<int>() == 44);  // wraps like cast
  CHECK(Tensor::scalar(DType::Bool, 2).item().to<bool>());
  CHECK(s.describe() == "bf16[]");
  CHECK(counting({2, 3}).describe() == "i32[2, 3]");
  CHECK_THROWS_AS(counting({2, 3}).at<int>({2, 0}), TensorError);
  CHECK_THROWS_AS(counting({2, 3}).at<int>({0}), TensorError);
  CHECK_THROWS_AS(counting({2, 3}).item(), TensorError);
}
