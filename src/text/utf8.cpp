#include "linnet/text/utf8.hpp"

namespace linnet::text::utf8 {

size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 1;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {

// The number of bytes from `at` that form a valid prefix of one character
// (== the character's length when it is complete and valid), following
// the Unicode table of well-formed sequences.
size_t valid_prefix(std::string_view text, size_t at, size_t& needed) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  needed = sequence_length(lead);
  if (needed == 1) return lead < 0x80 ? 1 : 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead == 0xE0) low = 0xA0;
  if (lead == 0xED) high = 0x9F;
  if (lead == 0xF0) low = 0x90;
  if (lead == 0xF4) high = 0x8F;
  size_t count = 1;
  for (size_t i = 1; i < needed && at + i < text.size(); ++i) {
    const unsigned char next = byte(at + i);
    const bool ok = i == 1 ? (next >= low && next <= high) : (next >= 0x80 && next <= 0xBF);
    if (!ok) break;
    ++count;
  }
  return count;
}

}  // namespace

char32_t decode_at(std::string_view text, size_t at, size_t& length) {
  size_t needed = 0;
  const size_t valid = valid_prefix(text, at, needed);
  if (valid == 0 || valid < needed) {
    length = valid == 0 ? 1 : valid;
    return 0xFFFD;
  }
  length = needed;
  const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[at + i])); };
  switch (needed) {
    case 1: return byte(0);
    case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
  }
}

size_t incomplete_tail(std::string_view bytes) {
  // A character is at most 4 bytes: look at the last 3 for a lead byte.
  for (size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
    const size_t at = bytes.size() - back;
    const unsigned char b = static_cast<unsigned char>(bytes[at]);
    if (b >= 0x80 && b <= 0xBF) continue;  // a continuation byte: keep looking
    size_t needed = 0;
    const size_t valid = valid_prefix(bytes, at, needed);
    return (needed > back && valid == back) ? back : 0;
  }
  return 0;
}

std::string repair(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t at = 0;
  while (at < bytes.size()) {
    size_t length = 0;
    const char32_t cp = decode_at(bytes, at, length);
    if (cp == 0xFFFD && !(length == 3 && bytes.substr(at, 3) == "\xEF\xBF\xBD")) {
      append(out, 0xFFFD);
    } else {
      out.append(bytes.substr(at, length));
    }
    at += length;
  }
  return out;
}

}  // namespace linnet::text::utf8
