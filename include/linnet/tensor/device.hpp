// Device memory behind tensor storage: the interface an accelerator backend
// implements (CUDA in src/cuda; a host-memory stand-in in the tests), and the
// count of bytes moved between host and device.
//
// A Storage may carry a device copy of its bytes (storage.hpp): weights get
// one beside their host bytes the first time a device kernel reads them, and
// results of device kernels live only on the device until something on the
// host reads them. Every copy between the two goes through a backend's
// copy_to_device / copy_to_host, which count it: that count is how tests and
// `linnet run --device` show where data moved.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace linnet::tensor {

struct TransferStats {
  uint64_t uploads = 0;         // host -> device copies
  uint64_t upload_bytes = 0;
  uint64_t downloads = 0;       // device -> host copies
  uint64_t download_bytes = 0;
  uint64_t device_allocations = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // "cuda", "host-test".
  virtual std::string name() const = 0;

  // Device memory of `bytes` bytes (never null; throws TensorError when out
  // of memory), and its release.
  void* allocate(size_t bytes);
  void release(void* device_pointer) noexcept { release_memory(device_pointer); }
  // Counted copies.
  void copy_to_device(void* device_destination, const void* host_source, size_t bytes);
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes);

  TransferStats stats() const;
  void reset_stats();

 protected:
  virtual void* allocate_memory(size_t bytes) = 0;
  virtual void release_memory(void* device_pointer) noexcept = 0;
  virtual void upload(void* device_destination, const void* host_source, size_t bytes) = 0;
  virtual void download(void* host_destination, const void* device_source, size_t bytes) = 0;

 private:
  std::atomic<uint64_t> uploads_{0}, upload_bytes_{0}, downloads_{0}, download_bytes_{0}, allocations_{0};
};

}  // namespace linnet::tensor
