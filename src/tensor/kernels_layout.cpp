// Kernels that move or create elements without arithmetic: assign, concat,
// select, iota, fill.
#include <string>

#include "dispatch.hpp"
#include "elementwise.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

namespace {

void require_same_dtype(const Tensor& a, const Tensor& b, const char* what) {
  if (a.dtype() != b.dtype()) {
    throw TensorError(ErrorKind::DTypeMismatch, std::string(what) + ": operands have different dtypes (" +
                                                    a.describe() + " and " + b.describe() + ")");
  }
}

}  // namespace

void assign(Tensor& dst, const Tensor& src) {
  require_same_dtype(dst, src, "assign");
  dst.raw_mutable_data();  // throws ReadOnly for borrowed storage before anything is written
  const Tensor source = src.broadcast_to(dst.shape());
  // Moving elements only needs their width, not their dtype.
  detail::visit_width(dst.element_size(), [&]<class Word>() {
    detail::map_unary<Word, Word>(dst, source, [](Word value) { return value; });
  });
}

Tensor concat(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw TensorError(ErrorKind::InvalidArgument, "concat of no tensors");
  const Tensor& first = parts.front();
  if (first.rank() == 0) throw TensorError(ErrorKind::InvalidAxis, "concat of rank-0 tensors");
  axis = normalize_axis(axis, first.rank());
  Shape shape = first.shape();
  shape[axis] = 0;
  for (const Tensor& part : parts) {
    require_same_dtype(first, part, "concat");
    if (part.rank() != first.rank()) {
      throw TensorError(ErrorKind::ShapeMismatch,
                        "concat: " + part.describe() + " and " + first.describe() + " have different ranks");
    }
    for (int other = 0; other < first.rank(); ++other) {
      if (other != axis && part.shape()[other] != first.shape()[other]) {
        throw TensorError(ErrorKind::ShapeMismatch,
                          "concat along axis " + std::to_string(axis) + ": " + part.describe() + " and " +
                              first.describe() + " differ on axis " + std::to_string(other),
                          other, part.shape()[other], first.shape()[other]);
      }
    }
    shape[axis] += part.shape()[axis];
  }
  Tensor out = Tensor::empty(first.dtype(), shape);
  int64_t position = 0;
  for (const Tensor& part : parts) {
    const int64_t extent = part.shape()[axis];
    if (extent == 0) continue;
    Tensor target = out.slice(axis, position, position + extent);
    assign(target, part);
    position += extent;
  }
  return out;
}

Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (cond.dtype() != DType::Bool) {
    throw TensorError(ErrorKind::UnsupportedDType, "select: the condition must be bool, got " + cond.describe());
  }
  require_same_dtype(a, b, "select");
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape()), b.shape());
  Tensor out = Tensor::empty(a.dtype(), shape);
  const Tensor c = cond.broadcast_to(shape);
  const Tensor x = a.broadcast_to(shape);
  const Tensor y = b.broadcast_to(shape);
  detail::visit_width(a.element_size(), [&]<class Word>() {
    detail::map_ternary<Word, detail::bool8_t, Word, Word>(
        out, c, x, y, [](detail::bool8_t take_first, Word first, Word second) { return take_first.value ? first : second; });
  });
  return out;
}

Tensor iota(int64_t n, DType dtype) {
  if (dtype == DType::Bool) throw TensorError(ErrorKind::UnsupportedDType, "iota needs a numeric dtype, got bool");
  if (n < 0) throw TensorError(ErrorKind::InvalidArgument, "iota of a negative count " + std::to_string(n), {}, n);
  // i32 and i64 hold every position of any count that fits them: written
  // directly. A decode step of the cards makes `iota<i32>(MaxSeq)` in every
  // layer, and going through i64 and a cast was most of what a step spent
  // on its MaxSeq positions. Other dtypes round or wrap as the cast does.
  if (dtype == DType::I32 && n <= int64_t{1} << 31) {
    Tensor positions = Tensor::empty(DType::I32, {n});
    int32_t* values = positions.mutable_data<int32_t>();
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<int32_t>(i);
    return positions;
  }
  Tensor positions = Tensor::empty(DType::I64, {n});
  int64_t* values = positions.mutable_data<int64_t>();
  for (int64_t i = 0; i < n; ++i) values[i] = i;
  return positions.to(dtype);
}

Tensor fill(const Shape& shape, DType dtype, Scalar value) {
  Tensor out = Tensor::empty(dtype, shape);
  assign(out, Tensor::scalar(dtype, value));
  return out;
}

}  // namespace linnet::tensor
