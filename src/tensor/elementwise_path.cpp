// The choice of elementwise loop (linnet/tensor/elementwise_path.hpp): the
// widest span kernels the CPU reports (__builtin_cpu_supports), so the
// default build runs on any x86-64, unless a test forces another path.
#include "linnet/tensor/elementwise_path.hpp"

#include <atomic>

#include "elementwise_spans.hpp"
#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

namespace {

ElementwisePath detect_path() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    return ElementwisePath::Avx512;
  }
  if (__builtin_cpu_supports("avx2")) return ElementwisePath::Avx2;
#endif
  return ElementwisePath::Baseline;
}

// -1: no override; otherwise an ElementwisePath.
std::atomic<int> path_override{-1};

}  // namespace

ElementwisePath best_elementwise_path() {
  static const ElementwisePath best = detect_path();
  return best;
}

bool elementwise_path_supported(ElementwisePath path) {
  return static_cast<int>(path) <= static_cast<int>(best_elementwise_path());
}

ElementwisePath active_elementwise_path() {
  const int forced = path_override.load(std::memory_order_relaxed);
  return forced < 0 ? best_elementwise_path() : static_cast<ElementwisePath>(forced);
}

void override_elementwise_path(std::optional<ElementwisePath> path) {
  if (path && !elementwise_path_supported(*path)) {
    throw TensorError(ErrorKind::InvalidArgument, "elementwise path " + elementwise_path_name(*path) +
                                                       " is not supported by this CPU (best: " +
                                                       elementwise_path_name(best_elementwise_path()) + ")");
  }
  path_override.store(path ? static_cast<int>(*path) : -1, std::memory_order_relaxed);
}

std::string elementwise_path_name(ElementwisePath path) {
  switch (path) {
    case ElementwisePath::PerElement: return "per-element";
    case ElementwisePath::Baseline: return "baseline";
    case ElementwisePath::Avx2: return "avx2";
    case ElementwisePath::Avx512: return "avx512";
  }
  return "?";
}

namespace detail {

BinarySpans binary_spans(DType dtype, BinaryOp op) {
  switch (active_elementwise_path()) {
    case ElementwisePath::PerElement: return {};
    case ElementwisePath::Baseline: return spans_baseline::binary_spans(dtype, op);
    case ElementwisePath::Avx2: return spans_avx2::binary_spans(dtype, op);
    case ElementwisePath::Avx512: return spans_avx512::binary_spans(dtype, op);
  }
  return {};
}

UnarySpans unary_spans(DType dtype, UnaryOp op) {
  switch (active_elementwise_path()) {
    case ElementwisePath::PerElement: return {};
    case ElementwisePath::Baseline: return spans_baseline::unary_spans(dtype, op);
    case ElementwisePath::Avx2: return spans_avx2::unary_spans(dtype, op);
    case ElementwisePath::Avx512: return spans_avx512::unary_spans(dtype, op);
  }
  return {};
}

UnarySpans cast_spans(DType from, DType to) { return cast_spans_on(active_elementwise_path(), from, to); }

UnarySpans cast_spans_on(ElementwisePath path, DType from, DType to) {
  switch (path) {
    case ElementwisePath::PerElement: return {};
    case ElementwisePath::Baseline: return spans_baseline::cast_spans(from, to);
    case ElementwisePath::Avx2: return spans_avx2::cast_spans(from, to);
    case ElementwisePath::Avx512: return spans_avx512::cast_spans(from, to);
  }
  return {};
}

}  // namespace detail

}  // namespace linnet::tensor
