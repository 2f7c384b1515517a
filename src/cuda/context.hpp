// The process-wide CUDA state the kernels share: the backend on device 0 and
// the cuBLAS handle. Everything runs on the legacy default stream, in order,
// so a download (cudaMemcpy) sees every kernel launched before it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "linnet/tensor/device.hpp"

namespace linnet::cuda::detail {

struct Context {
  std::shared_ptr<tensor::DeviceBackend> backend;
  cublasHandle_t blas = nullptr;
  int multiprocessors = 0;
};

// Made on first use; throws std::runtime_error when no device is usable.
Context& context();

// Throws std::runtime_error naming `what` when `status` is an error.
void check(cudaError_t status, const char* what);
void check(cublasStatus_t status, const char* what);
// After a kernel launch: the launch error, if any.
void check_launch(const char* kernel);

}  // namespace linnet::cuda::detail
