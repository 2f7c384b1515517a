// The grouped MXFP4 expert products of a prompt at GPT-OSS widths (32
// experts of 5760 x 2880 and 2880 x 2880, 4 chosen per token, 512 tokens),
// f32 and bf16 inputs: the packed AVX-512 kernel against the products on
// tensor::gemm (oneDNN from 64 rows), in one process. Times are CPU time of
// the process (CLOCK_PROCESS_CPUTIME_ID), best of the runs: a busy
// neighbour on a shared machine inflates wall time far more. Run with
// OMP_NUM_THREADS=1 for one core's figures.
// Usage: bench_grouped [--runs N] [--tokens T]
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "linnet/ops/mxfp4.hpp"
#include "linnet/tensor/half.hpp"
#include "ops/mxfp4_grouped.hpp"

namespace {

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double best_cpu_seconds(int runs, const std::function<void()>& body) {
  body();  // warm-up: scratch buffers, oneDNN's kernels for these shapes
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const double start = cpu_seconds();
    body();
    best = std::min(best, cpu_seconds() - start);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int64_t tokens = 512;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (arg == "--tokens" && i + 1 < argc) {
      tokens = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_grouped [--runs N] [--tokens T]\n");
      return 2;
    }
  }
  const int64_t experts = 32, top_k = 4, groups = 90, length = groups * 32;
  std::mt19937 random(7);
  std::uniform_int_distribution<int> any_byte(0, 255), scale(118, 128);
  std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f);
  // Each token chooses 4 distinct experts uniformly.
  std::vector<int64_t> chosen;
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int64_t> all(experts);
    for (int64_t e = 0; e < experts; ++e) all[static_cast<size_t>(e)] = e;
    std::shuffle(all.begin(), all.end(), random);
    chosen.insert(chosen.end(), all.begin(), all.begin() + top_k);
  }
  std::vector<float> x(static_cast<size_t>(tokens * length));
  for (float& value : x) value = linnet::tensor::round_to_bf16(signed_unit(random));
  const linnet::ops::ExpertChoice choice{chosen, tokens, top_k};
  std::printf("threads %d, %ld tokens, %ld experts, top %ld, CPU seconds best of %d\n", omp_get_max_threads(),
              long(tokens), long(experts), long(top_k), runs);
  std::printf("%-22s %-5s %10s %9s %10s %9s %8s\n", "product", "T", "gemm s", "GFLOP/s", "packed s", "GFLOP/s",
              "speed-up");
  for (const int64_t rows : {int64_t{5760}, int64_t{2880}}) {
    std::vector<uint8_t> blocks(static_cast<size_t>(experts * rows * groups * 16)), scales(
        static_cast<size_t>(experts * rows * groups));
    for (uint8_t& b : blocks) b = static_cast<uint8_t>(any_byte(random));
    for (uint8_t& s : scales) s = static_cast<uint8_t>(scale(random));
    const linnet::ops::Mxfp4Experts weights{blocks, scales, experts, rows, groups};
    const double flops = 2.0 * static_cast<double>(tokens * top_k * rows * length);
    std::vector<float> out(static_cast<size_t>(tokens * top_k * rows));
    std::vector<uint16_t> out_bf16(out.size());
    for (const bool bf16 : {false, true}) {
      double seconds[2];
      for (const bool packed : {false, true}) {
        linnet::ops::detail::set_grouped_packed_enabled(packed);
        seconds[packed] = best_cpu_seconds(runs, [&] {
          if (bf16) {
            linnet::ops::mxfp4_linear_experts_shared_bf16(weights, x, choice, out_bf16);
          } else {
            linnet::ops::mxfp4_linear_experts_shared_f32(weights, x, choice, out);
          }
        });
      }
      linnet::ops::detail::set_grouped_packed_enabled(true);
      char name[40];
      std::snprintf(name, sizeof name, "%ld x %ld x %ld", long(tokens * top_k), long(rows), long(length));
      std::printf("%-22s %-5s %10.3f %9.1f %10.3f %9.1f %7.2fx\n", name, bf16 ? "bf16" : "f32", seconds[0],
                  flops / seconds[0] / 1e9, seconds[1], flops / seconds[1] / 1e9, seconds[0] / seconds[1]);
    }
  }
  return 0;
}
