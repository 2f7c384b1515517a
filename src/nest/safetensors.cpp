// Opening and validating one safetensors file (see safetensors.hpp for the
// rules enforced).
#include "linnet/nest/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <simdjson.h>
#include <unordered_set>

namespace linnet::nest {
namespace {

using tensor::DType;

struct FormatDType {
  std::string_view name;
  unsigned bits;
  std::optional<DType> dtype;
};

// Every dtype the safetensors format defines, with its size in bits.
const FormatDType kFormatDTypes[] = {
    {"BOOL", 8, DType::Bool},       {"U8", 8, DType::U8},       {"I8", 8, DType::I8},
    {"I16", 16, DType::I16},        {"U16", 16, DType::U16},    {"I32", 32, DType::I32},
    {"U32", 32, DType::U32},        {"I64", 64, DType::I64},    {"U64", 64, DType::U64},
    {"F16", 16, DType::F16},        {"BF16", 16, DType::BF16},  {"F32", 32, DType::F32},
    {"F64", 64, DType::F64},        {"F8_E4M3", 8, std::nullopt}, {"F8_E5M2", 8, std::nullopt},
    {"F8_E8M0", 8, std::nullopt},   {"F6_E2M3", 6, std::nullopt}, {"F6_E3M2", 6, std::nullopt},
    {"F4", 4, std::nullopt},        {"C64", 64, std::nullopt},
};

const FormatDType* format_dtype(std::string_view name) {
  for (const FormatDType& entry : kFormatDTypes)
    if (entry.name == name) return &entry;
  return nullptr;
}

std::string known_dtype_list() {
  std::string list;
  for (const FormatDType& entry : kFormatDTypes) {
    if (!list.empty()) list += ", ";
    list += entry.name;
  }
  return list;
}

// The reference implementation refuses headers above 100 MB; so do we, before
// allocating anything for one.
constexpr uint64_t kMaxHeaderLength = 100'000'000;

// A read-only private mapping of a whole file, unmapped when the last
// TensorRecord or SafetensorsFile that refers to it goes away.
class Mapping {
 public:
  Mapping(void* address, size_t length) : address_(address), length_(length) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { munmap(address_, length_); }
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(address_), length_}; }

 private:
  void* address_;
  size_t length_;
};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string range_text(uint64_t begin, uint64_t end) {
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "[" + std::to_string(...).
  std::string text = "[";
  text += std::to_string(begin);
  text += ", ";
  text += std::to_string(end);
  text += "]";
  return text;
}

// Builds messages of the form "<file>: <problem>" and
// "<file>: tensor '<name>': <problem>".
class Complaints {
 public:
  explicit Complaints(const std::string& path) : path_(path) {}
  CheckpointError file(const std::string& problem) const { return CheckpointError(path_ + ": " + problem); }
  CheckpointError tensor(std::string_view name, const std::string& problem) const {
    return CheckpointError(path_ + ": tensor '" + std::string(name) + "': " + problem);
  }

 private:
  const std::string& path_;
};

// A JSON integer that must be >= 0, or nullopt (negative, fractional, not a number).
std::optional<uint64_t> non_negative_integer(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64: {
      int64_t signed_value = value.get_int64().value_unsafe();
      if (signed_value < 0) return std::nullopt;
      return static_cast<uint64_t>(signed_value);
    }
    case simdjson::dom::element_type::UINT64:
      return value.get_uint64().value_unsafe();
    default:
      return std::nullopt;
  }
}

