// take and gather: results against loops, and bounds errors that name the
// axis, the bad value and the extent.
#include <catch2/catch.hpp>

#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

TensorError error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const TensorError& error) {
    return error;
  }
  FAIL("expected a TensorError");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("take gathers whole rows like an embedding lookup", "[gather]") {
  const Tensor table = iota(5 * 3, DType::F32).reshape({5, 3}).to(DType::BF16);
  const Tensor ids = Tensor::from_vector<int32_t>({4, 0, 4, 2}, {2, 2});
  const Tensor rows = take(table, 0, ids);
  CHECK(rows.shape() == Shape{2, 2, 3});
  CHECK(rows.dtype() == DType::BF16);
  CHECK(rows.to_vector<float>() == std::vector<float>{12, 13, 14, 0, 1, 2, 12, 13, 14, 6, 7, 8});
  // Along a middle axis, from a non-contiguous source.
  const Tensor x = iota(2 * 4 * 3, DType::I64).reshape({2, 4, 3});
  const Tensor picked = take(x.permute({0, 2, 1}), 2, Tensor::from_vector<uint8_t>({3, 1}, {2}));
  CHECK(picked.shape() == Shape{2, 3, 2});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h) {
      CHECK(picked.at<int64_t>({b, h, 0}) == x.at<int64_t>({b, 3, h}));
      CHECK(picked.at<int64_t>({b, h, 1}) == x.at<int64_t>({b, 1, h}));
    }
  CHECK(take(table, 0, Tensor::from_vector<int64_t>({}, {0})).shape() == Shape{0, 3});
}

TEST_CASE("take reports the first bad index with axis and extent", "[gather]") {
  const Tensor table = Tensor::zeros(DType::F32, {5, 3});
  const TensorError high = error_of([&] { take(table, 0, Tensor::from_vector<int32_t>({1, 5, 9}, {3})); });
  CHECK(high.kind() == ErrorKind::IndexOutOfRange);
  CHECK(high.axis() == 0);
  CHECK(high.value() == 5);
  CHECK(high.extent() == 5);
  CHECK(std::string(high.what()).find("index 5 is out of range for axis 0 of extent 5") != std::string::npos);
  const TensorError negative = error_of([&] { take(table, 1, Tensor::from_vector<int8_t>({-1}, {1})); });
  CHECK(negative.axis() == 1);
  CHECK(negative.value() == -1);
  CHECK(negative.extent() == 3);
  const TensorError huge = error_of([&] { take(table, 0, Tensor::from_vector<uint64_t>({UINT64_MAX}, {1})); });
  CHECK(huge.kind() == ErrorKind::IndexOutOfRange);
  CHECK(error_of([&] { take(table, 0, Tensor::zeros(DType::F32, {1})); }).kind() == ErrorKind::UnsupportedDType);
}

TEST_CASE("gather reads one element per result position", "[gather]") {
  // picked[b] = logits[b, labels[b]]
  const Tensor logits = iota(3 * 4, DType::F32).reshape({3, 4});
  const Tensor labels = Tensor::from_vector<int64_t>({2, 0, 3}, {3});
  const Tensor picked = gather(logits, {iota(3), labels});
  CHECK(picked.to_vector<float>() == std::vector<float>{2, 4, 11});
  // last[b, h] = x[b, lengths[b] - 1, h]: index tensors broadcast to [B, H].
  const Tensor x = iota(2 * 5 * 3, DType::I32).reshape({2, 5, 3});
  const Tensor lengths = Tensor::from_vector<int32_t>({5, 2}, {2});
  const Tensor last = gather(x, {iota(2).reshape({2, 1}), sub(lengths, Tensor::scalar(DType::I32, 1)).reshape({2, 1}),
                                 iota(3).reshape({1, 3})});
  CHECK(last.shape() == Shape{2, 3});
  CHECK(last.to_vector<int32_t>() == std::vector<int32_t>{12, 13, 14, 18, 19, 20});
  // From a strided view: a transposed source.
  const Tensor t = x.permute({2, 1, 0});  // [3, 5, 2]
  const Tensor g = gather(t, {Tensor::from_vector<int64_t>({2, 0}, {2}), Tensor::from_vector<int64_t>({4, 1}, {2}),
                              Tensor::from_vector<int64_t>({1, 0}, {2})});
  CHECK(g.to_vector<int32_t>() == std::vector<int32_t>{x.at<int32_t>({1, 4, 2}), x.at<int32_t>({0, 1, 0})});
}

TEST_CASE("gather names the axis of the bad index", "[gather]") {
  const Tensor cos_table = Tensor::zeros(DType::F32, {16, 8});
  const Tensor positions = Tensor::from_vector<int64_t>({3, 15, 16}, {3, 1});
  const TensorError error = error_of([&] { gather(cos_table, {positions, iota(8).reshape({1, 8})}); });
  CHECK(error.kind() == ErrorKind::IndexOutOfRange);
  CHECK(error.axis() == 0);
  CHECK(error.value() == 16);
  CHECK(error.extent() == 16);
  CHECK(error_of([&] { gather(cos_table, {positions}); }).kind() == ErrorKind::InvalidArgument);
  CHECK(error_of([&] { gather(cos_table, {Tensor::from_vector<int64_t>({1, 2, 3}, {3}), iota(2)}); }).kind() ==
        ErrorKind::ShapeMismatch);
}
