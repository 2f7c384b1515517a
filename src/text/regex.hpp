// A compiled Unicode regular expression (PCRE2, UTF + UCP, JIT-compiled
// when the platform allows): the pre-tokenizers' split patterns, which
// need \p{L}, \p{N}, look-ahead and case-insensitive groups.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linnet::text {

class Regex {
 public:
  // Throws TokenizerError when `pattern` does not compile.
  explicit Regex(const std::string& pattern);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Every non-overlapping match in `text` (valid UTF-8), left to right, as
  // [begin, end) byte offsets. Empty matches are skipped.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace linnet::text
