// Unicode normalization forms and lower-casing (ICU), for the NFC, NFD,
// NFKC, NFKD and Lowercase normalizers.
#pragma once

#include <string>
#include <string_view>

namespace linnet::text {

enum class NormalForm { NFC, NFD, NFKC, NFKD };

// `text` (valid UTF-8) in the form.
std::string normalize(std::string_view text, NormalForm form);
// `text` lower-cased by Unicode's full case mapping (no locale).
std::string lowercase(std::string_view text);

}  // namespace linnet::text
