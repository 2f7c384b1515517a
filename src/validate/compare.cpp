// Logit statistics for the validation checks (see compare.hpp).
#include "linnet/validate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "linnet/validate/golden.hpp"

namespace linnet::validate {

namespace {

std::string shape_text(const tensor::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::vector<int64_t> argmax_of_rows(const std::vector<double>& values, int64_t width) {
  std::vector<int64_t> result;
  if (width <= 0) return result;
  for (size_t start = 0; start + static_cast<size_t>(width) <= values.size(); start += static_cast<size_t>(width)) {
    int64_t best = 0;
    for (int64_t i = 1; i < width; ++i) {
      // NaN never wins; a NaN row keeps index 0 and a mismatch shows in the differences.
      if (values[start + static_cast<size_t>(i)] > values[start + static_cast<size_t>(best)]) best = i;
    }
    result.push_back(best);
  }
  return result;
}

}  // namespace

std::vector<int64_t> row_argmax(const tensor::Tensor& logits) {
  if (logits.rank() == 0) return {};
  return argmax_of_rows(logits.to_vector<double>(), logits.extent(-1));
}

LogitComparison compare_logits(const tensor::Tensor& ours, const tensor::Tensor& reference, const std::string& what) {
  if (ours.shape() != reference.shape() || ours.rank() == 0) {
    throw GoldenError(what + ": the card produced logits of shape " + shape_text(ours.shape()) +
                      " where the reference has " + shape_text(reference.shape()));
  }
  const std::vector<double> x = ours.to_vector<double>();
  const std::vector<double> y = reference.to_vector<double>();
  LogitComparison result;
  double total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) ++result.equal_elements;
    double difference = std::abs(x[i] - y[i]);
    if (std::isnan(difference)) difference = std::numeric_limits<double>::infinity();
    result.max_abs_diff = std::max(result.max_abs_diff, difference);
    total += difference;
  }
  result.elements = static_cast<int64_t>(x.size());
  result.mean_abs_diff = x.empty() ? 0 : total / static_cast<double>(x.size());
  const int64_t width = ours.extent(-1);
  result.ours_argmax = argmax_of_rows(x, width);
  const std::vector<int64_t> theirs = argmax_of_rows(y, width);
  result.rows = static_cast<int64_t>(theirs.size());
  for (size_t i = 0; i < theirs.size(); ++i) result.argmax_matches += result.ours_argmax[i] == theirs[i] ? 1 : 0;
  return result;
}

void accumulate(LogitComparison& total, const LogitComparison& part) {
  const int64_t elements = total.elements + part.elements;
  if (elements > 0) {
    total.mean_abs_diff = (total.mean_abs_diff * static_cast<double>(total.elements) +
                           part.mean_abs_diff * static_cast<double>(part.elements)) /
                          static_cast<double>(elements);
  }
  total.elements = elements;
  total.equal_elements += part.equal_elements;
  total.max_abs_diff = std::max(total.max_abs_diff, part.max_abs_diff);
  total.rows += part.rows;
  total.argmax_matches += part.argmax_matches;
  total.ours_argmax.insert(total.ours_argmax.end(), part.ours_argmax.begin(), part.ours_argmax.end());
}

}  // namespace linnet::validate
