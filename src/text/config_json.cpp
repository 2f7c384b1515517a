#include "linnet/text/config_json.hpp"

namespace linnet::text {

std::string tame_big_integers(std::string_view json) {
  std::string out;
  out.reserve(json.size() + 16);
  bool in_string = false;
  size_t at = 0;
  while (at < json.size()) {
    const char c = json[at];
    if (in_string) {
      out += c;
      if (c == '\\' && at + 1 < json.size()) out += json[++at];
      else if (c == '"') in_string = false;
      ++at;
      continue;
    }
    if (c == '"') in_string = true;
    if (c >= '0' && c <= '9') {
      size_t end = at;
      while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
      out.append(json.substr(at, end - at));
      const bool fraction_follows = end < json.size() && (json[end] == '.' || json[end] == 'e' || json[end] == 'E');
      if (end - at > 18 && !fraction_follows) out += ".0";
      at = end;
      continue;
    }
    out += c;
    ++at;
  }
  return out;
}

}  // namespace linnet::text
