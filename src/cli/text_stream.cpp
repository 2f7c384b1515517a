#include "text_stream.hpp"

#include "linnet/text/utf8.hpp"

namespace linnet::cli {

void TextStream::push(int32_t token) {
  tokens_.push_back(token);
  // Decoding the whole list again keeps the decoders' rules (a leading
  // space stripped once, byte-fallback runs joined) exactly as in one
  // decode; generations are short enough for that to cost nothing.
  const std::string bytes = tokenizer_.decode_bytes(tokens_, /*skip_special_tokens=*/true);
  const size_t complete = bytes.size() - text::utf8::incomplete_tail(bytes);
  if (complete > written_) {
    const std::string fresh = text::utf8::repair(std::string_view(bytes).substr(written_, complete - written_));
    std::fwrite(fresh.data(), 1, fresh.size(), out_);
    std::fflush(out_);
    written_ = complete;
  }
}

void TextStream::finish() {
  const std::string bytes = tokenizer_.decode_bytes(tokens_, /*skip_special_tokens=*/true);
  if (bytes.size() > written_) {
    const std::string rest = text::utf8::repair(std::string_view(bytes).substr(written_));
    std::fwrite(rest.data(), 1, rest.size(), out_);
  }
  written_ = bytes.size();
  std::fflush(out_);
}

}  // namespace linnet::cli
