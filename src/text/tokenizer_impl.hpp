// What a Tokenizer holds (shared by tokenizer_json.cpp, which builds it
// from the file, and tokenizer.cpp, which runs it).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpe_model.hpp"
#include "linnet/text/tokenizer.hpp"
#include "pipeline.hpp"

namespace linnet::text {

struct AddedToken {
  int32_t id;
  std::string content;
  bool special = false;
  bool lstrip = false;  // takes the whitespace before it
  bool rstrip = false;  // takes the whitespace after it
};

struct Tokenizer::Impl {
  std::unique_ptr<BpeModel> model;
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::optional<std::vector<TemplateItem>> post_template;  // TemplateProcessing's `single`
  std::vector<DecoderStep> decoders;
  std::vector<AddedToken> added;
  // Added tokens by their first byte, longest first (for the split).
  std::vector<std::vector<size_t>> added_by_first_byte = std::vector<std::vector<size_t>>(256);
  std::unordered_map<int32_t, size_t> added_by_id;
  std::vector<std::string> pieces;  // id -> vocabulary entry ("" for a hole)
  std::vector<bool> has_piece;
};

}  // namespace linnet::text
