// Kernel-path choice and the split of a product over threads. The kernels
// themselves live in gemm_<path>.cpp, each compiled for its instruction set
// and entered only when the CPU reports it (__builtin_cpu_supports), so the
// default build runs on any x86-64. Products of many rows go to oneDNN
// (gemm_dnnl.cpp) when the build has it, in blocks of a fixed grid.
#include "linnet/tensor/gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <new>
#include <vector>

#include "gemm_internal.hpp"
#include "linnet/tensor/error.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::tensor::gemm {

namespace {

// The least multiply-adds worth threads for a product: below about 2M a
// product takes tens of microseconds on one thread, comparable to waking
// the other threads on a busy machine.
constexpr int64_t kParallelProductWork = int64_t{1} << 21;

Isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return Isa::Avx512Bf16;
  if (avx512) return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
  return Isa::Scalar;
}

// -1: no override; otherwise an Isa.
std::atomic<int> isa_override{-1};

// Whether products of many rows may go to oneDNN (when the build has it).
std::atomic<bool> library_wanted{true};

#ifdef LINNET_WITH_DNNL
// The grid of a library product: blocks of kLibraryBlockRows rows by
// kLibraryBlockOutputs outputs, from row 0 and output 0, the last ones
// smaller. It depends on the product's shape only, never on the thread
// count, and each block is one single-threaded oneDNN matmul, so results
// are the same with any number of threads. Chosen by measurement
// (scripts/bench_gemm, docs/performance.md): oneDNN packs each block's
// weights, a cost of 1/rows per multiply-add, and a 4096-wide layer still
// has 32 blocks to share between threads; 512 outputs per block ran slower.
constexpr int64_t kLibraryBlockRows = 512;
constexpr int64_t kLibraryBlockOutputs = 128;

bool library_takes(int64_t rows, bool x_bf16, bool w_bf16) {
  if (rows < kLibraryMinRows || !library_wanted.load(std::memory_order_relaxed)) return false;
  return x_bf16 && w_bf16 ? detail::library_multiplies_bf16() : detail::library_multiplies_f32();
}

