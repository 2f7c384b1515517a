// A readable account of an entry's outputs: each tensor's dtype and shape,
// its range, and for logits (a float tensor whose last axis is the bound
// `Vocab`) the most likely tokens of each row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linnet/tensor/tensor.hpp"

namespace linnet::nest {

class Session;

struct SummaryOptions {
  std::optional<int64_t> vocab;  // the bound `Vocab`; nothing: no top-k
  int top_k = 5;
  int max_rows = 8;     // rows of top-k shown; the rest are counted
  int max_values = 64;  // values shown: every one of a float tensor up to this many, the first of an integer one
};

struct RankedToken {
  int64_t token = 0;
  double value = 0;
};

// The `k` largest entries of each row (over the last axis) in decreasing
// order, ties to the lower index; NaN ranks last. Rows in row-major order
// of the leading axes.
std::vector<std::vector<RankedToken>> top_k_rows(const tensor::Tensor& tensor, int k);

// The largest entry's index per row (the first on ties, NaN never wins
// unless the whole row is NaN), as torch.argmax would pick for finite rows.
std::vector<int64_t> argmax_rows(const tensor::Tensor& tensor);

// Several lines, ending in a newline.
std::string describe_output(const std::string& name, const tensor::Tensor& tensor, const SummaryOptions& options);

// What was loaded: the card, the root block with its generics, the
// checkpoint (its files, the stored dtypes of the bound tensors, the
// config's dtype and rope settings), how the tensors were bound (borrowed
// or widened), the tensors left unbound, and the session's notes.
std::string describe_load(const Session& session);

// Peak resident memory of the process so far (getrusage ru_maxrss), bytes.
size_t peak_resident_bytes();

// "1.23 GB", "456 MB", "12.0 kB", "17 B".
std::string format_bytes(double bytes);

}  // namespace linnet::nest
