// The read bandwidth and arithmetic peak loops (machine_limits.hpp).
#include "machine_limits.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace linnet::bench {

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


// --- arithmetic peak -----------------------------------------------------------

constexpr int64_t kIterations = 10'000'000;

// Each loop keeps kChains independent accumulators in registers (more than
// the instruction's latency, 4-6 cycles, times its two ports) and hides one
// multiplicand from the compiler every iteration (the empty asm), so that it
// can neither merge the chains nor hoist the products out of the loop. The
// accumulators must stay in registers: a loop whose sums go through memory
// measures store forwarding, about a third of the peak.
constexpr int kChains = 24;

__attribute__((target("avx512f,avx512bf16"))) float dpbf16_loop(int64_t iterations) {
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3F80), b = (__m512bh)_mm512_set1_epi16(0x3A80);  // 1.0, 2^-10
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (__m512& c : acc) c = _mm512_dpbf16_ps(c, a, b);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < kChains; ++j) total = _mm512_add_ps(total, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

__attribute__((target("avx512f"))) float fma512_loop(int64_t iterations) {
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (__m512& c : acc) c = _mm512_fmadd_ps(a, b, c);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < kChains; ++j) total = _mm512_add_ps(total, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  return lanes[0];
}

// 16 ymm registers: 14 chains and the two multiplicands.
constexpr int kYmmChains = 14;

__attribute__((target("avx2,fma"))) float fma256_loop(int64_t iterations) {
  __m256 acc[kYmmChains];
#pragma GCC unroll 24
  for (int j = 0; j < kYmmChains; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  __m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (__m256& c : acc) c = _mm256_fmadd_ps(a, b, c);
    __asm__ volatile("" : "+x"(a));
  }
  __m256 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < kYmmChains; ++j) total = _mm256_add_ps(total, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  return lanes[0];
}

// Without FMA: 7 chains of a multiply then an add (14 xmm registers).
constexpr int kXmmChains = 7;

float sse2_loop(int64_t iterations) {
  __m128 acc[kXmmChains];
#pragma GCC unroll 24
  for (int j = 0; j < kXmmChains; ++j) acc[j] = _mm_set1_ps(static_cast<float>(j));
  __m128 a = _mm_set1_ps(1.0f), b = _mm_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (__m128& c : acc) c = _mm_add_ps(_mm_mul_ps(c, a), b);
    __asm__ volatile("" : "+x"(a));
  }
  __m128 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < kXmmChains; ++j) total = _mm_add_ps(total, acc[j]);
  return _mm_cvtss_f32(total);
}

// `flops` per loop iteration; best of three runs.
Peak measure_peak(int threads, float (*loop)(int64_t), double flops, const char* instruction) {
  std::vector<float> sinks(static_cast<size_t>(threads) * 16);
  double best = 1e30;
  const int64_t iterations = kIterations;
  for (int run = 0; run < 3; ++run) {
    best = std::min(best, run_on_threads(threads, [&](int t) { sinks[static_cast<size_t>(t) * 16] += loop(iterations); }));
  }
  float check = 0;
  for (float sink : sinks) check += sink;
  if (check == 42.5f) std::fprintf(stderr, " ");
  return {flops * static_cast<double>(iterations) * threads / best, instruction};
}

}  // namespace

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

Peak f32_peak(int threads) {
  if (__builtin_cpu_supports("avx512f")) return measure_peak(threads, fma512_loop, kChains * 32, "vfmadd231ps zmm");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return measure_peak(threads, fma256_loop, kYmmChains * 16, "vfmadd231ps ymm");
  }
  return measure_peak(threads, sse2_loop, kXmmChains * 8, "mulps+addps xmm");
}

Peak bf16_peak(int threads, const Peak& f32) {
  if (__builtin_cpu_supports("avx512bf16")) return measure_peak(threads, dpbf16_loop, kChains * 64, "vdpbf16ps zmm");
  return {f32.flops_per_second, "none (no AVX512-BF16): the f32 peak"};
}

}  // namespace linnet::bench
