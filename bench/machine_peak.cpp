// The machine's own limits, measured for scripts/bench in the same run as
// the model timings, so that ratios compare like with like:
//   - read bandwidth: every thread sums its share of a large buffer (far
//     larger than the caches) with the widest vector loads the CPU has;
//   - arithmetic peak: every thread runs a register-only loop of the
//     product instruction, with enough independent accumulators to hide its
//     latency: vdpbf16ps (AVX512-BF16) for bf16, FMA (AVX-512F, else AVX2
//     FMA) for f32. Without vdpbf16ps the bf16 peak is the f32 one (bf16
//     operands then have to be widened and multiplied as f32). Without FMA,
//     separate multiplies and adds (SSE2, which every x86-64 has).
// Instructions are chosen at run time from the CPU's features, so this
// builds with the default flags and runs on any x86-64.
//
// Output: one `key value` per line (GB/s, GFLOP/s), for the script to read.
//   usage: machine_peak [--threads N] [--buffer-mib M]
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Runs `work(thread)` on `threads` threads at once; returns the wall time
// from the moment all have started until the last one finishes.
double run_on_threads(int threads, const std::function<void(int)>& work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      work(t);
    });
  }
  while (ready.load() < threads) {
  }
  const Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& thread : pool) thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// --- read bandwidth ----------------------------------------------------------

__attribute__((target("avx512f"))) uint64_t sum_avx512(const uint64_t* data, size_t count) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    a = _mm512_add_epi64(a, _mm512_load_si512(data + i));
    b = _mm512_add_epi64(b, _mm512_load_si512(data + i + 8));
    c = _mm512_add_epi64(c, _mm512_load_si512(data + i + 16));
    d = _mm512_add_epi64(d, _mm512_load_si512(data + i + 24));
  }
  // Stored and summed: GCC 12's _mm512_reduce_* trips -Wuninitialized.
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d)));
  uint64_t total = 0;
  for (uint64_t lane : lanes) total += lane;
  for (; i < count; ++i) total += data[i];
  return total;
}

__attribute__((target("avx2"))) uint64_t sum_avx2(const uint64_t* data, size_t count) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 4)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 8)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  uint64_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < count; ++i) total += data[i];
  return total;
}

uint64_t sum_sse2(const uint64_t* data, size_t count) {
  __m128i a = _mm_setzero_si128(), b = a;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    a = _mm_add_epi64(a, _mm_load_si128(reinterpret_cast<const __m128i*>(data + i)));
    b = _mm_add_epi64(b, _mm_load_si128(reinterpret_cast<const __m128i*>(data + i + 2)));
  }
  alignas(16) uint64_t lanes[2];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), _mm_add_epi64(a, b));
  uint64_t total = lanes[0] + lanes[1];
  for (; i < count; ++i) total += data[i];
  return total;
}

struct Bandwidth {
  double bytes_per_second = 0;
  const char* loads = "";
};

Bandwidth read_bandwidth(int threads, size_t buffer_bytes) {
  uint64_t (*sum)(const uint64_t*, size_t) = sum_sse2;
  Bandwidth result{0, "sse2"};
  if (__builtin_cpu_supports("avx512f")) {
    sum = sum_avx512;
    result.loads = "avx512";
  } else if (__builtin_cpu_supports("avx2")) {
    sum = sum_avx2;
    result.loads = "avx2";
  }
  const size_t count = buffer_bytes / sizeof(uint64_t) / 64 * 64;
  auto free_aligned = [](uint64_t* pointer) { std::free(pointer); };
  std::unique_ptr<uint64_t[], decltype(free_aligned)> buffer(
      static_cast<uint64_t*>(std::aligned_alloc(64, count * sizeof(uint64_t))), free_aligned);
  if (!buffer) {
    std::fprintf(stderr, "machine_peak: cannot allocate %zu bytes\n", buffer_bytes);
    std::exit(1);
  }
  // Each thread touches (first-faults) the part it later reads.
  const size_t share = count / static_cast<size_t>(threads) / 64 * 64;
  run_on_threads(threads, [&](int t) {
    const size_t begin = static_cast<size_t>(t) * share;
    for (size_t i = begin; i < begin + share; ++i) buffer[i] = i;
  });
  std::vector<uint64_t> sinks(static_cast<size_t>(threads) * 8);
  double best = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    best = std::min(best, run_on_threads(threads, [&](int t) {
                      sinks[static_cast<size_t>(t) * 8] += sum(buffer.get() + static_cast<size_t>(t) * share, share);
                    }));
  }
  uint64_t check = 0;
  for (uint64_t sink : sinks) check ^= sink;
  if (check == 42) std::fprintf(stderr, " ");  // keeps the sums alive
  result.bytes_per_second = static_cast<double>(share * static_cast<size_t>(threads) * sizeof(uint64_t)) / best;
  return result;
}

