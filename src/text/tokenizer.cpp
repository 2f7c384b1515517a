// Running a tokenizer: added tokens split out first, then each stretch of
// text through the normalizers, the pre-tokenizers and the BPE model; the
// post-processor around the whole. Decoding runs the decoders over the
// ids' pieces. The order and the rules of each stage follow `tokenizers`.
#include <algorithm>

#include "byte_level.hpp"
#include "tokenizer_impl.hpp"
#include "unicode_forms.hpp"
#include "linnet/text/utf8.hpp"

namespace linnet::text {

namespace {

// A stretch of text on its way to the model.
struct Piece {
  std::string text;
  bool at_start;  // begins at offset 0 of the input (Metaspace's "first")
};

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  if (pattern.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (true) {
    const size_t found = text.find(pattern, at);
    if (found == std::string_view::npos) break;
    out.append(text.substr(at, found - at));
    out.append(content);
    at = found + pattern.size();
  }
  out.append(text.substr(at));
  return out;
}

std::string normalize_text(std::string text, const std::vector<NormalizerStep>& steps) {
  using Kind = NormalizerStep::Kind;
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case Kind::NFC: text = normalize(text, NormalForm::NFC); break;
      case Kind::NFD: text = normalize(text, NormalForm::NFD); break;
      case Kind::NFKC: text = normalize(text, NormalForm::NFKC); break;
      case Kind::NFKD: text = normalize(text, NormalForm::NFKD); break;
      case Kind::Lowercase: text = lowercase(text); break;
      case Kind::Prepend:
        if (!text.empty()) text = step.text + text;
        break;
      case Kind::Replace:
        if (step.regex) {
          std::string out;
          size_t at = 0;
          for (const auto& [begin, end] : step.regex->find_all(text)) {
            out.append(text, at, begin - at);
            out += step.content;
            at = end;
          }
          out.append(text, at, std::string::npos);
          text = std::move(out);
        } else {
          text = replace_all(text, step.text, step.content);
        }
        break;
    }
  }
  return text;
}

// Splits each piece by `regex` with the Split behaviours.
std::vector<Piece> split(const std::vector<Piece>& pieces, const Regex& regex, PreTokenizerStep::Behavior behavior) {
  using Behavior = PreTokenizerStep::Behavior;
  std::vector<Piece> out;
  for (const Piece& piece : pieces) {
    const std::string_view text = piece.text;
    bool first = true;
    const auto emit = [&](size_t begin, size_t end) {
      if (end <= begin) return;
      out.push_back({std::string(text.substr(begin, end - begin)), piece.at_start && first && begin == 0});
      first = false;
    };
    size_t at = 0;
    size_t pending = 0;  // MergedWithNext: where the current piece began
    for (const auto& [begin, end] : regex.find_all(text)) {
      switch (behavior) {
        case Behavior::Isolated:
          emit(at, begin);
          emit(begin, end);
          break;
        case Behavior::Removed:
          emit(at, begin);
          break;
        case Behavior::MergedWithPrevious:
          emit(at, end);
          break;
        case Behavior::MergedWithNext:
          emit(pending, begin);
          pending = begin;
          break;
      }
      at = end;
    }
    if (behavior == Behavior::MergedWithNext) {
      emit(pending, text.size());
    } else {
      emit(at, text.size());
    }
  }
  return out;
}

