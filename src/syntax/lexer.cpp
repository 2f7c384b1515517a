// The lexer. One pass over the bytes; every branch advances by at least one
// byte, so any input terminates in linear time.
#include "linnet/syntax/lexer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace linnet::syntax {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_binary_digit(char c) { return c == '0' || c == '1'; }
bool is_word_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_word_char(char c) { return is_word_start(c) || is_digit(c); }

// One decoded UTF-8 sequence: its length in bytes (at least 1) and whether it
// is a well-formed encoding of a Unicode scalar value (no overlong forms, no
// surrogates, nothing above U+10FFFF).
struct CodePoint {
  uint32_t value = 0;
  uint32_t length = 1;
  bool valid = false;
};

CodePoint decode_utf8(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return {lead, 1, true};
  uint32_t length;
  uint32_t value;
  uint32_t minimum;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return {lead, 1, false};  // a continuation byte or 0xF8..0xFF cannot start a sequence
  }
  for (uint32_t i = 1; i < length; ++i) {
    if (at + i >= text.size() || (byte(at + i) & 0xC0) != 0x80) return {0, i, false};
    value = (value << 6) | (byte(at + i) & 0x3F);
  }
  const bool valid = value >= minimum && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
  return {value, length, valid};
}

// At most `limit` code points of `text`, for quoting source in a message.
std::string excerpt(std::string_view text, size_t limit = 24) {
  size_t end = 0;
  size_t count = 0;
  while (end < text.size() && count < limit) {
    end += decode_utf8(text, end).length;
    ++count;
  }
  end = std::min(end, text.size());
  return std::string(text.substr(0, end)) + (end < text.size() ? "..." : "");
}

std::string code_point_name(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "U+%04X", static_cast<unsigned>(value));
  return buffer;
}

// Words reserved for future syntax (spec §1.4): never identifiers.
constexpr std::array<std::string_view, 12> kReservedWords = {
    "async", "await", "effect", "unsafe", "macro", "trait", "impl", "derive", "rng", "mut", "ref", "device",
};

TokenKind classify_word(std::string_view word) {
  // Comparing the first character before the rest keeps this cheap: most
  // words are identifiers that fail on it.
  for (auto k = static_cast<uint8_t>(TokenKind::KwModule); k <= static_cast<uint8_t>(TokenKind::KwExtern); ++k) {
    const std::string_view keyword = token_spelling(static_cast<TokenKind>(k));
    if (keyword[0] == word[0] && keyword == word) return static_cast<TokenKind>(k);
  }
  for (std::string_view reserved : kReservedWords) {
    if (reserved[0] == word[0] && reserved == word) return TokenKind::Reserved;
  }
  return TokenKind::Identifier;
}

// Checks one run of digits with `_` separators: `_` only between two digits.
// Returns an explanation, or nullptr when the run is well formed.
template <typename IsDigit>
const char* check_digit_run(std::string_view run, IsDigit is_valid_digit, const char* what) {
  if (run.empty()) return what;
  for (size_t i = 0; i < run.size(); ++i) {
    const char c = run[i];
    if (c == '_') {
      if (i == 0 || i + 1 == run.size() || run[i - 1] == '_' || run[i + 1] == '_') {
        return "`_` may appear only between two digits";
      }
    } else if (!is_valid_digit(c)) {
      return nullptr;  // the caller reports the invalid digit itself
    }
  }
  return nullptr;
}

// Returns the first character of `run` that is neither `_` nor a digit.
template <typename IsDigit>
size_t first_invalid_digit(std::string_view run, IsDigit is_valid_digit) {
  for (size_t i = 0; i < run.size(); ++i) {
    if (run[i] != '_' && !is_valid_digit(run[i])) return i;
  }
  return std::string_view::npos;
}

class Lexer {
 public:
  Lexer(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics)
      : file_(file_id), text_(sources.file(file_id).text()), diagnostics_(diagnostics) {}

