// The grouped MXFP4 expert product (see mxfp4_grouped.hpp), the way
// llama.cpp's mul_mat_id and vLLM's fused MoE run a prompt through its
// experts: the tokens routed to one expert are gathered into one matrix and
// multiplied by that expert's weights in one product, so each weight is
// decoded once per call and used by every token that chose it. The product
// runs on the packed AVX-512 kernel (mxfp4_grouped_avx512.cpp) where the
// CPU has it, else on the dense kernels (oneDNN's packed bf16/f32 kernels
// from tensor::gemm::kLibraryMinRows rows, our own below).
//
// The weights stay packed: a tile of kGroupedTileOutputs rows is decoded
// into a per-thread buffer, multiplied, and the buffer reused for the next
// tile, so at most one tile per thread is ever decoded.
#include "mxfp4_grouped.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <exception>
#include <new>
#include <vector>

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::ops::detail {

namespace {

// oneDNN makes (JIT-compiles) one kernel per product shape and keeps a few
// hundred; the row count of a gathered expert is whatever the router chose.
// Padding it with zero rows to a multiple of this bounds the shapes a prompt
// makes (a few dozen row counts instead of hundreds) for a few percent of
// extra work. Below kLibraryMinRows our kernels run, which make nothing.
constexpr int64_t kLibraryRowMultiple = 16;

int64_t gathered_rows(int64_t count) {
  if (count < tensor::gemm::kLibraryMinRows) return count;
  return (count + kLibraryRowMultiple - 1) / kLibraryRowMultiple * kLibraryRowMultiple;
}

}  // namespace

void* thread_scratch(Scratch which, size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { ::operator delete(data, std::align_val_t(64)); }
  };
  thread_local Buffer buffers[4];
  Buffer& buffer = buffers[static_cast<int>(which)];
  if (bytes > buffer.size) {
    ::operator delete(buffer.data, std::align_val_t(64));
    buffer.data = nullptr;
    buffer.size = 0;
    buffer.data = ::operator new(bytes, std::align_val_t(64));
    buffer.size = bytes;
  }
  return buffer.data;
}

