#include "regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "linnet/text/tokenizer.hpp"
#include "linnet/text/utf8.hpp"

namespace linnet::text {

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() {
    if (code) pcre2_code_free(code);
  }
};

Regex::Regex(const std::string& pattern) : compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (!compiled_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw TokenizerError("the pattern `" + pattern + "` does not compile at offset " + std::to_string(offset) + ": " +
                         reinterpret_cast<const char*>(message));
  }
  // JIT is an optimisation: where it is unavailable the interpreter runs.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  while (at <= text.size()) {
    // The text was checked to be valid UTF-8 once, before any split.
    const int found = pcre2_match(compiled_->code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (found < 0) break;
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(data);
    const size_t begin = range[0], end = range[1];
    if (end > begin) {
      matches.emplace_back(begin, end);
      at = end;
    } else {
      if (begin >= text.size()) break;
      at = begin + utf8::sequence_length(static_cast<unsigned char>(text[begin]));
    }
  }
  pcre2_match_data_free(data);
  return matches;
}

}  // namespace linnet::text
