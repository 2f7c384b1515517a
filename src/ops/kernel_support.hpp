// What every CPU kernel file shares: reading an op call's arguments and
// generics by name, moving tensors to and from f32, rounding to the op's
// dtype, and the registration functions the CPU table calls.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "linnet/eval/dispatch.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/tensor.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::ops::detail {

using tensor::DType;
using tensor::Shape;
using tensor::Tensor;

// --- Arguments ---------------------------------------------------------------
// The interpreter has already checked every argument against its parameter
// type, so a missing parameter or a value of another kind here is a kernel
// registered for the wrong op: std::logic_error.

// The value bound to parameter `name`.
const eval::Value& argument(const eval::NativeCall& call, std::string_view name);
// A tensor parameter.
const Tensor& tensor_argument(const eval::NativeCall& call, std::string_view name);
// An optional tensor parameter (`T? = none`): the tensor, or nothing.
std::optional<Tensor> optional_tensor_argument(const eval::NativeCall& call, std::string_view name);
// A scalar parameter (`scale: f32`, `at: i32`), as double / integer.
double float_argument(const eval::NativeCall& call, std::string_view name);
int64_t integer_argument(const eval::NativeCall& call, std::string_view name);

// A `Dim` generic, a `Shape` pack, a dtype generic.
int64_t dim_generic(const eval::NativeCall& call, std::string_view name);
Shape shape_generic(const eval::NativeCall& call, std::string_view name);
DType dtype_generic(const eval::NativeCall& call, std::string_view name);

// Whether argument `name` is the only reference to its tensor's storage,
// which is owned and writable: the interpreter passes an argument that way
// when the old value is dead after the call (eval's DeadAfterCall), and a
// kernel may then write into it and return it as its result. Other values
// sharing the tensor, and views of its storage, make this false.
inline bool held_by_call_alone(const eval::NativeCall& call, std::string_view name) {
  return argument(call, name).holds_storage_alone();
}

// --- Data --------------------------------------------------------------------

// `x` as a contiguous f32 tensor (exact for bf16, f16 and f32; x itself
// when it already is one).
Tensor contiguous_f32(const Tensor& x);
// `x` (any integer dtype) as contiguous i64 values.
Tensor contiguous_i64(const Tensor& x);
// A contiguous bool tensor (one byte per element, 0 or 1).
Tensor contiguous_bool(const Tensor& x);
// The stored bytes of a tensor that lies in the checkpoint's mapping (a
// borrowed tensor, or the bf16 bytes under an f32 tensor widened on
// access), for advice to the kernel about them (tensor/mapped_pages.hpp);
// nothing for memory of our own or elements made on access.
std::optional<std::span<const std::byte>> mapped_bytes(const Tensor& tensor);

// Rounding to the op's dtype, in f32: the identity for f32, nearest even
// for bf16 (f16 is left to the bodies).
using Rounding = float (*)(float);
Rounding rounding_for(DType dtype);
inline float no_rounding(float value) { return value; }
inline float bf16_rounding(float value) { return tensor::round_to_bf16(value); }
// Calls `body(round)` with the rounding to `dtype` as a function object the
// compiler can inline into a per-element loop (a Rounding pointer costs an
// indirect call per element: 2% of a 512-token bf16 forward went to them).
// Same functions, same bits; throws as rounding_for does for other dtypes.
template <class Body>
decltype(auto) with_rounding(DType dtype, Body&& body) {
  if (dtype == DType::BF16) return body([](float value) { return tensor::round_to_bf16(value); });
  if (dtype != DType::F32) rounding_for(dtype);  // throws
  return body([](float value) { return value; });
}

// An f32 tensor converted to `dtype` (one rounding, nearest even).
Tensor to_dtype(const Tensor& values_f32, DType dtype);

// The wrap-around arithmetic of i32 values, as the bodies compute positions.
inline int32_t wrapping_add_i32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrapping_sub_i32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t wrapping_mul_i32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// The NaN-propagating maximum the bodies' `max` reduction and `max(a, b)`
// compute: the first NaN met wins.
inline float max_propagating_nan(float accumulated, float value) {
  if (accumulated != accumulated) return accumulated;
  if (value != value || value > accumulated) return value;
  return accumulated;
}

// --- Registration ---------------------------------------------------------------

// Registers `run` for `op` under `policy` once per dtype in {f32, bf16},
// with the summaries given per dtype.
void register_f32_bf16(RegistryOpTable& table, const std::string& op, eval::NumericsPolicy policy,
                       const std::string& f32_summary, const std::string& bf16_summary, KernelFunction run);

// One function per kernel file (src/ops/kernels_<family>.cpp).
void register_linear_kernels(RegistryOpTable& table);     // linear, matmul, batched_matmul
void register_attention_kernels(RegistryOpTable& table);  // the std.nn.attention ops
void register_softmax_kernels(RegistryOpTable& table);    // softmax
void register_activation_kernels(RegistryOpTable& table); // silu, sigmoid
void register_norm_kernels(RegistryOpTable& table);       // rms_norm, layer_norm
void register_rope_kernels(RegistryOpTable& table);       // rope, rope_rows
void register_embedding_kernels(RegistryOpTable& table);  // embedding
void register_cache_kernels(RegistryOpTable& table);      // std.nn.cache writes
void register_decoding_kernels(RegistryOpTable& table);   // argmax
void register_loss_kernels(RegistryOpTable& table);       // log_softmax, token_log_probs, cross_entropy
void register_moe_kernels(RegistryOpTable& table);        // std.nn.moe products
void register_mxfp4_kernels(RegistryOpTable& table);      // std.quant MXFP4 items

}  // namespace linnet::ops::detail
