// Kernels for the std.nn.moe products: linear_experts, linear_experts_shared
// and combine_experts. Weights are [E, Out, In]; experts[r, k] names row r's
// k-th chosen expert.
//
// The bodies are dense (every expert times every row, or a gather of each
// chosen expert's weight); the kernels multiply each expert only by the
// slots that chose it: the slots are grouped by expert, their inputs
// gathered into one matrix per expert, and the product is taken in tiles of
// kTileOutputs output rows of the expert's weight (a bf16 weight is widened
// one tile at a time, never whole). Sums are in f32, the result rounded to
// T once, as the bodies do.
//
// An expert outside 0..E: linear_experts and linear_experts_shared leave
// the call to the body, which reports the gather; combine_experts' body
// never matches such an expert, so it contributes nothing here either.
#include <Eigen/Core>

#include <algorithm>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;

constexpr int64_t kTileOutputs = 64;

struct ExpertProblem {
  int64_t rows = 0, slots = 0;      // R, K
  int64_t experts = 0;              // E
  int64_t in = 0, out = 0;          // In, Out
  bool shared_input = false;        // x is [R, In] rather than [R, K, In]
};

// y[r * K + k, :] = W[experts[r, k]] x_rk in f32 for every slot whose expert
// is in range (other slots' rows are left at zero). x and y are f32; the
// weight is a contiguous f32 or bf16 [E, Out, In] tensor.
std::vector<float> expert_products(const ExpertProblem& p, const float* x, const Tensor& weight,
                                   const int64_t* experts) {
  const int64_t slot_count = p.rows * p.slots;
  std::vector<float> y(static_cast<size_t>(slot_count * p.out), 0.0f);
  if (p.in == 0 || p.out == 0 || slot_count == 0) return y;

  // The slots of each expert, and their inputs side by side.
  std::vector<std::vector<int64_t>> chosen_by(static_cast<size_t>(p.experts));
  for (int64_t slot = 0; slot < slot_count; ++slot) {
    const int64_t expert = experts[slot];
    if (expert >= 0 && expert < p.experts) chosen_by[static_cast<size_t>(expert)].push_back(slot);
  }
  std::vector<int64_t> used;
  for (int64_t e = 0; e < p.experts; ++e) {
    if (!chosen_by[static_cast<size_t>(e)].empty()) used.push_back(e);
  }
  std::vector<std::vector<float>> inputs(static_cast<size_t>(p.experts));
  for (int64_t e : used) {
    const auto& slots = chosen_by[static_cast<size_t>(e)];
    auto& gathered = inputs[static_cast<size_t>(e)];
    gathered.resize(slots.size() * static_cast<size_t>(p.in));
    for (size_t j = 0; j < slots.size(); ++j) {
      const int64_t source_row = p.shared_input ? slots[j] / p.slots : slots[j];
      std::copy(x + source_row * p.in, x + (source_row + 1) * p.in, gathered.begin() + j * p.in);
    }
  }

  const int64_t tiles_per_expert = (p.out + kTileOutputs - 1) / kTileOutputs;
  const int64_t tiles = static_cast<int64_t>(used.size()) * tiles_per_expert;
  const bool widen = weight.dtype() == DType::BF16;
  const float* weight_f32 = widen ? nullptr : weight.data<float>();
  const tensor::bf16_t* weight_bf16 = widen ? weight.data<tensor::bf16_t>() : nullptr;
  // A parallel region (when worth it), so that Eigen multiplies each tile on
  // one thread and results do not depend on the thread count.
#pragma omp parallel if (tensor::worth_threads(p.rows * p.slots * p.out * p.in))
  {
    std::vector<float> panel(widen ? static_cast<size_t>(kTileOutputs * p.in) : 0);
    RowMatrix products;
#pragma omp for schedule(dynamic)
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t expert = used[static_cast<size_t>(tile / tiles_per_expert)];
      const int64_t first_output = (tile % tiles_per_expert) * kTileOutputs;
      const int64_t outputs = std::min(kTileOutputs, p.out - first_output);
      const int64_t offset = (expert * p.out + first_output) * p.in;
      const float* panel_data = weight_f32 ? weight_f32 + offset : panel.data();
      if (widen) {
        for (int64_t i = 0; i < outputs * p.in; ++i) panel[static_cast<size_t>(i)] = weight_bf16[offset + i].to_float();
      }
      const auto& slots = chosen_by[static_cast<size_t>(expert)];
      const ConstMatrixMap gathered(inputs[static_cast<size_t>(expert)].data(), static_cast<int64_t>(slots.size()),
                                    p.in);
      const ConstMatrixMap weights(panel_data, outputs, p.in);
      products.noalias() = gathered * weights.transpose();
      for (size_t j = 0; j < slots.size(); ++j) {
        float* target = y.data() + slots[j] * p.out + first_output;
        for (int64_t o = 0; o < outputs; ++o) target[o] = products(static_cast<int64_t>(j), o);
      }
    }
  }
  return y;
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
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  const Tensor weight = tensor_argument(call, "weight").contiguous();
  const std::vector<float> y = expert_products(p, x.data<float>(), weight, experts.data<int64_t>());
  return eval::Value::from_tensor(to_dtype(Tensor::from_vector(y, {p.rows, p.slots, p.out}), dtype_generic(call, "T")));
}

std::optional<eval::Value> run_combine_experts(const eval::NativeCall& call) {
  const ExpertProblem p = read_problem(call, false);
  const Tensor experts = contiguous_i64(tensor_argument(call, "experts"));
  const Tensor x = contiguous_f32(tensor_argument(call, "x"));
  const Tensor weight = tensor_argument(call, "weight").contiguous();
  const Tensor mixing = contiguous_f32(tensor_argument(call, "weights"));
  const std::vector<float> y = expert_products(p, x.data<float>(), weight, experts.data<int64_t>());
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
                    "each chosen expert (widened a tile at a time) times the slots that chose it, f32 "
                    "accumulation, rounded to bf16 once",
                    &run_linear_experts<false>);
  register_f32_bf16(table, module + "linear_experts_shared", equivalent,
                    "each chosen expert times the rows that chose it, f32 accumulation",
                    "each chosen expert (widened a tile at a time) times the rows that chose it, f32 "
                    "accumulation, rounded to bf16 once",
                    &run_linear_experts<true>);
  register_f32_bf16(table, module + "combine_experts", equivalent,
                    "chosen experts' products weighed and summed in slot order, f32",
                    "chosen experts' products weighed and summed in slot order in f32, rounded to bf16 once",
                    &run_combine_experts);
}

}  // namespace linnet::ops::detail
