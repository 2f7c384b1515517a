// Comparing logits a card produced with reference logits: the largest and
// the mean absolute difference, and how often the two choose the same
// token (argmax over the last axis, the first index on a tie, as
// torch.argmax does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linnet/tensor/tensor.hpp"

namespace linnet::validate {

struct LogitComparison {
  // Over every element, in f64. A NaN on either side, or an infinity on
  // one, makes both infinite: such logits never pass.
  double max_abs_diff = 0;
  double mean_abs_diff = 0;
  int64_t elements = 0;         // values compared
  int64_t equal_elements = 0;   // of which bit for bit equal (as f64, so a bf16 value widened exactly counts)
  int64_t rows = 0;             // positions compared (the product of all axes but the last)
  int64_t argmax_matches = 0;   // positions whose argmax agrees
  std::vector<int64_t> ours_argmax;  // per position
};

// Compares `ours` with `reference`, any float dtypes, same shape (at least
// one axis). Throws GoldenError, naming `what`, when the shapes differ.
LogitComparison compare_logits(const tensor::Tensor& ours, const tensor::Tensor& reference, const std::string& what);

// Folds `part` (a further comparison, say the next decoding step) into
// `total`: the larger maximum, the mean over both sets of elements, the
// matches and argmaxes appended.
void accumulate(LogitComparison& total, const LogitComparison& part);

// The argmax of each row along the last axis (first index on ties).
std::vector<int64_t> row_argmax(const tensor::Tensor& logits);

}  // namespace linnet::validate
