// The zip container of .npz files: reading (central directory first, every
// field checked against the archive's bounds) and writing (what Python's
// zipfile writes for numpy.savez).
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "linnet/tensor/npz.hpp"
#include "npz_writing.hpp"

namespace linnet::tensor {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kFlagDataDescriptor = 0x0008;
constexpr uint16_t kFlagUtf8Names = 0x0800;
constexpr uint32_t kMax32 = 0xFFFFFFFF;
constexpr uint16_t kMax16 = 0xFFFF;
// Deflate cannot expand data by more than about 1032:1 (a 258-byte match per
// 2 bits). A member that claims more is lying or a decompression bomb.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kDeflateRatioSlack = 1024;
// zlib counts in 32-bit unsigned ints; larger buffers go through in pieces.
constexpr size_t kZlibChunk = size_t{1} << 30;

// Bounds-checked little-endian reads from the archive.
class ArchiveBytes {
 public:
  ArchiveBytes(std::span<const std::byte> bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  uint64_t size() const { return bytes_.size(); }
  bool has(uint64_t offset, uint64_t length) const { return offset <= size() && size() - offset >= length; }
  void require(uint64_t offset, uint64_t length, const std::string& thing) const {
    if (!has(offset, length))
      fail(thing + " at offset " + std::to_string(offset) + " (" + std::to_string(length) +
           " bytes) runs past the end of the " + std::to_string(size()) + "-byte archive");
  }
  uint64_t le(uint64_t offset, size_t width) const {
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(bytes_[offset + i]) << (8 * i);
    return value;
  }
  uint16_t u16(uint64_t offset) const { return static_cast<uint16_t>(le(offset, 2)); }
  uint32_t u32(uint64_t offset) const { return static_cast<uint32_t>(le(offset, 4)); }
  uint64_t u64(uint64_t offset) const { return le(offset, 8); }
  std::span<const std::byte> slice(uint64_t offset, uint64_t length) const {
    return bytes_.subspan(static_cast<size_t>(offset), static_cast<size_t>(length));
  }
  [[noreturn]] void fail(const std::string& problem) const { throw FormatError(what_ + ": " + problem); }

 private:
  std::span<const std::byte> bytes_;
  const std::string& what_;
};

// Where the central directory is and how many entries it holds.
struct Directory {
  uint64_t entry_count = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end = 0;  // where the end records begin; member data and the directory must lie before it
};

// The end-of-central-directory record sits at the very end, after an
// optional comment of up to 65535 bytes.
Directory find_directory(const ArchiveBytes& archive) {
  if (archive.size() < kEndSize) archive.fail("too short to be a zip archive (" + std::to_string(archive.size()) + " bytes)");
  uint64_t lowest = archive.size() >= kEndSize + kMax16 ? archive.size() - kEndSize - kMax16 : 0;
  std::optional<uint64_t> end_at;
  for (uint64_t pos = archive.size() - kEndSize + 1; pos-- > lowest;) {
    if (archive.u32(pos) == kEndSignature && pos + kEndSize + archive.u16(pos + 20) == archive.size()) {
      end_at = pos;
      break;
    }
  }
  if (!end_at) archive.fail("no end-of-central-directory record (not a zip archive, or truncated)");
  uint64_t end = *end_at;
  uint64_t disk = archive.u16(end + 4), directory_disk = archive.u16(end + 6);
  Directory directory;
  uint64_t entries_here = archive.u16(end + 8);
  directory.entry_count = archive.u16(end + 10);
  directory.size = archive.u32(end + 12);
  directory.offset = archive.u32(end + 16);
  directory.end = end;

  bool has_locator = end >= kZip64LocatorSize && archive.u32(end - kZip64LocatorSize) == kZip64LocatorSignature;
  bool needs_zip64 = directory.entry_count == kMax16 || directory.size == kMax32 || directory.offset == kMax32;
  if (needs_zip64 && !has_locator) archive.fail("end record defers to zip64 but there is no zip64 locator");
  if (has_locator) {
    uint64_t locator = end - kZip64LocatorSize;
    uint64_t record = archive.u64(locator + 8);
    if (archive.u32(locator + 4) != 0 || archive.u32(locator + 16) > 1)
      archive.fail("multi-disk zip archives are not supported");
    if (record > locator || locator - record < kZip64EndSize)
      archive.fail("zip64 end record offset " + std::to_string(record) + " is not before its locator");
    if (archive.u32(record) != kZip64EndSignature) archive.fail("no zip64 end record where the locator points");
    disk = archive.u32(record + 16);
    directory_disk = archive.u32(record + 20);
    entries_here = archive.u64(record + 24);
    directory.entry_count = archive.u64(record + 32);
    directory.size = archive.u64(record + 40);
    directory.offset = archive.u64(record + 48);
    directory.end = record;
  }
  if (disk != 0 || directory_disk != 0 || entries_here != directory.entry_count)
    archive.fail("multi-disk zip archives are not supported");
  if (directory.offset > directory.end || directory.end - directory.offset < directory.size)
    archive.fail("central directory (offset " + std::to_string(directory.offset) + ", " +
                 std::to_string(directory.size) + " bytes) lies outside the archive");
  if (directory.entry_count > directory.size / kCentralHeaderSize)
    archive.fail("central directory claims " + std::to_string(directory.entry_count) + " entries but has room for " +
                 std::to_string(directory.size / kCentralHeaderSize));
  return directory;
}

// One central-directory entry, with zip64 values already substituted.
struct Entry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_offset = 0;
  uint64_t data_offset = 0;  // filled in from the local header
};

// The zip64 extra field holds, in this order, only those of the values whose
// 32-bit field reads 0xFFFFFFFF.
struct Zip64Wants {
  uint64_t* uncompressed;
  uint64_t* compressed;
  uint64_t* local_offset;
};

void apply_zip64_extra(const ArchiveBytes& archive, uint64_t extra, uint64_t extra_length, Zip64Wants wants,
                       const std::string& where) {
  bool found = false;
  uint64_t pos = extra;
  while (extra + extra_length - pos >= 4) {
    uint16_t id = archive.u16(pos);
    uint64_t length = archive.u16(pos + 2);
    if (extra + extra_length - pos - 4 < length) archive.fail(where + ": extra field overruns its header");
    if (id == kZip64ExtraId) {
      found = true;
      uint64_t field = pos + 4;
      uint64_t field_end = field + length;
      for (uint64_t* value : {wants.uncompressed, wants.compressed, wants.local_offset}) {
        if (value == nullptr || *value != kMax32) continue;
        if (field_end - field < 8) archive.fail(where + ": zip64 extra field is too short");
        *value = archive.u64(field);
        field += 8;
      }
    }
    pos += 4 + length;
  }
  for (uint64_t* value : {wants.uncompressed, wants.compressed, wants.local_offset})
    if (value != nullptr && *value == kMax32 && !found)
      archive.fail(where + ": a size or offset defers to a zip64 extra field that is missing");
}

std::vector<Entry> read_directory(const ArchiveBytes& archive, const Directory& directory) {
  std::vector<Entry> entries;
  entries.reserve(static_cast<size_t>(directory.entry_count));
  uint64_t pos = directory.offset;
  uint64_t directory_end = directory.offset + directory.size;
  for (uint64_t index = 0; index < directory.entry_count; ++index) {
    std::string where = "central directory entry " + std::to_string(index);
    if (directory_end - pos < kCentralHeaderSize) archive.fail(where + " runs past the central directory");
    if (archive.u32(pos) != kCentralHeaderSignature) archive.fail(where + " has a bad signature");
    Entry entry;
    entry.flags = archive.u16(pos + 8);
    entry.method = archive.u16(pos + 10);
    entry.crc = archive.u32(pos + 16);
    entry.compressed_size = archive.u32(pos + 20);
    entry.uncompressed_size = archive.u32(pos + 24);
    uint64_t name_length = archive.u16(pos + 28);
    uint64_t extra_length = archive.u16(pos + 30);
    uint64_t comment_length = archive.u16(pos + 32);
    uint64_t disk = archive.u16(pos + 34);
    entry.local_offset = archive.u32(pos + 42);
    uint64_t entry_size = kCentralHeaderSize + name_length + extra_length + comment_length;
    if (directory_end - pos < entry_size) archive.fail(where + " runs past the central directory");
    const char* name_bytes = reinterpret_cast<const char*>(archive.slice(pos + kCentralHeaderSize, name_length).data());
    entry.name.assign(name_bytes, static_cast<size_t>(name_length));
    where = "member '" + entry.name + "'";
    apply_zip64_extra(archive, pos + kCentralHeaderSize + name_length, extra_length,
                      {&entry.uncompressed_size, &entry.compressed_size, &entry.local_offset}, where);
    if (disk != 0 && disk != kMax16) archive.fail(where + " lives on another disk (multi-disk archives are not supported)");
    entries.push_back(std::move(entry));
    pos += entry_size;
  }
  return entries;
}

// Checks the local header against the central entry and finds where the
// member's data starts.
void read_local_header(const ArchiveBytes& archive, const Directory& directory, Entry& entry) {
  std::string where = "member '" + entry.name + "'";
  if (entry.local_offset > directory.offset || directory.offset - entry.local_offset < kLocalHeaderSize)
    archive.fail(where + ": local header offset " + std::to_string(entry.local_offset) +
                 " is outside the member area");
  uint64_t pos = entry.local_offset;
  if (archive.u32(pos) != kLocalHeaderSignature) archive.fail(where + ": bad local header signature");
  uint16_t local_flags = archive.u16(pos + 6);
  uint16_t local_method = archive.u16(pos + 8);
  uint64_t local_crc = archive.u32(pos + 14);
  uint64_t local_compressed = archive.u32(pos + 18);
  uint64_t local_uncompressed = archive.u32(pos + 22);
  uint64_t name_length = archive.u16(pos + 26);
  uint64_t extra_length = archive.u16(pos + 28);
  uint64_t data = pos + kLocalHeaderSize + name_length + extra_length;
  if (data > directory.offset) archive.fail(where + ": local header runs into the central directory");
  std::span<const std::byte> local_name = archive.slice(pos + kLocalHeaderSize, name_length);
  if (std::string(reinterpret_cast<const char*>(local_name.data()), local_name.size()) != entry.name)
    archive.fail(where + ": local header names a different file");
  if (local_method != entry.method) archive.fail(where + ": local and central headers disagree on the compression method");
  // With a data descriptor the local header may hold zeros; the central
  // directory has the real values. Otherwise both must agree.
  if (!(local_flags & kFlagDataDescriptor)) {
    apply_zip64_extra(archive, pos + kLocalHeaderSize + name_length, extra_length,
                      {&local_uncompressed, &local_compressed, nullptr}, where + " (local header)");
    if (local_crc != entry.crc || local_compressed != entry.compressed_size ||
        local_uncompressed != entry.uncompressed_size)
      archive.fail(where + ": local header sizes/CRC (" + std::to_string(local_compressed) + " compressed, " +
                   std::to_string(local_uncompressed) + " uncompressed) disagree with the central directory (" +
                   std::to_string(entry.compressed_size) + ", " + std::to_string(entry.uncompressed_size) + ")");
  }
  if (directory.offset - data < entry.compressed_size)
    archive.fail(where + ": " + std::to_string(entry.compressed_size) + " bytes of data at offset " +
                 std::to_string(data) + " run past the member area (truncated or lying size)");
  entry.data_offset = data;
}

struct InflateStream {
  z_stream stream{};
  bool open = false;
  ~InflateStream() {
    if (open) inflateEnd(&stream);
  }
};

std::vector<std::byte> inflate_member(std::span<const std::byte> compressed, uint64_t declared,
                                      const std::string& where) {
  std::vector<std::byte> output(static_cast<size_t>(declared));
  InflateStream inflater;
  z_stream& zs = inflater.stream;
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw FormatError(where + ": cannot start zlib inflate");
  inflater.open = true;
  std::byte empty_output{};
  size_t input_fed = 0, output_given = 0;
  zs.next_out = reinterpret_cast<Bytef*>(output.empty() ? &empty_output : output.data());
  while (true) {
    if (zs.avail_in == 0 && input_fed < compressed.size()) {
      size_t chunk = std::min(compressed.size() - input_fed, kZlibChunk);
      zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(compressed.data() + input_fed));
      zs.avail_in = static_cast<uInt>(chunk);
      input_fed += chunk;
    }
    if (zs.avail_out == 0 && output_given < output.size()) {
      size_t chunk = std::min(output.size() - output_given, kZlibChunk);
      zs.next_out = reinterpret_cast<Bytef*>(output.data() + output_given);
      zs.avail_out = static_cast<uInt>(chunk);
      output_given += chunk;
    }
    int status = inflate(&zs, Z_NO_FLUSH);
    if (status == Z_STREAM_END) break;
    if (status == Z_OK) continue;  // progress was made; zlib says Z_BUF_ERROR once it cannot go on
    if (status == Z_BUF_ERROR) {
      if (zs.avail_out == 0 && output_given == output.size())
        throw FormatError(where + ": decompresses to more than its declared " + std::to_string(declared) + " bytes");
      if (zs.avail_in == 0 && input_fed == compressed.size())
        throw FormatError(where + ": deflate data ends before the stream does (truncated or lying compressed size)");
    }
    throw FormatError(where + ": corrupt deflate data (zlib: " + (zs.msg ? zs.msg : "unknown error") + ")");
  }
  uint64_t produced = zs.total_out, consumed = zs.total_in;
  if (produced != declared)
    throw FormatError(where + ": declares " + std::to_string(declared) + " uncompressed bytes but decompresses to " +
                      std::to_string(produced));
  if (consumed != compressed.size())
    throw FormatError(where + ": deflate stream ends after " + std::to_string(consumed) + " of its " +
                      std::to_string(compressed.size()) + " compressed bytes");
  return output;
}

