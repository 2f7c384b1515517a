// Reading bindings.json with positions. The file is one flat JSON object of
// strings, small enough that a direct scanner reads it and can say at which
// byte any defect is (a general JSON parser only says that one is there),
// so that every command points at the line and column of a broken file.
#include <fstream>
#include <map>
#include <sstream>

#include "linnet/nest/bindings.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/syntax/file_reading.hpp"

namespace linnet::nest {

namespace {

class BindingsScanner {
 public:
  BindingsScanner(std::string_view text, uint32_t file_id) : text_(text), file_id_(file_id) {}

  // The object, or nothing with `problem` and `problem_at` set.
  std::optional<std::vector<std::pair<std::string, size_t>>> pairs(std::map<std::string, std::string>& out) {
    std::vector<std::pair<std::string, size_t>> keys;
    skip_space();
    if (!take('{')) return fail("the top level is not an object");
    skip_space();
    if (take('}')) return finish(keys);
    while (true) {
      skip_space();
      const size_t key_at = at_;
      std::optional<std::string> key = string("a parameter path in quotes");
      if (!key) return std::nullopt;
      skip_space();
      if (!take(':')) return fail("expected `:` after the parameter path");
      skip_space();
      const size_t value_at = at_;
      if (at_ < text_.size() && text_[at_] != '"') {
        at_ = key_at;
        return fail("the binding of `" + *key + "` is not a string");
      }
      std::optional<std::string> value = string("a tensor name in quotes");
      if (!value) return std::nullopt;
      if (key->empty() || value->empty()) {
        at_ = key->empty() ? key_at : value_at;
        return fail("an empty parameter path or tensor name");
      }
      if (!out.emplace(*key, *value).second) {
        at_ = key_at;
        return fail("the parameter path `" + *key + "` is bound twice");
      }
      keys.emplace_back(*key, key_at);
      skip_space();
      if (take(',')) continue;
      if (take('}')) return finish(keys);
      return fail("expected `,` or `}`");
    }
  }

  const std::string& problem() const { return problem_; }
  syntax::Span problem_span() const {
    if (file_id_ == 0) return syntax::Span{};
    const uint32_t begin = static_cast<uint32_t>(std::min(at_, text_.size()));
    return syntax::Span{file_id_, begin, static_cast<uint32_t>(std::min(text_.size(), at_ + 1))};
  }

 private:
  std::optional<std::vector<std::pair<std::string, size_t>>> finish(std::vector<std::pair<std::string, size_t>>& keys) {
    skip_space();
    if (at_ != text_.size()) return fail("text after the object");
    return keys;
  }

  std::nullopt_t fail(std::string message) {
    if (problem_.empty()) problem_ = std::move(message);
    return std::nullopt;
  }

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  static void append_utf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::optional<uint32_t> hex4() {
    if (at_ + 4 > text_.size()) return std::nullopt;
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      value <<= 4;
      if (c >= '0' && c <= '9') value |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') value |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') value |= static_cast<uint32_t>(c - 'A' + 10);
      else return std::nullopt;
    }
    return value;
  }

  // A JSON string at `at_` (which must be a quote).
  std::optional<std::string> string(const char* expected) {
    if (!take('"')) return fail(std::string("expected ") + expected);
    std::string out;
    while (true) {
      if (at_ >= text_.size()) return fail("a string that never ends");
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character inside a string");
      ++at_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) return fail("a string that never ends");
      const char escape = text_[at_++];
      switch (escape) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::optional<uint32_t> code = hex4();
          if (!code) return fail("a bad \\u escape");
          if (*code >= 0xD800 && *code < 0xDC00) {
            std::optional<uint32_t> low;
            if (take('\\') && take('u')) low = hex4();
            if (!low || *low < 0xDC00 || *low >= 0xE000) return fail("a lone surrogate in a \\u escape");
            *code = 0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00);
          } else if (*code >= 0xDC00 && *code < 0xE000) {
            return fail("a lone surrogate in a \\u escape");
          }
          append_utf8(out, *code);
          break;
        }
        default:
          --at_;
          return fail(std::string("an unknown escape `\\") + escape + "`");
      }
    }
  }

  std::string_view text_;
  uint32_t file_id_;
  size_t at_ = 0;
  std::string problem_;
};

std::optional<Bindings> parse_with_positions(std::string_view json, const std::string& name, uint32_t file_id,
                                             syntax::Diagnostics& diagnostics) {
  BindingsScanner scanner(json, file_id);
  std::map<std::string, std::string> tensor_by_path;
  const auto keys = scanner.pairs(tensor_by_path);
  if (!keys) {
    diagnostics.error(codes::invalid_manifest, "`" + name + "`: " + scanner.problem(), scanner.problem_span())
        .with_help("bindings.json is one flat JSON object: parameter path -> tensor name");
    return std::nullopt;
  }
  Bindings bindings(std::move(tensor_by_path), name);
  if (file_id != 0) {
    // Each key's span: from its opening quote to its closing one, so that a
    // key naming no parameter is pointed at (binding_audit.hpp).
    std::map<std::string, syntax::Span> spans;
    for (size_t i = 0; i < keys->size(); ++i) {
      const auto& [key, at] = (*keys)[i];
      size_t end = json.find('"', at + 1);
      while (end != std::string_view::npos && json[end - 1] == '\\') end = json.find('"', end + 1);
      end = end == std::string_view::npos ? at + 1 : end + 1;
      spans.emplace(key, syntax::Span{file_id, static_cast<uint32_t>(at), static_cast<uint32_t>(end)});
    }
    bindings.set_key_spans(std::move(spans));
  }
  return bindings;
}

}  // namespace

std::optional<Bindings> parse_bindings(std::string_view json, const std::string& name,
                                       syntax::Diagnostics& diagnostics) {
  return parse_with_positions(json, name, 0, diagnostics);
}

std::optional<Bindings> read_bindings(const std::string& path, syntax::SourceManager& sources,
                                      syntax::Diagnostics& diagnostics) {
  std::string read_error;
  const uint32_t file_id = sources.load(path, read_error);
  if (file_id == 0) {
    diagnostics.error(codes::invalid_manifest, "cannot read the bindings: " + read_error, syntax::Span{});
    return std::nullopt;
  }
  return parse_with_positions(sources.file(file_id).text(), path, file_id, diagnostics);
}

std::optional<Bindings> read_bindings(const std::string& path, syntax::Diagnostics& diagnostics) {
  std::string text, problem;
  if (!syntax::read_whole_file(path, text, problem)) {
    diagnostics.error(codes::invalid_manifest, "cannot read the bindings: `" + path + "` " + problem, syntax::Span{});
    return std::nullopt;
  }
  return parse_bindings(text, path, diagnostics);
}

}  // namespace linnet::nest
