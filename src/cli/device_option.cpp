// --device: parsing, the availability check, and the transfer report.
#include "device_option.hpp"

#include <iostream>
#include <sstream>

namespace linnet::cli {

void add_device_option(CLI::App& command, std::string& device) {
  command.add_option("--device", device, "where native ops run: cpu (default) or cuda (needs a CUDA build and a GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
}

std::optional<nest::Device> usable_device(const std::string& name, bool need_hardware) {
  const std::optional<nest::Device> device = nest::device_named(name);
  if (!device) {
    std::cerr << "error: unknown device `" << name << "` (cpu or cuda)\n";
    return std::nullopt;
  }
  if (!need_hardware && *device == nest::Device::Cuda) {
    try {
      nest::op_table_for(*device);
    } catch (const nest::DeviceUnavailable& error) {
      std::cerr << "error: " << error.what() << '\n';
      return std::nullopt;
    }
    return device;
  }
  if (const auto reason = nest::device_unavailable(*device)) {
    std::cerr << "error: " << *reason << '\n';
    return std::nullopt;
  }
  return device;
}

std::string describe_transfers(nest::Device device) {
  if (device == nest::Device::Cpu) return "";
  const tensor::TransferStats stats = nest::device_transfers(device);
  std::ostringstream out;
  out << "device " << nest::device_name(device) << ": " << stats.uploads << " copies to the device ("
      << static_cast<double>(stats.upload_bytes) / 1e6 << " MB), " << stats.downloads << " copies to the host ("
      << static_cast<double>(stats.download_bytes) / 1e6 << " MB)\n";
  return out.str();
}

}  // namespace linnet::cli
