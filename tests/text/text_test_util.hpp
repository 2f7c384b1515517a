// Shared by the text suites: where the fetched tokenizers and the
// committed references are, and reading a file whole.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace linnet::text::testing {

inline std::string source_path(const std::string& relative) { return std::string(LINNET_SOURCE_DIR) + "/" + relative; }

inline std::string fetched_tokenizer(const std::string& family) {
  return source_path("tests/text/fetched/" + family + "/tokenizer.json");
}

inline bool has_fetched(const std::string& family) { return std::filesystem::exists(fetched_tokenizer(family)); }

inline std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace linnet::text::testing