std::vector<Piece> pre_tokenize(Piece whole, const std::vector<PreTokenizerStep>& steps) {
  using Kind = PreTokenizerStep::Kind;
  std::vector<Piece> pieces;
  pieces.push_back(std::move(whole));
  for (const PreTokenizerStep& step : steps) {
    switch (step.kind) {
      case Kind::Split:
        pieces = split(pieces, *step.regex, step.behavior);
        break;
      case Kind::ByteLevel: {
        if (step.add_prefix_space) {
          for (Piece& piece : pieces) {
            if (!piece.text.empty() && piece.text[0] != ' ') piece.text.insert(0, 1, ' ');
          }
        }
        if (step.regex) pieces = split(pieces, *step.regex, PreTokenizerStep::Behavior::Isolated);
        for (Piece& piece : pieces) {
          std::string mapped;
          mapped.reserve(piece.text.size() * 2);
          byte_level::encode(piece.text, mapped);
          piece.text = std::move(mapped);
        }
        break;
      }
      case Kind::Metaspace: {
        for (Piece& piece : pieces) {
          piece.text = replace_all(piece.text, " ", step.replacement);
          const bool prepend =
              step.prepend_scheme == "always" || (step.prepend_scheme == "first" && piece.at_start);
          if (prepend && !piece.text.starts_with(step.replacement)) piece.text.insert(0, step.replacement);
        }
        if (step.split) {
          std::vector<Piece> out;
          for (Piece& piece : pieces) {
            // MergedWithNext on the replacement: each word keeps its leading "▁".
            size_t begin = 0;
            size_t at = piece.text.find(step.replacement, 1);
            while (at != std::string::npos) {
              out.push_back({piece.text.substr(begin, at - begin), piece.at_start && begin == 0});
              begin = at;
              at = piece.text.find(step.replacement, at + step.replacement.size());
            }
            if (begin < piece.text.size()) out.push_back({piece.text.substr(begin), piece.at_start && begin == 0});
          }
          pieces = std::move(out);
        }
        break;
      }
    }
  }
  return pieces;
}

// The ByteLevel decoder's view of one piece: its bytes when every
// character is in the byte-level alphabet, else the piece as written.
std::string byte_level_bytes(const std::string& piece) {
  std::string bytes;
  size_t at = 0;
  while (at < piece.size()) {
    size_t length = 0;
    const char32_t cp = utf8::decode_at(piece, at, length);
    const auto byte = byte_level::byte_of(cp);
    if (!byte) return piece;
    bytes += static_cast<char>(*byte);
    at += length;
  }
  return bytes;
}

// "<0x41>" -> 0x41.
std::optional<unsigned char> fallback_byte(const std::string& piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    value *= 16;
    if (c >= '0' && c <= '9') value += static_cast<unsigned>(c - '0');
    else if (c >= 'A' && c <= 'F') value += static_cast<unsigned>(c - 'A' + 10);
    else if (c >= 'a' && c <= 'f') value += static_cast<unsigned>(c - 'a' + 10);
    else return std::nullopt;
  }
  return static_cast<unsigned char>(value);
}

std::vector<std::string> run_decoders(std::vector<std::string> tokens, const std::vector<DecoderStep>& steps) {
  using Kind = DecoderStep::Kind;
  for (const DecoderStep& step : steps) {
    switch (step.kind) {
      case Kind::ByteLevel: {
        std::string bytes;
        for (const std::string& token : tokens) bytes += byte_level_bytes(token);
        tokens = {std::move(bytes)};
        break;
      }
      case Kind::Replace:
        for (std::string& token : tokens) token = replace_all(token, step.pattern, step.content);
        break;
      case Kind::ByteFallback: {
        // Runs of byte tokens become their bytes (left raw: decode()
        // repairs invalid UTF-8 at the end, decode_bytes() keeps it).
        std::vector<std::string> out;
        std::string run;
        bool in_run = false;
        for (std::string& token : tokens) {
          if (const auto byte = fallback_byte(token)) {
            run += static_cast<char>(*byte);
            in_run = true;
            continue;
          }
          if (in_run) out.push_back(std::move(run));
          run.clear();
          in_run = false;
          out.push_back(std::move(token));
        }
        if (in_run) out.push_back(std::move(run));
        tokens = std::move(out);
        break;
      }
      case Kind::Fuse: {
        std::string joined;
        for (const std::string& token : tokens) joined += token;
        tokens = {std::move(joined)};
        break;
      }
      case Kind::Strip:
        for (std::string& token : tokens) {
          size_t begin = 0, end = token.size();
          for (size_t n = 0; n < step.start && token.compare(begin, step.content.size(), step.content) == 0 &&
                             begin + step.content.size() <= end;
               ++n) {
            begin += step.content.size();
          }
          for (size_t n = 0; n < step.stop && end >= begin + step.content.size() &&
                             token.compare(end - step.content.size(), step.content.size(), step.content) == 0;
               ++n) {
            end -= step.content.size();
          }
          token = token.substr(begin, end - begin);
        }
        break;
      case Kind::Metaspace:
        // In the first token every replacement character is dropped, not
        // only a leading one: the reference does so.
        for (size_t i = 0; i < tokens.size(); ++i) {
          tokens[i] = replace_all(tokens[i], step.replacement, i == 0 && step.prepend ? "" : " ");
        }
        break;
    }
  }
  return tokens;
}

