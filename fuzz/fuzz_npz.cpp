// libFuzzer target for the NumPy readers: each input is parsed both as an
// .npz archive and as a single .npy file. Besides crashes and sanitizer
// reports, it stops on a broken invariant: an array whose data size
// disagrees with its shape and dtype, or one that does not survive being
// written and read back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "linnet/tensor/npz.hpp"

namespace {

using namespace linnet::tensor;

void require(bool condition) {
  if (!condition) std::abort();
}

bool same(const NpyArray& a, const NpyArray& b) { return a.dtype == b.dtype && a.shape == b.shape && a.data == b.data; }

void check_array(const NpyArray& array) {
  require(array.data.size() == array.element_count() * dtype_size(array.dtype));
  require(same(parse_npy(serialize_npy(array), "fuzz-roundtrip"), array));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    std::map<std::string, NpyArray> arrays = parse_npz(bytes, "fuzz-input.npz");
    for (const auto& [name, array] : arrays) {
      require(!name.empty());
      check_array(array);
    }
    std::map<std::string, NpyArray> again = parse_npz(serialize_npz(arrays, true), "fuzz-roundtrip.npz");
    require(again.size() == arrays.size());
    for (const auto& [name, array] : arrays) require(again.count(name) == 1 && same(again.at(name), array));
  } catch (const FormatError&) {
    // Rejecting malformed input is the expected outcome for most inputs.
  }
  try {
    check_array(parse_npy(bytes, "fuzz-input.npy"));
  } catch (const FormatError&) {
  }
  return 0;
}
