// String assembly for the solver's messages.
//
// Joins pieces with one allocation. It also sidesteps g++ 12's false
// -Wrestrict error on `"literal" + std::string` at -O2 (GCC PR 105329),
// which -Werror would turn into a build failure.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace linnet::check {

inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : parts) out.append(p.data(), p.size());
  return out;
}

// `text` in backticks, as diagnostics quote source.
inline std::string code(std::string_view text) { return cat({"`", text, "`"}); }

}  // namespace linnet::check
