// NumPy's .npy and .npz files, read and written at the byte level.
//
// An NpyArray is plain bytes plus a dtype and shape; turning it into a Tensor
// is the caller's business. Readers treat every input as hostile: each size,
// offset and count is checked before it is used, and every problem is a
// FormatError whose message names the file (and the .npz member).
//
// .npy: format versions 1.0, 2.0 and 3.0. Supported dtypes are
// |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 <f2 <f4 <f8. Big-endian arrays (">i4")
// are byte-swapped to little-endian on reading; Fortran-order arrays are
// transposed to C order on reading. Anything else (structured, object,
// string, complex dtypes) is rejected by name.
//
// bf16 has no NumPy dtype. Writing a BF16 NpyArray is refused with a
// FormatError rather than silently storing its bits as "<u2" (NumPy would
// read those as integers). Callers widen first: bf16_widened_to_f32() is
// exact, so nothing is lost.
//
// .npz: a zip archive of "<name>.npy" members, stored or deflated, with or
// without zip64 records (NumPy always writes zip64 local headers). The writer
// produces what numpy.savez / savez_compressed produce, readable by np.load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "linnet/tensor/dtype.hpp"

namespace linnet::tensor {

class FormatError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;   // empty for a 0-d (scalar) array
  std::vector<std::byte> data;  // C order, little-endian, element_count() * dtype_size(dtype) bytes
  // Product of the shape (1 for a scalar).
  size_t element_count() const;
};

// `what` names the input in error messages (a path, or "file.npz: member").
NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& what);
NpyArray read_npy(const std::string& path);

// Member names are returned without their ".npy" suffix.
std::map<std::string, NpyArray> parse_npz(std::span<const std::byte> bytes, const std::string& what);
std::map<std::string, NpyArray> read_npz(const std::string& path);

// An array to write whose bytes lie elsewhere (a tensor's storage): the
// writers read them in place, with no copy into an NpyArray. `data` must
// stay valid while the view is used.
struct NpyView {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;       // empty for a 0-d (scalar) array
  std::span<const std::byte> data;  // as NpyArray::data
};
NpyView view_of(const NpyArray& array);

// A version 1.0 .npy (2.0 when the header needs more than 65535 bytes), header
// padded to a multiple of 64 bytes as NumPy does. Throws FormatError for BF16
// and std::invalid_argument when data does not match shape and dtype.
std::vector<std::byte> serialize_npy(const NpyArray& array);
void write_npy(const std::string& path, const NpyArray& array);
void write_npy(const std::string& path, const NpyView& array);

// Members are named "<key>.npy", deflated when compress is true (savez_compressed),
// stored otherwise (savez, the default). On float data deflate saves about
// half the bytes at a cost of about 0.2 s of CPU per MB (docs/performance.md),
// so only a caller that asks for it gets it.
std::vector<std::byte> serialize_npz(const std::map<std::string, NpyArray>& arrays, bool compress = false);
void write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays, bool compress = false);
void write_npz(const std::string& path, const std::map<std::string, NpyView>& arrays, bool compress = false);

// The same values as f32 (every bf16 is exactly an f32). Other dtypes are
// returned unchanged.
NpyArray bf16_widened_to_f32(const NpyArray& array);

// The zip container under .npz, usable on its own (tests build unusual
// archives with it).
struct ZipMember {
  std::string name;
  std::vector<std::byte> bytes;  // uncompressed contents
};

// Every member, in central-directory order, decompressed and CRC-checked.
// Rejects truncated archives, offsets outside the archive, overlapping
// members, sizes that disagree with the data, CRC mismatches, encryption,
// multi-disk archives, compression other than stored/deflate, and members
// declaring more output than deflate can produce from their compressed size.
std::vector<ZipMember> parse_zip(std::span<const std::byte> archive, const std::string& what);

// force_zip64 writes zip64 extra fields and end records even when sizes fit
// in 32 bits (they are written regardless once a size or offset needs them).
std::vector<std::byte> build_zip(const std::vector<ZipMember>& members, bool compress, bool force_zip64 = false);

}  // namespace linnet::tensor
