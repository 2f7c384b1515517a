// The CUDA op table: each kernel reads an op call's arguments, gets their
// bytes on the device (a weight's device copy is made once and kept by its
// storage), launches, and returns a tensor that lives on the device.
//
// The argument helpers come from the CPU kernels' support file; the
// arithmetic is in kernels.cu (row ops) and here (cuBLAS products).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <utility>

#include "../ops/kernel_support.hpp"
#include "context.hpp"
#include "cublas_library.hpp"
#include "launch.hpp"
#include "linnet/cuda/cuda.hpp"
#include "linnet/tensor/storage.hpp"

namespace linnet::cuda {

namespace {

using ops::detail::dim_generic;
using ops::detail::dtype_generic;
using ops::detail::float_argument;
using ops::detail::optional_tensor_argument;
using ops::detail::tensor_argument;
using tensor::DType;
using tensor::Shape;
using tensor::Storage;
using tensor::Tensor;

// A tensor's elements on the device, dense and row-major. A contiguous
// tensor is read where its storage's device copy lies (uploaded on first
// use); a strided view is made contiguous on the host first (a counted
// download when it lived on the device) and that copy is uploaded.
struct DeviceInput {
  Tensor dense;  // keeps the storage (and so the device copy) alive
  const void* data = nullptr;
};

DeviceInput device_input(const Tensor& tensor) {
  DeviceInput input;
  input.dense = tensor.is_contiguous() ? tensor : tensor.contiguous();
  const auto* base = static_cast<const std::byte*>(input.dense.storage()->device_data(detail::context().backend));
  input.data = base + input.dense.offset() * static_cast<int64_t>(input.dense.element_size());
  return input;
}

// A new contiguous tensor in device memory, and where to write it.
struct DeviceOutput {
  Tensor tensor;
  void* data = nullptr;
};

DeviceOutput device_output(DType dtype, const Shape& shape) {
  const std::shared_ptr<tensor::DeviceBackend>& backend = detail::context().backend;
  DeviceOutput output;
  const size_t bytes = static_cast<size_t>(tensor::shape_numel(shape)) * tensor::dtype_size(dtype);
  output.tensor = Tensor::from_storage(Storage::on_device(backend, bytes), dtype, shape,
                                       tensor::contiguous_strides(shape), 0);
  output.data = output.tensor.storage()->device_mutable_data(backend);
  return output;
}

detail::Element element_of(DType dtype) {
  return dtype == DType::BF16 ? detail::Element::BF16 : detail::Element::F32;
}

bool fits_int(int64_t value) { return value >= 0 && value <= INT_MAX; }

// --- Row ops -------------------------------------------------------------------

std::optional<eval::Value> run_rms_norm(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t width = dim_generic(call, "H");
  const Tensor& x = tensor_argument(call, "x");
  const DeviceInput in = device_input(x), weight = device_input(tensor_argument(call, "weight"));
  DeviceOutput out = device_output(dtype, x.shape());
  if (width > 0) {
    detail::launch_rms_norm(element_of(dtype), in.data, weight.data, out.data, x.numel() / width, width,
                            static_cast<float>(float_argument(call, "eps")));
  }
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_layer_norm(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t width = dim_generic(call, "H");
  const Tensor& x = tensor_argument(call, "x");
  const DeviceInput in = device_input(x), weight = device_input(tensor_argument(call, "weight"));
  const std::optional<Tensor> bias_argument = optional_tensor_argument(call, "bias");
  const DeviceInput bias = bias_argument ? device_input(*bias_argument) : DeviceInput{};
  DeviceOutput out = device_output(dtype, x.shape());
  if (width > 0) {
    detail::launch_layer_norm(element_of(dtype), in.data, weight.data, bias.data, out.data, x.numel() / width, width,
                              static_cast<float>(float_argument(call, "eps")));
  }
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_softmax(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t width = dim_generic(call, "N");
  const Tensor& x = tensor_argument(call, "x");
  if (width == 0) return std::nullopt;  // the body reports the empty reduction
  const DeviceInput in = device_input(x);
  DeviceOutput out = device_output(dtype, x.shape());
  detail::launch_softmax(element_of(dtype), in.data, out.data, x.numel() / width, width);
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_argmax(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t width = dim_generic(call, "N");
  const Tensor& x = tensor_argument(call, "x");
  if (width == 0) return std::nullopt;
  const DeviceInput in = device_input(x);
  Shape shape = x.shape();
  shape.pop_back();
  DeviceOutput out = device_output(DType::I32, shape);
  detail::launch_argmax(element_of(dtype), in.data, static_cast<int32_t*>(out.data), x.numel() / width, width);
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_embedding(const eval::NativeCall& call) {
  const int64_t vocab = dim_generic(call, "Vocab");
  const int64_t width = dim_generic(call, "H");
  // The ids are read on the host (they are usually host inputs already) to
  // leave an id outside the table to the body, as the CPU kernel does.
  const Tensor ids = tensor_argument(call, "ids").contiguous();
  const int32_t* id = ids.data<int32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (id[i] < 0 || id[i] >= vocab) return std::nullopt;
  }
  const Tensor& table = tensor_argument(call, "table");
  const DeviceInput device_ids = device_input(ids), rows = device_input(table);
  Shape shape = ids.shape();
  shape.push_back(width);
  DeviceOutput out = device_output(table.dtype(), shape);
  detail::launch_embedding(table.element_size(), static_cast<const int32_t*>(device_ids.data), rows.data, out.data,
                           ids.numel(), width);
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_rope(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const Tensor& x = tensor_argument(call, "x");
  const DeviceInput in = device_input(x), cos_table = device_input(tensor_argument(call, "cos_table")),
                    sin_table = device_input(tensor_argument(call, "sin_table"));
  DeviceOutput out = device_output(dtype, x.shape());
  detail::launch_rope(element_of(dtype), in.data, cos_table.data, sin_table.data, out.data, x.numel(),
                      dim_generic(call, "S"), dim_generic(call, "D"));
  return eval::Value::from_tensor(out.tensor);
}

// --- Attention and cache writes ----------------------------------------------------

// The dense forms: a shared [Q, K] mask or none (attention,
// grouped_attention), a [B, Q, K] mask (the _rows forms, sink_attention).
std::optional<eval::Value> dense_attention(const eval::NativeCall& call, const detail::AttentionShape& shape,
                                           const std::optional<Tensor>& mask, bool per_sequence, bool with_sinks) {
  if (shape.keys == 0 || shape.kv_heads <= 0 || shape.heads % shape.kv_heads != 0) return std::nullopt;
  const DType dtype = dtype_generic(call, "T");
  const DeviceInput query = device_input(tensor_argument(call, "query")), key = device_input(tensor_argument(call, "key")),
                    value = device_input(tensor_argument(call, "value"));
  const DeviceInput sinks = with_sinks ? device_input(tensor_argument(call, "sinks")) : DeviceInput{};
  const DeviceInput shown = mask ? device_input(*mask) : DeviceInput{};
  const int64_t rows = shape.batch * shape.heads * shape.queries;
  DeviceOutput scratch = device_output(DType::F32, {rows, shape.keys});
  DeviceOutput out = device_output(dtype, {shape.batch, shape.heads, shape.queries, shape.head_dim});
  detail::launch_attention(element_of(dtype), shape, query.data, key.data, value.data, sinks.data,
                           static_cast<const uint8_t*>(shown.data), per_sequence,
                           static_cast<float>(float_argument(call, "scale")), static_cast<float*>(scratch.data),
                           out.data);
  return eval::Value::from_tensor(out.tensor);
}

detail::AttentionShape attention_shape(const eval::NativeCall& call, const char* heads, const char* kv_heads) {
  return {dim_generic(call, "B"), dim_generic(call, heads), dim_generic(call, kv_heads), dim_generic(call, "Q"),
          dim_generic(call, "K"), dim_generic(call, "D")};
}

std::optional<eval::Value> run_attention(const eval::NativeCall& call) {
  return dense_attention(call, attention_shape(call, "H", "H"), optional_tensor_argument(call, "mask"), false, false);
}
std::optional<eval::Value> run_grouped_attention(const eval::NativeCall& call) {
  return dense_attention(call, attention_shape(call, "H", "Hk"), optional_tensor_argument(call, "mask"), false, false);
}
std::optional<eval::Value> run_attention_rows(const eval::NativeCall& call) {
  return dense_attention(call, attention_shape(call, "H", "H"), tensor_argument(call, "mask"), true, false);
}
std::optional<eval::Value> run_grouped_attention_rows(const eval::NativeCall& call) {
  return dense_attention(call, attention_shape(call, "H", "Hk"), tensor_argument(call, "mask"), true, false);
}
std::optional<eval::Value> run_sink_attention(const eval::NativeCall& call) {
  return dense_attention(call, attention_shape(call, "Hq", "Hk"), tensor_argument(call, "mask"), true, true);
}

// write_at (N = 1) and write_span: a device copy of the cache with the
// positions at .. at + N (those inside the cache) replaced.
std::optional<eval::Value> write_span(const eval::NativeCall& call, int64_t n) {
  const Tensor& cache = tensor_argument(call, "cache");
  const int64_t positions = dim_generic(call, "S"), width = dim_generic(call, "D");
  const int64_t rows = dim_generic(call, "B") * dim_generic(call, "H");
  const int64_t at = ops::detail::integer_argument(call, "at");
  if (at < 0) return std::nullopt;  // the body's i32 position arithmetic decides these
  const DeviceInput from = device_input(cache), value = device_input(tensor_argument(call, "value"));
  DeviceOutput out = device_output(cache.dtype(), cache.shape());
  detail::launch_write_span(cache.element_size(), from.data, value.data, out.data, rows, positions, n, width, at);
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_write_at(const eval::NativeCall& call) { return write_span(call, 1); }
std::optional<eval::Value> run_write_span(const eval::NativeCall& call) { return write_span(call, dim_generic(call, "N")); }

// MXFP4 experts dequantized on the device: the packed bytes are uploaded
// once, as stored, and decoded per call.
std::optional<eval::Value> run_dequantize_mxfp4(const eval::NativeCall& call) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t experts = dim_generic(call, "E"), rows = dim_generic(call, "Out"), groups = dim_generic(call, "G");
  const DeviceInput blocks = device_input(tensor_argument(call, "blocks")),
                    scales = device_input(tensor_argument(call, "scales"));
  DeviceOutput out = device_output(dtype, {experts, rows, groups * 32});
  detail::launch_dequantize_mxfp4(element_of(dtype), static_cast<const uint8_t*>(blocks.data),
                                  static_cast<const uint8_t*>(scales.data), out.data, experts * rows * groups);
  return eval::Value::from_tensor(out.tensor);
}

// --- Products through cuBLAS -----------------------------------------------------
// Row-major C[m, n] = A[m, k] B[k, n] is column-major C^T = B^T A^T, so each
// product passes its operands to cuBLAS in swapped order.

cudaDataType_t blas_type(DType dtype) { return dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F; }

// f32 in full f32 (cuBLAS uses TF32 only when asked); bf16 with f32
// accumulation and one rounding; `fast` f32 lets the tensor cores use TF32.
cublasComputeType_t compute_type(DType dtype, bool tf32) {
  if (dtype == DType::F32 && tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// C (rows x cols, row-major) = A (rows x inner) times op(B), B given
// row-major as [cols, inner] when `b_transposed`, else [inner, cols];
// `batches` products at the given element strides. With `accumulate`, C's
// values join the f32 sum before its one rounding (cuBLAS's beta = 1).
void gemm(DType dtype, bool tf32, const void* a, const void* b, void* c, int64_t rows, int64_t inner, int64_t cols,
          bool b_transposed, int64_t batches, bool accumulate = false) {
  if (rows == 0 || cols == 0 || batches == 0) return;
  if (inner == 0 && accumulate) return;
  if (inner == 0) {
    detail::check(cudaMemset(c, 0, static_cast<size_t>(batches * rows * cols) * tensor::dtype_size(dtype)), "cudaMemset");
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  const float* beta = accumulate ? &one : &zero;
  const cudaDataType_t type = blas_type(dtype);
  const cublasOperation_t op_b = b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ld_b = static_cast<int>(b_transposed ? inner : cols);
  cublasHandle_t handle = detail::context().blas;
  if (batches == 1) {
    detail::check(detail::cublas().gemm(handle, op_b, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows),
                               static_cast<int>(inner), &one, b, type, ld_b, a, type, static_cast<int>(inner), beta, c,
                               type, static_cast<int>(cols), compute_type(dtype, tf32), CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
  } else {
    detail::check(detail::cublas().gemm_strided_batched(handle, op_b, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows),
                                             static_cast<int>(inner), &one, b, type, ld_b, inner * cols, a, type,
                                             static_cast<int>(inner), rows * inner, beta, c, type,
                                             static_cast<int>(cols), rows * cols, static_cast<int>(batches),
                                             compute_type(dtype, tf32), CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx");
  }
}

std::optional<eval::Value> linear(const eval::NativeCall& call, bool tf32) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t in_width = dim_generic(call, "In"), out_width = dim_generic(call, "Out");
  const Tensor& x = tensor_argument(call, "x");
  const int64_t rows = tensor::shape_numel(ops::detail::shape_generic(call, "S"));
  if (!fits_int(rows) || !fits_int(in_width) || !fits_int(out_width)) return std::nullopt;
  const DeviceInput in = device_input(x), weight = device_input(tensor_argument(call, "weight"));
  Shape shape = ops::detail::shape_generic(call, "S");
  shape.push_back(out_width);
  DeviceOutput out = device_output(dtype, shape);
  // The bias joins the f32 sum before its one rounding, as the CPU kernel
  // and PyTorch's addmm do: every output row starts as the bias (zeros plus
  // the bias, exact) and cuBLAS adds the product to it (beta = 1).
  const std::optional<Tensor> bias = optional_tensor_argument(call, "bias");
  if (bias) {
    const DeviceInput shift = device_input(*bias);
    detail::check(cudaMemset(out.data, 0, static_cast<size_t>(rows * out_width) * tensor::dtype_size(dtype)),
                  "cudaMemset");
    detail::launch_add_bias(element_of(dtype), out.data, shift.data, rows, out_width);
  }
  gemm(dtype, tf32, in.data, weight.data, out.data, rows, in_width, out_width, /*b_transposed=*/true, 1,
       /*accumulate=*/bias.has_value());
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_linear(const eval::NativeCall& call) { return linear(call, false); }
std::optional<eval::Value> run_linear_tf32(const eval::NativeCall& call) { return linear(call, true); }

std::optional<eval::Value> matmul(const eval::NativeCall& call, bool batched, bool tf32) {
  const DType dtype = dtype_generic(call, "T");
  const int64_t m = dim_generic(call, "M"), k = dim_generic(call, "K"), n = dim_generic(call, "N");
  const Tensor& a = tensor_argument(call, "a");
  Shape shape = batched ? ops::detail::shape_generic(call, "B") : Shape{};
  const int64_t batches = tensor::shape_numel(shape);
  if (!fits_int(m) || !fits_int(k) || !fits_int(n) || !fits_int(batches)) return std::nullopt;
  const DeviceInput left = device_input(a), right = device_input(tensor_argument(call, "b"));
  shape.push_back(m);
  shape.push_back(n);
  DeviceOutput out = device_output(dtype, shape);
  gemm(dtype, tf32, left.data, right.data, out.data, m, k, n, /*b_transposed=*/false, batches);
  return eval::Value::from_tensor(out.tensor);
}

std::optional<eval::Value> run_matmul(const eval::NativeCall& call) { return matmul(call, false, false); }
std::optional<eval::Value> run_matmul_tf32(const eval::NativeCall& call) { return matmul(call, false, true); }
std::optional<eval::Value> run_batched_matmul(const eval::NativeCall& call) { return matmul(call, true, false); }
std::optional<eval::Value> run_batched_matmul_tf32(const eval::NativeCall& call) { return matmul(call, true, true); }

class CudaKernelTable : public ops::RegistryOpTable {
 public:
  CudaKernelTable() : RegistryOpTable("cuda") {
    const auto fast = eval::NumericsPolicy::Fast;
    both("std.nn.linear::linear", "cuBLAS, f32 in full f32 (no TF32); the bias in the f32 sum",
         "cuBLAS, f32 accumulation with the bias, rounded to bf16 once", &run_linear);
    add("std.nn.linear::linear", DType::F32, fast, "cuBLAS with TF32 tensor cores; the bias in the f32 sum",
        &run_linear_tf32);
    both("std.linalg::matmul", "cuBLAS, full f32", "cuBLAS, f32 accumulation, rounded once", &run_matmul);
    add("std.linalg::matmul", DType::F32, fast, "cuBLAS with TF32 tensor cores", &run_matmul_tf32);
    both("std.linalg::batched_matmul", "cuBLAS strided batches, full f32",
         "cuBLAS strided batches, f32 accumulation, rounded once", &run_batched_matmul);
    add("std.linalg::batched_matmul", DType::F32, fast, "cuBLAS strided batches with TF32 tensor cores",
        &run_batched_matmul_tf32);
    both("std.nn.norm::rms_norm", "one block per row, statistics in f32",
         "one block per row, statistics in f32; rounded before and after the weight", &run_rms_norm);
    both("std.nn.norm::layer_norm", "one block per row, statistics in f32",
         "one block per row, statistics in f32; rounded as the body rounds", &run_layer_norm);
    both("std.nn.softmax::softmax", "one block per row in f32", "one block per row in f32, rounded once", &run_softmax);
    both("std.nn.decoding::argmax", "first index of the row maximum (NaN row: N), bit for bit",
         "first index of the row maximum (NaN row: N), bit for bit", &run_argmax);
    both("std.nn.embedding::embedding", "row copies, bit for bit", "row copies, bit for bit", &run_embedding);
    both("std.nn.rope::rope", "the body's three roundings, bit for bit", "the body's three roundings, bit for bit",
         &run_rope);
    const std::string attention_summary = "one block per query row: scores, softmax and mix in f32";
    for (const auto& [op, run] : std::initializer_list<std::pair<const char*, ops::KernelFunction>>{
             {"std.nn.attention::attention", &run_attention},
             {"std.nn.attention::grouped_attention", &run_grouped_attention},
             {"std.nn.attention::attention_rows", &run_attention_rows},
             {"std.nn.attention::grouped_attention_rows", &run_grouped_attention_rows},
             {"std.nn.attention::sink_attention", &run_sink_attention}}) {
      both(op, attention_summary,
           attention_summary + ", each weight rounded to bf16 as it enters the mix, rounded to bf16 once", run);
    }
    both("std.quant::dequantize_mxfp4", "the E2M1 table times the scale's power of two: bit for bit",
         "the E2M1 table times the scale's power of two: bit for bit", &run_dequantize_mxfp4);
    both("std.nn.cache::write_at", "a device copy of the cache, the row written: bit for bit",
         "a device copy of the cache, the row written: bit for bit", &run_write_at);
    both("std.nn.cache::write_span", "a device copy of the cache, the rows written: bit for bit",
         "a device copy of the cache, the rows written: bit for bit", &run_write_span);
  }

 private:
  void both(const std::string& op, const std::string& f32_summary, const std::string& bf16_summary,
            ops::KernelFunction run) {
    add(op, DType::F32, eval::NumericsPolicy::Equivalent, f32_summary, run);
    add(op, DType::BF16, eval::NumericsPolicy::Equivalent, bf16_summary, run);
  }
  void add(const std::string& op, DType dtype, eval::NumericsPolicy policy, const std::string& summary,
           ops::KernelFunction run) {
    register_kernel({op, dtype, policy, summary, run});
  }
};

}  // namespace

std::shared_ptr<const ops::OpTable> kernel_table() {
  static const std::shared_ptr<const ops::OpTable> table = std::make_shared<CudaKernelTable>();
  return table;
}

}  // namespace linnet::cuda
