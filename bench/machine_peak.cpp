// Prints the machine's read bandwidth and arithmetic peak (the loops are in
// machine_limits.cpp) for scripts/bench, measured in the same run as the
// model timings so that ratios compare like with like.
//
// Output: one `key value` per line (GB/s, GFLOP/s), for the script to read.
//   usage: machine_peak [--threads N] [--buffer-mib M]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "machine_limits.hpp"

using linnet::bench::Bandwidth;
using linnet::bench::Peak;

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t buffer_mib = 1024;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if ((argument == "--threads" || argument == "--buffer-mib") && i + 1 < argc) {
      const long value = std::strtol(argv[++i], nullptr, 10);
      if (value <= 0) {
        std::fprintf(stderr, "machine_peak: %s needs a positive number\n", argument.c_str());
        return 2;
      }
      if (argument == "--threads") threads = static_cast<int>(value);
      else buffer_mib = static_cast<size_t>(value);
    } else {
      std::fprintf(stderr, "usage: machine_peak [--threads N] [--buffer-mib M]\n");
      return 2;
    }
  }
  __builtin_cpu_init();
  const Bandwidth bandwidth = linnet::bench::read_bandwidth(threads, buffer_mib << 20);
  const Peak f32 = linnet::bench::f32_peak(threads);
  const Peak bf16 = linnet::bench::bf16_peak(threads, f32);
  std::printf("threads %d\n", threads);
  std::printf("read_bandwidth_gbs %.2f\n", bandwidth.bytes_per_second / 1e9);
  std::printf("read_loads %s\n", bandwidth.loads);
  std::printf("f32_peak_gflops %.1f\n", f32.flops_per_second / 1e9);
  std::printf("f32_instruction %s\n", f32.instruction);
  std::printf("bf16_peak_gflops %.1f\n", bf16.flops_per_second / 1e9);
  std::printf("bf16_instruction %s\n", bf16.instruction);
  return 0;
}
