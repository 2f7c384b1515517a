// Measures the matrix products (linnet/tensor/gemm.hpp) against the
// machine measured in the same run (machine_limits.hpp: the arithmetic peak
// of vdpbf16ps and of f32 FMA on every thread, a multiply-add counting two
// flops, and the read bandwidth over a 1 GiB buffer):
//   - prefill products 512 x 4096 x 4096 and 512 x 14336 x 4096 (rows x
//     outputs x inner) as GFLOP/s and their ratio to the peak;
//   - decode products 1 x 4096 x 14336 (and 1 x 14336 x 4096): time over
//     the time to read the weight once at the measured bandwidth;
// for bf16 x bf16, f32 x f32 and f32 x bf16 (T=f32 on a bf16 checkpoint).
// Columns: `linnet` is gemm_bt as the interpreter calls it (oneDNN blocks
// for many rows when the build has oneDNN, our kernels otherwise); `ours`
// is our kernels alone (gemm::set_library_enabled(false)); `oneDNN whole`
// is one oneDNN matmul over the whole product with oneDNN's own threading
// (bf16 x bf16 and f32 only: oneDNN 2.6 has no f32 x bf16 matmul).
// With --cpu-time the products are timed by the process's CPU clock instead
// of the wall clock: with OMP_NUM_THREADS=1 a busy neighbour on a shared
// machine then does not inflate the figures.
// Usage: bench_gemm [--quick] [--cpu-time] [--isa scalar|avx2|avx512|avx512bf16] [--shape MxNxK]...
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "machine_limits.hpp"

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"

#ifdef LINNET_BENCH_DNNL
#include <dnnl.hpp>
#endif

namespace gemm = linnet::tensor::gemm;

