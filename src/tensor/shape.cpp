#include "linnet/tensor/shape.hpp"

#include <algorithm>

#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

int64_t shape_numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t axis = shape.size(); axis-- > 0;) {
    strides[axis] = stride;
    stride *= std::max<int64_t>(shape[axis], 1);
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
