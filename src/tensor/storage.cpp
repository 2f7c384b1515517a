// Owned storage and its accounting, and borrowed storage.
#include "linnet/tensor/storage.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "linnet/tensor/allocator.hpp"
#include "linnet/tensor/device.hpp"
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

// Freed large blocks kept for the next allocation of the same size. The
// allocator hands blocks this large straight back to the kernel, and a
// fresh block costs page faults and the kernel's zeroing of every page on
// first touch: in a 512-token forward, where each op's result is a new
// block of the same few sizes layer after layer, that was about a fifth of
// the time. At most kBlockCacheBytes are kept; a block that does not fit is
// freed. 512 MiB: a GPT-OSS prompt at T = f32 lets go of several 47 MB
// temporaries per layer, which 256 MiB did not hold (page clearing fell
// from 17% to 3% of that prefill; docs/performance.md).
constexpr size_t kBlockCacheBytes = size_t{512} << 20;

class BlockCache {
 public:
  std::byte* take(size_t rounded) {
    std::lock_guard lock(mutex_);
    for (size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].bytes != rounded) continue;
      std::byte* memory = blocks_[i].memory;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      held_ -= rounded;
      return memory;
    }
    return nullptr;
  }
  // Whether the cache kept `memory`; the caller frees it otherwise.
  bool keep(std::byte* memory, size_t rounded) {
    std::lock_guard lock(mutex_);
    if (held_ + rounded > kBlockCacheBytes) return false;
    blocks_.push_back({memory, rounded});
    held_ += rounded;
    return true;
  }

 private:
  struct Block {
    std::byte* memory;
    size_t bytes;
  };
  std::mutex mutex_;
  std::vector<Block> blocks_;
  size_t held_ = 0;
};

// Never destroyed: storage may be released by static destructors.
BlockCache& block_cache() {
  static auto* cache = new BlockCache;
  return *cache;
}

size_t alignment_for(size_t bytes) { return bytes >= kHugePageThreshold ? kHugePage : Storage::kAlignment; }

[[noreturn]] void out_of_memory(size_t bytes) {
  throw TensorError(ErrorKind::ResourceLimit, "out of memory allocating " + std::to_string(bytes) + " bytes");
}

// A block's usable size: a multiple of the alignment, never 0 (what
// aligned_alloc is asked for; malloc is asked for the alignment more).
size_t rounded_size(size_t bytes) {
  const size_t alignment = alignment_for(bytes);
  size_t padded = 0;
  if (__builtin_add_overflow(bytes, alignment - 1, &padded)) out_of_memory(bytes);
  return std::max(padded / alignment * alignment, alignment);
}

// Blocks below the huge-page threshold come from malloc with room to align
// them, the pointer malloc returned kept in the 8 bytes before the block.
// glibc's aligned_alloc splits a larger chunk and frees its ends on every
// call (about 750 instructions for each of the interpreter's small tensors,
// 3.5% of a tiny forward), where malloc serves small sizes from its
// per-thread cache.
std::byte* allocate_aligned(size_t bytes) {
  const size_t alignment = alignment_for(bytes);
  const size_t rounded = rounded_size(bytes);
  if (alignment == kHugePage) {
    if (std::byte* reused = block_cache().take(rounded)) return reused;
    void* memory = std::aligned_alloc(alignment, rounded);
    if (!memory) out_of_memory(bytes);
#ifdef MADV_HUGEPAGE
    madvise(memory, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    return static_cast<std::byte*>(memory);
  }
  // malloc's 16-byte alignment leaves the block at most `alignment` bytes in.
  size_t padded = 0;
  if (__builtin_add_overflow(rounded, alignment, &padded)) out_of_memory(bytes);
  void* raw = std::malloc(padded);
  if (!raw) out_of_memory(bytes);
  const uintptr_t block = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + alignment - 1) / alignment * alignment;
  reinterpret_cast<void**>(block)[-1] = raw;
  return reinterpret_cast<std::byte*>(block);
}

// Frees a block of allocate_aligned(bytes), or keeps it for reuse.
void release_aligned(std::byte* memory, size_t bytes) noexcept {
  if (alignment_for(bytes) != kHugePage) {
    std::free(reinterpret_cast<void**>(memory)[-1]);
    return;
  }
  try {
    if (block_cache().keep(memory, rounded_size(bytes))) return;
  } catch (...) {
    // the cache could not grow: free the block instead
  }
  std::free(memory);
}

}  // namespace

MemoryStats memory_stats() { return {g_current_bytes.load(), g_peak_bytes.load(), g_allocations.load()}; }
size_t current_bytes() { return g_current_bytes.load(); }
size_t peak_bytes() { return g_peak_bytes.load(); }
void reset_peak_bytes() { g_peak_bytes.store(g_current_bytes.load()); }

