// Kernels for the std.nn.moe products: linear_experts, linear_experts_shared
// and combine_experts. Weights are [E, Out, In]; experts[r, k] names row r's
// k-th chosen expert.
//
// The bodies are dense (every expert times every row, or a gather of each
// chosen expert's weight); the kernels multiply each expert only by the
// slots that chose it: the slots are grouped by expert, their inputs
// gathered into one matrix per expert, and the product is taken by
// tensor::gemm, which reads the expert's weight in place (f32 or bf16; bf16
// by bf16 as bf16 products). Sums are in f32, the result rounded to T once,
// as the bodies do.
//
// An expert outside 0..E: linear_experts and linear_experts_shared leave
// the call to the body, which reports the gather; combine_experts' body
// never matches such an expert, so it contributes nothing here either.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernel_support.hpp"
#include "linnet/tensor/gemm.hpp"

namespace linnet::ops::detail {

namespace {

struct ExpertProblem {
  int64_t rows = 0, slots = 0;      // R, K
  int64_t experts = 0;              // E
  int64_t in = 0, out = 0;          // In, Out
  bool shared_input = false;        // x is [R, In] rather than [R, K, In]
};

// y[r * K + k, :] = W[experts[r, k]] x_rk in f32 for every slot whose expert
// is in range (other slots' rows are left at zero). x is a contiguous f32 or
// bf16 tensor; the weight is a contiguous f32 or bf16 [E, Out, In] tensor.
std::vector<float> expert_products(const ExpertProblem& p, const Tensor& x, const Tensor& weight,
                                   const int64_t* experts) {
  const int64_t slot_count = p.rows * p.slots;
  std::vector<float> y(static_cast<size_t>(slot_count * p.out), 0.0f);
  if (p.in == 0 || p.out == 0 || slot_count == 0) return y;

  // The slots of each expert.
  std::vector<std::vector<int64_t>> chosen_by(static_cast<size_t>(p.experts));
  for (int64_t slot = 0; slot < slot_count; ++slot) {
    const int64_t expert = experts[slot];
    if (expert >= 0 && expert < p.experts) chosen_by[static_cast<size_t>(expert)].push_back(slot);
  }
  const bool x_bf16 = x.dtype() == DType::BF16;
  const size_t x_element = x_bf16 ? 2 : 4;
  const size_t row_bytes = static_cast<size_t>(p.in) * x_element;
  const bool w_bf16 = weight.dtype() == DType::BF16;
  const size_t w_element = w_bf16 ? 2 : 4;
  const auto* x_bytes = static_cast<const char*>(x.raw_data());
  const auto* w_bytes = static_cast<const char*>(weight.raw_data());
  std::vector<char> gathered;
  std::vector<float> products;
  for (int64_t e = 0; e < p.experts; ++e) {
    const auto& slots = chosen_by[static_cast<size_t>(e)];
    if (slots.empty()) continue;
    // The expert's inputs side by side, then one product over its weight.
    const int64_t count = static_cast<int64_t>(slots.size());
    gathered.resize(slots.size() * row_bytes);
    for (size_t j = 0; j < slots.size(); ++j) {
      const int64_t source_row = p.shared_input ? slots[j] / p.slots : slots[j];
      std::memcpy(gathered.data() + j * row_bytes, x_bytes + static_cast<size_t>(source_row) * row_bytes, row_bytes);
    }
    products.resize(static_cast<size_t>(count * p.out));
    const tensor::gemm::Operand inputs{gathered.data(), x_bf16, p.in};
    const tensor::gemm::Operand expert_weight{w_bytes + static_cast<size_t>(e * p.out * p.in) * w_element, w_bf16,
                                              p.in};
    tensor::gemm::gemm_bt(count, p.out, p.in, inputs, expert_weight, products.data(), p.out);
    for (size_t j = 0; j < slots.size(); ++j) {
      std::copy(products.begin() + static_cast<int64_t>(j) * p.out, products.begin() + static_cast<int64_t>(j + 1) * p.out,
                y.begin() + slots[j] * p.out);
    }
  }
  return y;
}

// A product operand as gemm reads it: contiguous, f32 or bf16.
Tensor product_operand(const Tensor& t) {
  if (t.dtype() == DType::F32 || t.dtype() == DType::BF16) return t.contiguous();
  return contiguous_f32(t);
}

ExpertProblem read_problem(const eval::NativeCall& call, bool shared_input) {
  ExpertProblem p;
  p.rows = dim_generic(call, "R");
  p.slots = dim_generic(call, "K");
  p.experts = dim_generic(call, "E");
  p.in = dim_generic(call, "In");
  p.out = dim_generic(call, "Out");
  p.shared_input = shared_input;
  return p;
}

bool all_in_range(const Tensor& experts, int64_t count) {
  const int64_t* expert = experts.data<int64_t>();
  for (int64_t i = 0; i < experts.numel(); ++i) {
    if (expert[i] < 0 || expert[i] >= count) return false;
  }
  return true;
}

template <bool SharedInput>
std::optional<eval::Value> run_linear_experts(const eval::NativeCall& call) {
  const ExpertProblem p = read_problem(call, SharedInput);
  const Tensor experts = contiguous_i64(tensor_argument(call, "experts"));
  if (!all_in_range(experts, p.experts)) return std::nullopt;
  const Tensor x = product_operand(tensor_argument(call, "x"));
  const Tensor weight = product_operand(tensor_argument(call, "weight"));
  const std::vector<float> y = expert_products(p, x, weight, experts.data<int64_t>());
  return eval::Value::from_tensor(to_dtype(Tensor::from_vector(y, {p.rows, p.slots, p.out}), dtype_generic(call, "T")));
}

std::optional<eval::Value> run_combine_experts(const eval::NativeCall& call) {
  const ExpertProblem p = read_problem(call, false);
  const Tensor experts = contiguous_i64(tensor_argument(call, "experts"));
  const Tensor x = product_operand(tensor_argument(call, "x"));
  const Tensor weight = product_operand(tensor_argument(call, "weight"));
  const Tensor mixing = contiguous_f32(tensor_argument(call, "weights"));
  const std::vector<float> y = expert_products(p, x, weight, experts.data<int64_t>());
  const int64_t* expert = experts.data<int64_t>();
  const float* mix = mixing.data<float>();
  Tensor result = Tensor::zeros(DType::F32, {p.rows, p.out});
  float* out = result.mutable_data<float>();
#pragma omp parallel for schedule(static) if (tensor::worth_threads(p.rows * p.slots * p.out))
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t k = 0; k < p.slots; ++k) {
      const int64_t slot = r * p.slots + k;
      if (expert[slot] < 0 || expert[slot] >= p.experts) continue;
      for (int64_t o = 0; o < p.out; ++o) out[r * p.out + o] += mix[slot] * y[static_cast<size_t>(slot * p.out + o)];
    }
  }
  return eval::Value::from_tensor(to_dtype(result, dtype_generic(call, "T")));
}

}  // namespace

void register_moe_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  const std::string module = "std.nn.moe::";
  register_f32_bf16(table, module + "linear_experts", equivalent,
                    "each chosen expert times the slots that chose it, f32 accumulation",
                    "each chosen expert times the slots that chose it, bf16 products (vdpbf16ps where the CPU has "
                    "it), f32 accumulation, rounded to bf16 once",
                    &run_linear_experts<false>);
  register_f32_bf16(table, module + "linear_experts_shared", equivalent,
                    "each chosen expert times the rows that chose it, f32 accumulation",
                    "each chosen expert times the rows that chose it, bf16 products (vdpbf16ps where the CPU has "
                    "it), f32 accumulation, rounded to bf16 once",
                    &run_linear_experts<true>);
  register_f32_bf16(table, module + "combine_experts", equivalent,
                    "chosen experts' products weighed and summed in slot order, f32",
                    "chosen experts' products weighed and summed in slot order in f32, rounded to bf16 once",
                    &run_combine_experts);
}

}  // namespace linnet::ops::detail
