// libFuzzer target for the tokenizer on arbitrary text, with the byte-level
// tokenizer of golden/gptoss-a (o200k's pattern, no normalizer) and the
// SentencePiece-style one of golden/mistral-a (byte fallback). Besides
// crashes and sanitizer reports, it stops on a broken invariant: invalid
// UTF-8 must be refused with a TokenizerError, and valid text must decode
// back to itself (the Strip decoder of mistral-a drops one leading space,
// which its Prepend normalizer added).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "linnet/text/tokenizer.hpp"

namespace {

using linnet::text::Tokenizer;
using linnet::text::TokenizerError;

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tokenizer byte_level = Tokenizer::from_file(LINNET_SOURCE_DIR "/golden/gptoss-a/tokenizer.json");
  static const Tokenizer sentence_piece = Tokenizer::from_file(LINNET_SOURCE_DIR "/golden/mistral-a/tokenizer.json");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<int32_t> ids = byte_level.encode(text, false);
    require(byte_level.decode(ids) == text);
    for (int32_t id : ids) require(id >= 0 && id < byte_level.vocab_size());
  } catch (const TokenizerError&) {
    // Invalid UTF-8: refused, as it must be.
  }
  try {
    const std::vector<int32_t> ids = sentence_piece.encode(text, false);
    for (int32_t id : ids) require(id >= 0 && id < sentence_piece.vocab_size());
    const std::string decoded = sentence_piece.decode(ids);
    // Every byte has a <0xXX> piece, so nothing is lost; only text holding
    // "▁" itself (the decoder makes it a space) or an added token's
    // spelling next to a space may come back otherwise.
    require(decoded == text || text.find('<') != std::string::npos || text.find("\xE2\x96\x81") != std::string::npos);
  } catch (const TokenizerError&) {
  }
  return 0;
}
