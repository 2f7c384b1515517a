// The MXFP4 expert products (see mxfp4.hpp for what each computes and in
// which order it accumulates).
//
// The slots are grouped by the expert they chose. An expert that many slots
// chose (a prompt's, kMxfp4GroupedSlots or more) multiplies them all as one
// matrix product over tiles of its decoded rows (mxfp4_grouped.cpp). The
// other chosen experts' rows are cut into runs that the threads share. With
// AVX-512 or AVX2 a run goes to a vector kernel (mxfp4_rows_<path>.cpp)
// that decodes the packed bytes in registers as it multiplies, tiles of
// four rows by three inputs; otherwise each row is dequantized once into a
// per-thread buffer and multiplied by the input of every slot that chose
// the expert. Either way the packed bytes are read in place, only for
// chosen experts, once per call, and every sum has the documented order
// (the same bits with any number of threads).
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <vector>

#include "linnet/ops/mxfp4.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/threading.hpp"
#include "mxfp4_grouped.hpp"
#include "mxfp4_rows.hpp"

namespace linnet::ops {

namespace {

using detail::InputLayout;

// The documented accumulation order: eight lanes over i mod 8, combined
// pairwise. `length` is a multiple of 32, so there is no tail.
float dot_in_lanes(const float* a, const float* b, int64_t length) {
  float lanes[8] = {};
  for (int64_t i = 0; i < length; i += 8)
    for (int lane = 0; lane < 8; ++lane) lanes[lane] += a[i + lane] * b[i + lane];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

void check_size(const char* op, const char* what, size_t actual, int64_t expected) {
  if (static_cast<int64_t>(actual) != expected)
    throw std::invalid_argument(std::string(op) + ": " + what + " holds " + std::to_string(actual) +
                                " values, expected " + std::to_string(expected));
}

// a * b for sizes, refusing a product that overflows.
int64_t size_product(const char* op, int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw std::invalid_argument(std::string(op) + ": sizes " + std::to_string(a) + " x " + std::to_string(b) +
                                " overflow");
  return product;
}

void check_choice(const char* op, const Mxfp4Experts& weights, const ExpertChoice& choice) {
  if (choice.rows < 0 || choice.slots < 0)
    throw std::invalid_argument(std::string(op) + ": negative routing shape [" + std::to_string(choice.rows) +
                                ", " + std::to_string(choice.slots) + "]");
  check_size(op, "experts", choice.experts.size(), size_product(op, choice.rows, choice.slots));
  for (int64_t row = 0; row < choice.rows; ++row)
    for (int64_t slot = 0; slot < choice.slots; ++slot) {
      const int64_t expert = choice.experts[row * choice.slots + slot];
      if (expert < 0 || expert >= weights.experts)
        throw std::out_of_range(std::string(op) + ": experts[" + std::to_string(row) + ", " + std::to_string(slot) +
                                "] is " + std::to_string(expert) + ", outside the " +
                                std::to_string(weights.experts) + " experts");
    }
}

// y[(r * K + k) * Out + o] for every slot (r, k) and output row o, in f32,
// or, when `y_bf16` is given, rounded to bf16 there (`y` is then scratch for
// the slots of the experts too rarely chosen to be grouped, whose rows are
// rounded after). Everything has been validated by the caller.
// `bf16_products`: every input is a bf16 value, so grouped experts may
// multiply in bf16.
void expert_products(const Mxfp4Experts& weights, const float* x, InputLayout layout, const ExpertChoice& choice,
                     bool bf16_products, float* y, uint16_t* y_bf16 = nullptr) {
  const int64_t slot_count = choice.rows * choice.slots;
  const int64_t out_rows = weights.rows;
  const int64_t length = weights.row_length();

  // Slots ordered by expert (a counting sort).
  detail::SlotsByExpert by{choice.slots, std::vector<int64_t>(weights.experts + 1, 0), {}};
  std::vector<int64_t>& start = by.start;
  for (int64_t slot = 0; slot < slot_count; ++slot) ++start[choice.experts[slot] + 1];
  for (int64_t expert = 0; expert < weights.experts; ++expert) start[expert + 1] += start[expert];
  by.by_expert.resize(static_cast<size_t>(slot_count));
  std::vector<int64_t> cursor(start.begin(), start.end() - 1);
  for (int64_t slot = 0; slot < slot_count; ++slot) by.by_expert[cursor[choice.experts[slot]]++] = slot;
  const std::vector<int64_t>& by_expert = by.by_expert;
  // The chosen experts: those chosen often enough to be grouped, the rest.
  std::vector<int64_t> grouped, chosen;
  for (int64_t expert = 0; expert < weights.experts; ++expert) {
    if (by.count(expert) >= kMxfp4GroupedSlots) {
      grouped.push_back(expert);
    } else if (by.count(expert) > 0) {
      chosen.push_back(expert);
    }
  }
  detail::grouped_expert_products(weights, x, layout, by, grouped, bf16_products, detail::ProductsOut{y, y_bf16});
  if (chosen.empty()) return;

  const tensor::gemm::Isa isa = tensor::gemm::active_isa();
  void (*const vector_kernel)(const detail::Mxfp4Rows&) =
      isa == tensor::gemm::Isa::Avx512 || isa == tensor::gemm::Isa::Avx512Bf16 ? &detail::mxfp4_rows_avx512
      : isa == tensor::gemm::Isa::Avx2                                          ? &detail::mxfp4_rows_avx2
                                                                                : nullptr;
  const auto input_of = [&](int64_t slot) {
    return x + (slot / choice.slots) * layout.row_stride + (slot % choice.slots) * layout.slot_stride;
  };
  // One work item per (chosen expert, run of kRunRows output rows): long
  // enough runs to keep the vector kernel in its four-row tiles. Threads
  // take kItemsPerTake consecutive items at a time: the kernel prefetches
  // the rows after its run (`rows_after`), which are the next item's; when
  // another thread had already taken that item, its first tile started on
  // rows not yet fetched, and a decode step's expert calls took 1.25x as
  // long on two threads as with takes of 8 (docs/performance.md, "Runs of
  // rows taken eight at a time"). 8 still leaves one token's four experts
  // 90-180 takes to balance between the threads.
  constexpr int64_t kRunRows = 16;
  constexpr int kItemsPerTake = 8;
  const int64_t runs = (out_rows + kRunRows - 1) / kRunRows;
  const int64_t items = static_cast<int64_t>(chosen.size()) * runs;
  int64_t most_slots = 0;
  for (int64_t expert : chosen) most_slots = std::max(most_slots, start[expert + 1] - start[expert]);
  const uint8_t* const blocks = weights.blocks.data();
  const uint8_t* const scales = weights.scales.data();
  const int64_t row_bytes = weights.groups * kMxfp4BlockBytes;
  // An expert with one input (a decode step's) at T = bf16 multiplies with
  // vdpbf16ps (mxfp4_rows_avx512.cpp) when the input allows it: its bf16
  // pairs, laid out here once per slot for all of the expert's runs.
  std::vector<std::vector<uint16_t>> slot_pairs(static_cast<size_t>(slot_count));
  if (bf16_products && vector_kernel == &detail::mxfp4_rows_avx512) {
    for (int64_t expert : chosen) {
      if (start[expert + 1] - start[expert] != 1) continue;
      const int64_t slot = by_expert[start[expert]];
      if (!detail::mxfp4_bf16_pairs_safe(input_of(slot), length)) continue;
      slot_pairs[slot].resize(static_cast<size_t>(length * 2));
      detail::mxfp4_bf16_pairs(input_of(slot), length, slot_pairs[slot].data());
    }
  }
#pragma omp parallel if (tensor::worth_threads(items * kRunRows * length))
  {
    std::vector<float> row_values(vector_kernel ? 0 : length);
    std::vector<float> panel(vector_kernel && most_slots > 1 ? kRunRows * length : 0);
    std::vector<const float*> inputs(static_cast<size_t>(most_slots));
    std::vector<float*> outputs(static_cast<size_t>(most_slots));
#pragma omp for schedule(dynamic, kItemsPerTake)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t expert = chosen[item / runs];
      const int64_t first_row = (item % runs) * kRunRows;
      const int64_t run_rows = std::min(kRunRows, out_rows - first_row);
      if (vector_kernel) {
        const int64_t count = start[expert + 1] - start[expert];
        for (int64_t index = 0; index < count; ++index) {
          const int64_t slot = by_expert[start[expert] + index];
          inputs[index] = input_of(slot);
          outputs[index] = y + slot * out_rows + first_row;
        }
        const int64_t first = expert * out_rows + first_row;
        const std::vector<uint16_t>& pairs = slot_pairs[by_expert[start[expert]]];
        vector_kernel(detail::Mxfp4Rows{blocks + first * row_bytes, scales + first * weights.groups, weights.groups,
                                        run_rows, detail::mxfp4_value_table_f32(), inputs.data(), outputs.data(),
                                        count, panel.empty() ? nullptr : panel.data(),
                                        out_rows - first_row - run_rows,
                                        pairs.empty() ? nullptr : pairs.data()});
        continue;
      }
      for (int64_t out_row = first_row; out_row < first_row + run_rows; ++out_row) {
        dequantize_mxfp4_row_f32(weights, expert, out_row, row_values);
        for (int64_t index = start[expert]; index < start[expert + 1]; ++index) {
          const int64_t slot = by_expert[index];
          y[slot * out_rows + out_row] = dot_in_lanes(input_of(slot), row_values.data(), length);
        }
      }
    }
  }
  if (y_bf16 == nullptr) return;
  // The ungrouped experts' slots, few by their definition, rounded.
  for (int64_t expert : chosen)
    for (int64_t index = start[expert]; index < start[expert + 1]; ++index) {
      const int64_t first = by_expert[index] * out_rows;
      for (int64_t o = first; o < first + out_rows; ++o) y_bf16[o] = tensor::float_to_bf16_bits(y[o]);
    }
}

// Whether every value is a bf16 value (its f32 bits' lower half zero), as
// every input of a T = bf16 call is: such inputs multiply as bf16 with the
// same products (a bf16 times an MXFP4 value is exact in f32).
// (The lower halves OR-ed together, without an early exit, so that the loop
// vectorizes and the threads share it: a prompt's inputs are tens of MB.)
bool holds_bf16_values(std::span<const float> x) {
  const auto size = static_cast<int64_t>(x.size());
  const float* values = x.data();
  uint32_t lower = 0;
#pragma omp parallel for schedule(static) reduction(| : lower) if (tensor::worth_threads(size))
  for (int64_t i = 0; i < size; ++i) lower |= std::bit_cast<uint32_t>(values[i]) & 0xFFFFu;
  return lower == 0;
}

// R * K * Out, the size of a per-slot result.
int64_t output_size(const char* op, const ExpertChoice& choice, int64_t out_rows) {
  return size_product(op, size_product(op, choice.rows, choice.slots), out_rows);
}

// Validates one call's shapes. `shared` says whether each row has one input
// ([R, In]) or one per slot ([R, K, In]).
InputLayout checked_layout(const char* op, const Mxfp4Experts& weights, std::span<const float> x,
                           const ExpertChoice& choice, bool shared, size_t out_size, int64_t expected_out) {
  weights.validate();
  check_choice(op, weights, choice);
  const int64_t length = weights.row_length();
  check_size(op, "x", x.size(), size_product(op, choice.rows * (shared ? 1 : choice.slots), length));
  check_size(op, "the output", out_size, expected_out);
  return shared ? InputLayout{length, 0} : InputLayout{choice.slots * length, length};
}

void products_f32(const char* op, const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                  bool shared, std::span<float> out) {
  const int64_t expected = output_size(op, choice, weights.rows);
  InputLayout layout = checked_layout(op, weights, x, choice, shared, out.size(), expected);
  expert_products(weights, x.data(), layout, choice, false, out.data());
}

void products_bf16(const char* op, const Mxfp4Experts& weights, std::span<const float> x,
                   const ExpertChoice& choice, bool shared, std::span<uint16_t> out) {
  const int64_t expected = output_size(op, choice, weights.rows);
  InputLayout layout = checked_layout(op, weights, x, choice, shared, out.size(), expected);
  // f32 scratch for the slots of experts not grouped (the thread's, not
  // cleared: those slots' elements are written before they are rounded);
  // the grouped experts' products are rounded straight into `out`.
  auto* const products =
      static_cast<float*>(detail::thread_scratch(detail::Scratch::Products, out.size() * sizeof(float)));
  expert_products(weights, x.data(), layout, choice, holds_bf16_values(x), products, out.data());
}

// The weighted sum over slots, in f32, stored in `out_f32`, or rounded to
// bf16 in `out_bf16` (T = bf16; exactly one of the two is given). At
// T = bf16 the inputs may be multiplied in bf16 when they are all bf16
// values.
void combine(const char* op, const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
             std::span<const float> mixing, size_t out_size, float* out_f32, uint16_t* out_bf16) {
  InputLayout layout =
      checked_layout(op, weights, x, choice, false, out_size, size_product(op, choice.rows, weights.rows));
  check_size(op, "weights", mixing.size(), choice.rows * choice.slots);
  const int64_t out_rows = weights.rows;
  const auto product_count = static_cast<size_t>(output_size(op, choice, out_rows));
  auto* const products =
      static_cast<float*>(detail::thread_scratch(detail::Scratch::Products, product_count * sizeof(float)));
  expert_products(weights, x.data(), layout, choice, out_bf16 != nullptr && holds_bf16_values(x), products);
  // Each output is summed whole by one thread, in slot order.
  const bool vector = tensor::gemm::active_isa() == tensor::gemm::Isa::Avx512 ||
                      tensor::gemm::active_isa() == tensor::gemm::Isa::Avx512Bf16;
  if (vector) {
    // 16 outputs of a row at a time, the same operations per output; rows
    // in blocks the threads share.
    constexpr int64_t kRowBlock = 8;
    const int64_t blocks = (choice.rows + kRowBlock - 1) / kRowBlock;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(choice.rows * choice.slots * out_rows))
    for (int64_t block = 0; block < blocks; ++block) {
      detail::mxfp4_combine_rows_avx512(products, mixing.data(), block * kRowBlock,
                                        std::min(choice.rows, (block + 1) * kRowBlock), choice.slots, out_rows,
                                        out_f32, out_bf16);
    }
    return;
  }
#pragma omp parallel for schedule(static) if (tensor::worth_threads(choice.rows * choice.slots * out_rows))
  for (int64_t row = 0; row < choice.rows; ++row)
    for (int64_t out_row = 0; out_row < out_rows; ++out_row) {
      float total = 0.0f;
      for (int64_t slot = 0; slot < choice.slots; ++slot) {
        const int64_t flat = row * choice.slots + slot;
        total += mixing[flat] * products[flat * out_rows + out_row];
      }
      const int64_t at = row * out_rows + out_row;
      if (out_bf16 != nullptr) {
        out_bf16[at] = tensor::float_to_bf16_bits(total);
      } else {
        out_f32[at] = total;
      }
    }
}

}  // namespace

