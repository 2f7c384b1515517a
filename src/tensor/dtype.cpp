#include "linnet/tensor/dtype.hpp"

namespace linnet::tensor {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Bool: case DType::I8: case DType::U8: return 1;
    case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 2;
    case DType::I32: case DType::U32: case DType::F32: return 4;
    case DType::I64: case DType::U64: case DType::F64: return 8;
  }
  return 1;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    case DType::U16: return "u16";
    case DType::U32: return "u32";
    case DType::U64: return "u64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  // Every dtype's name has 2-4 characters: the names the interpreter asks
  // about most (a generic such as `T`, on every call) fail that at once.
  if (name.size() < 2 || name.size() > 4) return std::nullopt;
  for (DType dtype : kAllDTypes) {
    if (dtype_name(dtype) == name) return dtype;
  }
  return std::nullopt;
}

bool is_float(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64;
}

bool is_signed_integer(DType dtype) {
  return dtype == DType::I8 || dtype == DType::I16 || dtype == DType::I32 || dtype == DType::I64;
}

bool is_integer(DType dtype) {
  return is_signed_integer(dtype) || dtype == DType::U8 || dtype == DType::U16 || dtype == DType::U32 ||
         dtype == DType::U64;
}

}  // namespace linnet::tensor
