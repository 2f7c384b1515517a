// std.nn.parallel's collectives over a group whose other processes are
// played by fixed bytes: the rank-order sum and its rounding per policy,
// the side-by-side layout of all_gather, and the dispatcher's rules.
#include <catch2/catch.hpp>

#include <cstring>

#include "linnet/dist/collectives.hpp"
#include "linnet/eval/error.hpp"
#include "linnet/tensor/half.hpp"

using namespace linnet;
using tensor::DType;
using tensor::Tensor;

namespace {

// Rank `rank` of a group whose other members contribute `others` (one
// tensor per rank, this rank's slot ignored).
class PlayedGroup : public dist::Communicator {
 public:
  PlayedGroup(int rank, std::vector<Tensor> everyone) : rank_(rank), everyone_(std::move(everyone)) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(everyone_.size()); }
  void all_gather(const void* send, size_t bytes, void* receive) override {
    ++calls;
    for (int r = 0; r < size(); ++r) {
      const void* from = r == rank_ ? send : everyone_[static_cast<size_t>(r)].contiguous().raw_data();
      REQUIRE(static_cast<size_t>(everyone_[static_cast<size_t>(r)].numel()) *
                  everyone_[static_cast<size_t>(r)].element_size() == bytes);
      std::memcpy(static_cast<std::byte*>(receive) + static_cast<size_t>(r) * bytes, from, bytes);
    }
  }
  std::string transport() const override { return "played"; }
  int calls = 0;

 private:
  int rank_;
  std::vector<Tensor> everyone_;
};

Tensor bf16_of(const std::vector<float>& values) { return Tensor::from_vector(values, {static_cast<int64_t>(values.size())}).to(DType::BF16); }

// A dispatcher that answers every call with a marker, to see what is passed on.
class Marker : public eval::OpDispatcher {
 public:
  std::optional<eval::Value> try_native(const eval::NativeCall&) override {
    ++calls;
    return eval::Value::contextual_int(7);
  }
  int calls = 0;
};

}  // namespace

TEST_CASE("all_reduce adds every rank's partial in rank order, the same bits on every rank", "[dist]") {
  const std::vector<Tensor> partials = {Tensor::from_vector<float>({1.0f, 1e8f}, {2}),
                                        Tensor::from_vector<float>({2.0f, -1e8f}, {2}),
                                        Tensor::from_vector<float>({3.0f, 1.0f}, {2})};
  for (int rank = 0; rank < 3; ++rank) {
    PlayedGroup group(rank, partials);
    const Tensor total = dist::all_reduce(partials[static_cast<size_t>(rank)], group, eval::NumericsPolicy::Exact);
    // ((1e8 + -1e8) + 1) = 1 in rank order; another order (1e8 + 1) loses the 1.
    CHECK(total.to_vector<float>() == std::vector<float>{6.0f, 1.0f});
    CHECK(group.calls == 1);
  }
}

TEST_CASE("bf16 partials: f32 sum rounded once under equivalent, each sum rounded under exact", "[dist]") {
  // 256 + 1 + 1: in bf16 (8 bits of mantissa) 256 + 1 rounds back to 256
  // (a tie, to even), so rounding each sum loses both ones; f32 keeps 258.
  const std::vector<Tensor> partials = {bf16_of({256.0f}), bf16_of({1.0f}), bf16_of({1.0f})};
  PlayedGroup group(0, partials);
  const Tensor once = dist::all_reduce(partials[0], group, eval::NumericsPolicy::Equivalent);
  CHECK(once.dtype() == DType::BF16);
  CHECK(once.to_vector<float>() == std::vector<float>{258.0f});
  const Tensor each = dist::all_reduce(partials[0], group, eval::NumericsPolicy::Exact);
  CHECK(each.to_vector<float>() == std::vector<float>{256.0f});
}

TEST_CASE("all_reduce refuses integers", "[dist]") {
  const std::vector<Tensor> partials = {Tensor::from_vector<int32_t>({1}, {1}), Tensor::from_vector<int32_t>({2}, {1})};
  PlayedGroup group(0, partials);
  CHECK_THROWS_AS(dist::all_reduce(partials[0], group, eval::NumericsPolicy::Exact), eval::EvalError);
}

TEST_CASE("all_gather sets rank r's [R, N] part at columns r*N .. (r+1)*N", "[dist]") {
  const std::vector<Tensor> parts = {Tensor::from_vector<float>({0, 1, 10, 11}, {2, 2}),
                                     Tensor::from_vector<float>({2, 3, 12, 13}, {2, 2})};
  PlayedGroup group(1, parts);
  const Tensor joined = dist::all_gather(parts[1], group);
  CHECK(joined.shape() == tensor::Shape{2, 4});
  CHECK(joined.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13});
}

TEST_CASE("the dispatcher answers the collectives under every policy and passes the rest on", "[dist]") {
  syntax::ast::FunctionItem op{syntax::Span{}};
  const std::vector<Tensor> parts = {Tensor::from_vector<float>({1, 2}, {1, 2}), Tensor::from_vector<float>({3, 4}, {1, 2})};
  auto group = std::make_shared<PlayedGroup>(0, parts);
  auto marker = std::make_shared<Marker>();
  dist::CollectiveDispatcher dispatcher(marker, group);
  const std::vector<eval::Value> arguments = {eval::Value::from_tensor(parts[0])};

  const eval::GenericBindings two_shards = {{"Shards", eval::GenericValue::of_dim(2)}};
  const eval::NativeCall reduce{op, dist::kAllReduce, {}, arguments, eval::NumericsPolicy::Exact};
  CHECK(dispatcher.try_native(reduce)->tensor().to_vector<float>() == std::vector<float>{4, 6});
  const eval::NativeCall gather{op, dist::kAllGather, two_shards, arguments, eval::NumericsPolicy::Fast};
  CHECK(dispatcher.try_native(gather)->tensor().to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(marker->calls == 0);

  // all_gather's Shards must be the number of processes.
  const eval::GenericBindings three_shards = {{"Shards", eval::GenericValue::of_dim(3)}};
  const eval::NativeCall wrong{op, dist::kAllGather, three_shards, arguments, eval::NumericsPolicy::Exact};
  try {
    dispatcher.try_native(wrong);
    FAIL("a Shards of 3 over 2 processes was accepted");
  } catch (const eval::EvalError& error) {
    CHECK(error.code() == "E6006");
  }

  // An op sized by Shards runs its body (its collectives communicate).
  const eval::NativeCall split{op, "std.nn.loss::split_cross_entropy", two_shards, arguments,
                               eval::NumericsPolicy::Equivalent};
  CHECK_FALSE(dispatcher.try_native(split));
  // Everything else goes to the op table.
  const eval::NativeCall other{op, "std.nn.softmax::softmax", {}, arguments, eval::NumericsPolicy::Equivalent};
  CHECK(dispatcher.try_native(other)->int_value() == 7);
  CHECK(marker->calls == 1);
}
