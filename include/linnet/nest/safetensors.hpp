// One safetensors file, memory-mapped and validated.
//
// Layout: an 8-byte little-endian header length N, N bytes of UTF-8 JSON
// (an object: tensor name -> {"dtype", "shape", "data_offsets"}, plus an
// optional "__metadata__" string map), then the data region. data_offsets
// are [begin, end) within the data region.
//
// The file is treated as hostile. Opening it checks everything before any
// tensor byte can be reached, and each problem is a CheckpointError whose
// message names the file and, where there is one, the tensor:
//   - empty file, file shorter than 8 bytes, header length past the end of
//     the file or above 100 MB (the reference implementation's limit);
//   - header not UTF-8, not starting with '{', not valid JSON, not an object;
//   - a tensor entry not an object, missing or repeating a field, carrying an
//     unexpected field, a dtype that is not a string or not a safetensors
//     dtype, a shape that is not an array of non-negative integers, a shape
//     whose element count or byte size overflows, data_offsets that are not
//     two non-negative integers, reversed, or past the data region;
//   - a byte range whose length differs from shape x dtype size;
//   - ranges that overlap, leave a gap, do not start at 0 or do not end at
//     the end of the file (the format requires the ranges to tile the data
//     region exactly);
//   - duplicate tensor names; "__metadata__" that is not a string map.
//
// Tensor bytes are never copied: TensorRecord::bytes points into the mapping
// and TensorRecord::keep_alive holds the mapping open. The mapping is
// MAP_PRIVATE and read-only; a file truncated by another process while mapped
// can still fault, which no reader can prevent. Tensor data starts wherever
// the header ends, so it is only as aligned as the writer made it (the
// reference writer pads the header to a multiple of 8): copy, don't cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "linnet/tensor/dtype.hpp"

namespace linnet::nest {

class CheckpointError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// The bits per element of a safetensors dtype name ("BF16" -> 16, "F4" -> 4),
// or nullopt when the format has no such dtype.
std::optional<unsigned> safetensors_dtype_bits(std::string_view format_dtype);
// The Linnet dtype for a safetensors dtype name, or nullopt for the ones
// Linnet has no dtype for: F8_E4M3, F8_E5M2, F8_E8M0, F6_E2M3, F6_E3M2, F4
// and C64 (those tensors are still listed, as raw bytes).
std::optional<tensor::DType> linnet_dtype_of(std::string_view format_dtype);

struct TensorRecord {
  std::string name;
  std::string format_dtype;            // as the header spells it: "BF16", "U8", "F8_E4M3", ...
  std::optional<tensor::DType> dtype;  // empty when Linnet has no such dtype (see linnet_dtype_of)
  std::vector<int64_t> shape;          // empty for a scalar
  uint64_t data_begin = 0;             // the header's data_offsets, relative to the data region
  uint64_t data_end = 0;
  std::span<const std::byte> bytes;        // the tensor's bytes inside the file's mapping
  std::shared_ptr<const void> keep_alive;  // keeps the mapping (and so `bytes`) valid
  std::string file;                        // the file it lives in, for messages

  uint64_t element_count() const;
};

class SafetensorsFile {
 public:
  // Maps and validates a file on disk.
  static SafetensorsFile open(const std::string& path);
  // Validates a whole file held in memory (takes ownership of the buffer);
  // `name` stands in for the path in messages.
  static SafetensorsFile from_bytes(std::vector<std::byte> bytes, const std::string& name);

  const std::string& path() const { return path_; }
  // In data-offset order.
  const std::vector<TensorRecord>& tensors() const { return tensors_; }
  const TensorRecord* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  uint64_t header_length() const { return header_length_; }
  uint64_t file_size() const { return file_size_; }

 private:
  SafetensorsFile() = default;
  static SafetensorsFile parse(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                               const std::string& path);

  std::string path_;
  std::vector<TensorRecord> tensors_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
  uint64_t header_length_ = 0;
  uint64_t file_size_ = 0;
};

}  // namespace linnet::nest