  LexResult run() {
    // A byte-order mark is tolerated at the very start and nowhere else.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    result_.tokens.reserve(text_.size() / 4 + 1);
    while (pos_ < text_.size()) lex_one();
    push(TokenKind::Eof, pos_);
    return std::move(result_);
  }

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  Span span(size_t begin, size_t end) const {
    return Span{file_, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)};
  }

  void push(TokenKind kind, size_t begin) {
    result_.tokens.push_back(Token{kind, span(begin, pos_), text_.substr(begin, pos_ - begin)});
  }

  // Adds an error and returns it for the caller to describe, or nullptr when
  // the engine only counts further errors: on hostile input, building
  // millions of messages nobody sees would dominate the lexer's time.
  Diagnostic* report(const char* code, Span where) {
    const size_t suppressed_before = diagnostics_.suppressed();
    Diagnostic& d = diagnostics_.error(code, std::string(), where);
    return diagnostics_.suppressed() == suppressed_before ? &d : nullptr;
  }

  void lex_one() {
    const char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && peek(1) == '/') {
      line_comment();
    } else if (c == '/' && peek(1) == '*') {
      block_comment();
    } else if (is_word_start(c)) {
      word();
    } else if (is_digit(c)) {
      number();
    } else if (c == '"') {
      string(pos_);
    } else if (!punctuation()) {
      invalid_run();
    }
  }

  // Advances over one code point inside a comment or a string. Invalid UTF-8
  // is reported once per comment or string (`reported` tracks it), so a
  // binary blob pasted into a comment gives one error, not thousands.
  void advance_code_point(bool& reported) {
    const CodePoint decoded = decode_utf8(text_, pos_);
    if (decoded.valid) {
      pos_ += decoded.length;
      return;
    }
    const size_t begin = pos_;
    while (pos_ < text_.size()) {
      const CodePoint next = decode_utf8(text_, pos_);
      if (next.valid) break;
      pos_ += next.length;
    }
    if (reported) return;
    reported = true;
    if (Diagnostic* d = report("E1001", span(begin, pos_))) {
      d->message = "invalid UTF-8 in source text";
      d->note("Linnet source files must be UTF-8; further invalid bytes in this comment or string are not reported");
    }
  }

  void line_comment() {
    const size_t begin = pos_;
    bool bad_utf8 = false;
    const bool is_doc = peek(2) == '/' && peek(3) != '/';
    pos_ += 2;
    while (pos_ < text_.size() && peek() != '\n') {
      if (static_cast<unsigned char>(peek()) < 0x80) {
        ++pos_;
      } else {
        advance_code_point(bad_utf8);
      }
    }
    size_t end = pos_;
    if (end > begin && text_[end - 1] == '\r') --end;
    result_.comments.push_back(Comment{span(begin, end), is_doc});
  }

  void block_comment() {
    const size_t begin = pos_;
    bool bad_utf8 = false;
    const bool is_doc = peek(2) == '*' && peek(3) != '*' && peek(3) != '/';
    pos_ += 2;
    size_t depth = 1;
    while (pos_ < text_.size() && depth > 0) {
      if (peek() == '/' && peek(1) == '*') {
        pos_ += 2;
        ++depth;
      } else if (peek() == '*' && peek(1) == '/') {
        pos_ += 2;
        --depth;
      } else if (static_cast<unsigned char>(peek()) < 0x80) {
        ++pos_;
      } else {
        advance_code_point(bad_utf8);
      }
    }
    if (depth > 0) {
      if (Diagnostic* d = report("E1002", span(begin, begin + 2))) {
        d->message = "unclosed block comment";
        d->with_label("this comment is never closed")
            .note("block comments nest: every `/*`, including those inside the comment, needs its own `*/`")
            .with_help("add `*/` where the comment should end");
      }
    }
    result_.comments.push_back(Comment{span(begin, pos_), is_doc});
  }

  void word() {
    const size_t begin = pos_;
    while (is_word_char(peek())) ++pos_;
    const std::string_view spelling = text_.substr(begin, pos_ - begin);
    // `r"..."` and `r#"..."#` would be raw strings, which are reserved.
    if (spelling == "r" && (peek() == '"' || (peek() == '#' && (peek(1) == '"' || peek(1) == '#')))) {
      raw_string(begin);
      return;
    }
    push(classify_word(spelling), begin);
  }

  void raw_string(size_t begin) {
    while (peek() == '#') ++pos_;
    if (peek() == '"') {
      ++pos_;
      while (pos_ < text_.size() && peek() != '"' && peek() != '\n') ++pos_;
      if (peek() == '"') ++pos_;
      while (peek() == '#') ++pos_;
    }
    if (Diagnostic* d = report("E1103", span(begin, pos_))) {
      d->message = "raw string literals are reserved for a future version";
      d->with_help("write an ordinary string literal, escaping `\\` and `\"` with a backslash");
    }
    push(TokenKind::String, begin);
  }

  void consume_word_chars() {
    while (is_word_char(peek())) ++pos_;
  }

  // After a run ending in `e`/`E`, a sign followed by a digit continues the
  // exponent: `1e-5`.
  void consume_exponent_sign() {
    const char last = text_[pos_ - 1];
    if ((last == 'e' || last == 'E') && (peek() == '+' || peek() == '-') && is_digit(peek(1))) {
      ++pos_;
      consume_word_chars();
    }
  }

  void number() {
    const size_t begin = pos_;
    const bool prefixed = peek() == '0' && (peek(1) == 'x' || peek(1) == 'b' || peek(1) == 'X' || peek(1) == 'B');
    consume_word_chars();
    if (!prefixed) {
      consume_exponent_sign();
      // A fraction needs a digit right after the dot, so `0..N` and `x.0` stay apart.
      const std::string_view so_far = text_.substr(begin, pos_ - begin);
      const bool plain = so_far.find_first_not_of("0123456789_") == std::string_view::npos;
      if (plain && peek() == '.' && is_digit(peek(1))) {
        ++pos_;
        consume_word_chars();
        consume_exponent_sign();
      }
    }
    const std::string_view spelling = text_.substr(begin, pos_ - begin);
    const bool is_float = !prefixed && spelling.find_first_of(".eE") != std::string_view::npos;
    if (const std::string problem = check_number(spelling, prefixed); !problem.empty()) {
      if (Diagnostic* d = report("E1005", span(begin, pos_))) {
        d->message = "malformed number `" + excerpt(spelling) + "`: " + problem;
        d->with_help(
            "numbers are written `42`, `1_000`, `0xff`, `0b1010`, `1.5`, `1e-5`; `_` only between digits, "
            "no leading zeros");
      }
    }
    push(is_float ? TokenKind::Float : TokenKind::Integer, begin);
  }

  // An explanation of what is wrong with a numeric spelling, or "".
  static std::string check_number(std::string_view text, bool prefixed) {
    if (prefixed) {
      const char base = text[1];
      if (base == 'X' || base == 'B') return "the base prefix is lower case: `0x` or `0b`";
      const bool hex = base == 'x';
      const std::string_view digits = text.substr(2);
      if (digits.empty()) return hex ? "`0x` needs hexadecimal digits" : "`0b` needs binary digits";
      const size_t bad = hex ? first_invalid_digit(digits, is_hex_digit) : first_invalid_digit(digits, is_binary_digit);
      if (bad != std::string_view::npos) {
        return std::string("`") + digits[bad] + "` is not a " + (hex ? "hexadecimal" : "binary") + " digit";
      }
      const char* problem = hex ? check_digit_run(digits, is_hex_digit, "missing digits")
                                : check_digit_run(digits, is_binary_digit, "missing digits");
      return problem ? problem : "";
    }
    const size_t exponent_at = text.find_first_of("eE");
    const std::string_view mantissa = text.substr(0, exponent_at);
    const size_t dot_at = mantissa.find('.');
    const std::string_view integer_part = mantissa.substr(0, dot_at);
    const size_t bad = first_invalid_digit(integer_part, is_digit);
    if (bad != std::string_view::npos) return std::string("`") + integer_part[bad] + "` is not a decimal digit";
    if (const char* problem = check_digit_run(integer_part, is_digit, "missing digits")) return problem;
    if (integer_part.size() > 1 && integer_part[0] == '0') return "a decimal number other than `0` has no leading zero";
    if (dot_at != std::string_view::npos) {
      const std::string_view fraction = mantissa.substr(dot_at + 1);
      const size_t bad_fraction = first_invalid_digit(fraction, is_digit);
      if (bad_fraction != std::string_view::npos) {
        return std::string("`") + fraction[bad_fraction] + "` is not a decimal digit";
      }
      if (const char* problem = check_digit_run(fraction, is_digit, "the fraction has no digits")) return problem;
    }
    if (exponent_at != std::string_view::npos) {
      std::string_view exponent = text.substr(exponent_at + 1);
      if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) exponent.remove_prefix(1);
      if (exponent.empty()) return "the exponent has no digits";
      const size_t bad_exponent = first_invalid_digit(exponent, is_digit);
      if (bad_exponent != std::string_view::npos) {
        return std::string("`") + exponent[bad_exponent] + "` is not a decimal digit";
      }
      if (const char* problem = check_digit_run(exponent, is_digit, "the exponent has no digits")) return problem;
    }
    return "";
  }

  void escape_sequence(bool& bad_utf8) {
    const size_t begin = pos_;
    ++pos_;  // the backslash
    const char c = peek();
    if (c == 'n' || c == 'r' || c == 't' || c == '0' || c == '\\' || c == '"') {
      ++pos_;
      return;
    }
    if (c == 'u' && peek(1) == '{') {
      pos_ += 2;
      uint32_t value = 0;
      size_t digits = 0;
      while (is_hex_digit(peek())) {
        const char h = peek();
        const uint32_t digit = is_digit(h) ? static_cast<uint32_t>(h - '0') : static_cast<uint32_t>((h | 0x20) - 'a' + 10);
        if (digits < 8) value = value * 16 + digit;
        ++digits;
        ++pos_;
      }
      const bool closed = peek() == '}';
      if (closed) ++pos_;
      const bool scalar = value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
      if (!closed || digits == 0 || digits > 6 || !scalar) {
        if (Diagnostic* d = report("E1003", span(begin, pos_))) {
          d->message = "malformed Unicode escape";
          d->with_help("write `\\u{...}` with 1 to 6 hexadecimal digits naming a Unicode scalar value");
        }
      }
      return;
    }
    if (pos_ < text_.size() && c != '\n' && c != '\r') advance_code_point(bad_utf8);
    if (Diagnostic* d = report("E1003", span(begin, pos_))) {
      d->message = "unknown escape sequence `" + excerpt(text_.substr(begin, pos_ - begin)) + "`";
      d->with_help("the escapes are \\n \\r \\t \\0 \\\\ \\\" and \\u{...}");
    }
  }

  void string(size_t begin) {
    bool bad_utf8 = false;
    ++pos_;  // the opening quote
    while (true) {
      const char c = peek();
      if (pos_ >= text_.size() || c == '\n') {
        size_t end = pos_;
        if (end > begin && text_[end - 1] == '\r') --end;
        if (Diagnostic* d = report("E1003", span(begin, end))) {
          d->message = "unterminated string literal";
          d->with_label("this string has no closing `\"`").note("a string literal ends on the line where it starts");
        }
        break;
      }
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c == '\\') {
        escape_sequence(bad_utf8);
      } else if (static_cast<unsigned char>(c) < 0x80) {
        ++pos_;
      } else {
        advance_code_point(bad_utf8);
      }
    }
    push(TokenKind::String, begin);
  }

  // Punctuation by maximal munch: the longest spelling that matches.
  bool punctuation() {
    const char c = peek();
    const char next = peek(1);
    TokenKind kind;
    size_t length = 1;
    const auto two = [&](char second, TokenKind pair, TokenKind single) {
      if (next == second) {
        length = 2;
        return pair;
      }
      return single;
    };
    switch (c) {
      case '(': kind = TokenKind::LParen; break;
      case ')': kind = TokenKind::RParen; break;
      case '[': kind = TokenKind::LBracket; break;
      case ']': kind = TokenKind::RBracket; break;
      case '{': kind = TokenKind::LBrace; break;
      case '}': kind = TokenKind::RBrace; break;
      case ',': kind = TokenKind::Comma; break;
      case ';': kind = TokenKind::Semicolon; break;
      case '+': kind = TokenKind::Plus; break;
      case '*': kind = TokenKind::Star; break;
      case '/': kind = TokenKind::Slash; break;
      case '%': kind = TokenKind::Percent; break;
      case '^': kind = TokenKind::Caret; break;
      case '?': kind = TokenKind::Question; break;
      case ':': kind = two(':', TokenKind::ColonColon, TokenKind::Colon); break;
      case '-': kind = two('>', TokenKind::Arrow, TokenKind::Minus); break;
      case '!': kind = two('=', TokenKind::BangEqual, TokenKind::Bang); break;
      case '<': kind = two('=', TokenKind::LessEqual, TokenKind::Less); break;
      case '>': kind = two('=', TokenKind::GreaterEqual, TokenKind::Greater); break;
      case '&': kind = two('&', TokenKind::AmpAmp, TokenKind::Amp); break;
      case '|': kind = two('|', TokenKind::PipePipe, TokenKind::Pipe); break;
      case '=':
        kind = next == '=' ? TokenKind::EqualEqual : next == '>' ? TokenKind::FatArrow : TokenKind::Equal;
        length = kind == TokenKind::Equal ? 1 : 2;
        break;
      case '.':
        if (next == '.' && peek(2) == '.') {
          kind = TokenKind::Ellipsis;
          length = 3;
        } else {
          kind = two('.', TokenKind::DotDot, TokenKind::Dot);
        }
        break;
      default: return false;
    }
    const size_t begin = pos_;
    pos_ += length;
    push(kind, begin);
    return true;
  }

  // What a byte that starts no token is, for grouping a run of them into one
  // diagnostic.
  enum class Bad { InvalidUtf8, NonAscii, Control, Symbol };

  Bad classify_bad(size_t at, uint32_t& length, uint32_t& value) const {
    const CodePoint decoded = decode_utf8(text_, at);
    length = decoded.length;
    value = decoded.value;
    if (!decoded.valid) return Bad::InvalidUtf8;
    if (decoded.value >= 0x80) return Bad::NonAscii;
    if (decoded.value < 0x20 || decoded.value == 0x7F) return Bad::Control;
    return Bad::Symbol;
  }

  // Characters that cannot start a token; adjacent ones of one kind are
  // reported together, so hostile input yields bounded output.
  void invalid_run() {
    const size_t begin = pos_;
    uint32_t length = 0;
    uint32_t first_value = 0;
    const Bad kind = classify_bad(pos_, length, first_value);
    pos_ += length;
    while (pos_ < text_.size()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || is_word_char(c) || c == '"') break;
      uint32_t next_length = 0;
      uint32_t next_value = 0;
      if (classify_bad(pos_, next_length, next_value) != kind) break;
      if (kind == Bad::Symbol && !is_unknown_symbol(c)) break;  // real punctuation starts a token
      pos_ += next_length;
    }
    Diagnostic* d = report("E1001", span(begin, pos_));
    if (d) describe_invalid_run(*d, kind, text_.substr(begin, pos_ - begin), length, first_value);
    push(TokenKind::Invalid, begin);
  }

  static void describe_invalid_run(Diagnostic& d, Bad kind, std::string_view run, uint32_t first_length,
                                   uint32_t first_value) {
    switch (kind) {
      case Bad::InvalidUtf8:
        d.message = "invalid UTF-8 in source text";
        d.note("Linnet source files must be UTF-8");
        break;
      case Bad::NonAscii:
        d.message = std::string(run.size() > first_length ? "unexpected non-ASCII characters `"
                                                          : "unexpected non-ASCII character `") +
                    excerpt(run, 8) + "`";
        d.note("identifiers and operators are ASCII; other characters may appear only in comments and strings");
        break;
      case Bad::Control:
        d.message = "unexpected control character " + code_point_name(first_value);
        d.note("only spaces, tabs and line breaks may separate tokens");
        break;
      case Bad::Symbol:
        d.message = "unexpected character `" + std::string(run.substr(0, 1)) + "`";
        if (run[0] == '\'') d.with_help("string literals use double quotes: \"...\"");
        if (run[0] == '#') d.with_help("comments start with `//`");
        break;
    }
  }

  static bool is_unknown_symbol(char c) {
    return c == '$' || c == '@' || c == '#' || c == '`' || c == '~' || c == '\\' || c == '\'';
  }

  uint32_t file_;
  std::string_view text_;
  Diagnostics& diagnostics_;
  LexResult result_;
  size_t pos_ = 0;
};

}  // namespace

