// Tensor: a typed, strided view of shared storage. Copying a Tensor copies the
// view, never the elements; the view operations below (reshape, permute,
// slice, select, broadcast_to, expand_dims) build new views of the same
// storage. Kernels (kernels.hpp) produce new, owned, contiguous tensors.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "linnet/tensor/dtype.hpp"
#include "linnet/tensor/element.hpp"
#include "linnet/tensor/error.hpp"
#include "linnet/tensor/scalar.hpp"
#include "linnet/tensor/shape.hpp"
#include "linnet/tensor/storage.hpp"

namespace linnet::tensor {

class Tensor {
 public:
  // An undefined tensor (no storage); defined() is false.
  Tensor() = default;

  // --- Construction -------------------------------------------------------

  // Owned, contiguous, uninitialised.
  static Tensor empty(DType dtype, const Shape& shape);
  // Owned, contiguous, all zero (false for bool).
  static Tensor zeros(DType dtype, const Shape& shape);
  // A rank-0 tensor holding `value` converted to `dtype` by the cast rules.
  static Tensor scalar(DType dtype, Scalar value);
  // A contiguous read-only view of external memory of `shape` elements of
  // `dtype`; `keep_alive` keeps the memory valid (e.g. the mapping's owner).
  static Tensor borrow(DType dtype, const Shape& shape, const void* data, std::shared_ptr<const void> keep_alive);
  // An f32 tensor holding the values of the contiguous bf16 tensor
  // `source`, which must be borrowed or kept alive by its storage: the f32
  // elements are made on first access (Storage::widen_on_access), never by
  // kernels that read stored_bf16().
  static Tensor widen_on_access(const Tensor& source);
  // A view of existing storage; checks that every element lies inside it.
  static Tensor from_storage(std::shared_ptr<Storage> storage, DType dtype, const Shape& shape,
                             const Strides& strides, int64_t offset);

  // Copies `values` (row-major) into a new tensor of dtype_of<T>.
  template <ElementType T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  // Same, then converted to `dtype` by the cast rules (e.g. floats into bf16).
  template <ElementType T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype);

  // --- Properties ---------------------------------------------------------

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  // Extent of `axis` (negative counts from the end).
  int64_t extent(int axis) const;
  size_t element_size() const { return dtype_size(dtype_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Row-major dense (extent-1 axes may have any stride).
  bool is_contiguous() const;
  // False when the storage is borrowed.
  bool is_writable() const { return storage_ && storage_->writable(); }
  bool shares_storage_with(const Tensor& other) const { return storage_ && storage_ == other.storage_; }
  // For an f32 tensor over widen-on-access storage: the same elements as a
  // bf16 view (same shape, strides and offset) of the stored bytes, which
  // reading does not widen; else nothing. Kernels that multiply bf16
  // weights directly use it.
  std::optional<Tensor> stored_bf16() const;
  // Whether the storage makes its elements on access and has not made them
  // yet (Storage::unmade): a kernel that can work a tile at a time should
  // read its tiles with read_elements() rather than data().
  bool unmade() const { return storage_ && storage_->unmade(); }
  // Elements [first, first + count) of this tensor in row-major order,
  // copied into `out` (count * element_size() bytes), without making the
  // rest of unmade storage.
  void read_elements(int64_t first, int64_t count, void* out) const;

  // Address of the element at index (0, ..., 0).
  const void* raw_data() const;
  // Same, for writing; throws TensorError(ReadOnly) for borrowed storage.
  void* raw_mutable_data();
  // Typed pointers; T must be the tensor's element type (bool for bool,
  // bf16_t for bf16, ...).
  template <ElementType T>
  const T* data() const;
  template <ElementType T>
  T* mutable_data();

  // "bf16[2, 3]".
  std::string describe() const;

  // --- Views (share storage) ----------------------------------------------

  // A view with the same elements in row-major order and a new shape of the
  // same element count; copies only when the strides cannot express it.
  // The copy of an unmade tensor is itself made on access (from this view),
  // so reordering a dequantized weight does not make it.
  Tensor reshape(const Shape& shape) const;
  // The reshaped view when the strides allow one, else nullopt.
  std::optional<Tensor> try_view(const Shape& shape) const;
  // Axis i of the result is axis order[i] of this tensor.
  Tensor permute(const std::vector<int>& order) const;
  // Keeps `axis` with positions start, start+step, ... below min(stop, extent):
  // extent max(0, ceil((min(stop, D) - start) / step)). start, stop >= 0, step >= 1.
  Tensor slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const;
  // Position `index` of `axis`, removing the axis; throws IndexOutOfRange.
  Tensor select(int axis, int64_t index) const;
  // Right-aligned broadcast to `shape` with stride-0 axes; throws ShapeMismatch.
  Tensor broadcast_to(const Shape& shape) const;
  // Inserts an extent-1 axis at position `axis` (0..rank).
  Tensor expand_dims(int axis) const;

  // --- Copies ---------------------------------------------------------------

  // This tensor when it is already contiguous, else a contiguous copy.
  Tensor contiguous() const;
  // Always a new owned contiguous copy.
  Tensor clone() const;
  // Converted to `dtype` by the cast rules; this tensor itself when the dtype matches.
  Tensor to(DType dtype) const;

  // --- Element access (tests, diagnostics, scalar values) -----------------

  // The one element of a tensor with numel() == 1.
  Scalar item() const;
  // The element at `index` (one position per axis, bounds-checked).
  Scalar scalar_at(const std::vector<int64_t>& index) const;
  template <class T>
    requires std::is_arithmetic_v<T>
  T at(const std::vector<int64_t>& index) const {
    return scalar_at(index).to<T>();
  }
  // All elements in row-major order, converted to dtype_of<T> by the cast rules.
  template <ElementType T>
  std::vector<T> to_vector() const;

 private:
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, int64_t offset)
      : storage_(std::move(storage)),
        dtype_(dtype),
        shape_(std::move(shape)),
        strides_(std::move(strides)),
        offset_(offset) {}
  void require_dtype(DType wanted, const char* what) const;

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

// --- Template definitions ---------------------------------------------------

template <ElementType T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  Tensor result = empty(dtype_of<T>, shape);
  if (static_cast<int64_t>(values.size()) != result.numel()) {
    throw TensorError(ErrorKind::ShapeMismatch, "from_vector: " + std::to_string(values.size()) +
                                                    " values for shape " + shape_to_string(shape));
  }
  T* out = result.mutable_data<T>();
  // An element loop rather than memcpy: std::vector<bool> packs its bits.
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return result;
}

template <ElementType T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, DType dtype) {
  return from_vector(values, shape).to(dtype);
}

template <ElementType T>
const T* Tensor::data() const {
  require_dtype(dtype_of<T>, "data");
  return static_cast<const T*>(raw_data());
}

template <ElementType T>
T* Tensor::mutable_data() {
  require_dtype(dtype_of<T>, "mutable_data");
  return static_cast<T*>(raw_mutable_data());
}

template <ElementType T>
std::vector<T> Tensor::to_vector() const {
  if constexpr (std::is_same_v<T, bool>) {
    // Through u8 (0 or 1): a borrowed bool buffer may hold any nonzero byte for true.
    const std::vector<uint8_t> bytes = to(DType::Bool).to(DType::U8).to_vector<uint8_t>();
    return std::vector<bool>(bytes.begin(), bytes.end());
  }
  Tensor dense = to(dtype_of<T>).contiguous();
  const T* values = dense.data<T>();
  return std::vector<T>(values, values + dense.numel());
}

}  // namespace linnet::tensor