std::vector<int64_t> read_shape(simdjson::dom::element value, std::string_view name, const Complaints& complain) {
  simdjson::dom::array array;
  if (value.get_array().get(array)) throw complain.tensor(name, "'shape' is not an array");
  std::vector<int64_t> shape;
  for (simdjson::dom::element dim : array) {
    if (dim.type() == simdjson::dom::element_type::INT64 && dim.get_int64().value_unsafe() < 0)
      throw complain.tensor(name, "'shape' has a negative dimension " + std::to_string(dim.get_int64().value_unsafe()));
    std::optional<uint64_t> size = non_negative_integer(dim);
    if (!size) throw complain.tensor(name, "'shape' has an entry that is not a non-negative integer");
    if (*size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw complain.tensor(name, "'shape' has dimension " + std::to_string(*size) + ", too large for int64");
    shape.push_back(static_cast<int64_t>(*size));
  }
  return shape;
}

std::pair<uint64_t, uint64_t> read_offsets(simdjson::dom::element value, std::string_view name,
                                           const Complaints& complain) {
  simdjson::dom::array array;
  if (value.get_array().get(array) || array.size() != 2)
    throw complain.tensor(name, "'data_offsets' is not an array of two integers [begin, end]");
  std::optional<uint64_t> begin = non_negative_integer(array.at(0).value_unsafe());
  std::optional<uint64_t> end = non_negative_integer(array.at(1).value_unsafe());
  if (!begin || !end) throw complain.tensor(name, "'data_offsets' entries must be non-negative integers");
  return {*begin, *end};
}

// Reads one tensor entry and checks it on its own (its range against the
// data region, its size against shape and dtype). Ranges are checked against
// each other afterwards.
TensorRecord read_tensor_entry(std::string_view name, simdjson::dom::element value, uint64_t data_size,
                               const Complaints& complain) {
  simdjson::dom::object entry;
  if (value.get_object().get(entry)) throw complain.tensor(name, "entry is not a JSON object");
  TensorRecord record;
  record.name = std::string(name);
  bool has_dtype = false, has_shape = false, has_offsets = false;
  for (simdjson::dom::key_value_pair field : entry) {
    auto once = [&](bool& seen) {
      if (seen) throw complain.tensor(name, "field '" + std::string(field.key) + "' appears twice");
      seen = true;
    };
    if (field.key == "dtype") {
      once(has_dtype);
      std::string_view dtype_name;
      if (field.value.get_string().get(dtype_name)) throw complain.tensor(name, "'dtype' is not a string");
      record.format_dtype = std::string(dtype_name);
    } else if (field.key == "shape") {
      once(has_shape);
      record.shape = read_shape(field.value, name, complain);
    } else if (field.key == "data_offsets") {
      once(has_offsets);
      std::tie(record.data_begin, record.data_end) = read_offsets(field.value, name, complain);
    } else {
      throw complain.tensor(name, "unexpected field '" + std::string(field.key) +
                                      "' (a tensor entry has only dtype, shape and data_offsets)");
    }
  }
  if (!has_dtype) throw complain.tensor(name, "missing field 'dtype'");
  if (!has_shape) throw complain.tensor(name, "missing field 'shape'");
  if (!has_offsets) throw complain.tensor(name, "missing field 'data_offsets'");

  const FormatDType* dtype = format_dtype(record.format_dtype);
  if (!dtype) throw complain.tensor(name, "unknown dtype '" + record.format_dtype + "' (known: " + known_dtype_list() + ")");
  record.dtype = dtype->dtype;

  std::string offsets = range_text(record.data_begin, record.data_end);
  if (record.data_begin > record.data_end) throw complain.tensor(name, "data_offsets " + offsets + " are reversed");
  if (record.data_end > data_size)
    throw complain.tensor(name, "data_offsets " + offsets + " run past the end of the " + std::to_string(data_size) +
                                    "-byte data region");

  // The bits, and the product of the extents taken as at least 1 (what the
  // strides of a tensor of this shape span): a zero extent must not hide
  // the others from the overflow check ([0, 2^62+1, 4]).
  uint64_t bits = dtype->bits;
  int64_t span = 1;
  for (int64_t dim : record.shape) {
    if (__builtin_mul_overflow(bits, static_cast<uint64_t>(dim), &bits) ||
        __builtin_mul_overflow(span, std::max<int64_t>(dim, 1), &span))
      throw complain.tensor(name, "shape " + shape_text(record.shape) + " of " + record.format_dtype +
                                      " overflows when sizing its data");
  }
  if (bits % 8 != 0)
    throw complain.tensor(name, "shape " + shape_text(record.shape) + " of " + record.format_dtype +
                                    " is not a whole number of bytes");
  uint64_t expected = bits / 8, actual = record.data_end - record.data_begin;
  if (expected != actual)
    throw complain.tensor(name, "shape " + shape_text(record.shape) + " of " + record.format_dtype + " needs " +
                                    std::to_string(expected) + " bytes but data_offsets " + offsets + " hold " +
                                    std::to_string(actual));
  return record;
}

void read_metadata(simdjson::dom::element value, std::map<std::string, std::string>& metadata,
                   const Complaints& complain) {
  simdjson::dom::object object;
  if (value.get_object().get(object)) throw complain.file("'__metadata__' is not a JSON object");
  for (simdjson::dom::key_value_pair field : object) {
    std::string_view text;
    if (field.value.get_string().get(text))
      throw complain.file("'__metadata__' value for '" + std::string(field.key) + "' is not a string");
    if (!metadata.emplace(std::string(field.key), std::string(text)).second)
      throw complain.file("'__metadata__' key '" + std::string(field.key) + "' appears twice");
  }
}

// The format requires the byte ranges to tile the data region: starting at 0,
// each beginning where the previous ended, the last ending at the file's end.
void check_tiling(const std::vector<TensorRecord>& sorted, uint64_t data_size, const Complaints& complain) {
  uint64_t covered = 0;
  const TensorRecord* previous = nullptr;
  for (const TensorRecord& record : sorted) {
    std::string offsets = range_text(record.data_begin, record.data_end);
    if (record.data_begin < covered)
      throw complain.tensor(record.name, "data_offsets " + offsets + " overlap tensor '" + previous->name + "' " +
                                             range_text(previous->data_begin, previous->data_end));
    if (record.data_begin > covered)
      throw complain.tensor(record.name, "data_offsets " + offsets + " leave bytes [" + std::to_string(covered) +
                                             ", " + std::to_string(record.data_begin) +
                                             ") of the data region to no tensor (ranges must be contiguous)");
    covered = record.data_end;
    previous = &record;
  }
  if (covered != data_size)
    throw complain.file("the tensors cover " + std::to_string(covered) + " bytes but the data region holds " +
                        std::to_string(data_size) + " (trailing bytes belong to no tensor)");
}

}  // namespace