// A many-row product through oneDNN, block by block of the grid over rows x
// outputs [first_output, last_output); the blocks go to the threads when
// `threaded` (any split gives the same bits: each block is computed whole,
// on one thread).
void library_product(const detail::Problem& problem, int64_t rows, int64_t first_output, int64_t last_output,
                     bool threaded) {
  const int64_t row_tasks = (rows + kLibraryBlockRows - 1) / kLibraryBlockRows;
  const int64_t tasks = row_tasks * ((last_output - first_output + kLibraryBlockOutputs - 1) / kLibraryBlockOutputs);
  // An exception must not leave a parallel region: the first is kept and
  // thrown after it.
  std::exception_ptr failure;
  // Consecutive tasks share a block of outputs (rows vary fastest), and
  // with one row block all tasks share it, so a thread that runs more than
  // one of them reuses the bf16 weights or rows it widened (library_block),
  // keyed by this product's number.
  static std::atomic<uint64_t> products{0};
  const uint64_t product = products.fetch_add(1, std::memory_order_relaxed) + 1;
#pragma omp parallel for schedule(dynamic) if (threaded && tasks > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t row_begin = (task % row_tasks) * kLibraryBlockRows;
    const int64_t out_begin = first_output + (task / row_tasks) * kLibraryBlockOutputs;
    try {
      detail::library_block(problem, product, row_begin, std::min(rows, row_begin + kLibraryBlockRows), out_begin,
                            std::min(last_output, out_begin + kLibraryBlockOutputs));
    } catch (...) {
#pragma omp critical(linnet_gemm_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}
#endif

detail::BlockFunction block_for(Isa isa, bool x_bf16, bool w_bf16) {
  switch (isa) {
    case Isa::Avx512Bf16:
      return x_bf16 && w_bf16 ? &detail::block_avx512bf16 : &detail::block_avx512;
    case Isa::Avx512:
      return &detail::block_avx512;
    case Isa::Avx2:
      return &detail::block_avx2;
    case Isa::Scalar:
      break;
  }
  return &detail::block_scalar;
}

detail::Problem make_problem(int64_t inner, Operand x, Operand w, Destination y) {
  detail::Problem problem{inner, x.data, x.stride, x.bf16, w.data, w.stride, w.bf16, nullptr, y.stride, nullptr, y.bias};
  if (y.bf16) problem.rounded_y = static_cast<uint16_t*>(y.data);
  else problem.y = static_cast<float*>(y.data);
  return problem;
}

// The calling thread's scratch for the kernels' partial sums, allocated on
// its first product and reused by every later one.
void* thread_scratch() {
  struct Buffer {
    void* data = ::operator new(detail::kScratchBytes, std::align_val_t(detail::kScratchAlignment));
    ~Buffer() { ::operator delete(data, std::align_val_t(detail::kScratchAlignment)); }
  };
  thread_local Buffer buffer;
  return buffer.data;
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

const void* element_at(const void* data, bool bf16, int64_t offset) {
  return static_cast<const char*>(data) + offset * (bf16 ? 2 : 4);
}

// One block of our kernels, rows [row_begin, row_end) by outputs
// [out_begin, out_end). For a bf16 destination or a bias the kernel writes
// the block's f32 sums into the calling thread's panel, stored from there
// (store_panel); it reads the same operand rows at the same addresses, and
// each output is its own dot product, so no sum changes.
void run_block(detail::BlockFunction block, const detail::Problem& p, int64_t row_begin, int64_t row_end,
               int64_t out_begin, int64_t out_end) {
  if (p.rounded_y == nullptr && p.bias == nullptr) {
    block(p, row_begin, row_end, out_begin, out_end, thread_scratch());
    return;
  }
  const int64_t rows = row_end - row_begin, outputs = out_end - out_begin;
  thread_local std::vector<float> panel;
  panel.resize(static_cast<size_t>(rows * outputs));
  detail::Problem block_problem = p;
  block_problem.x = element_at(p.x, p.x_bf16, row_begin * p.x_stride);
  block_problem.w = element_at(p.w, p.w_bf16, out_begin * p.w_stride);
  block_problem.y = panel.data();
  block_problem.y_stride = outputs;
  block_problem.rounded_y = nullptr;
  block_problem.bias = nullptr;
  block(block_problem, 0, rows, 0, outputs, thread_scratch());
  detail::store_panel(p, panel.data(), outputs, rows, outputs, row_begin, out_begin);
}

// Outputs per block when the calling thread runs a whole product through
// its panel (a bf16 destination or a bias): bounds the panel (a 32768-entry vocabulary row
// would otherwise need one of that width per row).
constexpr int64_t kRoundedBlockOutputs = 512;

// A product of at most kFewRows rows (a decode step's) streams its weights
// once, in units of kFewRowsUnit outputs (whole tiles of every path) that
// the threads take in guided order: large first takes, then smaller ones,
// so that the threads finish together. With equal tasks of about an eighth
// of a thread's share, the thread that finished first waited on the
// other's last task at the end of every product: 6.5% of the main thread's
// samples sat in OpenMP's wait in a Mistral-width decode (the other
// thread's 12.6% there also covers the interpreter's serial work), and
// bench_decode at Mistral's widths ran at 1.22-1.43x the memory-bound limit
// against 1.15-1.21x with this split (three alternated runs; whole decode
// steps show no difference on the development VM: docs/performance.md).
constexpr int64_t kFewRows = 4;
constexpr int64_t kFewRowsUnit = 48;

}  // namespace

Isa best_supported_isa() {
  static const Isa best = detect_isa();
  return best;
}

bool isa_supported(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(best_supported_isa()); }

Isa active_isa() {
  const int forced = isa_override.load(std::memory_order_relaxed);
  return forced < 0 ? best_supported_isa() : static_cast<Isa>(forced);
}

void override_isa(std::optional<Isa> isa) {
  if (isa && !isa_supported(*isa)) {
    throw TensorError(ErrorKind::InvalidArgument,
                      "matrix product path " + isa_name(*isa) + " is not supported by this CPU (best: " +
                          isa_name(best_supported_isa()) + ")");
  }
  isa_override.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

std::string isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512Bf16:
      return "avx512bf16";
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    case Isa::Scalar:
      break;
  }
  return "scalar";
}

bool library_available() {
#ifdef LINNET_WITH_DNNL
  return detail::library_multiplies_f32();
#else
  return false;
#endif
}

bool library_available_bf16() {
#ifdef LINNET_WITH_DNNL
  return detail::library_multiplies_bf16();
#else
  return false;
#endif
}

void set_library_enabled(bool enabled) { library_wanted.store(enabled, std::memory_order_relaxed); }

bool library_enabled() { return library_wanted.load(std::memory_order_relaxed) && library_available(); }

int64_t output_alignment(int64_t rows, bool x_bf16, bool w_bf16) {
#ifdef LINNET_WITH_DNNL
  if (library_takes(rows, x_bf16, w_bf16)) return kLibraryBlockOutputs;
#else
  (void)rows, (void)x_bf16, (void)w_bf16;
#endif
  return 1;
}

void gemm_bt_serial(int64_t rows, int64_t first_output, int64_t last_output, int64_t inner, Operand x, Operand w,
                    Destination y) {
  if (rows <= 0 || last_output <= first_output) return;
  if (inner <= 0) {
    // Empty sums: zeros (plus the bias), stored as any result is.
    const detail::Problem problem = make_problem(inner, x, w, y);
    const std::vector<float> zeros(static_cast<size_t>(last_output - first_output), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      detail::store_panel(problem, zeros.data(), 0, 1, last_output - first_output, r, first_output);
    }
    return;
  }
  const detail::Problem problem = make_problem(inner, x, w, y);
#ifdef LINNET_WITH_DNNL
  if (library_takes(rows, x.bf16, w.bf16)) {
    library_product(problem, rows, first_output, last_output, false);
    return;
  }
#endif
  const detail::BlockFunction block = block_for(active_isa(), x.bf16, w.bf16);
  if (problem.rounded_y == nullptr && problem.bias == nullptr) {
    run_block(block, problem, 0, rows, first_output, last_output);
    return;
  }
  for (int64_t out_begin = first_output; out_begin < last_output; out_begin += kRoundedBlockOutputs) {
    run_block(block, problem, 0, rows, out_begin, std::min(last_output, out_begin + kRoundedBlockOutputs));
  }
}

void gemm_bt(int64_t rows, int64_t outputs, int64_t inner, Operand x, Operand w, Destination y) {
  if (rows <= 0 || outputs <= 0) return;
  const int64_t work = rows * outputs * std::max<int64_t>(inner, 1);
  if (inner <= 0 || work < kParallelProductWork || !worth_threads(work)) {
    gemm_bt_serial(rows, 0, outputs, inner, x, w, y);
    return;
  }
  const detail::Problem problem = make_problem(inner, x, w, y);
#ifdef LINNET_WITH_DNNL
  if (library_takes(rows, x.bf16, w.bf16)) {
    library_product(problem, rows, 0, outputs, true);
    return;
  }
#endif
  const detail::BlockFunction block = block_for(active_isa(), x.bf16, w.bf16);
  if (rows <= kFewRows) {  // each output computed whole by one unit: no result depends on the split
    const int64_t units = (outputs + kFewRowsUnit - 1) / kFewRowsUnit;
#pragma omp parallel for schedule(guided)
    for (int64_t unit = 0; unit < units; ++unit) {
      run_block(block, problem, 0, rows, unit * kFewRowsUnit, std::min(outputs, (unit + 1) * kFewRowsUnit));
    }
    return;
  }
  // Tasks are blocks of outputs (a multiple of every path's tile width, 12),
  // about eight per thread for balance; rows are split too when there are
  // too few outputs to go round. Every output is computed whole by one task,
  // so the split changes no result.
  const int64_t threads = omp_get_max_threads();
  const int64_t output_chunk = std::max<int64_t>(12, round_up((outputs + threads * 8 - 1) / (threads * 8), 12));
  const int64_t output_tasks = (outputs + output_chunk - 1) / output_chunk;
  const int64_t row_chunk =
      output_tasks >= threads * 4 ? rows : std::max<int64_t>(12, round_up((rows + threads * 4 - 1) / (threads * 4), 12));
  const int64_t row_tasks = (rows + row_chunk - 1) / row_chunk;
  const int64_t tasks = output_tasks * row_tasks;
#pragma omp parallel for schedule(dynamic)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t out_begin = (task / row_tasks) * output_chunk;
    const int64_t row_begin = (task % row_tasks) * row_chunk;
    run_block(block, problem, row_begin, std::min(rows, row_begin + row_chunk), out_begin,
              std::min(outputs, out_begin + output_chunk));
  }
}

namespace detail {

void store_panel(const Problem& p, const float* panel, int64_t panel_stride, int64_t rows, int64_t count,
                 int64_t row_begin, int64_t out_begin) {
  const float* bias = p.bias != nullptr ? p.bias + out_begin : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const float* sums = panel + r * panel_stride;
    const int64_t at = (row_begin + r) * p.y_stride + out_begin;
    if (p.rounded_y != nullptr) {
      uint16_t* target = p.rounded_y + at;
      if (bias != nullptr) {
        for (int64_t i = 0; i < count; ++i) target[i] = float_to_bf16_bits(sums[i] + bias[i]);
      } else {
        for (int64_t i = 0; i < count; ++i) target[i] = float_to_bf16_bits(sums[i]);
      }
    } else {
      float* target = p.y + at;
      if (bias != nullptr) {
        for (int64_t i = 0; i < count; ++i) target[i] = sums[i] + bias[i];
      } else {
        std::copy_n(sums, count, target);
      }
    }
  }
}

}  // namespace detail

}  // namespace linnet::tensor::gemm
