// The CUDA op table: kernels for NVIDIA GPUs behind the same OpTable
// interface as the CPU table (docs/cuda.md). Built only with LINNET_CUDA;
// the registrations and the availability probe work on a machine without a
// GPU, the kernels need one.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "linnet/ops/op_table.hpp"
#include "linnet/tensor/device.hpp"

namespace linnet::cuda {

// Why no CUDA device can be used here ("cudaGetDeviceCount failed: ...",
// "no CUDA device is present"), or nothing when device 0 can be used.
// Never throws; probes the driver once per process.
std::optional<std::string> unavailable_reason();

// "NVIDIA H200 (compute capability 9.0, 132 multiprocessors, 139.8 GiB)";
// only when available.
std::string device_description();

// The process's backend on device 0 (cudaMalloc, cudaMemcpy; counted).
// Throws std::runtime_error with unavailable_reason() when there is no device.
std::shared_ptr<tensor::DeviceBackend> backend();

// The CUDA kernels' registrations (name "cuda"). Building it touches no GPU.
std::shared_ptr<const ops::OpTable> kernel_table();

}  // namespace linnet::cuda
