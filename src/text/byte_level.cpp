#include "byte_level.hpp"

#include <array>

#include "linnet/text/utf8.hpp"

namespace linnet::text::byte_level {

namespace {

struct Alphabet {
  std::array<std::string, 256> chars;
  std::array<int, 512> bytes{};  // code point -> byte, -1 when none (every character is below U+0200)

  Alphabet() {
    bytes.fill(-1);
    char32_t next_extra = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : next_extra++;
      utf8::append(chars[b], cp);
      bytes[cp] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet table;
  return table;
}

}  // namespace

const std::string& char_of(unsigned char byte) { return alphabet().chars[byte]; }

void encode(std::string_view bytes, std::string& out) {
  const Alphabet& table = alphabet();
  for (char c : bytes) out += table.chars[static_cast<unsigned char>(c)];
}

std::optional<unsigned char> byte_of(char32_t cp) {
  if (cp >= 512) return std::nullopt;
  const int b = alphabet().bytes[cp];
  if (b < 0) return std::nullopt;
  return static_cast<unsigned char>(b);
}

}  // namespace linnet::text::byte_level
