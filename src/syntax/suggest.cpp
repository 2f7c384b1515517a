// Spelling suggestions (suggest.hpp).
#include "linnet/syntax/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace linnet::syntax {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: two back for transpositions.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> closest_name(std::string_view wrong, const std::vector<std::string>& candidates) {
  // A one- or two-letter name is one edit from every other short name:
  // only a case slip counts there.
  const size_t allowed = wrong.size() <= 2 ? 0 : wrong.size() <= 4 ? 1 : wrong.size() / 3;
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == wrong) continue;
    if (equal_ignoring_case(candidate, wrong)) return candidate;
    const size_t distance = edit_distance(wrong, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates) {
  std::optional<std::string> found = closest_name(wrong, candidates);
  return found ? "; did you mean `" + *found + "`?" : "";
}

std::string did_you_mean_or_list(std::string_view wrong, const std::vector<std::string>& candidates,
                                 std::string_view singular, std::string_view plural) {
  if (std::optional<std::string> found = closest_name(wrong, candidates)) return "; did you mean `" + *found + "`?";
  if (candidates.empty()) return "; it has no " + std::string(plural);
  if (candidates.size() == 1) return "; its only " + std::string(singular) + " is `" + candidates.front() + "`";
  return "; its " + std::string(plural) + " are " + quoted_list(candidates);
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += "`" + names[i] + "`";
  }
  return out;
}

std::string count_of(std::size_t count, std::string_view singular, std::string_view plural) {
  return std::to_string(count) + " " + std::string(count == 1 ? singular : plural);
}

}  // namespace linnet::syntax
