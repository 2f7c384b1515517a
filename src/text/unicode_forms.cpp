#include "unicode_forms.hpp"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

#include "linnet/text/tokenizer.hpp"

namespace linnet::text {

namespace {

void check(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) throw TokenizerError(std::string(what) + " failed: " + u_errorName(status));
}

std::vector<UChar> to_utf16(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check(status, "UTF-16 conversion");
  std::vector<UChar> out(static_cast<size_t>(length) + 1);
  status = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  check(status, "UTF-16 conversion");
  out.resize(static_cast<size_t>(length));
  return out;
}

std::string to_utf8(const std::vector<UChar>& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strToUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check(status, "UTF-8 conversion");
  std::string out(static_cast<size_t>(length) + 1, '\0');
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  check(status, "UTF-8 conversion");
  out.resize(static_cast<size_t>(length));
  return out;
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

std::string normalize(std::string_view text, NormalForm form) {
  if (is_ascii(text)) return std::string(text);  // ASCII is in every form
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = nullptr;
  switch (form) {
    case NormalForm::NFC: normalizer = unorm2_getNFCInstance(&status); break;
    case NormalForm::NFD: normalizer = unorm2_getNFDInstance(&status); break;
    case NormalForm::NFKC: normalizer = unorm2_getNFKCInstance(&status); break;
    case NormalForm::NFKD: normalizer = unorm2_getNFKDInstance(&status); break;
  }
  check(status, "loading the Unicode normalizer");
  const std::vector<UChar> source = to_utf16(text);
  std::vector<UChar> result(source.size() * 3 + 16);
  int32_t length = unorm2_normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), result.data(),
                                    static_cast<int32_t>(result.size()), &status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    result.resize(static_cast<size_t>(length));
    status = U_ZERO_ERROR;
    length = unorm2_normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), result.data(),
                              static_cast<int32_t>(result.size()), &status);
  }
  check(status, "Unicode normalization");
  result.resize(static_cast<size_t>(length));
  return to_utf8(result);
}

std::string lowercase(std::string_view text) {
  if (is_ascii(text)) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  const std::vector<UChar> source = to_utf16(text);
  std::vector<UChar> result(source.size() * 2 + 16);
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = u_strToLower(result.data(), static_cast<int32_t>(result.size()), source.data(),
                                static_cast<int32_t>(source.size()), "", &status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    result.resize(static_cast<size_t>(length));
    status = U_ZERO_ERROR;
    length = u_strToLower(result.data(), static_cast<int32_t>(result.size()), source.data(),
                          static_cast<int32_t>(source.size()), "", &status);
  }
  check(status, "lower-casing");
  result.resize(static_cast<size_t>(length));
  return to_utf8(result);
}

}  // namespace linnet::text