namespace {

bool cpu_time = false;  // --cpu-time

// Seconds on the wall clock, or of the process's CPU time with --cpu-time.
double now_seconds() {
  if (!cpu_time) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec clock{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &clock);
  return static_cast<double>(clock.tv_sec) + static_cast<double>(clock.tv_nsec) * 1e-9;
}

double best_seconds(int runs, const std::function<void()>& body) {
  body();  // warm-up
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const double start = now_seconds();
    body();
    best = std::min(best, now_seconds() - start);
  }
  return best;
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
  struct Shape { int64_t m, n, k; };
  bool quick = false;
  std::vector<Shape> chosen;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    long m = 0, n = 0, k = 0;
    if (arg == "--quick") quick = true;
    else if (arg == "--cpu-time") cpu_time = true;
    else if (arg == "--isa" && i + 1 < argc) {
      const std::string name = argv[++i];
      bool known = false;
      for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx2, gemm::Isa::Avx512, gemm::Isa::Avx512Bf16}) {
        if (gemm::isa_name(isa) == name) {
          gemm::override_isa(isa);
          known = true;
        }
      }
      if (!known) {
        std::fprintf(stderr, "bench_gemm: unknown path %s\n", name.c_str());
        return 2;
      }
    } else if (arg == "--shape" && i + 1 < argc && std::sscanf(argv[i + 1], "%ldx%ldx%ld", &m, &n, &k) == 3 && m > 0 &&
               n > 0 && k > 0) {
      chosen.push_back({m, n, k});
      ++i;
    } else {
      std::fprintf(stderr, "usage: bench_gemm [--quick] [--cpu-time] [--isa scalar|avx2|avx512|avx512bf16] [--shape MxNxK]...\n");
      return 2;
    }
  }
  const int threads = omp_get_max_threads();
  linnet::tensor::set_num_threads(threads);
  const gemm::Isa best = gemm::best_supported_isa();
  std::printf("threads %d, our path %s (best supported %s); oneDNN for >= %ld rows: f32 %s, bf16 %s\n", threads,
              gemm::isa_name(gemm::active_isa()).c_str(), gemm::isa_name(best).c_str(), long(gemm::kLibraryMinRows),
              gemm::library_available() ? "yes" : "no", gemm::library_available_bf16() ? "yes" : "no");

  const linnet::bench::Peak f32_peak = linnet::bench::f32_peak(threads);
  const linnet::bench::Peak bf16_peak = linnet::bench::bf16_peak(threads, f32_peak);
  const double peak_f32 = f32_peak.flops_per_second / 1e9, peak_bf16 = bf16_peak.flops_per_second / 1e9;
  const double bandwidth = linnet::bench::read_bandwidth(threads, size_t{1} << 30).bytes_per_second / 1e9;
  std::printf("peak: bf16 %.0f GFLOP/s (%s), f32 %.0f GFLOP/s (%s); read bandwidth %.1f GB/s\n", peak_bf16,
              bf16_peak.instruction, peak_f32, f32_peak.instruction, bandwidth);

  std::vector<Shape> shapes = {{512, 4096, 4096}, {512, 14336, 4096}, {1, 4096, 14336}, {1, 14336, 4096}};
  if (quick) shapes = {{128, 4096, 4096}, {1, 4096, 14336}};
  if (!chosen.empty()) shapes = chosen;
  std::printf("%-17s %-18s %9s %8s %9s  %-6s %9s %9s  %s\n", "kind", "m x n x k", "linnet ms", "GFLOP/s", "vs limit",
              "engine", "ours ms", "vs limit", "oneDNN whole ms (GFLOP/s)");
  for (const Shape& s : shapes) {
    const Operands x = random_operands(s.m * s.k, 1);
    const Operands w = random_operands(s.n * s.k, 2);
    std::vector<float> y(static_cast<size_t>(s.m * s.n));
    // Enough runs that the best of them is likely a quiet one on a shared
    // machine (small products get more).
    const int runs = s.m == 1 ? 10 : std::clamp(static_cast<int>(3e10 / (2.0 * s.m * s.n * s.k)), 3, 30);
    for (Kind kind : {Kind::Bf16, Kind::F32, Kind::F32Bf16Weight}) {
      // Prefill: fraction of the arithmetic peak. Decode: time over the
      // time to read the weight once at the measured bandwidth.
      const double weight_bytes = double(s.n) * s.k * (kind == Kind::F32 ? 4 : 2);
      const double flops = 2.0 * s.m * s.n * s.k;
      auto versus = [&](double seconds) {
        char text[32];
        if (s.m == 1) std::snprintf(text, sizeof text, "%.2fx bw", seconds / (weight_bytes / (bandwidth * 1e9)));
        else std::snprintf(text, sizeof text, "%.0f%% peak", 100 * flops / seconds / 1e9 / (kind == Kind::Bf16 ? peak_bf16 : peak_f32));
        return std::string(text);
      };
      const bool library = gemm::library_enabled() && s.m >= gemm::kLibraryMinRows &&
                           (kind != Kind::Bf16 || gemm::library_available_bf16());
      const double seconds = time_ours(kind, s.m, s.n, s.k, x, w, y, runs);
      std::string ours_ms = "=", ours_versus = "";
      if (library) {
        gemm::set_library_enabled(false);
        const double ours = time_ours(kind, s.m, s.n, s.k, x, w, y, runs);
        gemm::set_library_enabled(true);
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", ours * 1e3);
        ours_ms = text;
        ours_versus = versus(ours);
      }
      char shape[40];
      std::snprintf(shape, sizeof shape, "%ld x %ld x %ld", long(s.m), long(s.n), long(s.k));
      std::string dnnl_column = "-";
#ifdef LINNET_BENCH_DNNL
      const double dnnl_seconds = time_dnnl(kind, s.m, s.n, s.k, x, w, y, runs);
      if (dnnl_seconds > 0) {
        char text[48];
        std::snprintf(text, sizeof text, "%.2f (%.0f)", dnnl_seconds * 1e3, flops / dnnl_seconds / 1e9);
        dnnl_column = text;
      }
#endif
      std::printf("%-17s %-18s %9.2f %8.1f %9s  %-6s %9s %9s  %s\n", kind_name(kind), shape, seconds * 1e3,
                  flops / seconds / 1e9, versus(seconds).c_str(), library ? "oneDNN" : "ours", ours_ms.c_str(),
                  ours_versus.c_str(), dnnl_column.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
