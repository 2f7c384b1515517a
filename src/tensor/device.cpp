// The counted copies of DeviceBackend.
#include "linnet/tensor/device.hpp"

#include <string>

#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

void* DeviceBackend::allocate(size_t bytes) {
  void* memory = allocate_memory(bytes == 0 ? 1 : bytes);  // a distinct address even for no bytes
  if (!memory) {
    throw TensorError(ErrorKind::InvalidArgument,
                      "out of " + name() + " device memory allocating " + std::to_string(bytes) + " bytes");
  }
  allocations_.fetch_add(1);
  return memory;
}

void DeviceBackend::copy_to_device(void* device_destination, const void* host_source, size_t bytes) {
  if (bytes == 0) return;
  upload(device_destination, host_source, bytes);
  uploads_.fetch_add(1);
  upload_bytes_.fetch_add(bytes);
}

void DeviceBackend::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  if (bytes == 0) return;
  download(host_destination, device_source, bytes);
  downloads_.fetch_add(1);
  download_bytes_.fetch_add(bytes);
}

TransferStats DeviceBackend::stats() const {
  return {uploads_.load(), upload_bytes_.load(), downloads_.load(), download_bytes_.load(), allocations_.load()};
}

void DeviceBackend::reset_stats() {
  uploads_ = 0;
  upload_bytes_ = 0;
  downloads_ = 0;
  download_bytes_ = 0;
  allocations_ = 0;
}

}  // namespace linnet::tensor
