// Gathers by runtime integer indices: `take` (whole slices along one axis,
// as an embedding lookup does) and the pointwise `gather` (one index tensor
// per axis, as index notation's computed positions need). Every index is
// checked before anything is read; the first bad one (in row-major order) is
// reported with its axis, value and the extent it had to stay below.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "dispatch.hpp"
#include "elementwise.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

namespace {

// An index value as int64 for messages; u64 values beyond int64 saturate.
template <class I>
int64_t index_value(I value) {
  if constexpr (std::is_unsigned_v<I> && sizeof(I) == 8) {
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(value);
}

// Converts `index` to a contiguous i64 tensor, first checking every value is
// in [0, extent); `axis` and `what` name the place in errors.
Tensor checked_positions(const Tensor& index, int64_t extent, int axis, const char* what) {
  if (!is_integer(index.dtype())) {
    throw TensorError(ErrorKind::UnsupportedDType,
                      std::string(what) + ": index tensors must hold integers, got " + index.describe());
  }
  const Tensor dense = index.contiguous();
  detail::visit_dtype(dense.dtype(), [&]<class I>() {
    if constexpr (std::is_integral_v<I>) {
      const I* values = dense.data<I>();
      const int64_t count = dense.numel();
      for (int64_t i = 0; i < count; ++i) {
        bool bad = false;
        if constexpr (std::is_signed_v<I>) bad = values[i] < 0;
        bad = bad || static_cast<uint64_t>(values[i]) >= static_cast<uint64_t>(extent);
        if (bad) {
          const int64_t value = index_value(values[i]);
          throw TensorError(ErrorKind::IndexOutOfRange,
                            std::string(what) + ": index " + std::to_string(+values[i]) + " is out of range for axis " +
                                std::to_string(axis) + " of extent " + std::to_string(extent),
                            axis, value, extent);
        }
      }
    }
  });
  return dense.to(DType::I64);
}

}  // namespace

Tensor take(const Tensor& x, int axis, const Tensor& index) {
  if (x.rank() == 0) throw TensorError(ErrorKind::InvalidAxis, "take from a rank-0 tensor");
  axis = normalize_axis(axis, x.rank());
  const int64_t extent = x.shape()[axis];
  const Tensor positions = checked_positions(index, extent, axis, "take");

  Shape shape(x.shape().begin(), x.shape().begin() + axis);
  shape.insert(shape.end(), index.shape().begin(), index.shape().end());
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor out = Tensor::empty(x.dtype(), shape);
  if (out.numel() == 0) return out;

  // x as [outer, extent, inner] and out as [outer, count, inner]: each
  // (outer, j) pair copies one contiguous run of `inner` elements.
  const Tensor source = x.contiguous();
  int64_t outer = 1;
  int64_t inner = 1;
  for (int a = 0; a < axis; ++a) outer *= x.shape()[a];
  for (int a = axis + 1; a < x.rank(); ++a) inner *= x.shape()[a];
  const int64_t count = positions.numel();
  const int64_t run_bytes = inner * static_cast<int64_t>(x.element_size());
  const int64_t* rows = positions.data<int64_t>();
  const auto* from = static_cast<const std::byte*>(source.raw_data());
  auto* to = static_cast<std::byte*>(out.raw_mutable_data());
  const int64_t pairs = outer * count;
  const bool parallel = pairs > 1 && pairs * run_bytes > (int64_t{1} << 18);
#pragma omp parallel for if (parallel) schedule(static)
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const int64_t o = pair / count;
    const int64_t j = pair % count;
    std::memcpy(to + pair * run_bytes, from + (o * extent + rows[j]) * run_bytes, static_cast<size_t>(run_bytes));
  }
  return out;
}

Tensor gather(const Tensor& x, const std::vector<Tensor>& indices) {
  if (static_cast<int>(indices.size()) != x.rank()) {
    throw TensorError(ErrorKind::InvalidArgument, "gather from " + x.describe() + " needs " +
                                                      std::to_string(x.rank()) + " index tensors, got " +
                                                      std::to_string(indices.size()));
  }
  Shape shape;
  for (const Tensor& index : indices) shape = broadcast_shapes(shape, index.shape());
  // The element offset of every result position: sum over axes of
  // position * stride, built from the (small, unbroadcast) index tensors.
  Tensor offsets = fill(shape, DType::I64, Scalar(x.offset()));
  for (int axis = 0; axis < x.rank(); ++axis) {
    const Tensor positions = checked_positions(indices[axis], x.shape()[axis], axis, "gather");
    const Tensor stride = Tensor::scalar(DType::I64, Scalar(x.strides()[axis]));
    offsets = add(offsets, mul(positions, stride));
  }
  Tensor out = Tensor::empty(x.dtype(), shape);
  const auto* base = x.storage()->data();
  detail::visit_width(x.element_size(), [&]<class Word>() {
    const Word* elements = reinterpret_cast<const Word*>(base);
    detail::map_unary<Word, int64_t>(out, offsets, [elements](int64_t offset) { return elements[offset]; });
  });
  return out;
}

}  // namespace linnet::tensor
