// Tensor construction, views and element access. Views only rewrite shape,
// strides and offset; kernels (kernels_*.cpp) do the element work.
#include "linnet/tensor/tensor.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dispatch.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor {

namespace {

void check_shape(const Shape& shape, const char* what) {
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] < 0) {
      throw TensorError(ErrorKind::InvalidArgument,
                        std::string(what) + ": negative extent in shape " + shape_to_string(shape),
                        static_cast<int>(axis), shape[axis]);
    }
  }
}

}  // namespace

// --- Construction ------------------------------------------------------------

Tensor Tensor::empty(DType dtype, const Shape& shape) {
  check_shape(shape, "empty");
  auto storage = Storage::allocate(shape_bytes(shape, dtype_size(dtype)));
  return Tensor(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::zeros(DType dtype, const Shape& shape) {
  check_shape(shape, "zeros");
  auto storage = Storage::allocate_zeroed(shape_bytes(shape, dtype_size(dtype)));
  return Tensor(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::scalar(DType dtype, Scalar value) {
  Tensor result = empty(dtype, {});
  void* target = result.raw_mutable_data();
  detail::visit_dtype(dtype, [&]<class S>() { *static_cast<S*>(target) = detail::scalar_to<S>(value); });
  return result;
}

Tensor Tensor::borrow(DType dtype, const Shape& shape, const void* data, std::shared_ptr<const void> keep_alive) {
  check_shape(shape, "borrow");
  auto storage =
      Storage::borrow(data, shape_bytes(shape, dtype_size(dtype)), std::move(keep_alive));
  return Tensor(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::widen_on_access(const Tensor& source) {
  if (source.dtype() != DType::BF16 || !source.is_contiguous()) {
    throw TensorError(ErrorKind::InvalidArgument, "widen_on_access: needs a contiguous bf16 tensor, not " +
                                                      source.describe());
  }
  // The source's own storage keeps its bytes valid (a mapping, or owned memory).
  std::shared_ptr<const void> keep_alive = source.storage_;
  auto storage = Storage::widen_on_access(source.raw_data(), static_cast<size_t>(source.numel()), std::move(keep_alive));
  return Tensor(std::move(storage), DType::F32, source.shape(), contiguous_strides(source.shape()), 0);
}

std::optional<Tensor> Tensor::stored_bf16() const {
  if (!storage_ || dtype_ != DType::F32 || storage_->bf16_source() == nullptr) return std::nullopt;
  auto view = Storage::borrow(storage_->bf16_source(), storage_->bytes() / 2, storage_);
  return Tensor(std::move(view), DType::BF16, shape_, strides_, offset_);
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, DType dtype, const Shape& shape,
                            const Strides& strides, int64_t offset) {
  if (!storage) throw TensorError(ErrorKind::InvalidArgument, "from_storage: no storage");
  check_shape(shape, "from_storage");
  if (strides.size() != shape.size()) {
    throw TensorError(ErrorKind::InvalidArgument, "from_storage: " + std::to_string(strides.size()) +
                                                      " strides for shape " + shape_to_string(shape));
  }
  if (offset < 0) throw TensorError(ErrorKind::InvalidArgument, "from_storage: negative offset", {}, offset);
  int64_t last_element = offset;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (strides[axis] < 0) {
      throw TensorError(ErrorKind::InvalidArgument, "from_storage: negative stride", static_cast<int>(axis),
                        strides[axis]);
    }
    int64_t reach = 0;
    if (shape[axis] > 0 && (__builtin_mul_overflow(shape[axis] - 1, strides[axis], &reach) ||
                            __builtin_add_overflow(last_element, reach, &last_element))) {
      throw TensorError(ErrorKind::ResourceLimit, "from_storage: the view's extent overflows a 64-bit offset",
                        static_cast<int>(axis));
    }
  }
  (void)shape_numel(shape);  // the element count must fit as well
  const int64_t capacity = static_cast<int64_t>(storage->bytes() / dtype_size(dtype));
  if (shape_numel(shape) > 0 && last_element >= capacity) {
    throw TensorError(ErrorKind::IndexOutOfRange,
                      "from_storage: the view reaches element " + std::to_string(last_element) +
                          " of a storage holding " + std::to_string(capacity),
                      {}, last_element, capacity);
  }
  return Tensor(std::move(storage), dtype, shape, strides, offset);
}

// --- Properties --------------------------------------------------------------

int64_t Tensor::extent(int axis) const { return shape_[normalize_axis(axis, rank())]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t axis = shape_.size(); axis-- > 0;) {
    if (shape_[axis] == 0) return true;
    if (shape_[axis] == 1) continue;
    if (strides_[axis] != expected) return false;
    expected *= shape_[axis];
  }
  return true;
}

const void* Tensor::raw_data() const {
  if (!storage_) throw TensorError(ErrorKind::InvalidArgument, "use of an undefined tensor");
  return storage_->data() + offset_ * static_cast<int64_t>(element_size());
}

void* Tensor::raw_mutable_data() {
  if (!storage_) throw TensorError(ErrorKind::InvalidArgument, "use of an undefined tensor");
  return storage_->mutable_data() + offset_ * static_cast<int64_t>(element_size());
}

void Tensor::require_dtype(DType wanted, const char* what) const {
  if (dtype_ != wanted) {
    throw TensorError(ErrorKind::DTypeMismatch, std::string(what) + ": the tensor is " + describe() +
                                                    ", not " + std::string(dtype_name(wanted)));
  }
}

std::string Tensor::describe() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

// --- Views -------------------------------------------------------------------

std::optional<Tensor> Tensor::try_view(const Shape& shape) const {
  check_shape(shape, "reshape");
  if (shape_numel(shape) != numel()) {
    throw TensorError(ErrorKind::ShapeMismatch, "cannot reshape " + describe() + " to " + shape_to_string(shape) +
                                                    ": the element counts differ");
  }
  if (numel() == 0 || is_contiguous()) {
    return Tensor(storage_, dtype_, shape, contiguous_strides(shape), offset_);
  }
  // Walk both shapes from the innermost axis, in chunks of old axes that are
  // laid out contiguously with each other; each chunk must be covered exactly
  // by a run of new axes, which then get strides inside the chunk.
  Strides new_strides(shape.size(), 0);
  int view_axis = static_cast<int>(shape.size()) - 1;
  int64_t chunk_stride = strides_.back();
  int64_t old_count = 1;
  int64_t new_count = 1;
  for (int axis = rank() - 1; axis >= 0; --axis) {
    old_count *= shape_[axis];
    const bool chunk_ends =
        axis == 0 || (shape_[axis - 1] != 1 && strides_[axis - 1] != old_count * chunk_stride);
    if (!chunk_ends) continue;
    while (view_axis >= 0 && (new_count < old_count || shape[view_axis] == 1)) {
      new_strides[view_axis] = new_count * chunk_stride;
      new_count *= shape[view_axis];
      --view_axis;
    }
    if (new_count != old_count) return std::nullopt;
    if (axis > 0) {
      chunk_stride = strides_[axis - 1];
      old_count = 1;
      new_count = 1;
    }
  }
  if (view_axis != -1) return std::nullopt;
  return Tensor(storage_, dtype_, shape, std::move(new_strides), offset_);
}

namespace {

// The elements of a view in row-major order, for storage made on access:
// what a reshape of an unmade tensor that needs a copy holds.
class ViewCopy final : public ElementSource {
 public:
  explicit ViewCopy(Tensor view) : view_(std::move(view)) {}
  void read(size_t begin, size_t count, std::byte* out) const override {
    const size_t element = view_.element_size();
    view_.read_elements(static_cast<int64_t>(begin / element), static_cast<int64_t>(count / element), out);
  }

 private:
  Tensor view_;
};

}  // namespace

Tensor Tensor::reshape(const Shape& shape) const {
  if (auto view = try_view(shape)) return *view;
  if (unmade()) {
    check_shape(shape, "reshape");
    auto storage = Storage::made_on_access(static_cast<size_t>(numel()) * element_size(),
                                           std::make_shared<ViewCopy>(*this));
    return Tensor(std::move(storage), dtype_, shape, contiguous_strides(shape), 0);
  }
  return contiguous().reshape(shape);
}

void Tensor::read_elements(int64_t first, int64_t count, void* out) const {
  if (first < 0 || count < 0 || first + count > numel()) {
    throw TensorError(ErrorKind::IndexOutOfRange, "read_elements past the end of " + describe());
  }
  if (count == 0) return;
  const size_t element = element_size();
  auto* target = static_cast<std::byte*>(out);
  if (is_contiguous()) {
    storage_->read(static_cast<size_t>(offset_ + first) * element, static_cast<size_t>(count) * element, element,
                   target);
    return;
  }
  // Walk the row-major positions from `first`, a run along the last axis at
  // a time (one storage read when that axis is dense, else one per element).
  const int axes = rank();
  std::vector<int64_t> index(static_cast<size_t>(axes), 0);
  int64_t rest = first;
  for (int axis = axes - 1; axis >= 0; --axis) {
    index[static_cast<size_t>(axis)] = rest % shape_[static_cast<size_t>(axis)];
    rest /= shape_[static_cast<size_t>(axis)];
  }
  const int64_t last_extent = shape_.back(), last_stride = strides_.back();
  int64_t left = count;
  while (left > 0) {
    int64_t position = offset_;
    for (int axis = 0; axis < axes; ++axis) position += index[static_cast<size_t>(axis)] * strides_[static_cast<size_t>(axis)];
    const int64_t run = std::min(left, last_extent - index.back());
    if (last_stride == 1) {
      storage_->read(static_cast<size_t>(position) * element, static_cast<size_t>(run) * element, element, target);
    } else {
      for (int64_t i = 0; i < run; ++i) {
        storage_->read(static_cast<size_t>(position + i * last_stride) * element, element, element,
                       target + static_cast<size_t>(i) * element);
      }
    }
    target += static_cast<size_t>(run) * element;
    left -= run;
    // The next run starts at the next position of the axes before the last.
    index.back() = 0;
    for (int axis = axes - 2; axis >= 0; --axis) {
      if (++index[static_cast<size_t>(axis)] < shape_[static_cast<size_t>(axis)]) break;
      index[static_cast<size_t>(axis)] = 0;
    }
  }
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  if (static_cast<int>(order.size()) != rank()) {
    throw TensorError(ErrorKind::InvalidAxis, "permute of " + describe() + " needs " + std::to_string(rank()) +
                                                  " axes, got " + std::to_string(order.size()));
  }
  std::vector<bool> seen(order.size(), false);
  Shape shape(order.size());
  Strides strides(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const int axis = order[i];
    if (axis < 0 || axis >= rank() || seen[axis]) {
      throw TensorError(ErrorKind::InvalidAxis,
                        "permute of " + describe() + ": axis " + std::to_string(axis) +
                            (axis >= 0 && axis < rank() ? " appears twice" : " is out of range"),
                        axis, axis, rank());
    }
    seen[axis] = true;
    shape[i] = shape_[axis];
    strides[i] = strides_[axis];
  }
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
  axis = normalize_axis(axis, rank());
  if (start < 0 || stop < 0) {
    throw TensorError(ErrorKind::InvalidArgument,
                      "slice bounds must be non-negative, got " + std::to_string(start) + ":" + std::to_string(stop),
                      axis, start < 0 ? start : stop, shape_[axis]);
  }
  if (step < 1) {
    throw TensorError(ErrorKind::InvalidArgument, "slice step must be positive, got " + std::to_string(step), axis,
                      step);
  }
  const int64_t end = std::min(stop, shape_[axis]);
  const int64_t count = end > start ? (end - start + step - 1) / step : 0;
  Shape shape = shape_;
  Strides strides = strides_;
  shape[axis] = count;
  strides[axis] = strides_[axis] * step;
  const int64_t offset = count > 0 ? offset_ + start * strides_[axis] : offset_;
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides), offset);
}

Tensor Tensor::select(int axis, int64_t index) const {
  axis = normalize_axis(axis, rank());
  if (index < 0 || index >= shape_[axis]) {
    throw TensorError(ErrorKind::IndexOutOfRange,
                      "index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) +
                          " of extent " + std::to_string(shape_[axis]),
                      axis, index, shape_[axis]);
  }
  Shape shape = shape_;
  Strides strides = strides_;
  const int64_t offset = offset_ + index * strides_[axis];
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides), offset);
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  check_shape(shape, "broadcast_to");
  const int target_rank = static_cast<int>(shape.size());
  if (target_rank < rank()) {
    throw TensorError(ErrorKind::ShapeMismatch,
                      "cannot broadcast " + describe() + " to the lower-rank shape " + shape_to_string(shape));
  }
  Strides strides(shape.size(), 0);
  const int leading = target_rank - rank();
  for (int axis = 0; axis < rank(); ++axis) {
    const int64_t from = shape_[axis];
    const int64_t to = shape[leading + axis];
    if (from == to) {
      strides[leading + axis] = strides_[axis];
    } else if (from != 1) {
      throw TensorError(ErrorKind::ShapeMismatch,
                        "cannot broadcast " + describe() + " to " + shape_to_string(shape) + ": axis " +
                            std::to_string(axis) + " has extent " + std::to_string(from) + ", not 1 or " +
                            std::to_string(to),
                        axis, from, to);
    }
  }
  return Tensor(storage_, dtype_, shape, std::move(strides), offset_);
}

