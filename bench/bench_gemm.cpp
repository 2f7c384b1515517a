// Measures the matrix-product kernels (linnet/tensor/gemm.hpp) against the
// machine measured in the same run:
//   - arithmetic peak: a register-only loop of the product instruction on
//     every thread (vdpbf16ps for bf16, f32 FMA otherwise; the widest the
//     CPU has), in GFLOP/s (a multiply-add is 2 flops);
//   - read bandwidth: every thread summing its part of a 1 GiB buffer;
//   - prefill products 512 x 4096 x 4096 and 512 x 14336 x 4096 (rows x
//     outputs x inner) as GFLOP/s and their ratio to the peak;
//   - decode products 1 x 4096 x 14336 (and 1 x 14336 x 4096): weight bytes
//     per second and time over the bandwidth-bound limit;
// for bf16 x bf16, f32 x f32 and f32 x bf16 (T=f32 on a bf16 checkpoint),
// with oneDNN's matmul beside them when the build found it.
// Usage: bench_gemm [--quick] [--isa scalar|avx2|avx512|avx512bf16]
// g++ 12's AVX-512 intrinsics trip -Wuninitialized in their own header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"

#ifdef LINNET_BENCH_DNNL
#include <dnnl.hpp>
#endif

namespace gemm = linnet::tensor::gemm;

namespace {

double best_seconds(int runs, const std::function<void()>& body) {
  body();  // warm-up
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// --- The machine ------------------------------------------------------------

constexpr long kPeakIterations = 20'000'000;

// 24 independent chains of the instruction (more than latency x
// throughput on current cores), so its latency is hidden.
__attribute__((target("avx512f,avx512bf16"))) float dpbf16_loop(long iterations) {
  __m512 acc[24];
// Distinct starting values, so the compiler cannot merge the chains.
#pragma GCC unroll 24
  for (int j = 0; j < 24; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3c00);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (auto& c : acc) c = _mm512_dpbf16_ps(c, a, b);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < 24; ++j) total = _mm512_add_ps(total, acc[j]);
  return _mm512_reduce_add_ps(total);
}

__attribute__((target("avx512f"))) float fma512_loop(long iterations) {
  __m512 acc[24];
// Distinct starting values, so the compiler cannot merge the chains.
#pragma GCC unroll 24
  for (int j = 0; j < 24; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (auto& c : acc) c = _mm512_fmadd_ps(a, b, c);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < 24; ++j) total = _mm512_add_ps(total, acc[j]);
  return _mm512_reduce_add_ps(total);
}

__attribute__((target("avx2,fma"))) float fma256_loop(long iterations) {
  __m256 acc[14];
#pragma GCC unroll 24
  for (int j = 0; j < 14; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  __m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 24
    for (auto& c : acc) c = _mm256_fmadd_ps(a, b, c);
    __asm__ volatile("" : "+x"(a));
  }
  __m256 total = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < 14; ++j) total = _mm256_add_ps(total, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  return lanes[0];
}

// GFLOP/s of `loop` run on every thread; flops_per_iteration per thread.
double peak_gflops(float (*loop)(long), double flops_per_iteration) {
  volatile float sink = 0;
  const int threads = omp_get_max_threads();
  const double seconds = best_seconds(2, [&] {
#pragma omp parallel
    sink = sink + loop(kPeakIterations);
  });
  return flops_per_iteration * kPeakIterations * threads / seconds / 1e9;
}

// Sums `count` floats with 8 independent vector sums (AVX2 loads, which
// every CPU this bench measures has; wide enough to be memory-bound).
__attribute__((target("avx2"))) float sum_floats(const float* p, int64_t count) {
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t i = 0; i + 64 <= count; i += 64)
    for (int j = 0; j < 8; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_loadu_ps(p + i + 8 * j));
  for (int j = 1; j < 8; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0];
}

// GB/s of every thread reading its share of the buffer.
double read_bandwidth(const std::vector<float>& buffer) {
  volatile float sink = 0;
  const int64_t count = static_cast<int64_t>(buffer.size());
  const double seconds = best_seconds(3, [&] {
#pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads(), share = count / threads / 64 * 64;
      sink = sink + sum_floats(buffer.data() + omp_get_thread_num() * share, share);
    }
  });
  return static_cast<double>(count) * sizeof(float) / seconds / 1e9;
}

// --- Products ---------------------------------------------------------------

struct Operands {
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
};

Operands random_operands(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  Operands o;
  o.f32.resize(static_cast<size_t>(count));
  o.bf16.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    o.bf16[static_cast<size_t>(i)] = linnet::tensor::float_to_bf16_bits(values(rng));
    o.f32[static_cast<size_t>(i)] = linnet::tensor::bf16_bits_to_float(o.bf16[static_cast<size_t>(i)]);
  }
  return o;
}

enum class Kind { Bf16, F32, F32Bf16Weight };
const char* kind_name(Kind kind) {
  return kind == Kind::Bf16 ? "bf16 x bf16" : kind == Kind::F32 ? "f32 x f32" : "f32 x bf16 weight";
}

double time_ours(Kind kind, int64_t m, int64_t n, int64_t k, const Operands& x, const Operands& w,
                 std::vector<float>& y, int runs) {
  const gemm::Operand xo = kind == Kind::Bf16 ? gemm::Operand{x.bf16.data(), true, k} : gemm::Operand{x.f32.data(), false, k};
  const gemm::Operand wo = kind == Kind::F32 ? gemm::Operand{w.f32.data(), false, k} : gemm::Operand{w.bf16.data(), true, k};
  return best_seconds(runs, [&] { gemm::gemm_bt(m, n, k, xo, wo, y.data(), n); });
}