LexResult lex(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics) {
  return Lexer(sources, file_id, diagnostics).run();
}

std::vector<Token> tokenize(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics) {
  return lex(sources, file_id, diagnostics).tokens;
}

std::string decode_string_literal(std::string_view spelling) {
  if (!spelling.empty() && spelling.front() == '"') spelling.remove_prefix(1);
  if (!spelling.empty() && spelling.back() == '"') spelling.remove_suffix(1);
  std::string out;
  out.reserve(spelling.size());
  for (size_t i = 0; i < spelling.size(); ++i) {
    const char c = spelling[i];
    if (c != '\\' || i + 1 >= spelling.size()) {
      out += c;
      continue;
    }
    const char e = spelling[i + 1];
    switch (e) {
      case 'n': out += '\n'; ++i; continue;
      case 'r': out += '\r'; ++i; continue;
      case 't': out += '\t'; ++i; continue;
      case '0': out += '\0'; ++i; continue;
      case '\\': out += '\\'; ++i; continue;
      case '"': out += '"'; ++i; continue;
      default: break;
    }
    if (e == 'u' && i + 2 < spelling.size() && spelling[i + 2] == '{') {
      const size_t close = spelling.find('}', i + 3);
      uint32_t value = 0;
      const bool ok = close != std::string_view::npos && close > i + 3 && close - (i + 3) <= 6 &&
                      std::from_chars(spelling.data() + i + 3, spelling.data() + close, value, 16).ptr ==
                          spelling.data() + close &&
                      value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
      if (ok) {
        // UTF-8 encode the scalar value.
        if (value < 0x80) {
          out += static_cast<char>(value);
        } else if (value < 0x800) {
          out += static_cast<char>(0xC0 | (value >> 6));
          out += static_cast<char>(0x80 | (value & 0x3F));
        } else if (value < 0x10000) {
          out += static_cast<char>(0xE0 | (value >> 12));
          out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (value & 0x3F));
        } else {
          out += static_cast<char>(0xF0 | (value >> 18));
          out += static_cast<char>(0x80 | ((value >> 12) & 0x3F));
          out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (value & 0x3F));
        }
        i = close;
        continue;
      }
    }
    out += c;  // a malformed escape (already reported) is kept as written
  }
  return out;
}

std::optional<uint64_t> integer_literal_value(std::string_view spelling) {
  int base = 10;
  if (spelling.size() > 2 && spelling[0] == '0' && (spelling[1] == 'x' || spelling[1] == 'b')) {
    base = spelling[1] == 'x' ? 16 : 2;
    spelling.remove_prefix(2);
  }
  uint64_t value = 0;
  for (char c : spelling) {
    if (c == '_') continue;
    uint64_t digit;
    if (is_digit(c)) {
      digit = static_cast<uint64_t>(c - '0');
    } else if (is_hex_digit(c)) {
      digit = static_cast<uint64_t>((c | 0x20) - 'a' + 10);
    } else {
      return std::nullopt;
    }
    if (digit >= static_cast<uint64_t>(base)) return std::nullopt;
    if (value > (UINT64_MAX - digit) / static_cast<uint64_t>(base)) return std::nullopt;
    value = value * static_cast<uint64_t>(base) + digit;
  }
  return value;
}

double float_literal_value(std::string_view spelling) {
  std::string digits;
  digits.reserve(spelling.size());
  for (char c : spelling) {
    if (c != '_') digits += c;
  }
  return std::strtod(digits.c_str(), nullptr);
}

}  // namespace linnet::syntax
