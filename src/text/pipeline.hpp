// The stages of a tokenizer.json around its model, as read from the file:
// normalizers, pre-tokenizers, the post-processor and decoders. Each
// "Sequence" is flattened into a list.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "regex.hpp"

namespace linnet::text {

struct NormalizerStep {
  enum class Kind { NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace };
  Kind kind;
  std::string text;                    // Prepend's text; Replace's literal pattern
  std::shared_ptr<const Regex> regex;  // Replace's regex pattern (else null)
  std::string content;                 // Replace's replacement
};

struct PreTokenizerStep {
  enum class Kind { Split, ByteLevel, Metaspace };
  enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext };
  explicit PreTokenizerStep(Kind step_kind) : kind(step_kind) {}
  Kind kind;
  // Split: a regex (a literal string pattern is compiled escaped).
  std::shared_ptr<const Regex> regex;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  // ByteLevel.
  bool add_prefix_space = false;
  bool use_regex = false;
  // Metaspace.
  std::string replacement = "\xE2\x96\x81";  // U+2581 "▁"
  std::string prepend_scheme = "always";      // always, first, never
  bool split = true;
};

// One element of a TemplateProcessing `single` template.
struct TemplateItem {
  bool is_sequence = false;     // the encoded text
  std::vector<int32_t> ids;     // a special token's ids
};

struct DecoderStep {
  enum class Kind { ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip };
  explicit DecoderStep(Kind step_kind) : kind(step_kind) {}
  Kind kind;
  std::string pattern, content;  // Replace; Strip's content
  size_t start = 0, stop = 0;    // Strip
  std::string replacement = "\xE2\x96\x81";  // Metaspace
  bool prepend = true;                       // Metaspace: a prepend scheme other than never
};

}  // namespace linnet::text
