// Element types: every dtype a Linnet value can have, plus the names used by
// the safetensors and NumPy formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace linnet::tensor {

enum class DType : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64 };

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I8,  DType::I16, DType::I32, DType::I64,
                                       DType::U8,   DType::U16, DType::U32, DType::U64, DType::F16,
                                       DType::BF16, DType::F32, DType::F64};

// Bytes per element.
size_t dtype_size(DType dtype);
// The Linnet spelling: "bool", "i8", ..., "bf16", "f64".
std::string_view dtype_name(DType dtype);
std::optional<DType> dtype_from_name(std::string_view name);
bool is_float(DType dtype);
bool is_integer(DType dtype);  // signed or unsigned, not bool
bool is_signed_integer(DType dtype);

}  // namespace linnet::tensor
