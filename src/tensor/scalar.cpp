#include "linnet/tensor/scalar.hpp"

#include <cstdio>

namespace linnet::tensor {

DType Scalar::natural_dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::I64;
    case Kind::UInt: return DType::U64;
    case Kind::Float: return DType::F64;
  }
  return DType::I64;
}

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool: return int_ ? "true" : "false";
    case Kind::Int: return std::to_string(int_);
    case Kind::UInt: return std::to_string(uint_);
    case Kind::Float: {
      // Shortest round-trip form is not needed here; 17 significant digits are exact.
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "%.9g", float_);
      if (std::stod(buffer) != float_) std::snprintf(buffer, sizeof buffer, "%.17g", float_);
      return buffer;
    }
  }
  return "?";
}

}  // namespace linnet::tensor
