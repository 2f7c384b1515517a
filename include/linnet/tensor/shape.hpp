// Shapes and strides: int64 extents, outermost axis first; strides count
// elements (not bytes). A rank-0 shape is a scalar with one element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace linnet::tensor {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Number of elements: the product of the extents (1 for a scalar).
// Checked: a negative extent throws TensorError(InvalidArgument), and a shape
// whose extents (each taken as at least 1, so that a zero extent does not hide
// the others from the stride arithmetic) multiply past int64 throws
// TensorError(ResourceLimit). Every shape a tensor holds has passed it.
int64_t shape_numel(const Shape& shape);

// The same check without throwing: the element count, or nothing when an
// extent is negative or the product overflows as above.
std::optional<int64_t> checked_numel(const Shape& shape);

// Bytes of a dense tensor of this shape with elements of `element_size`
// bytes; throws as shape_numel does, and TensorError(ResourceLimit) when the
// byte count overflows.
size_t shape_bytes(const Shape& shape, size_t element_size);

// Row-major strides for a dense tensor of this shape (checked as shape_numel).
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
