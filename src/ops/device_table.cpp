// DeviceOpTable's lookup (device first, host second) and DeviceDispatcher.
#include "linnet/ops/device_table.hpp"

#include <stdexcept>

namespace linnet::ops {

DeviceOpTable::DeviceOpTable(std::shared_ptr<const OpTable> device_kernels, std::shared_ptr<const OpTable> host_kernels)
    : device_(std::move(device_kernels)), host_(std::move(host_kernels)) {
  if (!device_ || !host_) throw std::invalid_argument("DeviceOpTable needs a device table and a host table");
  name_ = std::string(device_->name()) + "+" + std::string(host_->name());
  for (const KernelRegistration* registration : device_->registrations()) device_registrations_.insert(registration);
}

KernelChoice DeviceOpTable::find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const {
  KernelChoice device = device_->find(op, dtype, policy);
  if (device.kernel != nullptr) {
    device.reason = std::string(device_->name()) + " " + device.reason;
    return device;
  }
  KernelChoice host = host_->find(op, dtype, policy);
  if (host.kernel != nullptr) {
    host.reason = std::string(host_->name()) + " " + host.reason + "; inputs read on the host (no " +
                  std::string(device_->name()) + " kernel)";
  } else if (policy != eval::NumericsPolicy::Exact) {
    host.reason += "; on the host";
  }
  return host;
}

const KernelRegistration* DeviceOpTable::kernel(std::string_view op, tensor::DType dtype,
                                                eval::NumericsPolicy policy) const {
  if (const KernelRegistration* device = device_->kernel(op, dtype, policy)) return device;
  return host_->kernel(op, dtype, policy);
}

bool DeviceOpTable::has_op(std::string_view op) const { return device_->has_op(op) || host_->has_op(op); }

std::vector<const KernelRegistration*> DeviceOpTable::registrations() const {
  std::vector<const KernelRegistration*> all = device_->registrations();
  for (const KernelRegistration* registration : host_->registrations()) all.push_back(registration);
  return all;
}

bool DeviceOpTable::on_device(const KernelRegistration* kernel) const {
  return device_registrations_.contains(kernel);
}

DeviceDispatcher::DeviceDispatcher(std::shared_ptr<const DeviceOpTable> table) : table_(std::move(table)) {
  if (!table_) throw std::invalid_argument("DeviceDispatcher needs a table");
}

std::optional<eval::Value> DeviceDispatcher::try_native(const eval::NativeCall& call) {
  if (call.policy == eval::NumericsPolicy::Exact) return std::nullopt;
  const std::optional<tensor::DType> dtype = call_dtype(call);
  if (!dtype) return std::nullopt;
  const KernelRegistration* kernel = table_->kernel(call.qualified_name, *dtype, call.policy);
  if (kernel == nullptr) {
    ++stats_.declined;
    return std::nullopt;
  }
  std::optional<eval::Value> result = kernel->run(call);
  if (!result) {
    ++stats_.declined;
  } else if (table_->on_device(kernel)) {
    ++stats_.device_calls;
  } else {
    ++stats_.host_calls;
  }
  return result;
}

}  // namespace linnet::ops
