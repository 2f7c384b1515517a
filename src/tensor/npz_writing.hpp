// Writing .npy and .npz without copying array data: an archive is written as
// pieces (zip headers, .npy headers, the arrays' own bytes) handed in order
// to a sink, so a file can receive each array straight from its buffer.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "linnet/tensor/npz.hpp"

namespace linnet::tensor::detail {

// The .npy header (magic, version, length, padded dict) of `array`; its data
// follows it unchanged. Checks the array as serialize_npy does.
std::vector<std::byte> npy_header(const NpyView& array);

// A zip member whose contents are the concatenation of `pieces`.
struct ZipSource {
  std::string name;
  std::vector<std::span<const std::byte>> pieces;
};

using ByteSink = std::function<void(std::span<const std::byte>)>;

// Writes the archive build_zip would return, in order, to `sink`.
void write_zip(const std::vector<ZipSource>& members, bool compress, bool force_zip64, const ByteSink& sink);

}  // namespace linnet::tensor::detail
