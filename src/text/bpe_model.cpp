#include "bpe_model.hpp"

#include <cstdio>
#include <queue>

#include "linnet/text/tokenizer.hpp"
#include "linnet/text/utf8.hpp"

namespace linnet::text {

namespace {

// Words longer than this are merged afresh each time (a cache of them
// would hold whole lines of SentencePiece text).
constexpr size_t kCachedWordBytes = 256;
constexpr size_t kCacheEntries = 1 << 18;

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁"

// Whether `piece` has a space mark after some other character (a run of
// marks at its start is fine: "▁▁▁" is a piece).
bool has_inner_space_mark(std::string_view piece) {
  size_t at = 0;
  while (piece.substr(at, kSpaceMark.size()) == kSpaceMark) at += kSpaceMark.size();
  return piece.find(kSpaceMark, at) != std::string_view::npos;
}

}  // namespace

BpeModel::BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto left_id = id_of(left);
    const auto right_id = id_of(right);
    const auto result = id_of(left + right);
    if (!left_id || !right_id || !result) {
      throw TokenizerError("merge " + std::to_string(rank) + " (`" + left + "` `" + right +
                           "`) names a piece that is not in the vocabulary");
    }
    // The first (lowest-ranked) occurrence of a pair wins, as in the reference.
    merges_.try_emplace(pair_key(*left_id, *right_id), Merge{static_cast<int32_t>(rank), *result});
  }
  if (options_.unk_token) {
    unk_id_ = id_of(*options_.unk_token);
    if (!unk_id_) throw TokenizerError("the unknown token `" + *options_.unk_token + "` is not in the vocabulary");
  }
  cut_at_space_marks_ = vocab_.find(kSpaceMark) != vocab_.end();
  for (const auto& [piece, id] : vocab_) {
    if (cut_at_space_marks_ && has_inner_space_mark(piece)) cut_at_space_marks_ = false;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const auto id = id_of(name);
    byte_ids_[b] = id ? *id : -1;
  }
}

std::optional<int32_t> BpeModel::id_of(std::string_view piece) const {
  const auto found = vocab_.find(piece);
  if (found == vocab_.end()) return std::nullopt;
  return found->second;
}

void BpeModel::initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const {
  bool last_was_unk = false;
  size_t at = 0;
  while (at < word.size()) {
    const size_t length = std::min(utf8::sequence_length(static_cast<unsigned char>(word[at])), word.size() - at);
    const std::string_view character = word.substr(at, length);
    at += length;
    if (const auto id = id_of(character)) {
      symbols.push_back(*id);
      last_was_unk = false;
      continue;
    }
    if (options_.byte_fallback) {
      bool all_bytes = true;
      for (char c : character) all_bytes = all_bytes && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all_bytes) {
        for (char c : character) symbols.push_back(byte_ids_[static_cast<unsigned char>(c)]);
        last_was_unk = false;
        continue;
      }
    }
    if (unk_id_) {
      if (!(options_.fuse_unk && last_was_unk)) symbols.push_back(*unk_id_);
      last_was_unk = true;
    }
    // Without an unknown token the character is dropped, as the reference does.
  }
}

void BpeModel::merge(std::vector<int32_t>& symbols) const {
  const size_t n = symbols.size();
  if (n < 2) return;
  // A doubly linked list over `symbols`; merged-away symbols are marked dead.
  std::vector<int32_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  struct Candidate {
    int32_t rank;
    int32_t left;  // position of the pair's left symbol
    int32_t result;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto push = [&](int32_t left) {
    const int32_t right = next[left];
    if (right < 0) return;
    const auto found = merges_.find(pair_key(symbols[left], symbols[right]));
    if (found != merges_.end()) heap.push({found->second.rank, left, found->second.result});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(static_cast<int32_t>(i));
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const int32_t left = top.left;
    if (!alive[left]) continue;
    const int32_t right = next[left];
    if (right < 0) continue;
    // Stale when either symbol changed since the candidate was pushed.
    const auto found = merges_.find(pair_key(symbols[left], symbols[right]));
    if (found == merges_.end() || found->second.rank != top.rank || found->second.result != top.result) continue;
    symbols[left] = top.result;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] >= 0) prev[next[right]] = left;
    if (prev[left] >= 0) push(prev[left]);
    push(left);
  }
  size_t kept = 0;
  for (int32_t i = 0; i >= 0; i = next[i]) symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const auto id = id_of(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (!cut_at_space_marks_) {
    encode_stretch(word, out);
    return;
  }
  // Cut before each "▁" that follows another character (see the header).
  size_t begin = 0;
  for (size_t at = word.find(kSpaceMark, 1); at != std::string_view::npos; at = word.find(kSpaceMark, at + 1)) {
    if (at >= kSpaceMark.size() && word.substr(at - kSpaceMark.size(), kSpaceMark.size()) == kSpaceMark) continue;
    encode_stretch(word.substr(begin, at - begin), out);
    begin = at;
  }
  encode_stretch(word.substr(begin), out);
}

void BpeModel::encode_stretch(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  const bool cacheable = word.size() <= kCachedWordBytes;
  if (cacheable) {
    const auto cached = cache_.find(word);
    if (cached != cache_.end()) {
      out.insert(out.end(), cached->second.begin(), cached->second.end());
      return;
    }
  }
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  initial_symbols(word, symbols);
  merge(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    if (cache_.size() >= kCacheEntries) cache_.clear();
    cache_.emplace(std::string(word), std::move(symbols));
  }
}

}  // namespace linnet::text
