// .npy/.npz reading and writing: round trips through our own reader, the
// exact bytes NumPy expects, and the header variants NumPy can produce.
#include <catch2/catch.hpp>

#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "linnet/tensor/half.hpp"
#include "linnet/tensor/npz.hpp"

using namespace linnet::tensor;

namespace {

std::vector<std::byte> as_bytes(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// A hand-written .npy: magic, version, header (padded with spaces to end on
// a 16-byte boundary, as every version permits), then data.
std::vector<std::byte> npy_file(const std::string& header, const std::vector<std::byte>& data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string padded = header;
  while ((prefix + padded.size() + 1) % 16 != 0) padded += ' ';
  padded += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) bytes += static_cast<char>((padded.size() >> (8 * i)) & 0xFF);
  bytes += padded;
  std::vector<std::byte> result = as_bytes(bytes);
  result.insert(result.end(), data.begin(), data.end());
  return result;
}

template <typename T>
std::vector<std::byte> raw(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> values_of(const NpyArray& array) {
  REQUIRE(array.data.size() % sizeof(T) == 0);
  std::vector<T> values(array.data.size() / sizeof(T));
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

// An array whose bytes are a simple function of the position, different for each dtype.
NpyArray sample_array(DType dtype, std::vector<int64_t> shape) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(array.element_count() * dtype_size(dtype));
  for (size_t i = 0; i < array.data.size(); ++i)
    array.data[i] = dtype == DType::Bool ? std::byte(i % 3 == 0) : std::byte((i * 37 + static_cast<size_t>(dtype)) & 0xFF);
  return array;
}

std::vector<DType> numpy_dtypes() {
  std::vector<DType> dtypes;
  for (DType dtype : kAllDTypes)
    if (dtype != DType::BF16) dtypes.push_back(dtype);
  return dtypes;
}

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("linnet-npz-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

TEST_CASE("npy round trip keeps dtype, shape and bytes for every NumPy dtype", "[npz]") {
  std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {0, 3}, {2, 3, 4}};
  for (DType dtype : numpy_dtypes()) {
    for (const auto& shape : shapes) {
      NpyArray original = sample_array(dtype, shape);
      NpyArray back = parse_npy(serialize_npy(original), "roundtrip.npy");
      INFO(dtype_name(dtype) << " rank " << shape.size());
      CHECK(back.dtype == original.dtype);
      CHECK(back.shape == original.shape);
      CHECK(back.data == original.data);
    }
  }
}

TEST_CASE("npy writer produces NumPy's header layout", "[npz]") {
  NpyArray array = sample_array(DType::F32, {2, 3});
  std::vector<std::byte> bytes = serialize_npy(array);
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  REQUIRE(text.substr(0, 6) == "\x93NUMPY");
  CHECK(text[6] == '\x01');
  CHECK(text[7] == '\x00');
  size_t header_length = static_cast<unsigned char>(text[8]) | (static_cast<unsigned char>(text[9]) << 8);
  CHECK((10 + header_length) % 64 == 0);
  CHECK(text.substr(10, header_length).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(text[10 + header_length - 1] == '\n');
  CHECK(bytes.size() == 10 + header_length + 24);

  CHECK(std::string(reinterpret_cast<const char*>(serialize_npy(sample_array(DType::U8, {4})).data()), 64)
            .find("'descr': '|u1'") != std::string::npos);
  std::vector<std::byte> scalar = serialize_npy(sample_array(DType::I64, {}));
  CHECK(std::string(reinterpret_cast<const char*>(scalar.data()), 64).find("'shape': ()") != std::string::npos);
  std::vector<std::byte> vector = serialize_npy(sample_array(DType::Bool, {7}));
  CHECK(std::string(reinterpret_cast<const char*>(vector.data()), 64).find("'descr': '|b1', 'fortran_order': False, 'shape': (7,)") !=
        std::string::npos);
}

TEST_CASE("npy writer switches to version 2.0 only when the header outgrows 65535 bytes", "[npz]") {
  NpyArray array;
  array.dtype = DType::U8;
  array.shape.assign(25000, 1);  // "1, " per dimension: about 75 kB of header
  array.data = {std::byte{42}};
  std::vector<std::byte> bytes = serialize_npy(array);
  CHECK(static_cast<int>(bytes[6]) == 2);
  NpyArray back = parse_npy(bytes, "wide.npy");
  CHECK(back.shape == array.shape);
  CHECK(back.data == array.data);
}

TEST_CASE("npy writer refuses bf16 and widening is exact", "[npz]") {
  NpyArray bf16;
  bf16.dtype = DType::BF16;
  bf16.shape = {3};
  bf16.data = raw(std::vector<uint16_t>{0x3F80, 0xC000, float_to_bf16_bits(0.1f)});
  CHECK_THROWS_WITH(serialize_npy(bf16), Catch::Matchers::Contains("bf16") && Catch::Matchers::Contains("f32"));
  NpyArray widened = bf16_widened_to_f32(bf16);
  CHECK(widened.dtype == DType::F32);
  CHECK(widened.shape == bf16.shape);
  std::vector<float> values = values_of<float>(widened);
  CHECK(values == std::vector<float>{1.0f, -2.0f, round_to_bf16(0.1f)});
  CHECK(parse_npy(serialize_npy(widened), "w.npy").data == widened.data);
}

TEST_CASE("npy writer rejects data that does not match the shape", "[npz]") {
  NpyArray array = sample_array(DType::I32, {2, 2});
  array.data.pop_back();
  CHECK_THROWS_AS(serialize_npy(array), std::invalid_argument);
}

TEST_CASE("npy reader transposes Fortran-order arrays to C order", "[npz]") {
  // Element (i, j, k) of a [2, 3, 4] array holds its C-order index; in
  // Fortran order it sits at i + 2*j + 6*k.
  std::vector<int32_t> fortran(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) fortran[i + 2 * j + 6 * k] = i * 12 + j * 4 + k;
  NpyArray array = parse_npy(npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", raw(fortran)),
                             "f.npy");
  CHECK(array.shape == std::vector<int64_t>{2, 3, 4});
  std::vector<int32_t> values = values_of<int32_t>(array);
  for (int32_t c = 0; c < 24; ++c) CHECK(values[c] == c);

  // A 1-D or empty Fortran array is the same as C order.
  NpyArray vector = parse_npy(npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }", raw(std::vector<int32_t>{7, 8, 9})), "v.npy");
  CHECK(values_of<int32_t>(vector) == std::vector<int32_t>{7, 8, 9});
  NpyArray empty = parse_npy(npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (0, 4), }", {}), "e.npy");
  CHECK(empty.element_count() == 0);
}

TEST_CASE("npy reader converts big-endian arrays to little-endian", "[npz]") {
  std::vector<std::byte> big = {std::byte{0x00}, std::byte{0x00}, std::byte{0x01}, std::byte{0x02},
                                std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFE}};
  NpyArray ints = parse_npy(npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", big), "b.npy");
  CHECK(ints.dtype == DType::I32);
  CHECK(values_of<int32_t>(ints) == std::vector<int32_t>{0x0102, -2});

  std::vector<std::byte> one_big = {std::byte{0x3F}, std::byte{0xF0}, std::byte{0}, std::byte{0},
                                    std::byte{0},    std::byte{0},    std::byte{0}, std::byte{0}};
  NpyArray doubles = parse_npy(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", one_big), "d.npy");
  CHECK(values_of<double>(doubles) == std::vector<double>{1.0});
}

TEST_CASE("npy reader accepts versions 2.0 and 3.0, double quotes and Python 2 longs", "[npz]") {
  std::vector<std::byte> data = raw(std::vector<uint16_t>{1, 2, 3, 4, 5, 6});
  for (int major : {2, 3}) {
    NpyArray array = parse_npy(npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", data, major), "v.npy");
    CHECK(array.dtype == DType::U16);
    CHECK(array.shape == std::vector<int64_t>{2, 3});
    CHECK(array.data == data);
  }
  NpyArray old = parse_npy(npy_file("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<u2\"}", data), "old.npy");
  CHECK(old.shape == std::vector<int64_t>{2, 3});
  NpyArray native = parse_npy(npy_file("{'descr': '=u2', 'fortran_order': False, 'shape': (6,)}", data), "n.npy");
  CHECK(native.data == data);
}

TEST_CASE("npz round trip, compressed and stored, through files", "[npz]") {
  std::map<std::string, NpyArray> arrays;
  for (DType dtype : numpy_dtypes()) arrays["a_" + std::string(dtype_name(dtype))] = sample_array(dtype, {3, 5});
  arrays["scalar"] = sample_array(DType::F64, {});
  arrays["empty"] = sample_array(DType::F32, {0, 7});
  arrays["nested/name"] = sample_array(DType::I8, {4});
  TempDir dir;
  for (bool compress : {true, false}) {
    std::string path = dir.file(compress ? "c.npz" : "s.npz");
    write_npz(path, arrays, compress);
    std::map<std::string, NpyArray> back = read_npz(path);
    REQUIRE(back.size() == arrays.size());
    for (const auto& [name, array] : arrays) {
      INFO(name << (compress ? " compressed" : " stored"));
      REQUIRE(back.count(name) == 1);
      CHECK(back[name].dtype == array.dtype);
      CHECK(back[name].shape == array.shape);
      CHECK(back[name].data == array.data);
    }
    // write_npz streams the arrays to the file; the bytes are serialize_npz's.
    std::ifstream file(path, std::ios::binary);
    std::vector<char> written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<std::byte> in_memory = serialize_npz(arrays, compress);
    CHECK(written.size() == in_memory.size());
    CHECK(std::memcmp(written.data(), in_memory.data(), std::min(written.size(), in_memory.size())) == 0);
  }
  // Compressible data really is compressed.
  std::map<std::string, NpyArray> zeros = {{"z", NpyArray{DType::F32, {1000}, std::vector<std::byte>(4000)}}};
  CHECK(serialize_npz(zeros, true).size() < 1000);
  CHECK(serialize_npz(zeros, false).size() > 4000);

  std::string npy_path = dir.file("one.npy");
  write_npy(npy_path, arrays["a_u16"]);
  CHECK(read_npy(npy_path).data == arrays["a_u16"].data);
}

TEST_CASE("zip writer and reader agree with and without zip64 records and with a comment", "[npz]") {
  std::vector<ZipMember> members = {{"first.bin", as_bytes("hello hello hello hello")},
                                    {"empty.bin", {}},
                                    {"second.bin", as_bytes(std::string(10000, 'x'))}};
  for (bool compress : {true, false}) {
    for (bool zip64 : {true, false}) {
      std::vector<std::byte> archive = build_zip(members, compress, zip64);
      std::vector<ZipMember> back = parse_zip(archive, "t.zip");
      REQUIRE(back.size() == members.size());
      for (size_t i = 0; i < members.size(); ++i) {
        CHECK(back[i].name == members[i].name);
        CHECK(back[i].bytes == members[i].bytes);
      }
      // An archive comment follows the end record; its length is the last field.
      std::vector<std::byte> commented = archive;
      std::string comment = "a comment";
      commented[commented.size() - 2] = std::byte(comment.size());
      for (char c : comment) commented.push_back(std::byte(c));
      CHECK(parse_zip(commented, "t.zip").size() == members.size());
    }
  }
}

TEST_CASE("read errors name the path", "[npz]") {
  TempDir dir;
  CHECK_THROWS_WITH(read_npz(dir.file("absent.npz")), Catch::Matchers::Contains("absent.npz") && Catch::Matchers::Contains("does not exist"));
  CHECK_THROWS_WITH(read_npy(dir.file("")), Catch::Matchers::Contains("directory"));
}
