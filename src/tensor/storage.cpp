// Owned storage and its accounting, and borrowed storage.
#include "linnet/tensor/storage.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "linnet/tensor/allocator.hpp"
#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

namespace {

std::atomic<size_t> g_current_bytes{0};
std::atomic<size_t> g_peak_bytes{0};
std::atomic<size_t> g_allocations{0};

void count_allocation(size_t bytes) {
  const size_t now = g_current_bytes.fetch_add(bytes) + bytes;
  g_allocations.fetch_add(1);
  size_t peak = g_peak_bytes.load();
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

void count_release(size_t bytes) { g_current_bytes.fetch_sub(bytes); }

// Large blocks are placed on 2 MiB boundaries and offered to the kernel as
// transparent huge pages: a fresh 64 MiB result then takes 32 page faults
// instead of 16384, which otherwise cost more than the kernel's arithmetic.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugePageThreshold = size_t{4} << 20;

std::byte* allocate_aligned(size_t bytes) {
  const size_t alignment = bytes >= kHugePageThreshold ? kHugePage : Storage::kAlignment;
  // aligned_alloc wants a size that is a multiple of the alignment; never 0.
  const size_t rounded = std::max((bytes + alignment - 1) / alignment * alignment, alignment);
  void* memory = std::aligned_alloc(alignment, rounded);
  if (!memory) {
    throw TensorError(ErrorKind::InvalidArgument, "out of memory allocating " + std::to_string(bytes) + " bytes");
  }
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePage) madvise(memory, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return static_cast<std::byte*>(memory);
}

}  // namespace

MemoryStats memory_stats() { return {g_current_bytes.load(), g_peak_bytes.load(), g_allocations.load()}; }
size_t current_bytes() { return g_current_bytes.load(); }
size_t peak_bytes() { return g_peak_bytes.load(); }
void reset_peak_bytes() { g_peak_bytes.store(g_current_bytes.load()); }

Storage::Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keep_alive)
    : data_(data), bytes_(bytes), owned_(owned), keep_alive_(std::move(keep_alive)) {}

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  std::byte* memory = allocate_aligned(bytes);
  std::shared_ptr<Storage> storage;
  try {
    storage.reset(new Storage(memory, bytes, true, nullptr));
  } catch (...) {
    std::free(memory);
    throw;
  }
  count_allocation(bytes);
  return storage;
}

std::shared_ptr<Storage> Storage::allocate_zeroed(size_t bytes) {
  auto storage = allocate(bytes);
  std::memset(storage->data_, 0, bytes);
  return storage;
}

std::shared_ptr<Storage> Storage::borrow(const void* data, size_t bytes, std::shared_ptr<const void> keep_alive) {
  if (!data && bytes > 0) throw TensorError(ErrorKind::InvalidArgument, "borrowed storage with a null pointer");
  // Never written through: mutable_data() refuses borrowed storage.
  auto* bytes_pointer = static_cast<std::byte*>(const_cast<void*>(data));
  return std::shared_ptr<Storage>(new Storage(bytes_pointer, bytes, false, std::move(keep_alive)));
}

std::shared_ptr<Storage> Storage::widen_on_access(const void* bf16, size_t count,
                                                  std::shared_ptr<const void> keep_alive) {
  if (!bf16 && count > 0) throw TensorError(ErrorKind::InvalidArgument, "widen-on-access storage with a null pointer");
  std::shared_ptr<Storage> storage(new Storage(nullptr, count * sizeof(float), false, std::move(keep_alive)));
  storage->lazy_ = std::make_unique<WidenOnAccess>();
  storage->lazy_->source = static_cast<const uint16_t*>(bf16);
  return storage;
}

const std::byte* Storage::widened_data() const {
  WidenOnAccess& lazy = *lazy_;
  std::call_once(lazy.once, [&] {
    std::byte* memory = allocate_aligned(bytes_);
    float* out = reinterpret_cast<float*>(memory);
    const size_t count = bytes_ / sizeof(float);
    // bf16 -> f32 is exact: the bf16 bits are the high half of the f32's.
    for (size_t i = 0; i < count; ++i) {
      const uint32_t bits = static_cast<uint32_t>(lazy.source[i]) << 16;
      std::memcpy(out + i, &bits, sizeof bits);
    }
    count_allocation(bytes_);
    lazy.widened = memory;
  });
  return lazy.widened;
}

bool Storage::widened() const { return lazy_ && lazy_->widened != nullptr; }

Storage::~Storage() {
  if (owned_) {
    std::free(data_);
    count_release(bytes_);
  }
  if (lazy_ && lazy_->widened) {
    std::free(lazy_->widened);
    count_release(bytes_);
  }
}

std::byte* Storage::mutable_data() {
  if (!owned_) throw TensorError(ErrorKind::ReadOnly, "cannot write into borrowed (read-only) tensor storage");
  return data_;
}

}  // namespace linnet::tensor
