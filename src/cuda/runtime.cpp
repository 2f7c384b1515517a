// The CUDA runtime side: probing for a device, the counted backend over
// cudaMalloc/cudaMemcpy, and the shared context (cuBLAS handle).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

#include "context.hpp"
#include "cublas_library.hpp"
#include "linnet/cuda/cuda.hpp"

namespace linnet::cuda {

namespace detail {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
  }
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS error in ") + what + ": " + cublas().status_name(status));
  }
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

namespace {

class CudaBackend : public tensor::DeviceBackend {
 public:
  std::string name() const override { return "cuda"; }

 protected:
  void* allocate_memory(size_t bytes) override {
    void* memory = nullptr;
    if (cudaMalloc(&memory, bytes) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free allocation error
      return nullptr;
    }
    return memory;
  }
  void release_memory(void* device_pointer) noexcept override { cudaFree(device_pointer); }
  void upload(void* device_destination, const void* host_source, size_t bytes) override {
    check(cudaMemcpy(device_destination, host_source, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (to the device)");
  }
  void download(void* host_destination, const void* device_source, size_t bytes) override {
    check(cudaMemcpy(host_destination, device_source, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (to the host)");
  }
};

}  // namespace

Context& context() {
  static std::once_flag once;
  static Context shared;
  static std::string failure;
  std::call_once(once, [] {
    if (const auto reason = unavailable_reason()) {
      failure = *reason;
      return;
    }
    try {
      check(cudaSetDevice(0), "cudaSetDevice");
      cudaDeviceProp properties{};
      check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
      shared.multiprocessors = properties.multiProcessorCount;
      check(cublas().create(&shared.blas), "cublasCreate");
      shared.backend = std::make_shared<CudaBackend>();
    } catch (const std::exception& error) {
      failure = error.what();
    }
  });
  if (!shared.backend) throw std::runtime_error(failure);
  return shared;
}

}  // namespace detail

std::optional<std::string> unavailable_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(status) + " (" +
             cudaGetErrorString(status) + ")";
    }
    if (count == 0) return std::string("no CUDA device is present");
    return std::nullopt;
  }();
  return reason;
}

std::string device_description() {
  if (unavailable_reason()) return "none";
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) return "unknown";
  char text[1024];
  std::snprintf(text, sizeof text, "%s (compute capability %d.%d, %d multiprocessors, %.1f GiB)", properties.name,
                properties.major, properties.minor, properties.multiProcessorCount,
                static_cast<double>(properties.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

std::shared_ptr<tensor::DeviceBackend> backend() { return detail::context().backend; }

}  // namespace linnet::cuda
