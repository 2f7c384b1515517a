// The one exception the tensor runtime throws. Besides a readable message it
// carries structured fields (which axis, which value, which extent) so that the
// interpreter can turn it into a diagnostic that names the source span.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace linnet::tensor {

enum class ErrorKind {
  ShapeMismatch,    // operands whose shapes do not broadcast, concat/contract extents that differ
  DTypeMismatch,    // operands of different dtypes (Linnet never promotes implicitly)
  UnsupportedDType, // an operation applied to a dtype it does not take (exp on i32, & on f32)
  InvalidAxis,      // an axis number outside the tensor's rank, or a repeated axis
  IndexOutOfRange,  // a runtime index (gather, select) outside its axis
  DivisionByZero,   // integer `/` or `%` by zero
  InvalidArgument,  // anything else malformed: negative slice bounds, max over an empty axis
  ReadOnly,         // a write into borrowed (memory-mapped) storage
  ResourceLimit,    // a shape whose element or byte count overflows 64 bits, or memory exhausted
};

std::string_view error_kind_name(ErrorKind kind);

class TensorError : public std::runtime_error {
 public:
  TensorError(ErrorKind kind, const std::string& message, std::optional<int> axis = std::nullopt,
              std::optional<int64_t> value = std::nullopt, std::optional<int64_t> extent = std::nullopt)
      : std::runtime_error(message), kind_(kind), axis_(axis), value_(value), extent_(extent) {}

  ErrorKind kind() const { return kind_; }
  // The axis the error is about, when there is one.
  std::optional<int> axis() const { return axis_; }
  // The offending value (an index, an axis number), when there is one.
  std::optional<int64_t> value() const { return value_; }
  // The extent the value had to stay below, when there is one.
  std::optional<int64_t> extent() const { return extent_; }

 private:
  ErrorKind kind_;
  std::optional<int> axis_;
  std::optional<int64_t> value_;
  std::optional<int64_t> extent_;
};

}  // namespace linnet::tensor
