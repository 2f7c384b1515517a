// The .npy format: a magic string, a version, a Python-dict header naming the
// dtype, memory order and shape, then the raw array bytes.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "linnet/tensor/half.hpp"
#include "linnet/tensor/npz.hpp"
#include "npz_writing.hpp"

namespace linnet::tensor {

static_assert(std::endian::native == std::endian::little,
              "NpyArray data is little-endian and is produced by plain copies on this host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// The dtypes we read and write, by NumPy kind letter and item size.
struct NumpyType {
  char kind;
  size_t size;
  DType dtype;
};
constexpr NumpyType kNumpyTypes[] = {
    {'b', 1, DType::Bool}, {'i', 1, DType::I8},  {'i', 2, DType::I16}, {'i', 4, DType::I32},
    {'i', 8, DType::I64},  {'u', 1, DType::U8},  {'u', 2, DType::U16}, {'u', 4, DType::U32},
    {'u', 8, DType::U64},  {'f', 2, DType::F16}, {'f', 4, DType::F32}, {'f', 8, DType::F64},
};

constexpr const char* kSupportedList = "|b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 <f2 <f4 <f8 (or big-endian >)";

// Multiplies dimension sizes, or returns nullopt when the product does not fit
// in size_t, or when the extents taken as at least 1 (what a tensor's strides
// span) multiply past int64: a zero extent must not hide the others.
std::optional<size_t> checked_product(const std::vector<int64_t>& shape, size_t start) {
  size_t product = start;
  int64_t span = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (__builtin_mul_overflow(product, static_cast<size_t>(dim), &product)) return std::nullopt;
    if (__builtin_mul_overflow(span, std::max<int64_t>(dim, 1), &span)) return std::nullopt;
  }
  return product;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

// The number of elements of a shape to write; std::invalid_argument when a
// dimension is negative or the product overflows.
size_t element_count_of(const std::vector<int64_t>& shape) {
  std::optional<size_t> count = checked_product(shape, 1);
  if (!count) throw std::invalid_argument("NpyArray shape " + shape_text(shape) + " is negative or overflows");
  return *count;
}

// What the header dict says.
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Reads the header: a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', as numpy.lib.format writes it. Only the small
// part of Python literal syntax that can appear there is accepted.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  Header parse() {
    Header header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{');
    skip_space();
    while (!at('}')) {
      std::string key = read_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (seen_descr) fail("repeats the key 'descr'");
        if (at('[')) fail("has a structured dtype (a list of fields); only plain numeric dtypes are supported");
        header.descr = read_string();
        seen_descr = true;
      } else if (key == "fortran_order") {
        if (seen_order) fail("repeats the key 'fortran_order'");
        header.fortran_order = read_bool();
        seen_order = true;
      } else if (key == "shape") {
        if (seen_shape) fail("repeats the key 'shape'");
        header.shape = read_shape();
        seen_shape = true;
      } else {
        fail("has an unexpected key '" + key + "' (expected only 'descr', 'fortran_order', 'shape')");
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        fail("is not a valid dict literal (expected ',' or '}' at header byte " + std::to_string(pos_) + ")");
      }
    }
    ++pos_;  // the closing brace
    skip_space();
    if (pos_ != text_.size()) fail("has text after the closing '}'");
    if (!seen_descr) fail("lacks the key 'descr'");
    if (!seen_order) fail("lacks the key 'fortran_order'");
    if (!seen_shape) fail("lacks the key 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw FormatError(what_ + ": .npy header " + problem);
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (!at(c)) fail(std::string("is not a valid dict literal (expected '") + c + "' at header byte " +
                     std::to_string(pos_) + ")");
    ++pos_;
  }
  std::string read_string() {
    if (!at('\'') && !at('"')) fail("is not a valid dict literal (expected a quoted string at header byte " +
                                    std::to_string(pos_) + ")");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("has an unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    if (value.find('\\') != std::string::npos) fail("has a string with escapes, which no supported dtype needs");
    pos_ = end + 1;
    return value;
  }
  bool read_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("has a 'fortran_order' that is neither True nor False");
  }
  int64_t read_dimension() {
    if (at('-')) fail("has a negative dimension in 'shape'");
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      fail("has a 'shape' entry that is not a non-negative integer");
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("has a dimension too large for int64");
      value = value * 10 + digit;
    }
    if (at('L')) ++pos_;  // Python 2 long literals, as old NumPy wrote them
    return value;
  }
  std::vector<int64_t> read_shape() {
    expect('(');
    std::vector<int64_t> shape;
    skip_space();
    while (!at(')')) {
      shape.push_back(read_dimension());
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at(')')) {
        fail("has a malformed 'shape' tuple");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(const std::string& descr, const std::string& what) {
  auto unsupported = [&](const std::string& extra) -> FormatError {
    return FormatError(what + ": unsupported NumPy dtype '" + descr + "'" + extra + "; supported: " + kSupportedList);
  };
  if (descr.find("bfloat16") != std::string::npos)
    throw unsupported(" (bf16 from ml_dtypes has no standard NumPy dtype; save it as float32)");
  if (descr.size() < 3) throw unsupported("");
  char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') throw unsupported("");
  char kind = descr[1];
  std::string_view digits = std::string_view(descr).substr(2);
  if (digits.size() != 1 || digits[0] < '1' || digits[0] > '8') throw unsupported("");
  size_t size = static_cast<size_t>(digits[0] - '0');
  for (const NumpyType& type : kNumpyTypes)
    if (type.kind == kind && type.size == size) return Descr{type.dtype, order == '>' && size > 1};
  throw unsupported("");
}

const NumpyType& numpy_type_of(DType dtype) {
  for (const NumpyType& type : kNumpyTypes)
    if (type.dtype == dtype) return type;
  throw FormatError("dtype " + std::string(dtype_name(dtype)) +
                    " has no NumPy equivalent; widen bf16 to f32 (bf16_widened_to_f32 is exact) before writing");
}

std::string descr_of(DType dtype) {
  const NumpyType& type = numpy_type_of(dtype);
  std::string descr(1, type.size == 1 ? '|' : '<');
  descr += type.kind;
  descr += std::to_string(type.size);
  return descr;
}

uint32_t read_le(std::span<const std::byte> bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  return value;
}

void swap_each_element(std::vector<std::byte>& data, size_t item_size) {
  for (size_t offset = 0; offset + item_size <= data.size(); offset += item_size)
    std::reverse(data.begin() + static_cast<ptrdiff_t>(offset),
                 data.begin() + static_cast<ptrdiff_t>(offset + item_size));
}

// Fortran order stores the first index fastest; C order the last. Walks the
// output in C order while tracking the matching Fortran-order offset.
std::vector<std::byte> fortran_to_c_order(const std::vector<std::byte>& source, const std::vector<int64_t>& shape,
                                          size_t item_size) {
  size_t rank = shape.size();
  if (source.empty() || rank < 2) return source;
  std::vector<std::byte> result(source.size());
  std::vector<size_t> fortran_stride(rank);
  size_t stride = 1;
  for (size_t k = 0; k < rank; ++k) {
    fortran_stride[k] = stride;
    stride *= static_cast<size_t>(shape[k]);
  }
  std::vector<size_t> index(rank, 0);
  size_t source_element = 0;
  size_t count = source.size() / item_size;
  for (size_t out_element = 0; out_element < count; ++out_element) {
    std::memcpy(result.data() + out_element * item_size, source.data() + source_element * item_size, item_size);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<size_t>(shape[k])) {
        source_element += fortran_stride[k];
        break;
      }
      source_element -= (index[k] - 1) * fortran_stride[k];
      index[k] = 0;
    }
  }
  return result;
}

}  // namespace

