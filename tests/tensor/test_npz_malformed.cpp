// Malformed .npy and .npz inputs: each must fail with a FormatError that
// says what is wrong and where, never crash or read out of bounds.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>

#include "linnet/tensor/npz.hpp"

using namespace linnet::tensor;
using Catch::Matchers::Contains;

namespace {

std::vector<std::byte> text_bytes(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// magic + version 1.0 + header (space-padded, newline-terminated) + data.
std::vector<std::byte> npy_with(const std::string& header, size_t data_bytes, std::byte fill = std::byte{0}) {
  std::string padded = header;
  while ((10 + padded.size() + 1) % 64 != 0) padded += ' ';
  padded += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(padded.size() & 0xFF);
  bytes += static_cast<char>(padded.size() >> 8);
  bytes += padded;
  std::vector<std::byte> result = text_bytes(bytes);
  result.insert(result.end(), data_bytes, fill);
  return result;
}

// The message of the FormatError `action` throws; fails the test if it throws
// nothing or something else.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const FormatError& error) {
    return error.what();
  }
  FAIL("expected a FormatError");
  return {};
}

std::string npy_error(const std::vector<std::byte>& bytes) {
  return error_of([&] { parse_npy(bytes, "bad.npy"); });
}

std::string zip_error(const std::vector<std::byte>& bytes) {
  return error_of([&] { parse_npz(bytes, "bad.npz"); });
}

uint32_t get_u32(const std::vector<std::byte>& bytes, size_t offset) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  return value;
}

void put_u32(std::vector<std::byte>& bytes, size_t offset, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes[offset + i] = std::byte((value >> (8 * i)) & 0xFF);
}

void put_u16(std::vector<std::byte>& bytes, size_t offset, uint16_t value) {
  bytes[offset] = std::byte(value & 0xFF);
  bytes[offset + 1] = std::byte(value >> 8);
}

// Offsets of the fields we patch, for an archive without zip64 records and
// without a comment.
struct Layout {
  size_t end;        // end-of-central-directory record
  size_t directory;  // first central entry
};
Layout layout_of(const std::vector<std::byte>& archive) {
  size_t end = archive.size() - 22;
  return {end, get_u32(archive, end + 16)};
}

NpyArray small_array() {
  NpyArray array;
  array.dtype = DType::I32;
  array.shape = {2, 3};
  array.data.resize(24);
  for (size_t i = 0; i < array.data.size(); ++i) array.data[i] = std::byte(i);
  return array;
}

std::vector<std::byte> one_member_npz(bool compress) {
  return serialize_npz({{"x", small_array()}}, compress);
}

// Local header field offsets (member at offset 0).
constexpr size_t kLocalFlags = 6, kLocalMethod = 8, kLocalCompressed = 18, kLocalUncompressed = 22;
// Central entry field offsets.
constexpr size_t kCentralFlags = 8, kCentralMethod = 10, kCentralCompressed = 20, kCentralUncompressed = 24,
                 kCentralLocalOffset = 42;

}  // namespace

