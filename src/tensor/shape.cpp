#include "linnet/tensor/shape.hpp"

#include <algorithm>
#include <limits>

#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

namespace {

// The product of the extents, each taken as at least 1 (what the strides
// span); nothing when it overflows or an extent is negative.
std::optional<int64_t> checked_span(const Shape& shape) {
  int64_t span = 1;
  for (int64_t extent : shape) {
    if (extent < 0) return std::nullopt;
    if (__builtin_mul_overflow(span, std::max<int64_t>(extent, 1), &span)) return std::nullopt;
  }
  return span;
}

[[noreturn]] void throw_bad_shape(const Shape& shape) {
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] < 0) {
      throw TensorError(ErrorKind::InvalidArgument, "negative extent in shape " + shape_to_string(shape),
                        static_cast<int>(axis), shape[axis]);
    }
  }
  throw TensorError(ErrorKind::ResourceLimit,
                    "shape " + shape_to_string(shape) + " has more elements than a 64-bit count holds");
}

}  // namespace

std::optional<int64_t> checked_numel(const Shape& shape) {
  if (!checked_span(shape)) return std::nullopt;
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;  // cannot overflow: bounded by the span
  return count;
}

int64_t shape_numel(const Shape& shape) {
  std::optional<int64_t> count = checked_numel(shape);
  if (!count) throw_bad_shape(shape);
  return *count;
}

size_t shape_bytes(const Shape& shape, size_t element_size) {
  const int64_t count = shape_numel(shape);
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(count), element_size, &bytes) ||
      bytes > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    throw TensorError(ErrorKind::ResourceLimit,
                      "shape " + shape_to_string(shape) + " needs more bytes than a 64-bit count holds");
  }
  return bytes;
}

Strides contiguous_strides(const Shape& shape) {
  if (!checked_span(shape)) throw_bad_shape(shape);
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t axis = shape.size(); axis-- > 0;) {
    strides[axis] = stride;
    stride *= std::max<int64_t>(shape[axis], 1);  // bounded by the checked span
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t axis = 0; axis < rank; ++axis) {
    // Right-aligned: axis `axis` of the result is axis `axis - (rank - size)` of each operand.
    const int64_t from_a = axis + a.size() >= rank ? a[axis + a.size() - rank] : 1;
    const int64_t from_b = axis + b.size() >= rank ? b[axis + b.size() - rank] : 1;
    if (from_a != from_b && from_a != 1 && from_b != 1) {
      throw TensorError(ErrorKind::ShapeMismatch,
                        "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                            " do not broadcast: axis " + std::to_string(axis) + " of the result has extents " +
                            std::to_string(from_a) + " and " + std::to_string(from_b),
                        static_cast<int>(axis), from_b, from_a);
    }
    result[axis] = from_a == 1 ? from_b : from_a;
  }
  return result;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis) text += ", ";
    text += std::to_string(shape[axis]);
  }
  return text + "]";
}

int normalize_axis(int axis, int rank) {
  if (axis < -rank || axis >= rank) {
    throw TensorError(ErrorKind::InvalidAxis,
                      "axis " + std::to_string(axis) + " is out of range for a rank-" + std::to_string(rank) + " tensor",
                      axis, axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace linnet::tensor
