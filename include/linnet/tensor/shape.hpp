// Shapes and strides: int64 extents, outermost axis first; strides count
// elements (not bytes). A rank-0 shape is a scalar with one element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linnet::tensor {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Number of elements: the product of the extents (1 for a scalar).
int64_t shape_numel(const Shape& shape);

// Row-major strides for a dense tensor of this shape.
Strides contiguous_strides(const Shape& shape);

// Right-aligned broadcasting: each aligned pair of extents must be equal or
// one of them 1. Throws TensorError(ShapeMismatch) naming the first bad axis
// (counted in the result).
Shape broadcast_shapes(const Shape& a, const Shape& b);

// "[2, 3, 4]".
std::string shape_to_string(const Shape& shape);

// An axis in [-rank, rank) made non-negative; throws TensorError(InvalidAxis).
int normalize_axis(int axis, int rank);

}  // namespace linnet::tensor
