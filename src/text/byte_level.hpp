// GPT-2's byte-level alphabet: every byte stands for one printable Unicode
// character (bytes that are printable Latin-1 stand for themselves, the
// others for U+0100 onwards), so that any byte string is a string of
// vocabulary characters ("Ġ" is the space, "Ċ" the newline).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace linnet::text::byte_level {

// The UTF-8 of the character that stands for `byte`.
const std::string& char_of(unsigned char byte);
// Appends the byte-level spelling of `bytes` to `out`.
void encode(std::string_view bytes, std::string& out);
// The byte the character `cp` stands for; nothing for a character outside
// the alphabet.
std::optional<unsigned char> byte_of(char32_t cp);

}  // namespace linnet::text::byte_level