Tensor Tensor::expand_dims(int axis) const {
  if (axis < 0 || axis > rank()) {
    throw TensorError(ErrorKind::InvalidAxis,
                      "expand_dims position " + std::to_string(axis) + " is outside 0.." + std::to_string(rank()),
                      axis, axis, rank() + 1);
  }
  Shape shape = shape_;
  Strides strides = strides_;
  const int64_t stride = axis < rank() ? strides_[axis] * std::max<int64_t>(shape_[axis], 1) : 1;
  shape.insert(shape.begin() + axis, 1);
  strides.insert(strides.begin() + axis, stride);
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides), offset_);
}

// --- Copies ------------------------------------------------------------------

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor copy = empty(dtype_, shape_);
  assign(copy, *this);
  return copy;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  return cast(*this, dtype);
}

// --- Element access ----------------------------------------------------------

Scalar Tensor::item() const {
  if (numel() != 1) {
    throw TensorError(ErrorKind::ShapeMismatch, "item() of " + describe() + ", which does not hold one element");
  }
  int64_t element = offset_;  // every extent is 1: the element sits at the offset
  const std::byte* address = storage_->data() + element * static_cast<int64_t>(element_size());
  return detail::visit_dtype(dtype_, [&]<class S>() { return detail::to_scalar(*reinterpret_cast<const S*>(address)); });
}

Scalar Tensor::scalar_at(const std::vector<int64_t>& index) const {
  if (static_cast<int>(index.size()) != rank()) {
    throw TensorError(ErrorKind::InvalidArgument, "element access to " + describe() + " with " +
                                                      std::to_string(index.size()) + " indices");
  }
  int64_t element = offset_;
  for (int axis = 0; axis < rank(); ++axis) {
    if (index[axis] < 0 || index[axis] >= shape_[axis]) {
      throw TensorError(ErrorKind::IndexOutOfRange,
                        "index " + std::to_string(index[axis]) + " is out of range for axis " + std::to_string(axis) +
                            " of extent " + std::to_string(shape_[axis]),
                        axis, index[axis], shape_[axis]);
    }
    element += index[axis] * strides_[axis];
  }
  const std::byte* address = storage_->data() + element * static_cast<int64_t>(element_size());
  return detail::visit_dtype(dtype_, [&]<class S>() { return detail::to_scalar(*reinterpret_cast<const S*>(address)); });
}

}  // namespace linnet::tensor