uint32_t crc_of(std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

}  // namespace

std::vector<ZipMember> parse_zip(std::span<const std::byte> bytes, const std::string& what) {
  ArchiveBytes archive(bytes, what);
  Directory directory = find_directory(archive);
  std::vector<Entry> entries = read_directory(archive, directory);

  std::set<std::string> names;
  for (Entry& entry : entries) {
    std::string where = "member '" + entry.name + "'";
    if (!names.insert(entry.name).second) archive.fail(where + " appears twice");
    if (entry.flags & kFlagEncrypted) archive.fail(where + " is encrypted");
    if (entry.method != kMethodStored && entry.method != kMethodDeflate)
      archive.fail(where + " uses compression method " + std::to_string(entry.method) +
                   " (only stored and deflate are supported)");
    if (entry.method == kMethodStored && entry.compressed_size != entry.uncompressed_size)
      archive.fail(where + " is stored but its compressed size " + std::to_string(entry.compressed_size) +
                   " differs from its size " + std::to_string(entry.uncompressed_size));
    if (entry.method == kMethodDeflate &&
        entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + kDeflateRatioSlack)
      archive.fail(where + " declares " + std::to_string(entry.uncompressed_size) + " bytes from " +
                   std::to_string(entry.compressed_size) + " compressed bytes, more than deflate can produce");
    read_local_header(archive, directory, entry);
  }

  // Members must not share bytes: overlapping entries are how zip bombs
  // multiply one compressed stream into many outputs.
  std::vector<const Entry*> by_offset;
  for (const Entry& entry : entries) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->local_offset < b->local_offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const Entry& before = *by_offset[i - 1];
    if (before.data_offset + before.compressed_size > by_offset[i]->local_offset)
      archive.fail("members '" + before.name + "' and '" + by_offset[i]->name + "' overlap");
  }

  std::vector<ZipMember> members;
  members.reserve(entries.size());
  for (const Entry& entry : entries) {
    std::string where = what + ": member '" + entry.name + "'";
    std::span<const std::byte> stored = archive.slice(entry.data_offset, entry.compressed_size);
    ZipMember member;
    member.name = entry.name;
    if (entry.method == kMethodStored)
      member.bytes.assign(stored.begin(), stored.end());
    else
      member.bytes = inflate_member(stored, entry.uncompressed_size, where);
    uint32_t crc = crc_of(member.bytes);
    if (crc != entry.crc)
      throw FormatError(where + ": CRC-32 mismatch (computed " + std::to_string(crc) + ", archive says " +
                        std::to_string(entry.crc) + ")");
    members.push_back(std::move(member));
  }
  return members;
}

