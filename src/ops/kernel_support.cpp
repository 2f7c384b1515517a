// Argument access, conversions and registration helpers for the CPU kernels.
#include "kernel_support.hpp"

#include <algorithm>
#include <stdexcept>

namespace linnet::ops::detail {

namespace {

[[noreturn]] void wrong_call(const eval::NativeCall& call, const std::string& what) {
  throw std::logic_error("native kernel for `" + call.qualified_name + "`: " + what);
}

const eval::GenericValue& generic(const eval::NativeCall& call, std::string_view name,
                                  eval::GenericValue::Kind kind) {
  const auto found = call.generics.find(std::string(name));
  if (found == call.generics.end()) wrong_call(call, "the op has no generic `" + std::string(name) + "`");
  if (found->second.kind != kind) wrong_call(call, "generic `" + std::string(name) + "` has another kind");
  return found->second;
}

}  // namespace

const eval::Value& argument(const eval::NativeCall& call, std::string_view name) {
  const auto& params = call.op.params;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].name.text != name) continue;
    if (i >= call.arguments.size()) wrong_call(call, "no value for parameter `" + std::string(name) + "`");
    return call.arguments[i];
  }
  wrong_call(call, "the op has no parameter `" + std::string(name) + "`");
}

const Tensor& tensor_argument(const eval::NativeCall& call, std::string_view name) {
  const eval::Value& value = argument(call, name);
  if (!value.is_tensor()) wrong_call(call, "parameter `" + std::string(name) + "` holds " + value.describe());
  return value.tensor();
}

std::optional<Tensor> optional_tensor_argument(const eval::NativeCall& call, std::string_view name) {
  const eval::Value& value = argument(call, name);
  if (value.kind() == eval::Value::Kind::Optional) {
    if (!value.has_value()) return std::nullopt;
    if (!value.inner().is_tensor()) wrong_call(call, "parameter `" + std::string(name) + "` holds " + value.describe());
    return value.inner().tensor();
  }
  if (value.is_tensor()) return value.tensor();
  wrong_call(call, "parameter `" + std::string(name) + "` holds " + value.describe());
}

double float_argument(const eval::NativeCall& call, std::string_view name) {
  const eval::Value& value = argument(call, name);
  if (value.is_scalar_tensor()) return value.tensor().item().to<double>();
  if (value.kind() == eval::Value::Kind::Float) return value.float_value();
  if (value.kind() == eval::Value::Kind::Int) return static_cast<double>(value.int_value());
  wrong_call(call, "parameter `" + std::string(name) + "` holds " + value.describe());
}

int64_t integer_argument(const eval::NativeCall& call, std::string_view name) {
  const eval::Value& value = argument(call, name);
  if (value.is_scalar_tensor() && tensor::is_integer(value.tensor().dtype())) {
    return value.tensor().item().to<int64_t>();
  }
  if (value.kind() == eval::Value::Kind::Int) return value.int_value();
  wrong_call(call, "parameter `" + std::string(name) + "` holds " + value.describe());
}

int64_t dim_generic(const eval::NativeCall& call, std::string_view name) {
  return generic(call, name, eval::GenericValue::Kind::Dim).dim;
}

Shape shape_generic(const eval::NativeCall& call, std::string_view name) {
  return generic(call, name, eval::GenericValue::Kind::Shape).shape;
}

DType dtype_generic(const eval::NativeCall& call, std::string_view name) {
  return generic(call, name, eval::GenericValue::Kind::DType).dtype;
}

Tensor contiguous_f32(const Tensor& x) { return x.to(DType::F32).contiguous(); }
Tensor contiguous_i64(const Tensor& x) { return x.to(DType::I64).contiguous(); }
Tensor contiguous_bool(const Tensor& x) { return x.to(DType::Bool).contiguous(); }

std::optional<std::span<const std::byte>> mapped_bytes(const Tensor& tensor) {
  const std::optional<Tensor> stored = tensor.stored_bf16();
  const Tensor& bytes = stored ? *stored : tensor;
  if (bytes.is_writable() || bytes.unmade() || !bytes.is_contiguous()) return std::nullopt;
  const size_t size = static_cast<size_t>(bytes.numel()) * bytes.element_size();
  return std::span<const std::byte>(static_cast<const std::byte*>(bytes.raw_data()), size);
}

Rounding rounding_for(DType dtype) {
  switch (dtype) {
    case DType::F32: return &no_rounding;
    case DType::BF16: return &bf16_rounding;
    default: throw std::logic_error("the CPU kernels compute f32 and bf16 only, not " +
                                    std::string(tensor::dtype_name(dtype)));
  }
}

Tensor to_dtype(const Tensor& values_f32, DType dtype) { return values_f32.to(dtype); }

void register_f32_bf16(RegistryOpTable& table, const std::string& op, eval::NumericsPolicy policy,
                       const std::string& f32_summary, const std::string& bf16_summary, KernelFunction run) {
  table.register_kernel({op, DType::F32, policy, f32_summary, run});
  table.register_kernel({op, DType::BF16, policy, bf16_summary, run});
}

}  // namespace linnet::ops::detail
