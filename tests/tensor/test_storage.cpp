// Storage ownership, alignment, borrowed read-only memory, and the
// current/peak byte accounting that `--stats` reports.
#include <catch2/catch.hpp>
#include <atomic>
#include <bit>
#include <cstring>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "linnet/tensor/allocator.hpp"
#include "tensor_test_util.hpp"

using namespace tensor_test;

TEST_CASE("owned storage is 64-byte aligned and zeroed on request", "[storage]") {
  for (int64_t count : {1, 3, 17, 1000}) {
    const Tensor t = Tensor::zeros(DType::F32, {count});
    CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % Storage::kAlignment == 0);
    for (float v : t.to_vector<float>()) CHECK(v == 0.0f);
  }
  // Below the huge-page threshold blocks come from malloc, aligned by hand
  // (storage.cpp): odd byte counts, many alive at once, freed out of order.
  std::vector<Tensor> alive;
  for (int64_t count : {1, 2, 63, 64, 65, 1031, 1033, 4099, 65537, 1 << 20}) {
    for (int copy = 0; copy < 3; ++copy) {
      alive.push_back(Tensor::empty(DType::U8, {count}));
      CHECK(reinterpret_cast<uintptr_t>(alive.back().raw_data()) % Storage::kAlignment == 0);
      std::memset(alive.back().raw_mutable_data(), 0xA5, static_cast<size_t>(count));
    }
  }
  for (size_t i = 0; i < alive.size(); i += 2) alive[i] = Tensor();
  alive.clear();
  const Tensor empty = Tensor::empty(DType::BF16, {0, 4});
  CHECK(empty.numel() == 0);
  CHECK(empty.storage()->bytes() == 0);
}

// Freed large blocks are kept and handed out again (storage.cpp's block
// cache): a zeroed tensor must never see what a freed one held, and a large
// block must keep its alignment when it comes back.
TEST_CASE("large blocks come back aligned and never leak old values into zeros", "[storage]") {
  const int64_t count = 3 << 20;  // 12 MiB of f32: a cached size
  for (int round = 0; round < 3; ++round) {
    {
      Tensor dirty = Tensor::empty(DType::F32, {count});
      CHECK(reinterpret_cast<uintptr_t>(dirty.raw_data()) % (size_t{2} << 20) == 0);
      std::memset(dirty.raw_mutable_data(), 0xFF, static_cast<size_t>(count) * sizeof(float));
    }
    const Tensor clean = Tensor::zeros(DType::F32, {count});
    const float* values = clean.data<float>();
    int64_t nonzero = 0;
    for (int64_t i = 0; i < count; ++i) nonzero += values[i] != 0.0f;
    CHECK(nonzero == 0);
  }
}

TEST_CASE("peak bytes follow owned allocations", "[storage]") {
  reset_peak_bytes();
  const size_t base = current_bytes();
  CHECK(peak_bytes() == base);
  {
    const Tensor a = Tensor::empty(DType::F32, {256, 1024});  // 1 MiB
    CHECK(current_bytes() == base + (1u << 20));
    {
      const Tensor b = Tensor::empty(DType::BF16, {1024, 1024});  // 2 MiB
      CHECK(current_bytes() == base + (3u << 20));
      const Tensor view = b.slice(0, 0, 10);  // views allocate nothing
      CHECK(current_bytes() == base + (3u << 20));
    }
    CHECK(current_bytes() == base + (1u << 20));
    const Tensor c = Tensor::empty(DType::U8, {1u << 20});
    CHECK(current_bytes() == base + (2u << 20));
  }
  CHECK(current_bytes() == base);
  CHECK(peak_bytes() == base + (3u << 20));
  reset_peak_bytes();
  CHECK(peak_bytes() == base);
  const MemoryStats stats = memory_stats();
  CHECK(stats.current_bytes == base);
  CHECK(stats.allocations > 0);
}

TEST_CASE("kernel results count toward the peak; borrowed memory does not", "[storage]") {
  std::vector<float> external(1 << 16, 1.5f);
  reset_peak_bytes();
  const size_t base = current_bytes();
  const Tensor borrowed = Tensor::borrow(DType::F32, {1 << 16}, external.data(), nullptr);
  CHECK(current_bytes() == base);
  const Tensor doubled = add(borrowed, borrowed);
  CHECK(current_bytes() == base + (1u << 18));
  CHECK(peak_bytes() >= base + (1u << 18));
  CHECK(doubled.at<float>({100}) == 3.0f);
}