void keep_freed_heap_memory() {
#ifdef __GLIBC__
  // glibc starts by mapping every block of 128 KiB or more on its own and
  // unmapping it when freed, and raises that threshold to the size of each
  // such block freed, with its heap trimmed whenever 2x the threshold lies
  // free at its top: so whether an op's 2-3 MB result reused memory or took
  // fresh pages depended on what the process had freed before. Measured on
  // the bench's GPT-OSS prompt (6 calls): 48,000-80,000 page faults from
  // one build to the next, the calls 1.05-1.1x as long with the more
  // faults; with these settings 40,000 (nearly all the checkpoint's first
  // touch) in both. 32 MiB is the largest threshold glibc takes on 64-bit
  // systems; what is freed at the top of the heap is returned beyond 256
  // MiB.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

// The device side of a Storage. `host_current` is false only while a device
// result has not been read on the host; `device_current` is false after a
// host write until the next upload.
struct Storage::DeviceCopy {
  std::shared_ptr<DeviceBackend> backend;
  void* memory = nullptr;
  bool device_current = false;
  // Read without the lock on every host access of storage that has a device
  // copy (a weight the GPU also holds): the common case costs no lock.
  std::atomic<bool> host_current{true};
  std::mutex mutex;  // host_data_from_device may run from several readers

  ~DeviceCopy() {
    if (memory) backend->release(memory);
  }
};

Storage::Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keep_alive)
    : data_(data), bytes_(bytes), owned_(owned), keep_alive_(std::move(keep_alive)) {}

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  std::byte* memory = allocate_aligned(bytes);
  std::shared_ptr<Storage> storage;
  try {
    storage.reset(new Storage(memory, bytes, true, nullptr));
  } catch (...) {
    release_aligned(memory, bytes);
    throw;
  }
  count_allocation(bytes);
  return storage;
}

std::shared_ptr<Storage> Storage::allocate_zeroed(size_t bytes) {
  if (bytes < kLazyZeroThreshold) {
    auto storage = allocate(bytes);
    std::memset(storage->data_, 0, bytes);
    return storage;
  }
  // Fresh anonymous pages read as zero and take memory only when first
  // written: a KV cache of 32768 positions costs what its written rows do,
  // not its full size, and nothing is written here. No huge-page hint, so a
  // write commits 4 KiB, not 2 MiB, per touched region.
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) out_of_memory(bytes);
  std::shared_ptr<Storage> storage;
  try {
    storage.reset(new Storage(static_cast<std::byte*>(memory), bytes, true, nullptr));
  } catch (...) {
    munmap(memory, bytes);
    throw;
  }
  storage->mapped_ = true;
  count_allocation(bytes);
  return storage;
}

std::shared_ptr<Storage> Storage::borrow(const void* data, size_t bytes, std::shared_ptr<const void> keep_alive) {
  if (!data && bytes > 0) throw TensorError(ErrorKind::InvalidArgument, "borrowed storage with a null pointer");
  // Never written through: mutable_data() refuses borrowed storage.
  auto* bytes_pointer = static_cast<std::byte*>(const_cast<void*>(data));
  return std::shared_ptr<Storage>(new Storage(bytes_pointer, bytes, false, std::move(keep_alive)));
}

std::shared_ptr<Storage> Storage::on_device(std::shared_ptr<DeviceBackend> backend, size_t bytes) {
  if (!backend) throw TensorError(ErrorKind::InvalidArgument, "device storage without a backend");
  std::shared_ptr<Storage> storage(new Storage(nullptr, bytes, true, nullptr));
  storage->device_ = std::make_unique<DeviceCopy>();
  storage->device_->backend = std::move(backend);
  storage->device_->memory = storage->device_->backend->allocate(bytes);
  storage->device_->device_current = true;
  storage->device_->host_current = false;
  return storage;
}

std::shared_ptr<Storage> Storage::widen_on_access(const void* bf16, size_t count,
                                                  std::shared_ptr<const void> keep_alive) {
  if (!bf16 && count > 0) throw TensorError(ErrorKind::InvalidArgument, "widen-on-access storage with a null pointer");
  std::shared_ptr<Storage> storage(new Storage(nullptr, count * sizeof(float), false, std::move(keep_alive)));
  storage->lazy_ = std::make_unique<WidenOnAccess>();
  storage->lazy_->source = static_cast<const uint16_t*>(bf16);
  return storage;
}

