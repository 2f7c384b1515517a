// Device selection: the CPU table always; the CUDA table when linnet is
// built with it (LINNET_WITH_CUDA) and a GPU answers.
#include "linnet/nest/device.hpp"

#include "linnet/ops/device_table.hpp"

#if defined(LINNET_WITH_CUDA)
#include "linnet/cuda/cuda.hpp"
#endif

namespace linnet::nest {

const char* device_name(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

std::optional<Device> device_named(std::string_view name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "cuda") return Device::Cuda;
  return std::nullopt;
}

std::optional<std::string> device_unavailable(Device device) {
  if (device == Device::Cpu) return std::nullopt;
#if defined(LINNET_WITH_CUDA)
  if (auto reason = cuda::unavailable_reason()) return "--device cuda: " + *reason;
  return std::nullopt;
#else
  return std::string("--device cuda: this linnet was built without CUDA support (LINNET_CUDA=OFF, or no nvcc when it was built)");
#endif
}

std::shared_ptr<const ops::OpTable> op_table_for(Device device) {
  if (device == Device::Cpu) return ops::cpu_op_table();
#if defined(LINNET_WITH_CUDA)
  static const std::shared_ptr<const ops::OpTable> table =
      std::make_shared<ops::DeviceOpTable>(cuda::kernel_table(), ops::cpu_op_table());
  return table;
#else
  throw DeviceUnavailable(*device_unavailable(device));
#endif
}

std::shared_ptr<eval::OpDispatcher> make_dispatcher(Device device) {
  if (device == Device::Cpu) return ops::make_cpu_dispatcher();
  if (auto reason = device_unavailable(device)) throw DeviceUnavailable(*reason);
  auto table = std::dynamic_pointer_cast<const ops::DeviceOpTable>(op_table_for(device));
  return std::make_shared<ops::DeviceDispatcher>(std::move(table));
}

tensor::TransferStats device_transfers(Device device) {
#if defined(LINNET_WITH_CUDA)
  if (device == Device::Cuda && !cuda::unavailable_reason()) return cuda::backend()->stats();
#endif
  (void)device;
  return {};
}

}  // namespace linnet::nest
