// The BPE model of tokenizer.json: a vocabulary, ranked merges, and how a
// character outside the vocabulary is spelled (byte fallback or an
// unknown token).
//
// A word is merged the way `tokenizers` merges it: repeatedly the pair of
// adjacent symbols with the lowest merge rank, the leftmost first among
// equals. A heap of candidate pairs keeps that O(n log n) in the word's
// length, so a long word (SentencePiece-style models see a whole line as
// one word) costs no quadratic time. Results for short words are cached.
//
// SentencePiece-style vocabularies mark a space with "▁", and no entry has
// a "▁" after another character: then no merge can join the symbols on
// either side of such a place, so a word is merged in separate stretches
// cut before each "▁" that follows another character (each stretch
// cached), with the same result as merging it whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace linnet::text {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};
using Vocabulary = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;  // a character not in the vocabulary as its <0xXX> byte tokens
  bool ignore_merges = false;  // a word that is a vocabulary entry is that entry, unmerged
};

class BpeModel {
 public:
  // `merges` are pairs of vocabulary entries in rank order. Throws
  // TokenizerError for a merge whose parts or result are not in `vocab`.
  BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options);

  // Appends the ids of `word` (already in the model's alphabet).
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  const Vocabulary& vocab() const { return vocab_; }
  std::optional<int32_t> id_of(std::string_view piece) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const;
  void merge(std::vector<int32_t>& symbols) const;
  void encode_stretch(std::string_view word, std::vector<int32_t>& out) const;

  Vocabulary vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  int32_t byte_ids_[256];  // <0xXX> tokens, -1 when absent
  bool cut_at_space_marks_ = false;  // see above
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace linnet::text