TEST_CASE("borrowed storage is read-only and keeps its owner alive", "[storage]") {
  auto owner = std::make_shared<std::vector<int32_t>>(std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<int32_t>> watch = owner;
  Tensor borrowed = Tensor::borrow(DType::I32, {2, 3}, owner->data(), owner);
  owner.reset();
  CHECK_FALSE(watch.expired());  // the tensor holds the memory
  CHECK_FALSE(borrowed.is_writable());
  CHECK(borrowed.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  CHECK(borrowed.data<int32_t>()[4] == 5);
  try {
    borrowed.mutable_data<int32_t>();
    FAIL("writing into borrowed storage must throw");
  } catch (const TensorError& error) {
    CHECK(error.kind() == ErrorKind::ReadOnly);
  }
  Tensor view = borrowed.permute({1, 0});
  const Tensor replacement = Tensor::zeros(DType::I32, {3, 2});
  CHECK_THROWS_AS(assign(view, replacement), TensorError);
  // A copy is owned and writable.
  Tensor copy = borrowed.clone();
  CHECK(copy.is_writable());
  copy.mutable_data<int32_t>()[0] = 42;
  CHECK(borrowed.at<int32_t>({0, 0}) == 1);
  borrowed = Tensor();
  CHECK_FALSE(watch.expired());  // the permuted view still shares the storage
  view = Tensor();
  CHECK(watch.expired());
}

TEST_CASE("a borrowed bool buffer may use any nonzero byte for true", "[storage]") {
  const std::vector<uint8_t> bytes = {0, 1, 2, 255};
  const Tensor flags = Tensor::borrow(DType::Bool, {4}, bytes.data(), nullptr);
  CHECK(flags.to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(cast(flags, DType::I32).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 1, 1});
  CHECK(unary(UnaryOp::Not, flags).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK(reduce(ReduceOp::All, flags.slice(0, 1, 4), {0}).item().to<bool>());
}

TEST_CASE("from_storage checks the view fits", "[storage]") {
  auto storage = Storage::allocate(6 * sizeof(float));
  const Tensor fits = Tensor::from_storage(storage, DType::F32, {2, 2}, {2, 1}, 2);
  CHECK(fits.numel() == 4);
  CHECK_THROWS_AS(Tensor::from_storage(storage, DType::F32, {2, 3}, {3, 1}, 1), TensorError);
  CHECK_THROWS_AS(Tensor::from_storage(storage, DType::F32, {2}, {1}, -1), TensorError);
}

TEST_CASE("typed access checks the dtype", "[storage]") {
  const Tensor t = Tensor::zeros(DType::F32, {2});
  CHECK_THROWS_AS(t.data<double>(), TensorError);
  CHECK(t.data<float>() != nullptr);
  CHECK_THROWS_AS(Tensor().raw_data(), TensorError);
  CHECK_THROWS_AS(Tensor::from_vector<float>({1, 2, 3}, {2, 2}), TensorError);
}

TEST_CASE("widen-on-access: an f32 tensor over bf16 bytes, widened only when read", "[storage][widen]") {
  // bf16 bit patterns: 1.0, -2.5, a small value, NaN, +inf, the smallest subnormal, ...
  std::vector<uint16_t> bits = {0x3F80, 0xC020, 0x3A80, 0x7FC1, 0x7F80, 0x0001, 0x8000, 0x4049, 0xBF01, 0x0000,
                                0x4780, 0x3C00};
  auto owner = std::make_shared<std::vector<uint16_t>>(bits);
  const Tensor stored = Tensor::borrow(DType::BF16, {3, 4}, owner->data(), owner);
  const size_t base = current_bytes();
  const Tensor lazy = Tensor::widen_on_access(stored);
  CHECK(lazy.dtype() == DType::F32);
  CHECK(lazy.shape() == Shape{3, 4});
  CHECK_FALSE(lazy.is_writable());
  CHECK_FALSE(lazy.storage()->widened());
  CHECK(current_bytes() == base);

  // Its stored form reads the same bytes without widening, views included.
  const std::optional<Tensor> bf16 = lazy.stored_bf16();
  REQUIRE(bf16.has_value());
  CHECK(bf16->dtype() == DType::BF16);
  CHECK(bf16->raw_data() == owner->data());
  const Tensor row = lazy.select(0, 1);
  const std::optional<Tensor> row_bf16 = row.stored_bf16();
  REQUIRE(row_bf16.has_value());
  CHECK(row_bf16->shape() == Shape{4});
  CHECK(row_bf16->raw_data() == owner->data() + 4);
  CHECK_FALSE(lazy.storage()->widened());
  CHECK(current_bytes() == base);

  // Read as f32, it holds exactly the bf16 values, bit for bit (NaN payload too).
  const std::vector<float> expected = stored.to_vector<float>();
  const std::vector<float> values = lazy.to_vector<float>();
  CHECK(lazy.storage()->widened());
  CHECK(current_bytes() == base + 12 * sizeof(float));
  REQUIRE(values.size() == expected.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CHECK(std::bit_cast<uint32_t>(values[i]) == (static_cast<uint32_t>(bits[i]) << 16));
  }
  CHECK(row.to_vector<float>() == std::vector<float>(expected.begin() + 4, expected.begin() + 8));
  const Tensor column = lazy.slice(1, 2, 3);
  CHECK(column.to_vector<float>().at(2) == expected[10]);

  // Ordinary tensors have no stored form.
  CHECK_FALSE(Tensor::zeros(DType::F32, {2}).stored_bf16().has_value());
  CHECK_FALSE(stored.stored_bf16().has_value());
  CHECK_THROWS_AS(Tensor::widen_on_access(Tensor::zeros(DType::F32, {2})), TensorError);
}

TEST_CASE("widen-on-access storage keeps its source alive and releases its copy", "[storage][widen]") {
  const size_t base = current_bytes();
  std::weak_ptr<std::vector<uint16_t>> watch;
  {
    Tensor lazy;
    {
      auto owner = std::make_shared<std::vector<uint16_t>>(1024, uint16_t{0x4000});  // 2.0
      watch = owner;
      lazy = Tensor::widen_on_access(Tensor::borrow(DType::BF16, {32, 32}, owner->data(), owner));
    }
    CHECK_FALSE(watch.expired());
    CHECK(lazy.at<float>({31, 31}) == 2.0f);
    CHECK(current_bytes() == base + 1024 * sizeof(float));
  }
  CHECK(watch.expired());
  CHECK(current_bytes() == base);
}

namespace {

// Element i is the f32 value i; counts the elements it is asked for.
class Counting final : public linnet::tensor::ElementSource {
 public:
  mutable std::atomic<size_t> elements{0};
  void read(size_t begin, size_t count, std::byte* out) const override {
    for (size_t i = 0; i < count / sizeof(float); ++i) {
      const float value = static_cast<float>(begin / sizeof(float) + i);
      std::memcpy(out + i * sizeof(float), &value, sizeof value);
    }
    elements += count / sizeof(float);
  }
};

}  // namespace

TEST_CASE("made-on-access storage reads ranges without making the whole", "[storage][on-access]") {
  auto source = std::make_shared<Counting>();
  const Shape shape{3, 4, 5};
  auto storage = Storage::made_on_access(60 * sizeof(float), source);
  const Tensor lazy = Tensor::from_storage(storage, DType::F32, shape, linnet::tensor::contiguous_strides(shape), 0);
  const size_t base = current_bytes();
  CHECK(lazy.unmade());
  CHECK_FALSE(lazy.is_writable());

  // A range of a contiguous view: only those elements are made.
  std::vector<float> part(7);
  lazy.select(0, 1).read_elements(3, 7, part.data());
  CHECK(part == std::vector<float>{23, 24, 25, 26, 27, 28, 29});
  CHECK(source->elements == 7);

  // A reshape that needs a copy (of a permuted view) is made on access too,
  // and reads through to the source a run at a time.
  const Tensor reordered = lazy.permute({1, 0, 2}).reshape({4, 15});
  CHECK(reordered.unmade());
  CHECK(current_bytes() == base);
  std::vector<float> row(15);
  reordered.read_elements(15, 15, row.data());  // row 1: [1, e, :] for e = 0, 1, 2
  CHECK(row == std::vector<float>{5, 6, 7, 8, 9, 25, 26, 27, 28, 29, 45, 46, 47, 48, 49});
  // A strided inner axis reads element by element, with the same values.
  std::vector<float> column(3);
  lazy.permute({2, 1, 0}).select(0, 2).select(0, 1).read_elements(0, 3, column.data());
  CHECK(column == std::vector<float>{7, 27, 47});
  CHECK(storage->unmade());

  // Reading data() makes the whole, once; ranges then come from the copy.
  const std::vector<float> all = lazy.to_vector<float>();
  CHECK_FALSE(lazy.unmade());
  CHECK(current_bytes() == base + 60 * sizeof(float));
  for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == static_cast<float>(i));
  const size_t asked = source->elements;
  lazy.read_elements(10, 5, part.data());
  CHECK(source->elements == asked);
  CHECK(part[0] == 10.0f);
  CHECK(reordered.to_vector<float>().at(15) == 5.0f);
  CHECK_THROWS_AS(lazy.read_elements(58, 5, part.data()), TensorError);
}