namespace {

// Where slot `slot`'s input starts.
const float* slot_input(const float* x, InputLayout layout, const SlotsByExpert& slots, int64_t slot) {
  return x + (slot / slots.slots_per_row) * layout.row_stride + (slot % slots.slots_per_row) * layout.slot_stride;
}

// Each expert's first position in a buffer that holds, expert after
// expert, `size(expert)` units (rows or panels): offsets[i] is expert i's
// first unit and offsets.back() the total; `largest` the largest size.
struct ExpertOffsets {
  std::vector<int64_t> offsets;
  int64_t largest = 0;
};

template <class SizeOf>
ExpertOffsets expert_offsets(std::span<const int64_t> experts, SizeOf size_of) {
  ExpertOffsets result{std::vector<int64_t>(experts.size() + 1, 0), 0};
  for (size_t i = 0; i < experts.size(); ++i) {
    const int64_t size = size_of(experts[i]);
    result.offsets[i + 1] = result.offsets[i] + size;
    result.largest = std::max(result.largest, size);
  }
  return result;
}

// Runs item(index, tile_weights, tile_products) for every index in
// [0, items), on the threads when `work` multiply-adds are worth them. Each
// thread takes its scratch (a decoded tile of `weight_bytes`, products of
// `product_bytes`) at its first item and keeps it for its later items and
// calls. An exception must not leave a parallel region: the first is kept
// and thrown after it.
template <class Item>
void for_each_item(int64_t items, int64_t work, size_t weight_bytes, size_t product_bytes, const Item& item) {
  std::exception_ptr failure;
#pragma omp parallel if (tensor::worth_threads(work))
  {
    void* tile_weights = nullptr;
    float* tile_products = nullptr;
#pragma omp for schedule(dynamic)
    for (int64_t index = 0; index < items; ++index) {
      try {
        if (tile_weights == nullptr) {
          tile_weights = thread_scratch(Scratch::TileWeights, weight_bytes);
          tile_products = static_cast<float*>(thread_scratch(Scratch::TileProducts, product_bytes));
        }
        item(index, tile_weights, tile_products);
      } catch (...) {
#pragma omp critical(linnet_mxfp4_grouped_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// The product on tensor::gemm (oneDNN from kLibraryMinRows rows, our dot
// tiles below), for CPUs without the packed kernel.
void products_on_gemm(const Mxfp4Experts& weights, const float* x, InputLayout layout, const SlotsByExpert& slots,
                      std::span<const int64_t> experts, bool bf16_products, ProductsOut y) {
  const int64_t length = weights.row_length(), out_rows = weights.rows;
  const auto expert_count = static_cast<int64_t>(experts.size());

  // Expert i's gathered inputs are rows [first_row[i], first_row[i + 1]):
  // its slots in increasing order, then zero rows up to gathered_rows().
  // (Named variables, not a structured binding: clang, which builds the
  // fuzz targets, does not let OpenMP regions refer to bindings.)
  const ExpertOffsets row_offsets =
      expert_offsets(experts, [&](int64_t expert) { return gathered_rows(slots.count(expert)); });
  const std::vector<int64_t>& first_row = row_offsets.offsets;
  const int64_t most_rows = row_offsets.largest;
  const int64_t all_rows = first_row.back();
  // Every element is written below (inputs or zero rows).
  void* const gathered =
      thread_scratch(Scratch::Gathered, static_cast<size_t>(all_rows * length) * (bf16_products ? 2 : 4));
  auto* const gathered_bf16 = static_cast<uint16_t*>(gathered);
  auto* const gathered_f32 = static_cast<float*>(gathered);
#pragma omp parallel for schedule(static) if (tensor::worth_threads(all_rows * length))
  for (int64_t row = 0; row < all_rows; ++row) {
    const int64_t i = std::upper_bound(first_row.begin(), first_row.end(), row) - first_row.begin() - 1;
    const int64_t index = row - first_row[i];
    const float* input = nullptr;
    if (index < slots.count(experts[i])) {
      input = slot_input(x, layout, slots, slots.by_expert[slots.start[experts[i]] + index]);
    }
    if (bf16_products) {
      uint16_t* to = gathered_bf16 + row * length;
      if (input == nullptr) {
        std::fill(to, to + length, uint16_t{0});
      } else {
        // The caller checked that every input is a bf16 value: its upper half.
        for (int64_t at = 0; at < length; ++at) {
          to[at] = static_cast<uint16_t>(std::bit_cast<uint32_t>(input[at]) >> 16);
        }
      }
    } else {
      float* to = gathered_f32 + row * length;
      if (input == nullptr) {
        std::fill(to, to + length, 0.0f);
      } else {
        std::copy(input, input + length, to);
      }
    }
  }

  const int64_t tiles = (out_rows + kGroupedTileOutputs - 1) / kGroupedTileOutputs;
  const int64_t items = expert_count * tiles;
  const int64_t work = all_rows * out_rows * length;
  const tensor::DType tile_type = bf16_products ? tensor::DType::BF16 : tensor::DType::F32;
  const size_t element = bf16_products ? sizeof(uint16_t) : sizeof(float);
  const int64_t groups = weights.groups;
  // The thread's decoded tile (f32, or bf16 bits) and the tile's products.
  const auto weight_bytes = static_cast<size_t>(kGroupedTileOutputs * length) * element;
  const auto product_bytes = static_cast<size_t>(most_rows * kGroupedTileOutputs) * sizeof(float);
  for_each_item(items, work, weight_bytes, product_bytes, [&](int64_t item, void* tile_weights, float* tile_products) {
    const int64_t i = item / tiles, expert = experts[i];
    const int64_t first_output = (item % tiles) * kGroupedTileOutputs;
    const int64_t outputs = std::min(kGroupedTileOutputs, out_rows - first_output);
    const int64_t first_group = (expert * out_rows + first_output) * groups;
    const Mxfp4Experts tile{
        weights.blocks.subspan(static_cast<size_t>(first_group * kMxfp4BlockBytes),
                               static_cast<size_t>(outputs * groups * kMxfp4BlockBytes)),
        weights.scales.subspan(static_cast<size_t>(first_group), static_cast<size_t>(outputs * groups)), 1,
        outputs, groups};
    const size_t tile_bytes = static_cast<size_t>(outputs * length) * element;
    dequantize_mxfp4(tile, tile_type, std::span<std::byte>(static_cast<std::byte*>(tile_weights), tile_bytes));

    const int64_t rows = first_row[i + 1] - first_row[i];
    const void* inputs = bf16_products ? static_cast<const void*>(gathered_bf16 + first_row[i] * length)
                                       : static_cast<const void*>(gathered_f32 + first_row[i] * length);
    tensor::gemm::gemm_bt_serial(rows, 0, outputs, length, tensor::gemm::Operand{inputs, bf16_products, length},
                                 tensor::gemm::Operand{tile_weights, bf16_products, length}, tile_products,
                                 outputs);
    // Each real row's products to its slot (the zero rows' are dropped).
    for (int64_t index = 0; index < slots.count(expert); ++index) {
      const int64_t slot = slots.by_expert[slots.start[expert] + index];
      const float* from = tile_products + index * outputs;
      if (y.bf16 != nullptr) {
        uint16_t* to = y.bf16 + slot * out_rows + first_output;
        for (int64_t o = 0; o < outputs; ++o) to[o] = tensor::float_to_bf16_bits(from[o]);
      } else {
        std::copy(from, from + outputs, y.f32 + slot * out_rows + first_output);
      }
    }
  });
}

// Item-local offsets of an expert's slots' output rows: offsets[t] is where
// token t's outputs from `first_output` on start in y. (One vector per
// thread, reused by its items.)
const int64_t* slot_offsets(const SlotsByExpert& slots, int64_t expert, int64_t out_rows, int64_t first_output) {
  thread_local std::vector<int64_t> offsets;
  const int64_t count = slots.count(expert);
  offsets.resize(static_cast<size_t>(count));
  for (int64_t index = 0; index < count; ++index) {
    offsets[index] = slots.by_expert[slots.start[expert] + index] * out_rows + first_output;
  }
  return offsets.data();
}

// The product on the packed AVX-512 kernel (mxfp4_grouped_avx512.cpp):
// each expert's tokens' rows gathered (bf16 bits, or f32 as they are), one
// after another, with no padding.
void products_packed(const Mxfp4Experts& weights, const float* x, InputLayout layout, const SlotsByExpert& slots,
                     std::span<const int64_t> experts, bool bf16_products, ProductsOut y) {
  const int64_t length = weights.row_length(), out_rows = weights.rows;
  const auto expert_count = static_cast<int64_t>(experts.size());
  const size_t element = bf16_products ? sizeof(uint16_t) : sizeof(float);

  // Expert i's tokens are rows [first_row[i], first_row[i + 1]).
  const ExpertOffsets row_offsets = expert_offsets(experts, [&](int64_t expert) { return slots.count(expert); });
  const std::vector<int64_t>& first_row = row_offsets.offsets;
  const int64_t most_rows = row_offsets.largest;
  const int64_t all_rows = first_row.back();
  void* const gathered = thread_scratch(Scratch::Gathered, static_cast<size_t>(all_rows * length) * element);
#pragma omp parallel for schedule(static) if (tensor::worth_threads(all_rows * length))
  for (int64_t row = 0; row < all_rows; ++row) {
    const int64_t i = std::upper_bound(first_row.begin(), first_row.end(), row) - first_row.begin() - 1;
    const float* input = slot_input(x, layout, slots, slots.by_expert[slots.start[experts[i]] + row - first_row[i]]);
    if (bf16_products) {
      grouped_gather_bf16(input, length, static_cast<uint16_t*>(gathered) + row * length);
    } else {
      std::copy(input, input + length, static_cast<float*>(gathered) + row * length);
    }
  }

  const int64_t tiles = (out_rows + kGroupedTileOutputs - 1) / kGroupedTileOutputs;
  const int64_t items = expert_count * tiles;
  const int64_t work = all_rows * out_rows * length;
  const auto weight_bytes =
      static_cast<size_t>(kGroupedTileOutputs * (bf16_products ? kGroupedPartBf16 : kGroupedPartF32)) * element;
  const auto product_bytes = static_cast<size_t>(most_rows * kGroupedTileOutputs) * sizeof(float);
  for_each_item(items, work, weight_bytes, product_bytes, [&](int64_t item, void* tile_weights, float* tile_products) {
    const int64_t i = item / tiles, expert = experts[i];
    const int64_t first_output = (item % tiles) * kGroupedTileOutputs;
    const int64_t outputs = std::min(kGroupedTileOutputs, out_rows - first_output);
    const int64_t first_group = (expert * out_rows + first_output) * weights.groups;
    const auto* const inputs =
        static_cast<const std::byte*>(gathered) + static_cast<size_t>(first_row[i] * length) * element;
    const GroupedRowsTile tile{weights.blocks.data() + first_group * kMxfp4BlockBytes,
                               weights.scales.data() + first_group,
                               weights.groups,
                               outputs,
                               inputs,
                               slots.count(expert)};
    if (bf16_products) {
      grouped_rows_avx512bf16(tile, tile_weights, tile_products);
    } else {
      grouped_rows_avx512_f32(tile, tile_weights, tile_products);
    }
    grouped_store_rows_avx512(tile_products, outputs, slot_offsets(slots, expert, out_rows, first_output),
                              slots.count(expert), y);
  });
}

std::atomic<bool> packed_enabled{true};

}  // namespace

void set_grouped_packed_enabled(bool enabled) { packed_enabled = enabled; }

void grouped_expert_products(const Mxfp4Experts& weights, const float* x, InputLayout layout,
                             const SlotsByExpert& slots, std::span<const int64_t> experts, bool bf16_products,
                             ProductsOut y) {
  if (experts.empty()) return;
  const tensor::gemm::Isa isa = tensor::gemm::active_isa();
  const bool packed = packed_enabled && (isa == tensor::gemm::Isa::Avx512Bf16 ||
                                         (isa == tensor::gemm::Isa::Avx512 && !bf16_products));
  if (packed) {
    products_packed(weights, x, layout, slots, experts, bf16_products, y);
  } else {
    products_on_gemm(weights, x, layout, slots, experts, bf16_products, y);
  }
}

}  // namespace linnet::ops::detail
