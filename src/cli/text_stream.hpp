// Printing generated tokens as text while they come: each token's text is
// written as soon as it is whole, and the bytes of a multi-byte character
// split across tokens are held until the character is complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "linnet/text/tokenizer.hpp"

namespace linnet::cli {

class TextStream {
 public:
  TextStream(const text::Tokenizer& tokenizer, std::FILE* out) : tokenizer_(tokenizer), out_(out) {}
  // Adds a token; writes whatever text it completes.
  void push(int32_t token);
  // Writes what is held back (an incomplete character as U+FFFD).
  void finish();

 private:
  const text::Tokenizer& tokenizer_;
  std::FILE* out_;
  std::vector<int32_t> tokens_;
  size_t written_ = 0;  // bytes of the decoded text already written
};

}  // namespace linnet::cli
