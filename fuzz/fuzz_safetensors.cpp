// libFuzzer target for the safetensors reader: each input is parsed as a
// whole safetensors file held in memory. Besides crashes and sanitizer
// reports (every tensor byte is read, so a range outside the buffer is an
// AddressSanitizer report), it stops on a broken invariant: a tensor whose
// byte range, size or dtype disagrees with what was validated, ranges that
// do not tile the data region, or a checkpoint that loses a tensor.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "linnet/nest/checkpoint.hpp"
#include "linnet/nest/safetensors.hpp"

namespace {

using namespace linnet::nest;

void require(bool condition) {
  if (!condition) std::abort();
}

// Reads every byte so that AddressSanitizer sees any out-of-bounds range.
unsigned checksum(std::span<const std::byte> bytes) {
  unsigned sum = 0;
  for (std::byte b : bytes) sum += static_cast<unsigned>(b);
  return sum;
}

void check_file(const SafetensorsFile& file, size_t size) {
  require(file.file_size() == size);
  uint64_t data_start = 8 + file.header_length();
  uint64_t covered = 0;
  for (const TensorRecord& record : file.tensors()) {
    require(record.data_begin == covered && record.data_begin <= record.data_end);
    covered = record.data_end;
    require(record.bytes.size() == record.data_end - record.data_begin);
    std::optional<unsigned> bits = safetensors_dtype_bits(record.format_dtype);
    require(bits.has_value());
    require(record.dtype == linnet_dtype_of(record.format_dtype));
    require(record.element_count() * *bits == record.bytes.size() * 8);
    require(file.find(record.name) == &record);
    checksum(record.bytes);
  }
  require(data_start + covered == size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::byte> bytes(size);
  if (size) std::memcpy(bytes.data(), data, size);
  try {
    SafetensorsFile file = SafetensorsFile::from_bytes(std::move(bytes), "fuzz-input");
    check_file(file, size);
    size_t count = file.tensors().size();
    std::vector<SafetensorsFile> files;
    files.push_back(std::move(file));
    Checkpoint checkpoint = Checkpoint::from_files(std::move(files), "fuzz-checkpoint");
    require(checkpoint.size() == count);
    for (const std::string& name : checkpoint.names()) checksum(checkpoint.data(name));
    require(checkpoint.touched().size() == count);
  } catch (const CheckpointError&) {
    // Rejecting malformed input is the expected outcome for most inputs.
  }
  return 0;
}
