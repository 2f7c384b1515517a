// `--device cpu|cuda`, shared by run, generate, validate and explain.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "linnet/nest/device.hpp"

namespace linnet::cli {

void add_device_option(CLI::App& command, std::string& device);

// The device `name` names when it can run here; else prints why (an error)
// and returns nothing, for exit status 1. With `need_hardware` false only
// the build's CUDA support matters (explain reads the kernel table).
std::optional<nest::Device> usable_device(const std::string& name, bool need_hardware = true);

// For --stats: the host/device copies made so far ("" for cpu).
std::string describe_transfers(nest::Device device);

}  // namespace linnet::cli
