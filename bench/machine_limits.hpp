// The machine's own limits, measured in the same run as the timings they
// are compared with (scripts/bench through machine_peak, scripts/bench_gemm
// through bench_gemm), so that ratios compare like with like:
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
#pragma once

#include <cstddef>

namespace linnet::bench {

struct Bandwidth {
  double bytes_per_second = 0;
  const char* loads = "";  // the vector loads used: avx512, avx2 or sse2
};

struct Peak {
  double flops_per_second = 0;  // a multiply-add counts two
  const char* instruction = "";
};

// Read bandwidth of `threads` threads over a buffer of `buffer_bytes`.
// Exits with a message if the buffer cannot be allocated.
Bandwidth read_bandwidth(int threads, size_t buffer_bytes);
Peak f32_peak(int threads);
// vdpbf16ps where the CPU has it, else the f32 peak given.
Peak bf16_peak(int threads, const Peak& f32);

}  // namespace linnet::bench
