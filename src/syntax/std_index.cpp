// The standard library's public names (std_index.hpp).
#include "linnet/syntax/std_index.hpp"
#include "linnet/syntax/suggest.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace linnet::syntax {

namespace fs = std::filesystem;

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The words of a line up to the first character that is not part of a word.
std::vector<std::string_view> leading_words(std::string_view line, size_t count) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (words.size() < count) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    const size_t start = at;
    while (at < line.size() && is_name_char(line[at])) ++at;
    if (at == start) break;
    words.push_back(line.substr(start, at - start));
  }
  return words;
}

// `module std.nn.norm`: the dotted path after the keyword.
std::string module_path(std::string_view line) {
  size_t at = line.find("module");
  if (at == std::string_view::npos) return "";
  at += 6;
  while (at < line.size() && line[at] == ' ') ++at;
  size_t end = at;
  while (end < line.size() && (is_name_char(line[end]) || line[end] == '.')) ++end;
  return std::string(line.substr(at, end - at));
}

}  // namespace

std::map<std::string, std::string> index_std_items(const std::string& std_root) {
  static constexpr std::array<std::string_view, 8> kinds = {"fn", "op", "kernel", "block", "struct", "enum", "type", "const"};
  std::map<std::string, std::string> items;
  if (std_root.empty()) return items;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(std_root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() == ".linnet") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());  // the first declaration of a name wins, the same on every machine
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string module;
    std::string line;
    while (std::getline(in, line)) {
      const std::vector<std::string_view> words = leading_words(line, 3);
      if (module.empty() && !words.empty() && words[0] == "module") {
        module = module_path(line);
        continue;
      }
      // Top-level items start their line; an indented `pub fn` is a block's method.
      if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
      if (module.empty() || words.size() < 3 || words[0] != "pub") continue;
      if (std::find(kinds.begin(), kinds.end(), words[1]) == kinds.end()) continue;
      items.emplace(std::string(words[2]), module);
    }
  }
  return items;
}

std::optional<std::string> std_item_for(const std::string& name, const std::map<std::string, std::string>& std_items) {
  std::vector<std::string> names;
  for (const auto& [item, module] : std_items) names.push_back(item);
  if (std::optional<std::string> near = closest_name(name, names)) return near;
  std::optional<std::string> holding;
  for (const std::string& item : names) {
    size_t start = 0;
    while (start <= item.size()) {
      size_t end = item.find('_', start);
      if (end == std::string::npos) end = item.size();
      if (item.compare(start, end - start, name) == 0 && end - start == name.size()) {
        if (holding) return std::nullopt;  // more than one: no single guess
        holding = item;
        break;
      }
      start = end + 1;
    }
  }
  return holding;
}

}  // namespace linnet::syntax
