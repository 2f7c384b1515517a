// Blocks of many-row products through oneDNN's matmul (Debian libdnnl-dev),
// whose packed brgemm kernels reach about twice the rate of our in-place
// tiles on prompts (docs/performance.md, "Matrix products"). Built only when
// CMake's LINNET_DNNL finds the library; gemm.cpp decides which products
// come here and splits them into blocks.
//
// Results must not depend on the thread count. oneDNN sizes its work split
// (and, for some shapes, splits the inner dimension) by the OpenMP thread
// count it sees when a primitive is made, so every primitive here is made
// and run with that count set to 1 for the calling task (OneThread below):
// one block is one single-threaded matmul whose summation order depends on
// the block's shape and strides only. gemm.cpp runs the blocks in its own
// parallel loop, over a grid that does not depend on the thread count.
#include <omp.h>

#include <dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "elementwise_spans.hpp"
#include "gemm_internal.hpp"
#include "linnet/tensor/elementwise_path.hpp"
#include "linnet/tensor/error.hpp"

namespace linnet::tensor::gemm::detail {

namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Sets the OpenMP thread count of the calling task to 1 while alive (inside
// a parallel region this changes the calling thread's setting only).
class OneThread {
 public:
  OneThread() : before_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(before_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int before_;
};

// A block's matmul: its shape, operand type and row strides.
struct Shape {
  bool bf16 = false;
  int64_t rows = 0, outputs = 0, inner = 0;
  int64_t x_stride = 0, w_stride = 0, y_stride = 0;
  bool operator==(const Shape&) const = default;
};

struct ShapeHash {
  size_t operator()(const Shape& s) const {
    size_t h = s.bf16 ? 0x9e3779b97f4a7c15u : 0;
    for (int64_t v : {s.rows, s.outputs, s.inner, s.x_stride, s.w_stride, s.y_stride}) {
      h ^= std::hash<int64_t>{}(v) + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    }
    return h;
  }
};

struct Matmul {
  dnnl::matmul primitive;
  memory::desc x, w, y, scratch;
  std::string implementation;  // oneDNN's name for the kernel it chose ("brg:avx512_core_bf16", "ref:any", ...)
};

// x [rows, inner] row-major, w given as [outputs, inner] row-major (oneDNN's
// weights [inner, outputs] with strides {1, w_stride}), y [rows, outputs] f32.
// Numerics strict: no down-conversion of f32 operands (TF32, bf16) whatever
// ONEDNN_DEFAULT_FPMATH_MODE says.
std::shared_ptr<Matmul> make_matmul(const Shape& s) {
  const OneThread one_thread;
  const auto type = s.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  auto made = std::make_shared<Matmul>();
  made->x = memory::desc({s.rows, s.inner}, type, memory::dims{s.x_stride, 1});
  made->w = memory::desc({s.inner, s.outputs}, type, memory::dims{1, s.w_stride});
  made->y = memory::desc({s.rows, s.outputs}, memory::data_type::f32, memory::dims{s.y_stride, 1});
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attributes.set_fpmath_mode(dnnl::fpmath_mode::strict);
  const dnnl::matmul::primitive_desc description(dnnl::matmul::desc(made->x, made->w, made->y), attributes,
                                                 cpu_engine());
  made->implementation = description.impl_info_str();
  made->scratch = description.scratchpad_desc();
  made->primitive = dnnl::matmul(description);
  return made;
}

// The matmul for a shape, made once and kept: making one costs a JIT
// compilation (milliseconds). Shared by all threads (oneDNN primitives may
// run concurrently; each call brings its own scratchpad). There are a few
// shapes per weight shape and prompt length; past kKeptShapes the kept ones
// are let go (a call still running holds its own reference).
constexpr size_t kKeptShapes = 256;

std::shared_ptr<const Matmul> matmul_for(const Shape& shape) {
  static std::mutex mutex;
  static std::unordered_map<Shape, std::shared_ptr<const Matmul>, ShapeHash> made;
  const std::lock_guard lock(mutex);
  auto found = made.find(shape);
  if (found != made.end()) return found->second;
  if (made.size() >= kKeptShapes) made.clear();
  return made.emplace(shape, make_matmul(shape)).first->second;
}

// A per-thread buffer that grows to the largest size asked of it and is
// kept for the thread's later calls (no allocation per product).
class ThreadBuffer {
 public:
  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;
  ~ThreadBuffer() { release(); }
  void* at_least(size_t bytes) {
    if (bytes > size_) {
      release();
      data_ = ::operator new(bytes, std::align_val_t(64));
      size_ = bytes;
    }
    return data_;
  }

 private:
  void release() {
    if (data_) ::operator delete(data_, std::align_val_t(64));
    data_ = nullptr;
    size_ = 0;
  }
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The bf16 -> f32 cast span of the widest elementwise path this CPU runs
// (elementwise_spans: baseline, AVX2 or AVX-512, chosen at run time from
// the CPU's features, so the default build runs on any x86-64). Widening is
// a 16-bit shift, exact on every path; the path is the CPU's best one, not
// an override a test sets for the elementwise operators.
linnet::tensor::detail::UnarySpan bf16_widening() {
  static const linnet::tensor::detail::UnarySpan span =
      linnet::tensor::detail::cast_spans_on(best_elementwise_path(), DType::BF16, DType::F32).dense;
  return span;
}

// `rows` rows of bf16 bits `stride` apart, widened to f32 at the same
// stride (so the f32 matmul has the strides of an f32 operand, and the same
// bits as for operands widened before the product). Widening is exact. At
// T=f32 on a bf16 checkpoint this runs on every weight block of every
// product, so it takes the vector span (a scalar loop here was about 14% of
// a Mistral-width prefill; docs/performance.md).
const float* widen_rows(const uint16_t* bits, int64_t rows, int64_t count, int64_t stride, ThreadBuffer& buffer) {
  auto* panel = static_cast<float*>(buffer.at_least(static_cast<size_t>(rows * stride) * sizeof(float)));
  const linnet::tensor::detail::UnarySpan widen = bf16_widening();
  for (int64_t r = 0; r < rows; ++r) widen(panel + r * stride, bits + r * stride, count);
  return panel;
}

// Whether oneDNN multiplies this type with a vector kernel here: a probe
// matmul's implementation is not the reference one ("ref:...").
bool vector_kernel_for(bool bf16) {
  try {
    const Shape probe{bf16, 64, 64, 64, 64, 64, 64};
    return matmul_for(probe)->implementation.rfind("ref", 0) != 0;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The rows of one operand (x rows or weight rows) a thread widened last:
// which product and which rows of that operand the panel holds (product 0:
// none). Within one product the operands do not change, so the panel is
// reused while the key matches; every product has its own number, so a
// later product over the same (possibly rewritten) buffer widens anew.
class WidenedPanel {
 public:
  const float* rows_of(uint64_t product, const uint16_t* bits, int64_t begin, int64_t end, int64_t count,
                       int64_t stride) {
    if (product_ != product || begin_ != begin || end_ != end) {
      product_ = 0;  // stays "none" if widening throws
      data_ = widen_rows(bits + begin * stride, end - begin, count, stride, panel_);
      product_ = product;
      begin_ = begin;
      end_ = end;
    }
    return data_;
  }

 private:
  ThreadBuffer panel_;
  const float* data_ = nullptr;
  uint64_t product_ = 0;
  int64_t begin_ = 0, end_ = 0;
};

}  // namespace

bool library_multiplies_f32() {
  static const bool vector = vector_kernel_for(false);
  return vector;
}

bool library_multiplies_bf16() {
  static const bool vector = vector_kernel_for(true);
  return vector;
}

void library_block(const Problem& p, uint64_t product, int64_t row_begin, int64_t row_end, int64_t out_begin,
                   int64_t out_end) {
  thread_local ThreadBuffer scratch;
  thread_local WidenedPanel widened_x, widened_w;
  const bool bf16 = p.x_bf16 && p.w_bf16;
  const int64_t rows = row_end - row_begin, outputs = out_end - out_begin;
  const void* x = nullptr;
  const void* w = nullptr;
  if (bf16) {
    x = static_cast<const uint16_t*>(p.x) + row_begin * p.x_stride;
    w = static_cast<const uint16_t*>(p.w) + out_begin * p.w_stride;
  } else {
    // A bf16 operand of an f32 product is widened block by block, once per
    // product and thread: consecutive blocks share their outputs (rows vary
    // fastest, gemm.cpp), and a prompt of at most 512 rows is one row block
    // shared by all of them.
    x = p.x_bf16 ? widened_x.rows_of(product, static_cast<const uint16_t*>(p.x), row_begin, row_end, p.inner, p.x_stride)
                 : static_cast<const float*>(p.x) + row_begin * p.x_stride;
    w = p.w_bf16 ? widened_w.rows_of(product, static_cast<const uint16_t*>(p.w), out_begin, out_end, p.inner, p.w_stride)
                 : static_cast<const float*>(p.w) + out_begin * p.w_stride;
  }
  // oneDNN 2.6 runs its brgemm kernels (A read in place, only the block's
  // weights packed) only for a dense destination; for a strided one it
  // falls back to its older JIT gemm, which packs the block's 512 x rows
  // again for every block of outputs, 10-20% more CPU time per product
  // (docs/performance.md, "oneDNN for many rows"). So a block that is not
  // the whole width of y is written to a dense per-thread panel and copied
  // out (store_panel: the bias added, rounded to bf16 for a bf16
  // destination). Its sums then depend on the block's shape only, as before.
  thread_local ThreadBuffer y_panel;
  const bool dense = p.rounded_y == nullptr && p.bias == nullptr && p.y_stride == outputs;
  float* y_block = dense ? p.y + row_begin * p.y_stride + out_begin
                         : static_cast<float*>(y_panel.at_least(static_cast<size_t>(rows * outputs) * sizeof(float)));
  try {
    const OneThread one_thread;
    const std::shared_ptr<const Matmul> held = matmul_for(Shape{bf16, rows, outputs, p.inner, p.x_stride, p.w_stride, outputs});
    const Matmul& matmul = *held;
    dnnl::engine& engine = cpu_engine();
    thread_local dnnl::stream stream(cpu_engine());
    // oneDNN's memory objects only point at our buffers; it writes y only.
    const memory x_memory(matmul.x, engine, const_cast<void*>(x));
    const memory w_memory(matmul.w, engine, const_cast<void*>(w));
    const memory y_memory(matmul.y, engine, y_block);
    const memory scratch_memory(matmul.scratch, engine, scratch.at_least(std::max<size_t>(matmul.scratch.get_size(), 64)));
    matmul.primitive.execute(stream, {{DNNL_ARG_SRC, x_memory},
                                      {DNNL_ARG_WEIGHTS, w_memory},
                                      {DNNL_ARG_DST, y_memory},
                                      {DNNL_ARG_SCRATCHPAD, scratch_memory}});
    stream.wait();
    if (!dense) store_panel(p, y_block, outputs, rows, outputs, row_begin, out_begin);
  } catch (const dnnl::error& error) {
    throw TensorError(ErrorKind::InvalidArgument,
                      std::string("oneDNN matrix product failed: ") + error.what());
  }
}

}  // namespace linnet::tensor::gemm::detail
