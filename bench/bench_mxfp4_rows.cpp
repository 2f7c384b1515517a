// The AVX-512 MXFP4 row kernels of a decode step (src/ops/mxfp4_rows*.{inc,cpp}):
// the eight-lane kernel against the two-rows-per-zmm kernel that
// mxfp4_rows_avx512 runs for few inputs, and against its vdpbf16ps form
// for one bf16 input (AVX512-BF16: a T = bf16 step), on one thread, one
// input (a decode step's, bf16 values, so that every kernel can take it), rows of GPT-OSS's 2880 values in runs of 16 rows as
// mxfp4_experts.cpp hands them out. Two working sets: rows that stay in
// cache (the kernels' own speed) and 200 MB of rows streamed from memory
// (a step's four routed experts per layer are 53 MB). Rounds alternate the
// kernels; the figures are thread CPU time (the kernels are compute-bound,
// and CPU time moves less than wall time on a shared machine). Both kernels
// must give the same bits, which is checked first.
// Usage: bench_mxfp4_rows [--rounds N]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "../src/ops/mxfp4_rows.hpp"
#include "linnet/tensor/gemm.hpp"

namespace detail = linnet::ops::detail;

namespace {

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Rows {
  int64_t count = 0, groups = 90;
  std::vector<uint8_t> blocks, scales;
};

Rows random_rows(int64_t count, uint32_t seed) {
  Rows rows;
  rows.count = count;
  std::mt19937 random(seed);
  rows.blocks.resize(static_cast<size_t>(count * rows.groups * 16));
  rows.scales.resize(static_cast<size_t>(count * rows.groups));
  for (auto& byte : rows.blocks) byte = static_cast<uint8_t>(random());
  for (auto& scale : rows.scales) scale = static_cast<uint8_t>(118 + random() % 19);
  return rows;
}

// Every run of 16 rows times x, as mxfp4_experts.cpp calls the kernel
// (with x's bf16 pairs when `pairs` is given).
void run(void (*kernel)(const detail::Mxfp4Rows&), const Rows& rows, const float* x, float* y,
         const uint16_t* pairs = nullptr) {
  const float* inputs[1] = {x};
  for (int64_t first = 0; first < rows.count; first += 16) {
    float* outputs[1] = {y + first};
    const int64_t count = rows.count - first < 16 ? rows.count - first : 16;
    kernel(detail::Mxfp4Rows{rows.blocks.data() + first * rows.groups * 16, rows.scales.data() + first * rows.groups,
                             rows.groups, count, detail::mxfp4_value_table_f32(), inputs, outputs, 1, nullptr,
                             rows.count - first - count, pairs});
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bench_mxfp4_rows [--rounds N]\n");
      return 2;
    }
  }
  namespace gemm = linnet::tensor::gemm;
  if (!gemm::isa_supported(gemm::Isa::Avx512)) {
    std::fprintf(stderr, "bench_mxfp4_rows: this CPU has no AVX-512\n");
    return 1;
  }
  std::printf("paired kernel %s\n", __builtin_cpu_supports("avx512vbmi") ? "used (AVX512-VBMI)"
                                                                          : "not used (no AVX512-VBMI): both the same");
  std::mt19937 random(7);
  std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f);
  const bool dot = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bf16");
  std::printf("vdpbf16ps kernel %s\n", dot ? "used (AVX512-BF16)" : "not used (no AVX512-BF16): the paired one instead");
  std::vector<float> x(90 * 32);
  for (auto& value : x) {
    // A bf16 value (its f32 bits' lower half cleared), as a T = bf16 step's.
    uint32_t bits;
    const float unit = signed_unit(random);
    std::memcpy(&bits, &unit, 4);
    bits &= 0xFFFF0000u;
    std::memcpy(&value, &bits, 4);
  }
  if (!detail::mxfp4_bf16_pairs_safe(x.data(), static_cast<int64_t>(x.size()))) {
    std::fprintf(stderr, "bench_mxfp4_rows: the input is outside the vdpbf16ps kernel's range\n");
    return 1;
  }
  std::vector<uint16_t> pairs(x.size() * 2);
  detail::mxfp4_bf16_pairs(x.data(), static_cast<int64_t>(x.size()), pairs.data());
  struct Set {
    const char* name;
    Rows rows;
    int repeats;
  };
  Set sets[] = {{"in cache (1024 rows, 1.6 MB)", random_rows(1024, 1), 100},
                {"streamed (131072 rows, 200 MB)", random_rows(131072, 2), 1}};
  for (Set& set : sets) {
    std::vector<float> eight(static_cast<size_t>(set.rows.count)), paired(eight.size()), dotted(eight.size());
    run(detail::mxfp4_rows_avx512_eight_lanes, set.rows, x.data(), eight.data());
    run(detail::mxfp4_rows_avx512, set.rows, x.data(), paired.data());
    run(detail::mxfp4_rows_avx512, set.rows, x.data(), dotted.data(), pairs.data());
    if (std::memcmp(eight.data(), paired.data(), eight.size() * sizeof(float)) != 0 ||
        std::memcmp(eight.data(), dotted.data(), eight.size() * sizeof(float)) != 0) {
      std::fprintf(stderr, "bench_mxfp4_rows: the kernels disagree\n");
      return 1;
    }
    const double bytes = static_cast<double>(set.rows.count * set.rows.groups * 17) * set.repeats;
    std::printf("%s: GB/s of blocks and scales per thread, CPU time\n", set.name);
    for (int round = 0; round < rounds; ++round) {
      const double t0 = thread_seconds();
      for (int i = 0; i < set.repeats; ++i) run(detail::mxfp4_rows_avx512_eight_lanes, set.rows, x.data(), eight.data());
      const double t1 = thread_seconds();
      for (int i = 0; i < set.repeats; ++i) run(detail::mxfp4_rows_avx512, set.rows, x.data(), paired.data());
      const double t2 = thread_seconds();
      for (int i = 0; i < set.repeats; ++i) run(detail::mxfp4_rows_avx512, set.rows, x.data(), dotted.data(), pairs.data());
      const double t3 = thread_seconds();
      std::printf("  round %d: eight lanes %.2f, paired %.2f, vdpbf16ps %.2f; eight-lane time / paired time %.2f, "
                  "paired time / vdpbf16ps time %.2f\n",
                  round, bytes / (t1 - t0) / 1e9, bytes / (t2 - t1) / 1e9, bytes / (t3 - t2) / 1e9,
                  (t1 - t0) / (t2 - t1), (t2 - t1) / (t3 - t2));
    }
  }
  return 0;
}