// --- arithmetic peak -----------------------------------------------------------

constexpr int64_t kIterations = 20'000'000;

// 12 independent accumulators: the instruction's latency (4-6 cycles) times
// two ports, with room to spare.
#define LINNET_TWELVE(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

__attribute__((target("avx512f,avx512bf16"))) float dpbf16_loop(int64_t iterations) {
  __m512 acc[12];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3F80);  // 1.0
  const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3A80);  // 2^-10
  for (int64_t i = 0; i < iterations; ++i) {
#define LINNET_STEP(k) acc[k] = _mm512_dpbf16_ps(acc[k], x, y);
    LINNET_TWELVE(LINNET_STEP)
#undef LINNET_STEP
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]));
  }
  __m512 total = acc[0];
  for (int k = 1; k < 12; ++k) total = _mm512_add_ps(total, acc[k]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

__attribute__((target("avx512f"))) float fma512_loop(int64_t iterations) {
  __m512 acc[12];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#define LINNET_STEP(k) acc[k] = _mm512_fmadd_ps(x, y, acc[k]);
    LINNET_TWELVE(LINNET_STEP)
#undef LINNET_STEP
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]));
  }
  __m512 total = acc[0];
  for (int k = 1; k < 12; ++k) total = _mm512_add_ps(total, acc[k]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

__attribute__((target("avx2,fma"))) float fma256_loop(int64_t iterations) {
  __m256 acc[12];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  const __m256 x = _mm256_set1_ps(1.0f), y = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#define LINNET_STEP(k) acc[k] = _mm256_fmadd_ps(x, y, acc[k]);
    LINNET_TWELVE(LINNET_STEP)
#undef LINNET_STEP
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]));
  }
  alignas(32) float lanes[8];
  __m256 total = acc[0];
  for (int k = 1; k < 12; ++k) total = _mm256_add_ps(total, acc[k]);
  _mm256_store_ps(lanes, total);
  return lanes[0];
}

float sse2_loop(int64_t iterations) {
  __m128 acc[12];
  for (__m128& a : acc) a = _mm_setzero_ps();
  const __m128 x = _mm_set1_ps(1.0f), y = _mm_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#define LINNET_STEP(k) acc[k] = _mm_add_ps(acc[k], _mm_mul_ps(x, y));
    LINNET_TWELVE(LINNET_STEP)
#undef LINNET_STEP
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]));
  }
  __m128 total = acc[0];
  for (int k = 1; k < 12; ++k) total = _mm_add_ps(total, acc[k]);
  return _mm_cvtss_f32(total);
}

struct Peak {
  double flops_per_second = 0;
  const char* instruction = "";
};

// `flops` per loop iteration (12 instructions); best of three runs.
Peak measure_peak(int threads, float (*loop)(int64_t), double flops, const char* instruction) {
  std::vector<float> sinks(static_cast<size_t>(threads) * 16);
  double best = 1e30;
  const int64_t iterations = kIterations / 4;
  for (int run = 0; run < 3; ++run) {
    best = std::min(best, run_on_threads(threads, [&](int t) { sinks[static_cast<size_t>(t) * 16] += loop(iterations); }));
  }
  float check = 0;
  for (float sink : sinks) check += sink;
  if (check == 42.5f) std::fprintf(stderr, " ");
  return {flops * static_cast<double>(iterations) * threads / best, instruction};
}

Peak f32_peak(int threads) {
  if (__builtin_cpu_supports("avx512f")) return measure_peak(threads, fma512_loop, 12 * 32, "vfmadd231ps zmm");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return measure_peak(threads, fma256_loop, 12 * 16, "vfmadd231ps ymm");
  }
  return measure_peak(threads, sse2_loop, 12 * 8, "mulps+addps xmm");
}

Peak bf16_peak(int threads, const Peak& f32) {
  if (__builtin_cpu_supports("avx512bf16")) return measure_peak(threads, dpbf16_loop, 12 * 64, "vdpbf16ps zmm");
  return {f32.flops_per_second, "none (no AVX512-BF16): the f32 peak"};
}

}  // namespace

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
  const Bandwidth bandwidth = read_bandwidth(threads, buffer_mib << 20);
  const Peak f32 = f32_peak(threads);
  const Peak bf16 = bf16_peak(threads, f32);
  std::printf("threads %d\n", threads);
  std::printf("read_bandwidth_gbs %.2f\n", bandwidth.bytes_per_second / 1e9);
  std::printf("read_loads %s\n", bandwidth.loads);
  std::printf("f32_peak_gflops %.1f\n", f32.flops_per_second / 1e9);
  std::printf("f32_instruction %s\n", f32.instruction);
  std::printf("bf16_peak_gflops %.1f\n", bf16.flops_per_second / 1e9);
  std::printf("bf16_instruction %s\n", bf16.instruction);
  return 0;
}
