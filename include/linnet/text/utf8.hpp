// UTF-8 helpers the tokenizer needs: walking code points, encoding one,
// and repairing invalid sequences the way the reference does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace linnet::text::utf8 {

// The byte length of the character starting with `lead` (1 for a stray
// continuation or invalid lead byte, so that a walk always advances).
size_t sequence_length(unsigned char lead);

// Appends code point `cp` as UTF-8.
void append(std::string& out, char32_t cp);

// The code point at `text[at]` and its length; invalid bytes read as one
// byte each (U+FFFD).
char32_t decode_at(std::string_view text, size_t at, size_t& length);

// How many bytes at the end of `bytes` are an incomplete (but so far
// valid) multi-byte character: what a stream holds back.
size_t incomplete_tail(std::string_view bytes);

// `bytes` with each maximal invalid subsequence replaced by U+FFFD (as
// Rust's String::from_utf8_lossy).
std::string repair(std::string_view bytes);

}  // namespace linnet::text::utf8
