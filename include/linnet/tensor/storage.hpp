// A block of element memory that tensors share. It either owns its bytes
// (64-byte aligned, counted by the allocator) or borrows them from someone
// else (for example a memory-mapped checkpoint), keeping that owner alive
// through a shared_ptr. Borrowed storage is read-only.
//
// A third kind reads as f32 but is stored as bf16 elsewhere (a checkpoint's
// bf16 weights in an instance whose T is f32): its f32 bytes are made, once,
// the first time anything reads data(), and kept from then on. Kernels that
// can multiply bf16 directly read bf16_source() instead and never make them,
// so a large weight costs its stored size, not twice that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace linnet::tensor {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;

  // Owned, uninitialised memory of `bytes` bytes.
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // Owned memory of `bytes` bytes, all zero.
  static std::shared_ptr<Storage> allocate_zeroed(size_t bytes);
  // External memory: `data` stays valid as long as `keep_alive` does.
  static std::shared_ptr<Storage> borrow(const void* data, size_t bytes, std::shared_ptr<const void> keep_alive);
  // `count` f32 elements that are the bf16 values at `bf16` (valid as long
  // as `keep_alive`), widened on first access (see above). Read-only.
  static std::shared_ptr<Storage> widen_on_access(const void* bf16, size_t count,
                                                  std::shared_ptr<const void> keep_alive);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  size_t bytes() const { return bytes_; }
  bool owned() const { return owned_; }
  bool writable() const { return owned_; }
  // The element bytes; for widen-on-access storage this makes the f32 copy
  // the first time (thread-safe).
  const std::byte* data() const { return lazy_ ? widened_data() : data_; }
  // Throws TensorError(ReadOnly) for borrowed storage.
  std::byte* mutable_data();

  // Widen-on-access storage: the stored bf16 elements (bytes() / 2 of
  // them), and what keeps them valid; nullptr for other storage.
  const uint16_t* bf16_source() const { return lazy_ ? lazy_->source : nullptr; }
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }
  // Whether widen-on-access storage has made its f32 copy yet.
  bool widened() const;

 private:
  Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keep_alive);
  const std::byte* widened_data() const;

  struct WidenOnAccess {
    const uint16_t* source = nullptr;
    std::once_flag once;
    std::byte* widened = nullptr;  // owned and counted once made
  };

  std::byte* data_;
  size_t bytes_;
  bool owned_;
  std::shared_ptr<const void> keep_alive_;
  std::unique_ptr<WidenOnAccess> lazy_;
};

}  // namespace linnet::tensor
