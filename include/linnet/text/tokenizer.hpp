// A tokenizer read from a Hugging Face `tokenizer.json`: text to token ids
// and back, as the `tokenizers` library computes them.
//
//   text::Tokenizer tokenizer = text::Tokenizer::from_file("golden/qwen3-a/tokenizer.json");
//   std::vector<int32_t> ids = tokenizer.encode("The capital of France is");
//   std::string text = tokenizer.decode(ids);
//
// What is supported (docs/text.md has the whole list): the BPE model (with
// byte fallback, unknown tokens, `ignore_merges`), the normalizers NFC, NFD,
// NFKC, NFKD, Prepend, Replace, Lowercase and Sequence; the pre-tokenizers
// Split (regex or string; Isolated, Removed, MergedWithPrevious or
// MergedWithNext), ByteLevel, Metaspace and Sequence; the post-processors TemplateProcessing, ByteLevel and
// Sequence; the decoders ByteLevel, Metaspace, Replace, ByteFallback, Fuse,
// Strip and Sequence; and added tokens (special or not, lstrip/rstrip). A
// file using anything else is refused with a TokenizerError naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::text {

// A tokenizer.json that cannot be read or uses a feature not supported.
class TokenizerError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

class Tokenizer {
 public:
  // Throws TokenizerError.
  static Tokenizer from_file(const std::string& path);
  static Tokenizer from_json(std::string_view json, const std::string& origin = "tokenizer.json");

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of `text`. Added tokens written in the text (`<|im_end|>`) are
  // recognised as themselves; `add_special_tokens` runs the
  // post-processor (a BOS token for Llama 2, say). Not safe to call from
  // two threads at once on one tokenizer (a cache of words is shared).
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;

  // The text of `ids` through the decoder. Invalid UTF-8 (a multi-byte
  // character cut short) becomes U+FFFD, as the reference does.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;
  // The same bytes, with invalid or incomplete UTF-8 left as it is (for
  // streaming, which holds back an incomplete character).
  std::string decode_bytes(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  // The vocabulary entry of an id ("Ġthe", "▁the", "<|im_end|>"); nothing
  // for an id outside the vocabulary.
  std::optional<std::string> piece(int32_t id) const;
  // The id of a vocabulary entry or added token.
  std::optional<int32_t> id_of(std::string_view piece) const;
  // Whether `id` is an added token marked special.
  bool is_special(int32_t id) const;
  // One past the largest id (model vocabulary and added tokens).
  int64_t vocab_size() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace linnet::text
