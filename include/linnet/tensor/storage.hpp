// A block of element memory that tensors share. It either owns its bytes
// (64-byte aligned, counted by the allocator) or borrows them from someone
// else (for example a memory-mapped checkpoint), keeping that owner alive
// through a shared_ptr. Borrowed storage is read-only.
//
// Storage may also hold a copy of its bytes in device memory (device.hpp):
// a device kernel's result lives only there until the host reads it, and a
// weight gets a device copy beside its host bytes the first time a device
// kernel reads it. The host accessors keep the two consistent: data() copies
// device bytes to the host when the host copy is stale, mutable_data() also
// marks the device copy stale. Storage that never met a device pays one
// pointer test in data(). Device copies are made and read from the thread
// that runs the interpreter, never inside a parallel kernel.
//
// A third kind reads as f32 but is stored as bf16 elsewhere (a checkpoint's
// bf16 weights in an instance whose T is f32): its f32 bytes are made, once,
// the first time anything reads data(), and kept from then on. Kernels that
// can multiply bf16 directly read bf16_source() instead and never make them,
// so a large weight costs its stored size, not twice that.
//
// A fourth, more general kind is made on access from an ElementSource (a
// dequantization of packed weights, a reordered copy of another such
// storage): as above its bytes are made, once, the first time anything reads
// data(), and kernels that can work a tile at a time call read() for just
// the tiles they need instead, so the whole is never made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace linnet::tensor {

class DeviceBackend;

// What storage made on access makes its bytes from.
class ElementSource {
 public:
  virtual ~ElementSource() = default;
  // Writes the storage's bytes [begin, begin + count) into `out`. `begin`
  // and `count` are whole elements. Safe to call from several threads at once.
  virtual void read(size_t begin, size_t count, std::byte* out) const = 0;
};

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
  // Owned memory of `bytes` bytes on `backend`'s device, uninitialised; the
  // host copy is made on the first host access.
  static std::shared_ptr<Storage> on_device(std::shared_ptr<DeviceBackend> backend, size_t bytes);
  // `count` f32 elements that are the bf16 values at `bf16` (valid as long
  // as `keep_alive`), widened on first access (see above). Read-only.
  static std::shared_ptr<Storage> widen_on_access(const void* bf16, size_t count,
                                                  std::shared_ptr<const void> keep_alive);
  // `bytes` bytes that `source` makes: all of them on the first data(), or
  // any range through read() without making the rest (see above). Read-only.
  static std::shared_ptr<Storage> made_on_access(size_t bytes, std::shared_ptr<const ElementSource> source);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  size_t bytes() const { return bytes_; }
  bool owned() const { return owned_; }
  bool writable() const { return owned_; }
  const std::byte* data() const {
    if (device_) [[unlikely]] return host_data_from_device();
    // Widen-on-access storage makes its f32 copy the first time (thread-safe).
    if (lazy_) [[unlikely]] return widened_data();
    return data_;
  }
  // Throws TensorError(ReadOnly) for borrowed storage.
  std::byte* mutable_data();

  // Widen-on-access storage: the stored bf16 elements (bytes() / 2 of
  // them), and what keeps them valid; nullptr for other storage.
  const uint16_t* bf16_source() const { return lazy_ ? lazy_->source : nullptr; }
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }
  // Whether widen-on-access storage has made its f32 copy yet.
  bool widened() const;
  // Whether this storage makes its bytes on access (widen-on-access or
  // made_on_access) and has not made them yet.
  bool unmade() const { return lazy_ && lazy_->widened == nullptr; }
  // Bytes [begin, begin + count) into `out`, without making the rest of
  // unmade storage (its whole copy is used once it exists). Whole elements
  // of the storage's element size `element`.
  void read(size_t begin, size_t count, size_t element, std::byte* out) const;

  // --- Device copy ------------------------------------------------------------

  // The device copy for reading, uploaded (one counted copy) when there is
  // none or it is stale. Throws TensorError(InvalidArgument) when the copy
  // lives on another backend.
  const void* device_data(const std::shared_ptr<DeviceBackend>& backend);
  // The device copy for writing on the device; the host copy becomes stale.
  // Throws TensorError(ReadOnly) for borrowed storage.
  void* device_mutable_data(const std::shared_ptr<DeviceBackend>& backend);
  // Whether a current device copy exists, and on which backend (null: none).
  bool device_current() const;
  const DeviceBackend* device_backend() const;
  // Whether the host bytes are current (false only for device results not yet read).
  bool host_current() const;

 private:
  struct DeviceCopy;
  struct WidenOnAccess {
    const uint16_t* source = nullptr;                // widen-on-access: the bf16 elements
    std::shared_ptr<const ElementSource> producer;   // made_on_access: what makes them
    std::once_flag once;
    std::byte* widened = nullptr;  // owned and counted once made
  };
  Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keep_alive);
  const std::byte* host_data_from_device() const;
  const std::byte* widened_data() const;

  // Mutable: the host copy of device storage is made on first read.
  mutable std::byte* data_;
  size_t bytes_;
  bool owned_;
  bool mapped_ = false;  // owned pages from mmap (allocate_zeroed), released with munmap
  std::shared_ptr<const void> keep_alive_;
  std::unique_ptr<DeviceCopy> device_;  // null unless a device ever held these bytes
  std::unique_ptr<WidenOnAccess> lazy_;
};

}  // namespace linnet::tensor