void mxfp4_experts_shared_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                              std::span<float> out) {
  products_f32("mxfp4_experts_shared", weights, x, choice, true, out);
}

void mxfp4_experts_shared_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                               std::span<uint16_t> out) {
  products_bf16("mxfp4_experts_shared", weights, x, choice, true, out);
}

void mxfp4_linear_experts_shared_f32(const Mxfp4Experts& weights, std::span<const float> x,
                                     const ExpertChoice& choice, std::span<float> out) {
  products_f32("mxfp4_linear_experts_shared", weights, x, choice, true, out);
}

void mxfp4_linear_experts_shared_bf16(const Mxfp4Experts& weights, std::span<const float> x,
                                      const ExpertChoice& choice, std::span<uint16_t> out) {
  products_bf16("mxfp4_linear_experts_shared", weights, x, choice, true, out);
}

void mxfp4_experts_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                       std::span<float> out) {
  products_f32("mxfp4_experts", weights, x, choice, false, out);
}

void mxfp4_experts_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                        std::span<uint16_t> out) {
  products_bf16("mxfp4_experts", weights, x, choice, false, out);
}

void mxfp4_combine_experts_f32(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                               std::span<const float> mixing, std::span<float> out) {
  combine("mxfp4_combine_experts", weights, x, choice, mixing, out.size(), out.data(), nullptr);
}

void mxfp4_combine_experts_bf16(const Mxfp4Experts& weights, std::span<const float> x, const ExpertChoice& choice,
                                std::span<const float> mixing, std::span<uint16_t> out) {
  combine("mxfp4_combine_experts", weights, x, choice, mixing, out.size(), nullptr, out.data());
}

}  // namespace linnet::ops
