#include "linnet/tensor/error.hpp"

namespace linnet::tensor {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::ShapeMismatch: return "shape mismatch";
    case ErrorKind::DTypeMismatch: return "dtype mismatch";
    case ErrorKind::UnsupportedDType: return "unsupported dtype";
    case ErrorKind::InvalidAxis: return "invalid axis";
    case ErrorKind::IndexOutOfRange: return "index out of range";
    case ErrorKind::DivisionByZero: return "division by zero";
    case ErrorKind::InvalidArgument: return "invalid argument";
    case ErrorKind::ReadOnly: return "read-only tensor";
    case ErrorKind::ResourceLimit: return "resource limit";
  }
  return "tensor error";
}

}  // namespace linnet::tensor
