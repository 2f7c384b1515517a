// Internal: the loop every elementwise kernel runs on. N operands of one
// shape (broadcast views, stride 0 where they repeat) are walked together in
// row-major order. Axes that are extent 1 are dropped and neighbouring axes
// that are laid out contiguously for every operand are merged, so a dense
// tensor becomes a single run. The innermost run is handed to a typed
// callback that can use a plain (vectorisable) loop. Large loops split the
// element range into contiguous chunks over OpenMP threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "linnet/tensor/tensor.hpp"

namespace linnet::tensor::detail {

// Below this many elements per thread a loop stays on one thread.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

template <size_t N>
using Pointers = std::array<std::byte*, N>;
template <size_t N>
using ByteSteps = std::array<int64_t, N>;

template <size_t N>
struct StridedLoop {
  std::vector<int64_t> extents;                     // merged axes, outermost first; never empty
  std::array<std::vector<int64_t>, N> byte_strides;  // per operand, per merged axis
  Pointers<N> bases{};
  int64_t numel = 0;
};

// Plans a walk over operands that all have `shape` (callers broadcast first).
template <size_t N>
StridedLoop<N> plan_loop(const Shape& shape, const std::array<const Tensor*, N>& operands) {
  StridedLoop<N> loop;
  loop.numel = shape_numel(shape);
  for (size_t i = 0; i < N; ++i) {
    loop.bases[i] = static_cast<std::byte*>(const_cast<void*>(operands[i]->raw_data()));
  }
  std::vector<int64_t> extents;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    const int64_t extent = shape[axis];
    if (extent == 1) continue;
    bool mergeable = !extents.empty();
    for (size_t i = 0; i < N && mergeable; ++i) {
      const int64_t stride = operands[i]->strides()[axis] * static_cast<int64_t>(operands[i]->element_size());
      mergeable = strides[i].back() == stride * extent;
    }
    for (size_t i = 0; i < N; ++i) {
      const int64_t stride = operands[i]->strides()[axis] * static_cast<int64_t>(operands[i]->element_size());
      if (mergeable) strides[i].back() = stride;
      else strides[i].push_back(stride);
    }
    if (mergeable) extents.back() *= extent;
    else extents.push_back(extent);
  }
  if (extents.empty()) {
    extents.push_back(1);
    for (size_t i = 0; i < N; ++i) strides[i].push_back(0);
  }
  loop.extents = std::move(extents);
  loop.byte_strides = std::move(strides);
  return loop;
}

// Walks elements [begin, end) of the row-major order, calling
// inner(pointers, steps, count) once per run along the innermost axis.
template <size_t N, class Inner>
void run_range(const StridedLoop<N>& loop, int64_t begin, int64_t end, Inner& inner) {
  const int rank = static_cast<int>(loop.extents.size());
  const int last = rank - 1;
  std::vector<int64_t> index(rank, 0);
  int64_t remaining = begin;
  for (int axis = last; axis >= 0; --axis) {
    index[axis] = remaining % loop.extents[axis];
    remaining /= loop.extents[axis];
  }
  Pointers<N> pointers = loop.bases;
  ByteSteps<N> steps{};
  for (size_t i = 0; i < N; ++i) {
    for (int axis = 0; axis < rank; ++axis) pointers[i] += index[axis] * loop.byte_strides[i][axis];
    steps[i] = loop.byte_strides[i][last];
  }
  int64_t position = begin;
  while (position < end) {
    const int64_t count = std::min(loop.extents[last] - index[last], end - position);
    inner(pointers, steps, count);
    position += count;
    if (position >= end) break;
    // The run reached the end of the innermost axis (the pointers still mark
    // its start): go back to position 0 of that axis and carry outward.
    for (size_t i = 0; i < N; ++i) pointers[i] -= index[last] * steps[i];
    index[last] = 0;
    for (int axis = last - 1; axis >= 0; --axis) {
      ++index[axis];
      for (size_t i = 0; i < N; ++i) pointers[i] += loop.byte_strides[i][axis];
      if (index[axis] < loop.extents[axis]) break;
      for (size_t i = 0; i < N; ++i) pointers[i] -= loop.extents[axis] * loop.byte_strides[i][axis];
      index[axis] = 0;
    }
  }
}

// Runs the whole loop, in parallel chunks when it is large enough. `grain` is
// the least number of elements worth a thread.
template <size_t N, class Inner>
void run_loop(const StridedLoop<N>& loop, Inner&& inner, int64_t grain = kParallelGrain) {
  if (loop.numel == 0) return;
  const int64_t wanted = (loop.numel + grain - 1) / std::max<int64_t>(grain, 1);
  const int64_t chunks = std::min<int64_t>(wanted, omp_in_parallel() ? 1 : omp_get_max_threads());
  if (chunks <= 1) {
    run_range(loop, 0, loop.numel, inner);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    run_range(loop, loop.numel * chunk / chunks, loop.numel * (chunk + 1) / chunks, inner);
  }
}

}  // namespace linnet::tensor::detail
