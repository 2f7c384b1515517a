// A block of element memory that tensors share. It either owns its bytes
// (64-byte aligned, counted by the allocator) or borrows them from someone
// else (for example a memory-mapped checkpoint), keeping that owner alive
// through a shared_ptr. Borrowed storage is read-only.
#pragma once

#include <cstddef>
#include <memory>

namespace linnet::tensor {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;

  // Owned, uninitialised memory of `bytes` bytes.
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // Owned memory of `bytes` bytes, all zero. From kLazyZeroThreshold bytes
  // on, fresh anonymous pages that the OS zero-fills on first touch: pages
  // never written take no memory and cost nothing up front.
  static std::shared_ptr<Storage> allocate_zeroed(size_t bytes);
  static constexpr size_t kLazyZeroThreshold = size_t{1} << 20;
  // External memory: `data` stays valid as long as `keep_alive` does.
  static std::shared_ptr<Storage> borrow(const void* data, size_t bytes, std::shared_ptr<const void> keep_alive);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  size_t bytes() const { return bytes_; }
  bool owned() const { return owned_; }
  bool writable() const { return owned_; }
  const std::byte* data() const { return data_; }
  // Throws TensorError(ReadOnly) for borrowed storage.
  std::byte* mutable_data();

 private:
  Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keep_alive);

  std::byte* data_;
  size_t bytes_;
  bool owned_;
  bool mapped_ = false;  // owned pages from mmap (allocate_zeroed), released with munmap
  std::shared_ptr<const void> keep_alive_;
};

}  // namespace linnet::tensor