void check_utf8(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t length = 0;
    const char32_t cp = utf8::decode_at(text, at, length);
    if (cp == 0xFFFD && text.substr(at, 3) != "\xEF\xBF\xBD") {
      throw TokenizerError("the text is not valid UTF-8 (at byte " + std::to_string(at) + ")");
    }
    at += length;
  }
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  check_utf8(text);
  const Impl& impl = *impl_;
  std::vector<int32_t> ids;
  const auto encode_text = [&](size_t begin, size_t end) {
    if (end <= begin) return;
    const std::string normalized = normalize_text(std::string(text.substr(begin, end - begin)), impl.normalizers);
    if (normalized.empty()) return;
    for (const Piece& piece : pre_tokenize({normalized, begin == 0}, impl.pre_tokenizers)) {
      impl.model->encode_word(piece.text, ids);
    }
  };
  // Added tokens first, leftmost and then longest, as they are written.
  size_t segment = 0;
  size_t at = 0;
  while (at < text.size()) {
    const AddedToken* match = nullptr;
    for (size_t index : impl.added_by_first_byte[static_cast<unsigned char>(text[at])]) {
      const AddedToken& token = impl.added[index];
      if (text.compare(at, token.content.size(), token.content) == 0) {
        match = &token;
        break;
      }
    }
    if (!match) {
      ++at;
      continue;
    }
    size_t text_end = at;
    if (match->lstrip) {
      while (text_end > segment && is_space(static_cast<unsigned char>(text[text_end - 1]))) --text_end;
    }
    encode_text(segment, text_end);
    ids.push_back(match->id);
    at += match->content.size();
    if (match->rstrip) {
      while (at < text.size() && is_space(static_cast<unsigned char>(text[at]))) ++at;
    }
    segment = at;
  }
  encode_text(segment, text.size());

  if (add_special_tokens && impl.post_template) {
    std::vector<int32_t> processed;
    processed.reserve(ids.size() + 4);
    for (const TemplateItem& item : *impl.post_template) {
      if (item.is_sequence) {
        processed.insert(processed.end(), ids.begin(), ids.end());
      } else {
        processed.insert(processed.end(), item.ids.begin(), item.ids.end());
      }
    }
    ids = std::move(processed);
  }
  return ids;
}

std::string Tokenizer::decode_bytes(std::span<const int32_t> ids, bool skip_special_tokens) const {
  const Impl& impl = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= impl.pieces.size() || !impl.has_piece[static_cast<size_t>(id)]) {
      throw TokenizerError("the id " + std::to_string(id) + " is not in the vocabulary (of " +
                           std::to_string(impl.pieces.size()) + ")");
    }
    if (skip_special_tokens && is_special(id)) continue;
    tokens.push_back(impl.pieces[static_cast<size_t>(id)]);
  }
  std::string text;
  for (const std::string& token : run_decoders(std::move(tokens), impl.decoders)) text += token;
  return text;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return utf8::repair(decode_bytes(ids, skip_special_tokens));
}

std::optional<std::string> Tokenizer::piece(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->pieces.size() || !impl_->has_piece[static_cast<size_t>(id)]) {
    return std::nullopt;
  }
  return impl_->pieces[static_cast<size_t>(id)];
}

std::optional<int32_t> Tokenizer::id_of(std::string_view piece) const {
  for (const AddedToken& token : impl_->added) {
    if (token.content == piece) return token.id;
  }
  return impl_->model->id_of(piece);
}

bool Tokenizer::is_special(int32_t id) const {
  const auto found = impl_->added_by_id.find(id);
  return found != impl_->added_by_id.end() && impl_->added[found->second].special;
}

int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->pieces.size()); }

}  // namespace linnet::text
