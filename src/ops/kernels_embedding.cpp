// Kernel for `std.nn.embedding::embedding<*S, Vocab, H, T>`: row ids[...]
// of the table for every id, copied as stored (bit for bit the body). An id
// outside 0..Vocab is left to the body, which reports it where it was read.
// An f32 table the checkpoint stores as bf16 is read as stored, each row
// widened as it is copied.
#include <cstring>

#include "kernel_support.hpp"
#include "linnet/tensor/mapped_pages.hpp"

namespace linnet::ops::detail {

namespace {

// A table in the checkpoint's mapping is read a row per token, each row
// from the disk when the page cache does not hold it: a decode step's new
// token then waits for its row (on the development VM, whose kernel drops
// unmapped file pages it sees unused, half the steps of a Mistral-width
// decode waited 3.5-7 ms). So the first lookup asks for the whole table,
// in the background (docs/performance.md).
constexpr size_t kReadAheadTableBytes = size_t{16} << 20;
void read_table_ahead(const Tensor& table) {
  const std::optional<std::span<const std::byte>> bytes = mapped_bytes(table);
  if (bytes && bytes->size() >= kReadAheadTableBytes) tensor::read_ahead_in_background(bytes->data(), bytes->size());
}

std::optional<eval::Value> run_embedding(const eval::NativeCall& call) {
  const Tensor ids = contiguous_i64(tensor_argument(call, "ids"));
  const Tensor table = tensor_argument(call, "table").contiguous();
  const int64_t vocab = dim_generic(call, "Vocab");
  const int64_t width = dim_generic(call, "H");
  const int64_t* id = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (id[i] < 0 || id[i] >= vocab) return std::nullopt;
  }
  Shape shape = ids.shape();
  shape.push_back(width);
  read_table_ahead(table);
  if (const std::optional<Tensor> stored = table.stored_bf16()) {
    // An f32 table stored as bf16: the rows widened as they are copied
    // (exact), without making the whole table's f32 copy.
    Tensor result = Tensor::empty(DType::F32, shape);
    const tensor::bf16_t* rows = stored->data<tensor::bf16_t>();
    float* out = result.mutable_data<float>();
    const int64_t count = ids.numel();
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count * width))
    for (int64_t i = 0; i < count; ++i) {
      const tensor::bf16_t* row = rows + id[i] * width;
      for (int64_t j = 0; j < width; ++j) out[i * width + j] = row[j].to_float();
    }
    return eval::Value::from_tensor(result);
  }
  Tensor result = Tensor::empty(table.dtype(), shape);
  const size_t row_bytes = static_cast<size_t>(width) * table.element_size();
  const auto* rows = static_cast<const std::byte*>(table.raw_data());
  auto* out = static_cast<std::byte*>(result.raw_mutable_data());
  const int64_t count = ids.numel();
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count * static_cast<int64_t>(row_bytes)))
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + static_cast<size_t>(i) * row_bytes, rows + static_cast<size_t>(id[i]) * row_bytes, row_bytes);
  }
  return eval::Value::from_tensor(result);
}

}  // namespace

void register_embedding_kernels(RegistryOpTable& table) {
  register_f32_bf16(table, "std.nn.embedding::embedding", eval::NumericsPolicy::Equivalent,
                    "row copies, bit for bit the body", "row copies, bit for bit the body", &run_embedding);
}

}  // namespace linnet::ops::detail
