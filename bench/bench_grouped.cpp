// The grouped MXFP4 expert products of a prompt at GPT-OSS widths (32
// experts of 5760 x 2880 and 2880 x 2880, 4 chosen per token, 512 tokens),
// f32 and bf16 inputs: the packed AVX-512 kernel against the products on
// tensor::gemm (oneDNN from 64 rows), in one process. Times are CPU time of
// the process (CLOCK_PROCESS_CPUTIME_ID), best of the runs: a busy
// neighbour on a shared machine inflates wall time far more. Run with
// OMP_NUM_THREADS=1 for one core's figures.
// With --items: instead, one work item of the bf16 kernel (128 weight rows
// of 2880 values, decode and tiles) on 16 to 128 tokens, repeated on the
// same data (its weights and inputs then come from L2, as an expert's
// inputs do in a prompt), so that the time per token (the tiles) and the
// rest (the decode) can be told apart.
// Usage: bench_grouped [--runs N] [--tokens T] [--items]
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

// Random MXFP4 weights of `rows` rows of `groups` groups: any code bytes,
// scales near 2^0 (118-128) so that sums stay finite.
struct PackedWeights {
  std::vector<uint8_t> blocks, scales;
};

PackedWeights random_packed(int64_t rows, int64_t groups, std::mt19937& random) {
  std::uniform_int_distribution<int> any_byte(0, 255), scale(118, 128);
  PackedWeights weights{std::vector<uint8_t>(static_cast<size_t>(rows * groups * 16)),
                        std::vector<uint8_t>(static_cast<size_t>(rows * groups))};
  for (uint8_t& b : weights.blocks) b = static_cast<uint8_t>(any_byte(random));
  for (uint8_t& s : weights.scales) s = static_cast<uint8_t>(scale(random));
  return weights;
}

// One item of the bf16 kernel per token count (16 to 128): seconds per
// item (best of `runs` batches of `repeats`), and the tiles' GFLOP/s on the
// tokens they multiply if the item's time beyond the tiles is the 64-token
// and 128-token items' common part (both run only 8-token tiles).
int bench_items(int runs) {
  using namespace linnet::ops::detail;
  const int64_t groups = 90, length = groups * 32, outputs = kGroupedTileOutputs, most_tokens = 128;
  std::mt19937 random(11);
  std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f);
  const PackedWeights weights = random_packed(outputs, groups, random);
  std::vector<uint16_t> inputs(static_cast<size_t>(most_tokens * length));
  for (uint16_t& value : inputs) value = linnet::tensor::float_to_bf16_bits(signed_unit(random));
  std::vector<uint16_t> part(static_cast<size_t>(outputs * kGroupedPartBf16));
  std::vector<float> c(static_cast<size_t>(outputs * most_tokens));
  const int repeats = 200;
  double seconds[most_tokens + 1] = {};
  std::printf("one bf16 item (%ld weight rows x %ld), CPU seconds per item, best of %d x %d\n", long(outputs),
              long(length), runs, repeats);
  std::printf("%6s %12s %14s\n", "tokens", "us per item", "GFLOP/s");
  for (int64_t count = 16; count <= most_tokens; count += 16) {
    const GroupedRowsTile tile{weights.blocks.data(), weights.scales.data(), groups, outputs, inputs.data(), count};
    seconds[count] = best_cpu_seconds(runs, [&] {
      for (int r = 0; r < repeats; ++r) grouped_rows_avx512bf16(tile, part.data(), c.data());
    }) / repeats;
    const double flops = 2.0 * static_cast<double>(count * outputs * length);
    std::printf("%6ld %12.2f %14.1f\n", long(count), seconds[count] * 1e6, flops / seconds[count] / 1e9);
  }
  // t(T) = rest + T * per_token (T = 64, 128).
  const double per_token = (seconds[128] - seconds[64]) / 64, rest = seconds[64] - 64 * per_token;
  const double token_flops = 2.0 * static_cast<double>(outputs * length);
  std::printf("8-token tiles: %.3f us per token (%.1f GFLOP/s), the rest (decode) %.2f us per item\n",
              per_token * 1e6, token_flops / per_token / 1e9, rest * 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int64_t tokens = 512;
  bool items = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (arg == "--tokens" && i + 1 < argc) {
      tokens = std::atoll(argv[++i]);
    } else if (arg == "--items") {
      items = true;
    } else {
      std::fprintf(stderr, "usage: bench_grouped [--runs N] [--tokens T] [--items]\n");
      return 2;
    }
  }
  if (items) return bench_items(runs);
  const int64_t experts = 32, top_k = 4, groups = 90, length = groups * 32;
  std::mt19937 random(7);
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
    const PackedWeights packed = random_packed(experts * rows, groups, random);
    const linnet::ops::Mxfp4Experts weights{packed.blocks, packed.scales, experts, rows, groups};
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
