// Every golden expected.npz holds exactly the arrays its meta.json lists, with
// the dtypes and shapes listed there. (Lives with the nest tests because it
// needs a JSON reader; the npz reader itself is tested in tests/tensor.)
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <simdjson.h>

#include "linnet/tensor/npz.hpp"

using namespace linnet::tensor;

namespace {

struct Expected {
  DType dtype;
  std::vector<int64_t> shape;
};

DType dtype_from_numpy_name(std::string_view name) {
  static const std::map<std::string_view, DType> names = {
      {"bool", DType::Bool},   {"int8", DType::I8},     {"int16", DType::I16},     {"int32", DType::I32},
      {"int64", DType::I64},   {"uint8", DType::U8},    {"uint16", DType::U16},    {"uint32", DType::U32},
      {"uint64", DType::U64},  {"float16", DType::F16}, {"float32", DType::F32},   {"float64", DType::F64}};
  auto found = names.find(name);
  if (found == names.end()) FAIL("meta.json names an unknown NumPy dtype: " << name);
  return found->second;
}

// meta.json describes arrays as {"name": ["dtype", [dims...]], ...}.
void collect(simdjson::dom::object listing, std::map<std::string, Expected>& expected) {
  for (auto [name, description] : listing) {
    simdjson::dom::array pair = description.get_array().value();
    REQUIRE(pair.size() == 2);
    Expected entry{dtype_from_numpy_name(pair.at(0).get_string().value()), {}};
    simdjson::dom::array dims = pair.at(1).get_array().value();
    for (simdjson::dom::element dim : dims) entry.shape.push_back(dim.get_int64().value());
    expected.emplace(std::string(name), entry);
  }
}

}  // namespace

TEST_CASE("golden expected.npz files match their meta.json", "[npz][golden]") {
  namespace fs = std::filesystem;
  int cases = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(LINNET_SOURCE_DIR) / "golden")) {
    if (!fs::exists(entry.path() / "expected.npz")) continue;
    INFO(entry.path().filename().string());
    ++cases;
    simdjson::dom::parser parser;
    simdjson::dom::element meta;
    REQUIRE_FALSE(parser.load((entry.path() / "meta.json").string()).get(meta));
    std::map<std::string, Expected> expected;
    // Model cases list "expected_npz"; the mxfp4 case lists its "inputs" and "outputs".
    for (const char* section : {"expected_npz", "inputs", "outputs"}) {
      simdjson::dom::object listing;
      if (!meta[section].get_object().get(listing)) collect(listing, expected);
    }
    REQUIRE(!expected.empty());

    std::map<std::string, NpyArray> arrays = read_npz((entry.path() / "expected.npz").string());
    CHECK(arrays.size() == expected.size());
    for (const auto& [name, want] : expected) {
      INFO(name);
      REQUIRE(arrays.count(name) == 1);
      const NpyArray& array = arrays.at(name);
      CHECK(array.dtype == want.dtype);
      CHECK(array.shape == want.shape);
      CHECK(array.data.size() == array.element_count() * dtype_size(array.dtype));
    }
    // Generated tokens are valid vocabulary ids.
    if (arrays.count("generated")) {
      int64_t vocab = meta["dims"]["V"].get_int64().value();
      const NpyArray& generated = arrays.at("generated");
      for (size_t i = 0; i < generated.element_count(); ++i) {
        int32_t token;
        std::memcpy(&token, generated.data.data() + 4 * i, 4);
        CHECK(token >= 0);
        CHECK(token < vocab);
      }
    }
  }
  CHECK(cases == 5);
}

TEST_CASE("the small fuzzing seeds are valid NumPy files", "[npz]") {
  std::string seeds = std::string(LINNET_SOURCE_DIR) + "/tests/nest/seeds/";
  for (const char* name : {"small_stored.npz", "small_deflated.npz"}) {
    INFO(name);
    std::map<std::string, NpyArray> arrays = read_npz(seeds + name);
    CHECK(arrays.size() == 5);
    CHECK(arrays.at("big").dtype == DType::U16);  // written big-endian, read as little-endian
    CHECK(static_cast<int>(arrays.at("big").data[2]) == 1);
    CHECK(arrays.at("mask").dtype == DType::Bool);
  }
  NpyArray fortran = read_npy(seeds + "small_fortran.npy");
  CHECK(fortran.shape == std::vector<int64_t>{2, 3});
  float second;
  std::memcpy(&second, fortran.data.data() + 4, 4);
  CHECK(second == 1.0f);  // C order after transposing from Fortran order
}
