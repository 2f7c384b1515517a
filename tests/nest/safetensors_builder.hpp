// Test helpers: safetensors files built byte by byte (valid ones and the
// malformed corpus), and a temporary directory to write them into.
#pragma once

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>
#include "temp_dir.hpp"

namespace linnet::nest::testing {

// An 8-byte little-endian length (of `header` unless `declared_length` says
// otherwise), the header text, then `data`.
inline std::vector<std::byte> safetensors_bytes(const std::string& header, const std::vector<std::byte>& data,
                                                std::optional<uint64_t> declared_length = std::nullopt) {
  uint64_t length = declared_length.value_or(header.size());
  std::vector<std::byte> bytes;
  for (size_t i = 0; i < 8; ++i) bytes.push_back(std::byte((length >> (8 * i)) & 0xFF));
  for (char c : header) bytes.push_back(static_cast<std::byte>(c));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

inline std::vector<std::byte> zero_bytes(size_t count) { return std::vector<std::byte>(count); }

// One tensor of a well-formed file.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;
};

// A well-formed file: tensors laid out in the given order, header padded with
// spaces to a multiple of 8 as the reference writer does.
inline std::vector<std::byte> well_formed(const std::vector<TensorSpec>& tensors, const std::string& metadata_json = "") {
  std::string header = "{";
  if (!metadata_json.empty()) header += "\"__metadata__\":" + metadata_json;
  uint64_t offset = 0;
  std::vector<std::byte> data;
  for (const TensorSpec& tensor : tensors) {
    if (header.size() > 1) header += ",";
    header += "\"" + tensor.name + "\":{\"dtype\":\"" + tensor.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      if (i) header += ",";
      header += std::to_string(tensor.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + tensor.data.size()) + "]}";
    offset += tensor.data.size();
    data.insert(data.end(), tensor.data.begin(), tensor.data.end());
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  return safetensors_bytes(header, data);
}

// Bytes 0, 1, 2, ... (mod 251) so that every tensor's contents are distinct.
inline std::vector<std::byte> counting_bytes(size_t count, size_t start = 0) {
  std::vector<std::byte> bytes(count);
  for (size_t i = 0; i < count; ++i) bytes[i] = std::byte((start + i) % 251);
  return bytes;
}

// A scratch folder for one test, removed with its files at the end; its
// path as a string, as the checkpoint readers take it.
struct TempDir : linnet_test::TempDir {
  TempDir() : linnet_test::TempDir("linnet-safetensors") {}
  std::string path() const { return linnet_test::TempDir::path().string(); }
  std::string write_text(const std::string& name, const std::string& text) const { return write(name, text); }
};

}  // namespace linnet::nest::testing