std::optional<unsigned> safetensors_dtype_bits(std::string_view format_dtype_name) {
  const FormatDType* entry = format_dtype(format_dtype_name);
  if (!entry) return std::nullopt;
  return entry->bits;
}

std::optional<tensor::DType> linnet_dtype_of(std::string_view format_dtype_name) {
  const FormatDType* entry = format_dtype(format_dtype_name);
  if (!entry) return std::nullopt;
  return entry->dtype;
}

uint64_t TensorRecord::element_count() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);  // validated not to overflow when opened
  return count;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  Complaints complain(path);
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));  // a FIFO must not block
  if (fd.get() < 0) throw complain.file(std::string("cannot open: ") + std::strerror(errno));
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) throw complain.file(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw complain.file("is not a regular file");
  size_t size = static_cast<size_t>(info.st_size);
  if (size == 0)
    throw complain.file("file is empty (0 bytes); a safetensors file starts with an 8-byte header length");
  void* address = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) throw complain.file(std::string("cannot map: ") + std::strerror(errno));
  auto mapping = std::make_shared<const Mapping>(address, size);
  return parse(mapping, mapping->bytes(), path);
}

SafetensorsFile SafetensorsFile::from_bytes(std::vector<std::byte> bytes, const std::string& name) {
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  return parse(owned, *owned, name);
}

SafetensorsFile SafetensorsFile::parse(std::shared_ptr<const void> owner, std::span<const std::byte> bytes,
                                       const std::string& path) {
  Complaints complain(path);
  if (bytes.empty())
    throw complain.file("file is empty (0 bytes); a safetensors file starts with an 8-byte header length");
  if (bytes.size() < 8)
    throw complain.file("file is only " + std::to_string(bytes.size()) +
                        " bytes, shorter than the 8-byte header length");
  uint64_t header_length = 0;
  for (size_t i = 0; i < 8; ++i) header_length |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (header_length > kMaxHeaderLength)
    throw complain.file("header length " + std::to_string(header_length) + " exceeds the " +
                        std::to_string(kMaxHeaderLength) + "-byte limit (corrupt, or not a safetensors file)");
  if (header_length > bytes.size() - 8)
    throw complain.file("header length " + std::to_string(header_length) + " is larger than the " +
                        std::to_string(bytes.size() - 8) + " bytes after it (file size " +
                        std::to_string(bytes.size()) + ")");
  const char* header = reinterpret_cast<const char*>(bytes.data() + 8);
  if (header_length == 0 || header[0] != '{')
    throw complain.file("header does not start with '{' (the header must be a JSON object)");
  if (!simdjson::validate_utf8(header, static_cast<size_t>(header_length)))
    throw complain.file("header is not valid UTF-8");

  simdjson::dom::parser parser;
  simdjson::padded_string padded(header, static_cast<size_t>(header_length));
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root))
    throw complain.file(std::string("header is not valid JSON (") + simdjson::error_message(error) + ")");
  simdjson::dom::object object;
  if (root.get_object().get(object)) throw complain.file("header is not a JSON object");

  SafetensorsFile file;
  file.path_ = path;
  file.header_length_ = header_length;
  file.file_size_ = bytes.size();
  uint64_t data_start = 8 + header_length;
  uint64_t data_size = bytes.size() - data_start;
  std::unordered_set<std::string_view> seen;
  bool seen_metadata = false;
  for (simdjson::dom::key_value_pair field : object) {
    if (field.key == "__metadata__") {
      if (seen_metadata) throw complain.file("'__metadata__' appears twice");
      seen_metadata = true;
      read_metadata(field.value, file.metadata_, complain);
      continue;
    }
    if (!seen.insert(field.key).second) throw complain.tensor(field.key, "appears twice in the header");
    file.tensors_.push_back(read_tensor_entry(field.key, field.value, data_size, complain));
  }

  std::sort(file.tensors_.begin(), file.tensors_.end(), [](const TensorRecord& a, const TensorRecord& b) {
    return std::tie(a.data_begin, a.data_end, a.name) < std::tie(b.data_begin, b.data_end, b.name);
  });
  check_tiling(file.tensors_, data_size, complain);

  std::span<const std::byte> data_region = bytes.subspan(static_cast<size_t>(data_start));
  for (size_t i = 0; i < file.tensors_.size(); ++i) {
    TensorRecord& record = file.tensors_[i];
    record.bytes = data_region.subspan(static_cast<size_t>(record.data_begin),
                                       static_cast<size_t>(record.data_end - record.data_begin));
    record.keep_alive = owner;
    record.file = path;
    file.index_.emplace(record.name, i);
  }
  return file;
}

const TensorRecord* SafetensorsFile::find(std::string_view name) const {
  auto found = index_.find(std::string(name));
  return found == index_.end() ? nullptr : &tensors_[found->second];
}

}  // namespace linnet::nest