namespace {

// Little-endian fields gathered in a small buffer, handed to the sink before
// each piece of member data (which goes to the sink as it is, uncopied).
class ArchiveWriter {
 public:
  explicit ArchiveWriter(const detail::ByteSink& sink) : sink_(sink) {}
  void u16(uint64_t value) { le(value, 2); }
  void u32(uint64_t value) { le(value, 4); }
  void u64(uint64_t value) { le(value, 8); }
  void text(const std::string& value) {
    for (char c : value) bytes_.push_back(static_cast<std::byte>(c));
  }
  void append(std::span<const std::byte> data) {
    flush();
    if (!data.empty()) sink_(data);
    position_ += data.size();
  }
  uint64_t position() const { return position_ + bytes_.size(); }
  void flush() {
    if (bytes_.empty()) return;
    position_ += bytes_.size();
    sink_(bytes_);
    bytes_.clear();
  }

 private:
  void le(uint64_t value, size_t width) {
    for (size_t i = 0; i < width; ++i) bytes_.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xFF));
  }
  const detail::ByteSink& sink_;
  std::vector<std::byte> bytes_;
  uint64_t position_ = 0;
};

std::vector<std::byte> deflate_bytes(std::span<const std::byte> input) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("cannot start zlib deflate");
  std::vector<std::byte> output;
  std::vector<std::byte> buffer(size_t{1} << 16);
  size_t input_fed = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (zs.avail_in == 0 && input_fed < input.size()) {
      size_t chunk = std::min(input.size() - input_fed, kZlibChunk);
      zs.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(input.data() + input_fed));
      zs.avail_in = static_cast<uInt>(chunk);
      input_fed += chunk;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
    zs.avail_out = static_cast<uInt>(buffer.size());
    status = deflate(&zs, input_fed == input.size() ? Z_FINISH : Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      deflateEnd(&zs);
      throw std::runtime_error("zlib deflate failed");
    }
    output.insert(output.end(), buffer.begin(), buffer.end() - zs.avail_out);
  }
  deflateEnd(&zs);
  return output;
}