size_t NpyArray::element_count() const { return element_count_of(shape); }

NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& what) {
  if (bytes.size() < kMagic.size() + 2 ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    throw FormatError(what + ": not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned>(bytes[6]);
  unsigned minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw FormatError(what + ": unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  size_t length_width = major == 1 ? 2 : 4;
  size_t header_start = 8 + length_width;
  if (bytes.size() < header_start) throw FormatError(what + ": truncated .npy header length");
  size_t header_length = read_le(bytes, 8, length_width);
  if (header_length > bytes.size() - header_start)
    throw FormatError(what + ": .npy header length " + std::to_string(header_length) + " runs past the end of the " +
                      std::to_string(bytes.size()) + "-byte input");
  std::string_view header_text(reinterpret_cast<const char*>(bytes.data()) + header_start, header_length);
  Header header = HeaderParser(header_text, what).parse();
  Descr descr = parse_descr(header.descr, what);

  NpyArray array;
  array.dtype = descr.dtype;
  array.shape = header.shape;
  size_t item_size = dtype_size(descr.dtype);
  std::optional<size_t> byte_count = checked_product(header.shape, item_size);
  if (!byte_count) throw FormatError(what + ": shape " + shape_text(header.shape) + " overflows");
  size_t data_start = header_start + header_length;
  size_t available = bytes.size() - data_start;
  if (available != *byte_count)
    throw FormatError(what + ": shape " + shape_text(header.shape) + " of " + header.descr + " needs " +
                      std::to_string(*byte_count) + " data bytes but the file holds " + std::to_string(available));
  array.data.assign(bytes.begin() + static_cast<ptrdiff_t>(data_start), bytes.end());

  if (descr.big_endian) swap_each_element(array.data, item_size);
  if (array.dtype == DType::Bool) {
    for (size_t i = 0; i < array.data.size(); ++i)
      if (static_cast<unsigned>(array.data[i]) > 1)
        throw FormatError(what + ": bool element " + std::to_string(i) + " holds byte " +
                          std::to_string(static_cast<unsigned>(array.data[i])) + " (must be 0 or 1)");
  }
  if (header.fortran_order) array.data = fortran_to_c_order(array.data, array.shape, item_size);
  return array;
}

NpyView view_of(const NpyArray& array) { return NpyView{array.dtype, array.shape, array.data}; }

std::vector<std::byte> detail::npy_header(const NpyView& array) {
  std::string descr = descr_of(array.dtype);
  size_t expected = element_count_of(array.shape) * dtype_size(array.dtype);
  if (array.data.size() != expected)
    throw std::invalid_argument("NpyArray of shape " + shape_text(array.shape) + " and dtype " +
                                std::string(dtype_name(array.dtype)) + " needs " + std::to_string(expected) +
                                " bytes but holds " + std::to_string(array.data.size()));
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(array.shape) + ", }";
  // NumPy pads with spaces and ends with a newline so the data starts on a
  // 64-byte boundary; version 2.0 only when the 1.0 length field is too small.
  auto padded_length = [&](size_t prefix) {
    size_t unpadded = prefix + header.size() + 1;
    return header.size() + 1 + (64 - unpadded % 64) % 64;
  };
  size_t major = 1, prefix = 10;
  if (padded_length(prefix) > 0xFFFF) {
    major = 2;
    prefix = 12;
  }
  size_t header_length = padded_length(prefix);
  header.append(header_length - header.size() - 1, ' ');
  header += '\n';

  std::vector<std::byte> bytes;
  bytes.reserve(prefix + header.size());
  for (char c : kMagic) bytes.push_back(static_cast<std::byte>(c));
  bytes.push_back(static_cast<std::byte>(major));
  bytes.push_back(std::byte{0});
  for (size_t i = 0; i < prefix - 8; ++i) bytes.push_back(static_cast<std::byte>((header_length >> (8 * i)) & 0xFF));
  for (char c : header) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

std::vector<std::byte> serialize_npy(const NpyArray& array) {
  std::vector<std::byte> bytes = detail::npy_header(view_of(array));
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());
  return bytes;
}

NpyArray bf16_widened_to_f32(const NpyArray& array) {
  if (array.dtype != DType::BF16) return array;
  NpyArray widened;
  widened.dtype = DType::F32;
  widened.shape = array.shape;
  size_t count = array.data.size() / 2;
  widened.data.resize(count * 4);
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits = static_cast<uint16_t>(static_cast<uint16_t>(array.data[2 * i]) |
                                          (static_cast<uint16_t>(array.data[2 * i + 1]) << 8));
    float value = bf16_bits_to_float(bits);
    std::memcpy(widened.data.data() + 4 * i, &value, 4);
  }
  return widened;
}

}  // namespace linnet::tensor
