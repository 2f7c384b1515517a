// How a contraction's operands group into a stack of matrix products,
// shared by contract() (kernels_contract.cpp) and
// contract_rounding_each_step() (kernels_contract_exact.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor::detail {

// a viewed as [batch, m, k] (permute a by order_a, then reshape) and b as
// [batch, k, n] (order_b), k in the listed order of the contracted axes (the
// row-major order of the terms); `shape` is the result's: a's batch axes,
// a's free axes, b's free axes.
struct ContractionPlan {
  Shape shape;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int> order_a, order_b;
};

// Checks the axes (each in range and listed once, a and b listing as many,
// partners of equal extent) and groups them. Errors are TensorErrors whose
// message starts with `who`. Dtypes are the caller's to check.
ContractionPlan plan_contraction(const Tensor& a, const Tensor& b, const ContractionAxes& axes, const char* who);

}  // namespace linnet::tensor::detail