TEST_CASE("malformed npy headers are rejected with a reason", "[npz][malformed]") {
  CHECK_THAT(npy_error({}), Contains("bad.npy") && Contains("magic"));
  CHECK_THAT(npy_error(text_bytes("PK\x03\x04 not numpy")), Contains("magic"));
  std::vector<std::byte> version4 = npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
  version4[6] = std::byte{4};
  CHECK_THAT(npy_error(version4), Contains("version 4.0"));
  CHECK_THAT(npy_error(text_bytes(std::string("\x93NUMPY\x01\x00\x05", 9))), Contains("truncated"));
  std::vector<std::byte> long_header = npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
  put_u16(long_header, 8, 60000);
  CHECK_THAT(npy_error(long_header), Contains("runs past the end"));

  CHECK_THAT(npy_error(npy_with("['descr', '<f4']", 4)), Contains("dict literal"));
  CHECK_THAT(npy_error(npy_with("{'fortran_order': False, 'shape': ()}", 4)), Contains("lacks the key 'descr'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'shape': ()}", 4)), Contains("lacks the key 'fortran_order'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False}", 4)), Contains("lacks the key 'shape'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", 4)),
             Contains("unexpected key 'extra'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4)),
             Contains("repeats the key 'descr'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': ()} trailing", 4)),
             Contains("after the closing"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': 'no', 'shape': ()}", 4)),
             Contains("neither True nor False"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", 0)),
             Contains("negative dimension"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}", 0)),
             Contains("malformed 'shape'"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0)),
             Contains("too large"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2", 0)), Contains("shape"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4)), Contains("dict literal"));
}

TEST_CASE("unsupported npy dtypes are named", "[npz][malformed]") {
  for (std::string descr : {"<c8", "|O", "<U3", "<f16", "|V4", "<M8", "<f3", "xf4"}) {
    INFO(descr);
    CHECK_THAT(npy_error(npy_with("{'descr': '" + descr + "', 'fortran_order': False, 'shape': ()}", 8)),
               Contains("unsupported NumPy dtype '" + descr + "'"));
  }
  CHECK_THAT(npy_error(npy_with("{'descr': 'bfloat16', 'fortran_order': False, 'shape': ()}", 2)),
             Contains("bf16") && Contains("float32"));
  CHECK_THAT(npy_error(npy_with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", 4)),
             Contains("structured"));
}

TEST_CASE("npy data must match shape and dtype exactly", "[npz][malformed]") {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK_THAT(npy_error(npy_with(header, 23)), Contains("needs 24 data bytes but the file holds 23"));
  CHECK_THAT(npy_error(npy_with(header, 25)), Contains("needs 24 data bytes but the file holds 25"));
  CHECK_THAT(npy_error(npy_with("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}", 8)),
             Contains("overflows"));
  CHECK_THAT(npy_error(npy_with("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", 3, std::byte{2})),
             Contains("bool element 0 holds byte 2"));
}

TEST_CASE("not a zip archive", "[npz][malformed]") {
  CHECK_THAT(zip_error({}), Contains("bad.npz") && Contains("too short"));
  CHECK_THAT(zip_error(serialize_npy(small_array())), Contains("no end-of-central-directory"));
}

TEST_CASE("truncated archives are rejected", "[npz][malformed]") {
  for (bool compress : {true, false}) {
    std::vector<std::byte> archive = one_member_npz(compress);
    // Every prefix is a truncated archive; none may parse or crash.
    for (size_t length = 0; length < archive.size(); ++length) {
      std::vector<std::byte> prefix(archive.begin(), archive.begin() + static_cast<ptrdiff_t>(length));
      CHECK_THROWS_AS(parse_npz(prefix, "cut.npz"), FormatError);
    }
    // Dropping bytes from the front shifts every offset.
    std::vector<std::byte> shifted(archive.begin() + 10, archive.end());
    CHECK_THAT(zip_error(shifted), Contains("bad.npz"));
  }
}

TEST_CASE("CRC mismatches are caught", "[npz][malformed]") {
  std::vector<std::byte> archive = one_member_npz(false);
  Layout where = layout_of(archive);
  archive[where.directory - 1] ^= std::byte{0x01};  // last data byte of the only member
  CHECK_THAT(zip_error(archive), Contains("member 'x.npy'") && Contains("CRC-32 mismatch"));
}

TEST_CASE("corrupt deflate data is caught", "[npz][malformed]") {
  std::vector<std::byte> archive = one_member_npz(true);
  Layout where = layout_of(archive);
  size_t data_start = 30 + 5;  // local header, "x.npy"
  for (size_t i = data_start; i < where.directory; ++i) archive[i] = std::byte{0xFF};
  CHECK_THAT(zip_error(archive), Contains("member 'x.npy'"));
}

TEST_CASE("sizes that lie are caught", "[npz][malformed]") {
  // Stored: the central directory's sizes must match the local header's.
  std::vector<std::byte> stored = one_member_npz(false);
  Layout where = layout_of(stored);
  std::vector<std::byte> stored_lie = stored;
  put_u32(stored_lie, where.directory + kCentralUncompressed, 50);
  put_u32(stored_lie, where.directory + kCentralCompressed, 50);
  CHECK_THAT(zip_error(stored_lie), Contains("disagree with the central directory"));
  put_u32(stored_lie, where.directory + kCentralCompressed, 40);
  CHECK_THAT(zip_error(stored_lie), Contains("is stored but its compressed size 40 differs"));

  // Deflated, with local and central agreeing on a wrong uncompressed size.
  std::vector<ZipMember> plain = {{"x.npy", serialize_npy(small_array())}};
  std::vector<std::byte> deflated = build_zip(plain, true, false);
  Layout layout = layout_of(deflated);
  uint32_t real_size = get_u32(deflated, layout.directory + kCentralUncompressed);
  auto with_sizes = [&](uint32_t compressed, uint32_t uncompressed) {
    std::vector<std::byte> patched = deflated;
    put_u32(patched, kLocalCompressed, compressed);
    put_u32(patched, kLocalUncompressed, uncompressed);
    put_u32(patched, layout.directory + kCentralCompressed, compressed);
    put_u32(patched, layout.directory + kCentralUncompressed, uncompressed);
    return patched;
  };
  uint32_t real_compressed = get_u32(deflated, layout.directory + kCentralCompressed);
  CHECK_THAT(zip_error(with_sizes(real_compressed, real_size - 1)), Contains("more than its declared"));
  CHECK_THAT(zip_error(with_sizes(real_compressed, real_size + 1)), Contains("decompresses to " + std::to_string(real_size)));
  CHECK_THAT(zip_error(with_sizes(real_compressed - 3, real_size)), Contains("ends before the stream does"));
  CHECK_THAT(zip_error(with_sizes(real_compressed + 3, real_size)), Contains("run past the member area"));
}

TEST_CASE("decompression bombs are refused before inflating", "[npz][malformed]") {
  std::vector<ZipMember> zeros = {{"z.npy", std::vector<std::byte>(1 << 20)}};
  std::vector<std::byte> archive = build_zip(zeros, true, false);
  Layout layout = layout_of(archive);
  uint32_t compressed = get_u32(archive, layout.directory + kCentralCompressed);
  CHECK(compressed < 5000);
  put_u32(archive, kLocalUncompressed, 0xFFFFFFF0u);
  put_u32(archive, layout.directory + kCentralUncompressed, 0xFFFFFFF0u);
  CHECK_THAT(zip_error(archive), Contains("member 'z.npy'") && Contains("more than deflate can produce"));
}

TEST_CASE("bad offsets and counts in the directory are caught", "[npz][malformed]") {
  std::vector<std::byte> archive = one_member_npz(true);
  Layout layout = layout_of(archive);

  std::vector<std::byte> bad_local = archive;
  put_u32(bad_local, layout.directory + kCentralLocalOffset, 0x7FFFFFF0u);
  CHECK_THAT(zip_error(bad_local), Contains("member 'x.npy'") && Contains("outside the member area"));

  std::vector<std::byte> bad_directory = archive;
  put_u32(bad_directory, layout.end + 16, static_cast<uint32_t>(archive.size()));
  CHECK_THAT(zip_error(bad_directory), Contains("central directory") && Contains("outside the archive"));

  std::vector<std::byte> bad_count = archive;
  put_u16(bad_count, layout.end + 8, 9);
  put_u16(bad_count, layout.end + 10, 9);
  CHECK_THAT(zip_error(bad_count), Contains("claims 9 entries"));

  std::vector<std::byte> bad_signature = archive;
  bad_signature[layout.directory] = std::byte{'X'};
  CHECK_THAT(zip_error(bad_signature), Contains("bad signature"));

  std::vector<std::byte> bad_local_signature = archive;
  bad_local_signature[0] = std::byte{'X'};
  CHECK_THAT(zip_error(bad_local_signature), Contains("bad local header signature"));

  std::vector<std::byte> zip64_defer = archive;
  put_u32(zip64_defer, layout.end + 16, 0xFFFFFFFFu);
  CHECK_THAT(zip_error(zip64_defer), Contains("zip64"));
}

TEST_CASE("zip64 records pointing nowhere are caught", "[npz][malformed]") {
  std::vector<ZipMember> members = {{"x.npy", serialize_npy(small_array())}};
  std::vector<std::byte> archive = build_zip(members, false, true);
  size_t locator = archive.size() - 22 - 20;
  REQUIRE(get_u32(archive, locator) == 0x07064b50u);
  std::vector<std::byte> bad = archive;
  put_u32(bad, locator + 8, 0x7FFFFFFFu);
  CHECK_THAT(zip_error(bad), Contains("zip64 end record offset"));
  std::vector<std::byte> bad_extra = archive;
  // Shrink the central entry's zip64 extra field to 8 bytes (it needs 24).
  size_t directory_entry = get_u32(archive, get_u32(archive, locator + 8) + 48);
  put_u16(bad_extra, directory_entry + 46 + 5 + 2, 8);
  CHECK_THROWS_AS(parse_npz(bad_extra, "bad.npz"), FormatError);
}

TEST_CASE("encryption, unknown methods and duplicate names are refused", "[npz][malformed]") {
  std::vector<std::byte> archive = one_member_npz(false);
  Layout layout = layout_of(archive);

  std::vector<std::byte> encrypted = archive;
  put_u16(encrypted, kLocalFlags, 1);
  put_u16(encrypted, layout.directory + kCentralFlags, 1);
  CHECK_THAT(zip_error(encrypted), Contains("encrypted"));

  std::vector<std::byte> bzip2 = archive;
  put_u16(bzip2, kLocalMethod, 12);
  put_u16(bzip2, layout.directory + kCentralMethod, 12);
  CHECK_THAT(zip_error(bzip2), Contains("compression method 12"));

  std::vector<std::byte> mixed = archive;
  put_u16(mixed, kLocalMethod, 8);
  CHECK_THAT(zip_error(mixed), Contains("disagree on the compression method"));

  std::vector<ZipMember> twice = {{"x.npy", serialize_npy(small_array())}, {"x.npy", serialize_npy(small_array())}};
  CHECK_THAT(zip_error(build_zip(twice, true)), Contains("member 'x.npy' appears twice"));
}

TEST_CASE("overlapping members are refused", "[npz][malformed]") {
  // Member "a.bin" stores, inside its own data, a complete local header and
  // data for "b.npy"; the central entry of b.npy is then pointed there.
  ZipMember inner = {"b.npy", serialize_npy(small_array())};
  std::vector<std::byte> inner_archive = build_zip({inner}, false, false);
  std::vector<std::byte> inner_local(inner_archive.begin(), inner_archive.begin() + layout_of(inner_archive).directory);
  std::vector<std::byte> archive = build_zip({{"a.bin", inner_local}, inner}, false, false);
  Layout layout = layout_of(archive);
  size_t second_entry = layout.directory + 46 + 5;  // after a.bin's central entry
  put_u32(archive, second_entry + kCentralLocalOffset, 30 + 5);  // a.bin's data
  CHECK_THAT(error_of([&] { parse_zip(archive, "bad.zip"); }), Contains("'a.bin' and 'b.npy' overlap"));
}

TEST_CASE("npz members must be .npy arrays and errors name the member", "[npz][malformed]") {
  std::vector<ZipMember> text_member = {{"readme.txt", text_bytes("hello")}};
  std::vector<std::byte> archive = build_zip(text_member, true);
  CHECK(parse_zip(archive, "ok.zip").size() == 1);
  CHECK_THAT(zip_error(archive), Contains("member 'readme.txt'") && Contains("not a .npy array"));

  std::vector<ZipMember> broken = {{"good.npy", serialize_npy(small_array())},
                                   {"broken.npy", npy_with("{'descr': '<i4', 'fortran_order': False, 'shape': (9,)}", 4)}};
  CHECK_THAT(zip_error(build_zip(broken, true)),
             Contains("bad.npz: member 'broken.npy'") && Contains("needs 36 data bytes"));
}

TEST_CASE("single-byte corruption anywhere never crashes the reader", "[npz][malformed]") {
  for (bool compress : {true, false}) {
    std::vector<std::byte> archive = one_member_npz(compress);
    for (size_t i = 0; i < archive.size(); ++i) {
      for (std::byte flip : {std::byte{0x01}, std::byte{0x80}, std::byte{0xFF}}) {
        std::vector<std::byte> corrupt = archive;
        corrupt[i] ^= flip;
        try {
          parse_npz(corrupt, "corrupt.npz");
        } catch (const FormatError& error) {
          CHECK_THAT(std::string(error.what()), Contains("corrupt.npz"));
        }
      }
    }
  }
}
