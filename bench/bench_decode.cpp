// The products of one decode step, alone: every weight matrix of a
// transformer at a card's widths multiplied by one token's activations
// (linnet/tensor/gemm.hpp, as the `linear` kernel calls it), with bf16
// weights and the activations in bf16 (T=bf16) or in f32 (T=f32 on a bf16
// checkpoint: the weights widened in registers). Each round measures the
// machine's read bandwidth (machine_limits.hpp) and then both steps, so the
// ratio step time / (weight bytes / bandwidth) compares figures taken
// moments apart on a shared machine; the best and the median round are
// printed. Outside the products a real step also runs attention, norms and
// the interpreter (scripts/bench); this isolates the weight stream.
// Usage: bench_decode [--widths H,Inner,QDim,KvDim,Vocab] [--layers N] [--rounds N]
//   defaults: Mistral 7B's widths (4096,14336,4096,1024,32768), 2 layers, 7 rounds.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "machine_limits.hpp"

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"

namespace gemm = linnet::tensor::gemm;

namespace {

struct Matrix {
  int64_t outputs = 0, inner = 0;
  std::vector<uint16_t> bf16;
};

// Random-looking bf16 weights in [-1, 1) without the cost of a full RNG per
// element (a gigabyte of them).
void fill(std::vector<uint16_t>& values, uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float f = static_cast<float>(static_cast<int64_t>(state >> 40) - (int64_t{1} << 23)) / float(1 << 23);
    value = linnet::tensor::float_to_bf16_bits(f);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t h = 4096, inner = 14336, q_dim = 4096, kv_dim = 1024, vocab = 32768;
  int layers = 2, rounds = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--widths" && i + 1 < argc) {
      long long a, b, c, d, e;
      if (std::sscanf(argv[++i], "%lld,%lld,%lld,%lld,%lld", &a, &b, &c, &d, &e) != 5) {
        std::fprintf(stderr, "--widths wants H,Inner,QDim,KvDim,Vocab\n");
        return 2;
      }
      h = a, inner = b, q_dim = c, kv_dim = d, vocab = e;
    } else if (arg == "--layers" && i + 1 < argc) {
      layers = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bench_decode [--widths H,Inner,QDim,KvDim,Vocab] [--layers N] [--rounds N]\n");
      return 2;
    }
  }
  // One layer: q, k, v, o, gate, up, down; then the lm_head.
  std::vector<Matrix> step;
  for (int l = 0; l < layers; ++l) {
    for (const auto& [outputs, in] : std::vector<std::pair<int64_t, int64_t>>{
             {q_dim, h}, {kv_dim, h}, {kv_dim, h}, {h, q_dim}, {inner, h}, {inner, h}, {h, inner}}) {
      step.push_back(Matrix{outputs, in, {}});
    }
  }
  step.push_back(Matrix{vocab, h, {}});
  int64_t bytes = 0, widest = 0;
  uint64_t seed = 1;
  for (auto& m : step) {
    m.bf16.resize(static_cast<size_t>(m.outputs * m.inner));
    fill(m.bf16, seed++);
    bytes += m.outputs * m.inner * 2;
    widest = std::max({widest, m.inner, m.outputs});
  }
  std::vector<uint16_t> x_bf16(static_cast<size_t>(widest));
  fill(x_bf16, 99);
  std::vector<float> x_f32(x_bf16.size());
  for (size_t i = 0; i < x_bf16.size(); ++i) x_f32[i] = linnet::tensor::bf16_bits_to_float(x_bf16[i]);
  std::vector<float> y(static_cast<size_t>(widest));

  const auto run_step = [&](bool f32) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& m : step) {
      const gemm::Operand x = f32 ? gemm::Operand{x_f32.data(), false, m.inner} : gemm::Operand{x_bf16.data(), true, m.inner};
      gemm::gemm_bt(1, m.outputs, m.inner, x, gemm::Operand{m.bf16.data(), true, m.inner}, y.data(), m.outputs);
    }
    return seconds_since(start);
  };

  const int threads = omp_get_max_threads();
  std::printf("threads %d, path %s; %zu products, %.1f MB of bf16 weights per step\n", threads,
              gemm::isa_name(gemm::active_isa()).c_str(), step.size(), bytes / 1e6);
  std::printf("round  bandwidth GB/s  limit ms  bf16 ms  (x limit)  f32 x bf16 ms  (x limit)  f32 / bf16\n");
  run_step(false);  // touch every page once
  std::vector<double> ratio_bf16, ratio_f32, ratio_f32_bf16;
  for (int round = 0; round < rounds; ++round) {
    const double bandwidth = linnet::bench::read_bandwidth(threads, size_t{1} << 30).bytes_per_second;
    const double limit = bytes / bandwidth;
    // Best of three steps each, interleaved.
    double bf16 = 1e30, f32 = 1e30;
    for (int repeat = 0; repeat < 3; ++repeat) {
      bf16 = std::min(bf16, run_step(false));
      f32 = std::min(f32, run_step(true));
    }
    ratio_bf16.push_back(bf16 / limit);
    ratio_f32.push_back(f32 / limit);
    ratio_f32_bf16.push_back(f32 / bf16);
    std::printf("%5d  %14.1f  %8.2f  %7.2f  (%5.2fx)  %13.2f  (%5.2fx)  %9.2f\n", round, bandwidth / 1e9, limit * 1e3,
                bf16 * 1e3, bf16 / limit, f32 * 1e3, f32 / limit, f32 / bf16);
  }
  std::printf("median: bf16 %.2fx limit, f32 x bf16 %.2fx limit, f32 / bf16 %.2f\n", median(ratio_bf16),
              median(ratio_f32), median(ratio_f32_bf16));
  std::printf("best:   bf16 %.2fx limit, f32 x bf16 %.2fx limit, f32 / bf16 %.2f\n",
              *std::min_element(ratio_bf16.begin(), ratio_bf16.end()),
              *std::min_element(ratio_f32.begin(), ratio_f32.end()),
              *std::min_element(ratio_f32_bf16.begin(), ratio_f32_bf16.end()));
  return 0;
}
