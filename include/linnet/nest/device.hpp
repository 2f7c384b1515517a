// Where a session's native ops run: `--device cpu|cuda`.
//
// cpu: the CPU op table. cuda: the CUDA op table (src/cuda) in front of the
// CPU table (ops/device_table.hpp); it needs linnet built with LINNET_CUDA
// and a usable GPU, and says clearly why when either is missing.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "linnet/eval/dispatch.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/tensor/device.hpp"

namespace linnet::nest {

enum class Device { Cpu, Cuda };

const char* device_name(Device device);  // "cpu", "cuda"
// Device::Cpu for "cpu", ...; nothing for another name.
std::optional<Device> device_named(std::string_view name);

// Why `device` cannot run here ("linnet was built without CUDA support ...",
// "no usable CUDA device: ..."), or nothing when it can.
std::optional<std::string> device_unavailable(Device device);

// Thrown by make_dispatcher when device_unavailable says why.
class DeviceUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The dispatcher a session installs for `device` (a new one per call, with
// its own counts). Throws DeviceUnavailable.
std::shared_ptr<eval::OpDispatcher> make_dispatcher(Device device);

// The table `linnet explain --device` consults: for cuda, the CUDA kernels in
// front of the CPU table. Needs CUDA support built, not a GPU; throws
// DeviceUnavailable without the former.
std::shared_ptr<const ops::OpTable> op_table_for(Device device);

// The device's transfer counts so far (all zero for cpu, or when no device
// was ever used).
tensor::TransferStats device_transfers(Device device);

}  // namespace linnet::nest