// 1980-01-01 00:00:00, the earliest DOS timestamp: archives are reproducible.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (1 << 5) | 1;
constexpr uint16_t kVersionPlain = 20;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint32_t kRegularFileMode = 0100644u << 16;

// A member as written: what its central directory entry repeats.
struct Written {
  const detail::ZipSource* member;
  uint64_t size;
  uint32_t crc;
  uint64_t compressed_size;
  uint64_t offset;
  uint16_t method;
  bool zip64;
};

// The fields a local header and a central directory entry share, from
// "version needed" through the name's length.
void write_member_fields(ArchiveWriter& out, const Written& entry) {
  out.u16(entry.zip64 ? kVersionZip64 : kVersionPlain);
  out.u16(kFlagUtf8Names);
  out.u16(entry.method);
  out.u16(kDosTime);
  out.u16(kDosDate);
  out.u32(entry.crc);
  out.u32(entry.zip64 ? kMax32 : entry.compressed_size);
  out.u32(entry.zip64 ? kMax32 : entry.size);
  out.u16(entry.member->name.size());
}

}  // namespace

std::vector<std::byte> build_zip(const std::vector<ZipMember>& members, bool compress, bool force_zip64) {
  std::vector<detail::ZipSource> sources;
  sources.reserve(members.size());
  for (const ZipMember& member : members) sources.push_back({member.name, {member.bytes}});
  std::vector<std::byte> archive;
  detail::write_zip(sources, compress, force_zip64,
                    [&](std::span<const std::byte> piece) { archive.insert(archive.end(), piece.begin(), piece.end()); });
  return archive;
}