std::shared_ptr<Storage> Storage::made_on_access(size_t bytes, std::shared_ptr<const ElementSource> source) {
  if (!source) throw TensorError(ErrorKind::InvalidArgument, "made-on-access storage without a source");
  std::shared_ptr<Storage> storage(new Storage(nullptr, bytes, false, nullptr));
  storage->lazy_ = std::make_unique<WidenOnAccess>();
  storage->lazy_->producer = std::move(source);
  return storage;
}

void Storage::read(size_t begin, size_t count, size_t element, std::byte* out) const {
  if (begin > bytes_ || count > bytes_ - begin) {
    throw TensorError(ErrorKind::InvalidArgument, "storage read past its " + std::to_string(bytes_) + " bytes");
  }
  if (!unmade() || device_) {
    std::memcpy(out, data() + begin, count);
  } else if (lazy_->producer) {
    lazy_->producer->read(begin, count, out);
  } else {
    // Widen-on-access: f32 elements from the bf16 ones, exactly.
    if (element != sizeof(float) || begin % sizeof(float) != 0 || count % sizeof(float) != 0) {
      throw TensorError(ErrorKind::InvalidArgument, "widen-on-access storage read in parts of f32 elements only");
    }
    const uint16_t* source = lazy_->source + begin / sizeof(float);
    for (size_t i = 0; i < count / sizeof(float); ++i) {
      const uint32_t bits = static_cast<uint32_t>(source[i]) << 16;
      std::memcpy(out + i * sizeof(float), &bits, sizeof bits);
    }
  }
}

const std::byte* Storage::widened_data() const {
  WidenOnAccess& lazy = *lazy_;
  std::call_once(lazy.once, [&] {
    std::byte* memory = allocate_aligned(bytes_);
    if (lazy.producer) {
      try {
        lazy.producer->read(0, bytes_, memory);
      } catch (...) {
        release_aligned(memory, bytes_);
        throw;
      }
      count_allocation(bytes_);
      lazy.widened = memory;
      return;
    }
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
  if (owned_ && data_) {
    if (mapped_) {
      munmap(data_, bytes_);
    } else {
      release_aligned(data_, bytes_);
    }
    count_release(bytes_);
  }
  if (lazy_ && lazy_->widened) {
    release_aligned(lazy_->widened, bytes_);
    count_release(bytes_);
  }
}

const std::byte* Storage::host_data_from_device() const {
  // Widen-on-access storage is read-only: its host bytes are always current.
  if (lazy_) return widened_data();
  if (device_->host_current.load(std::memory_order_acquire)) return data_;
  std::lock_guard lock(device_->mutex);
  if (!device_->host_current) {
    if (!data_) {
      data_ = allocate_aligned(bytes_);
      count_allocation(bytes_);
    }
    device_->backend->copy_to_host(data_, device_->memory, bytes_);
    device_->host_current.store(true, std::memory_order_release);
  }
  return data_;
}

std::byte* Storage::mutable_data() {
  if (!owned_) throw TensorError(ErrorKind::ReadOnly, "cannot write into borrowed (read-only) tensor storage");
  if (device_) {
    std::byte* host = const_cast<std::byte*>(host_data_from_device());
    std::lock_guard lock(device_->mutex);
    device_->device_current = false;  // the host is about to change the bytes
    return host;
  }
  return data_;
}

const void* Storage::device_data(const std::shared_ptr<DeviceBackend>& backend) {
  if (!backend) throw TensorError(ErrorKind::InvalidArgument, "device_data without a backend");
  if (!device_) {
    device_ = std::make_unique<DeviceCopy>();
    device_->backend = backend;
  } else if (device_->backend != backend) {
    throw TensorError(ErrorKind::InvalidArgument,
                      "tensor storage lives on device backend " + device_->backend->name() + ", not " + backend->name());
  }
  std::lock_guard lock(device_->mutex);
  if (!device_->device_current) {
    if (!device_->memory) device_->memory = backend->allocate(bytes_);
    // Widen-on-access storage uploads its f32 bytes (made here if not yet).
    backend->copy_to_device(device_->memory, lazy_ ? widened_data() : data_, bytes_);
    device_->device_current = true;
  }
  return device_->memory;
}

void* Storage::device_mutable_data(const std::shared_ptr<DeviceBackend>& backend) {
  if (!owned_) throw TensorError(ErrorKind::ReadOnly, "cannot write into borrowed (read-only) tensor storage");
  void* memory = const_cast<void*>(device_data(backend));
  std::lock_guard lock(device_->mutex);
  device_->host_current = false;
  return memory;
}

bool Storage::device_current() const { return device_ && device_->device_current; }
const DeviceBackend* Storage::device_backend() const { return device_ ? device_->backend.get() : nullptr; }
bool Storage::host_current() const { return !device_ || device_->host_current; }

}  // namespace linnet::tensor
