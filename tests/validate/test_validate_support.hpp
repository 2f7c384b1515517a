// Shared by the validate suites: the golden cases with their cards, and
// writable copies of cases and cards that a test can damage.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <simdjson.h>
#include <string>
#include <vector>

#include "cli/cli_test_util.hpp"
#include "golden_cases.hpp"

namespace validate_test {

using linnet_test::GoldenCase;
using linnet_test::golden_cases;

inline std::string source_path(const std::string& relative) { return std::string(LINNET_SOURCE_DIR) + "/" + relative; }

// A writable recursive copy of `from` (cards and cases may be checked out read-only).
inline void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  fs::copy(from, to, fs::copy_options::recursive);
  fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(to)) {
    fs::permissions(entry.path(),
                    entry.is_directory() ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add);
  }
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Flips the sign of the first `count` bf16 values of tensor `name` in a
// .safetensors file, found through the file's own JSON header.
inline void negate_bf16_values(const std::string& path, const std::string& name, int count) {
  std::vector<char> bytes = read_bytes(path);
  REQUIRE(bytes.size() >= 8);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  REQUIRE(8 + header_size <= bytes.size());
  simdjson::dom::parser parser;
  simdjson::dom::element header;
  REQUIRE(parser.parse(bytes.data() + 8, static_cast<size_t>(header_size)).get(header) == simdjson::SUCCESS);
  std::string_view dtype;
  REQUIRE(header[name]["dtype"].get(dtype) == simdjson::SUCCESS);
  REQUIRE(dtype == "BF16");
  uint64_t begin = 0;
  REQUIRE(header[name]["data_offsets"].at(0).get(begin) == simdjson::SUCCESS);
  const size_t data = 8 + static_cast<size_t>(header_size) + static_cast<size_t>(begin);
  for (int i = 0; i < count; ++i) bytes.at(data + static_cast<size_t>(2 * i + 1)) ^= static_cast<char>(0x80);
  write_bytes(path, bytes);
}

// Replaces the one occurrence of `from` in a text file by `to`.
inline void replace_once(const std::string& path, const std::string& from, const std::string& to) {
  const std::vector<char> bytes = read_bytes(path);
  std::string text(bytes.begin(), bytes.end());
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  text.replace(at, from.size(), to);
  write_bytes(path, std::vector<char>(text.begin(), text.end()));
}

}  // namespace validate_test