#ifdef LINNET_BENCH_DNNL
// oneDNN matmul: src [M, K], weights [K, N] stored as [N, K] (tag ba), dst f32.
double time_dnnl(Kind kind, int64_t m, int64_t n, int64_t k, const Operands& x, const Operands& w,
                 std::vector<float>& y, int runs) {
  using namespace dnnl;
  static engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const auto src_type = kind == Kind::Bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const auto wei_type = kind == Kind::F32 ? memory::data_type::f32 : memory::data_type::bf16;
  if (kind == Kind::F32Bf16Weight) return -1;  // oneDNN 2.6 has no f32 x bf16 matmul
  memory::desc src_md({m, k}, src_type, memory::format_tag::ab);
  memory::desc wei_md({k, n}, wei_type, memory::format_tag::ba);
  memory::desc dst_md({m, n}, memory::data_type::f32, memory::format_tag::ab);
  matmul::primitive_desc pd(matmul::desc(src_md, wei_md, dst_md), eng);
  matmul product(pd);
  memory src(src_md, eng, kind == Kind::Bf16 ? (void*)x.bf16.data() : (void*)x.f32.data());
  memory wei(wei_md, eng, kind == Kind::F32 ? (void*)w.f32.data() : (void*)w.bf16.data());
  memory dst(dst_md, eng, y.data());
  return best_seconds(runs, [&] {
    product.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  });
}
#endif

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    else if (arg == "--isa" && i + 1 < argc) {
      const std::string name = argv[++i];
      for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx2, gemm::Isa::Avx512, gemm::Isa::Avx512Bf16}) {
        if (gemm::isa_name(isa) == name) gemm::override_isa(isa);
      }
    } else {
      std::fprintf(stderr, "usage: bench_gemm [--quick] [--isa scalar|avx2|avx512|avx512bf16]\n");
      return 2;
    }
  }
  const int threads = omp_get_max_threads();
  linnet::tensor::set_num_threads(threads);
  const gemm::Isa best = gemm::best_supported_isa();
  std::printf("threads %d, product path %s (best supported %s)\n", threads, gemm::isa_name(gemm::active_isa()).c_str(),
              gemm::isa_name(best).c_str());

  double peak_bf16 = 0, peak_f32 = 0;
  if (best == gemm::Isa::Avx512Bf16) peak_bf16 = peak_gflops(&dpbf16_loop, 24.0 * 16 * 4);
  if (best >= gemm::Isa::Avx512) peak_f32 = peak_gflops(&fma512_loop, 24.0 * 16 * 2);
  else if (best == gemm::Isa::Avx2) peak_f32 = peak_gflops(&fma256_loop, 14.0 * 8 * 2);
  if (peak_bf16 == 0) peak_bf16 = peak_f32;  // bf16 products run as f32 FMA without AVX512-BF16
  const double bandwidth = read_bandwidth(std::vector<float>(size_t{1} << 28, 1.0f));
  std::printf("peak: vdpbf16ps %.0f GFLOP/s, f32 FMA %.0f GFLOP/s; read bandwidth %.1f GB/s\n", peak_bf16, peak_f32,
              bandwidth);

  struct Shape { int64_t m, n, k; };
  std::vector<Shape> shapes = {{512, 4096, 4096}, {512, 14336, 4096}, {1, 4096, 14336}, {1, 14336, 4096}};
  if (quick) shapes = {{128, 4096, 4096}, {1, 4096, 14336}};
  std::printf("%-18s %-20s %10s %10s %10s %s\n", "kind", "m x n x k", "ms", "GFLOP/s", "vs limit", "oneDNN ms (GFLOP/s)");
  for (const Shape& s : shapes) {
    const Operands x = random_operands(s.m * s.k, 1);
    const Operands w = random_operands(s.n * s.k, 2);
    std::vector<float> y(static_cast<size_t>(s.m * s.n));
    const int runs = s.m == 1 ? 10 : quick ? 6 : 3;
    for (Kind kind : {Kind::Bf16, Kind::F32, Kind::F32Bf16Weight}) {
      const double seconds = time_ours(kind, s.m, s.n, s.k, x, w, y, runs);
      const double gflops = 2.0 * s.m * s.n * s.k / seconds / 1e9;
      // Prefill: fraction of the arithmetic peak. Decode: time over the
      // time to read the weight once at the measured bandwidth.
      const double weight_bytes = double(s.n) * s.k * (kind == Kind::F32 ? 4 : 2);
      char versus[32];
      if (s.m == 1) std::snprintf(versus, sizeof versus, "%.2fx bw", seconds / (weight_bytes / (bandwidth * 1e9)));
      else std::snprintf(versus, sizeof versus, "%.0f%% peak", 100 * gflops / (kind == Kind::Bf16 ? peak_bf16 : peak_f32));
      char shape[40];
      std::snprintf(shape, sizeof shape, "%ld x %ld x %ld", long(s.m), long(s.n), long(s.k));
      std::string dnnl_column = "-";
#ifdef LINNET_BENCH_DNNL
      const double dnnl_seconds = time_dnnl(kind, s.m, s.n, s.k, x, w, y, runs);
      if (dnnl_seconds > 0) {
        char text[48];
        std::snprintf(text, sizeof text, "%.2f (%.0f)", dnnl_seconds * 1e3, 2.0 * s.m * s.n * s.k / dnnl_seconds / 1e9);
        dnnl_column = text;
      }
#endif
      std::printf("%-18s %-20s %10.2f %10.1f %10s %s\n", kind_name(kind), shape, seconds * 1e3, gflops, versus,
                  dnnl_column.c_str());
    }
  }
  return 0;
}
