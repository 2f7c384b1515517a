// The op table of an accelerator: its own kernels where it has them, and the
// host (CPU) table's kernels elsewhere.
//
// A device kernel reads its tensor arguments through Storage::device_data
// (uploading a host tensor once: a weight keeps its device copy for as long
// as the instance holds it) and returns a tensor whose storage lives on the
// device. A host kernel, or an op body, reads its arguments through the host
// accessors, which copy a device result back first. Both copies are counted
// by the DeviceBackend, so where an op without a device kernel costs
// transfers is visible (DeviceDispatcher's counts, `linnet run --device`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "linnet/ops/op_table.hpp"

namespace linnet::ops {

class DeviceOpTable : public OpTable {
 public:
  // `device_kernels`: the accelerator's registrations (its name names the
  // table: "cuda"); `host_kernels`: the fallback, normally cpu_op_table().
  DeviceOpTable(std::shared_ptr<const OpTable> device_kernels, std::shared_ptr<const OpTable> host_kernels);

  // "cuda+cpu".
  std::string_view name() const override { return name_; }
  // The device kernel when one is valid; else the host kernel, with a
  // reason that says its inputs are read on the host; else the body.
  KernelChoice find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const override;
  const KernelRegistration* kernel(std::string_view op, tensor::DType dtype,
                                   eval::NumericsPolicy policy) const override;
  bool has_op(std::string_view op) const override;
  // The device's registrations, then the host's.
  std::vector<const KernelRegistration*> registrations() const override;
  // Whether `kernel` is one of the device's.
  bool on_device(const KernelRegistration* kernel) const;

  const OpTable& device_kernels() const { return *device_; }

 private:
  std::shared_ptr<const OpTable> device_;
  std::shared_ptr<const OpTable> host_;
  std::string name_;
  std::unordered_set<const KernelRegistration*> device_registrations_;
};

// Calls answered per place, since the dispatcher was made.
struct DeviceDispatchStats {
  uint64_t device_calls = 0;  // a device kernel ran
  uint64_t host_calls = 0;    // a host kernel ran (its inputs copied to the host when they lived on the device)
  uint64_t declined = 0;      // no kernel, or the kernel declined: the body ran on the host
};

class DeviceDispatcher : public eval::OpDispatcher {
 public:
  explicit DeviceDispatcher(std::shared_ptr<const DeviceOpTable> table);
  std::optional<eval::Value> try_native(const eval::NativeCall& call) override;
  const DeviceOpTable& table() const { return *table_; }
  DeviceDispatchStats stats() const { return stats_; }

 private:
  std::shared_ptr<const DeviceOpTable> table_;
  DeviceDispatchStats stats_;
};

}  // namespace linnet::ops