void detail::write_zip(const std::vector<ZipSource>& members, bool compress, bool force_zip64, const ByteSink& sink) {
  ArchiveWriter out(sink);
  std::vector<Written> written;
  for (const ZipSource& member : members) {
    if (member.name.size() > kMax16) throw std::invalid_argument("zip member name too long: " + member.name);
    uint64_t size = 0;
    uint32_t crc = static_cast<uint32_t>(crc32_z(0, nullptr, 0));
    for (std::span<const std::byte> piece : member.pieces) {
      // zlib returns the initial value for a null buffer: an empty array's data must not reset the CRC.
      if (piece.empty()) continue;
      size += piece.size();
      crc = static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(piece.data()), piece.size()));
    }
    // Deflate takes one buffer; compressing is slow enough that joining the pieces first costs little.
    std::vector<std::byte> deflated;
    if (compress) {
      std::vector<std::byte> joined;
      joined.reserve(size);
      for (std::span<const std::byte> piece : member.pieces) joined.insert(joined.end(), piece.begin(), piece.end());
      deflated = deflate_bytes(joined);
    }
    Written entry{&member, size, crc, compress ? deflated.size() : size, out.position(),
                  compress ? kMethodDeflate : kMethodStored, false};
    entry.zip64 = force_zip64 || size >= kMax32 || entry.compressed_size >= kMax32 || entry.offset >= kMax32;
    out.u32(kLocalHeaderSignature);
    write_member_fields(out, entry);
    out.u16(entry.zip64 ? 20 : 0);
    out.text(member.name);
    if (entry.zip64) {
      out.u16(kZip64ExtraId);
      out.u16(16);
      out.u64(size);
      out.u64(entry.compressed_size);
    }
    if (compress) {
      out.append(deflated);
    } else {
      for (std::span<const std::byte> piece : member.pieces) out.append(piece);
    }
    written.push_back(entry);
  }

  uint64_t directory_offset = out.position();
  for (const Written& entry : written) {
    const ZipSource& member = *entry.member;
    out.u32(kCentralHeaderSignature);
    out.u16(kMadeByUnix | (entry.zip64 ? kVersionZip64 : kVersionPlain));
    write_member_fields(out, entry);
    out.u16(entry.zip64 ? 28 : 0);
    out.u16(0);  // comment
    out.u16(0);  // disk
    out.u16(0);  // internal attributes
    out.u32(kRegularFileMode);
    out.u32(entry.zip64 ? kMax32 : entry.offset);
    out.text(member.name);
    if (entry.zip64) {
      out.u16(kZip64ExtraId);
      out.u16(24);
      out.u64(entry.size);
      out.u64(entry.compressed_size);
      out.u64(entry.offset);
    }
  }
  uint64_t directory_size = out.position() - directory_offset;
  uint64_t count = written.size();

  bool zip64_end = force_zip64 || count >= kMax16 || directory_size >= kMax32 || directory_offset >= kMax32;
  if (zip64_end) {
    uint64_t record_offset = out.position();
    out.u32(kZip64EndSignature);
    out.u64(kZip64EndSize - 12);  // size of the rest of the record
    out.u16(kMadeByUnix | kVersionZip64);
    out.u16(kVersionZip64);
    out.u32(0);
    out.u32(0);
    out.u64(count);
    out.u64(count);
    out.u64(directory_size);
    out.u64(directory_offset);
    out.u32(kZip64LocatorSignature);
    out.u32(0);
    out.u64(record_offset);
    out.u32(1);
  }
  out.u32(kEndSignature);
  out.u16(0);
  out.u16(0);
  out.u16(zip64_end ? kMax16 : count);
  out.u16(zip64_end ? kMax16 : count);
  out.u32(zip64_end ? kMax32 : directory_size);
  out.u32(zip64_end ? kMax32 : directory_offset);
  out.u16(0);  // comment
  out.flush();
}

}  // namespace linnet::tensor
