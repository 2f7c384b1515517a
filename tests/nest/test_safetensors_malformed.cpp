// The malformed-checkpoint corpus: each case is written to a temporary file,
// opened through the memory-mapping path and through the in-memory path, and
// must fail with a CheckpointError naming the file, the tensor where there is
// one, and the problem.
#include <catch2/catch.hpp>

#include <optional>

#include "linnet/nest/safetensors.hpp"
#include "safetensors_builder.hpp"

using namespace linnet::nest;
using namespace linnet::nest::testing;
using Catch::Matchers::Contains;

namespace {

struct MalformedCase {
  std::string label;
  std::vector<std::byte> bytes;
  std::vector<std::string> message_parts;  // each must appear in the error message
};

std::string header_with(const std::string& entry) { return "{\"t\":" + entry + "}"; }

// A file holding one tensor entry `entry` (as JSON text) and `data_bytes` of data.
std::vector<std::byte> one_entry(const std::string& entry, size_t data_bytes) {
  return safetensors_bytes(header_with(entry), zero_bytes(data_bytes));
}

std::vector<MalformedCase> corpus() {
  std::vector<MalformedCase> cases;
  auto add = [&](std::string label, std::vector<std::byte> bytes, std::vector<std::string> parts) {
    cases.push_back({std::move(label), std::move(bytes), std::move(parts)});
  };
  const std::string good_entry = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

  // File-level framing.
  add("empty", {}, {"file is empty (0 bytes)"});
  add("shorter_than_8", zero_bytes(5), {"only 5 bytes", "shorter than the 8-byte header length"});
  add("length_past_end", safetensors_bytes(header_with(good_entry), zero_bytes(8), 5000),
      {"header length 5000 is larger than"});
  add("length_absurd", safetensors_bytes(header_with(good_entry), zero_bytes(8), uint64_t{1} << 40),
      {"header length 1099511627776 exceeds the 100000000-byte limit"});
  add("length_all_ones", safetensors_bytes("{}", {}, ~uint64_t{0}), {"exceeds the 100000000-byte limit"});
  add("length_zero", safetensors_bytes("", zero_bytes(8)), {"does not start with '{'"});

  // Header text.
  add("not_json", safetensors_bytes("{\"t\": [1, 2,", {}), {"header is not valid JSON"});
  add("trailing_garbage", safetensors_bytes("{} xyz", {}), {"header is not valid JSON"});
  add("array_header", safetensors_bytes("[1, 2, 3]", {}), {"does not start with '{'"});
  add("leading_space", safetensors_bytes(" {}", {}), {"does not start with '{'"});
  std::string latin1 = "{\"caf\xE9\":" + good_entry + "}";
  add("non_utf8", safetensors_bytes(latin1, zero_bytes(8)), {"header is not valid UTF-8"});
  std::string overlong = "{\"\xC0\xAF\":" + good_entry + "}";
  add("overlong_utf8", safetensors_bytes(overlong, zero_bytes(8)), {"header is not valid UTF-8"});

  // Tensor entries.
  add("entry_not_object", one_entry("[1, 2]", 0), {"tensor 't'", "entry is not a JSON object"});
  add("missing_dtype", one_entry(R"({"shape":[2],"data_offsets":[0,8]})", 8), {"tensor 't'", "missing field 'dtype'"});
  add("missing_shape", one_entry(R"({"dtype":"F32","data_offsets":[0,8]})", 8), {"tensor 't'", "missing field 'shape'"});
  add("missing_offsets", one_entry(R"({"dtype":"F32","shape":[2]})", 8), {"tensor 't'", "missing field 'data_offsets'"});
  add("dtype_not_string", one_entry(R"({"dtype":32,"shape":[2],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "'dtype' is not a string"});
  add("unknown_dtype", one_entry(R"({"dtype":"F128","shape":[2],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "unknown dtype 'F128'", "BF16"});
  add("lowercase_dtype", one_entry(R"({"dtype":"f32","shape":[2],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "unknown dtype 'f32'"});
  add("shape_not_array", one_entry(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})", 8),
      {"tensor 't'", "'shape' is not an array"});
  add("negative_shape", one_entry(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "negative dimension -2"});
  add("fractional_shape", one_entry(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "not a non-negative integer"});
  add("string_shape", one_entry(R"({"dtype":"F32","shape":["2"],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "not a non-negative integer"});
  add("huge_dimension", one_entry(R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "too large for int64"});
  add("overflowing_shape",
      one_entry(R"({"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "overflows"});
  add("overflow_to_match",  // 2^62 elements of 4 bytes wrap to 0 bytes in 64-bit arithmetic
      one_entry(R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]})", 0),
      {"tensor 't'", "overflows"});
  add("offsets_not_pair", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4,8]})", 8),
      {"tensor 't'", "'data_offsets' is not an array of two integers"});
  add("offsets_not_array", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":8})", 8),
      {"tensor 't'", "'data_offsets' is not an array of two integers"});
  add("negative_offset", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})", 8),
      {"tensor 't'", "non-negative integers"});
  add("reversed_offsets", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})", 8),
      {"tensor 't'", "data_offsets [8, 0] are reversed"});
  add("offsets_past_end", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", 4),
      {"tensor 't'", "data_offsets [0, 8] run past the end of the 4-byte data region"});
  add("size_mismatch", one_entry(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"});
  add("bf16_counted_as_f32", one_entry(R"({"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]})", 16),
      {"tensor 't'", "needs 8 bytes"});
  add("f4_half_byte", one_entry(R"({"dtype":"F4","shape":[3],"data_offsets":[0,2]})", 2),
      {"tensor 't'", "is not a whole number of bytes"});
  add("unexpected_field", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"offset":0})", 8),
      {"tensor 't'", "unexpected field 'offset'"});
  add("repeated_field", one_entry(R"({"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]})", 8),
      {"tensor 't'", "field 'dtype' appears twice"});

  // Ranges against each other and the data region.
  add("overlap",
      safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                        zero_bytes(12)),
      {"tensor 'b'", "overlap tensor 'a' [0, 8]"});
  add("same_range",
      safetensors_bytes(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                        R"("b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                        zero_bytes(4)),
      {"overlap tensor"});
  add("gap",
      safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                        zero_bytes(20)),
      {"tensor 'b'", "leave bytes [8, 12)", "to no tensor"});
  add("not_starting_at_zero", one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[4,12]})", 12),
      {"tensor 't'", "leave bytes [0, 4)"});
  add("trailing_data", one_entry(good_entry, 10), {"the tensors cover 8 bytes but the data region holds 10"});
  add("data_but_no_tensors", safetensors_bytes("{}", zero_bytes(3)), {"cover 0 bytes but the data region holds 3"});
  add("duplicate_name",
      safetensors_bytes(R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                        R"("t":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                        zero_bytes(2)),
      {"tensor 't'", "appears twice"});

  // __metadata__.
  add("metadata_not_object", safetensors_bytes(R"({"__metadata__":"pt"})", {}), {"'__metadata__' is not a JSON object"});
  add("metadata_not_strings", safetensors_bytes(R"({"__metadata__":{"format":1}})", {}),
      {"'__metadata__' value for 'format' is not a string"});
  add("metadata_twice", safetensors_bytes(R"({"__metadata__":{},"__metadata__":{}})", {}),
      {"'__metadata__' appears twice"});
  return cases;
}

std::optional<std::string> error_of_open(const std::string& path) {
  try {
    SafetensorsFile::open(path);
  } catch (const CheckpointError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

std::optional<std::string> error_of_bytes(const std::vector<std::byte>& bytes, const std::string& name) {
  try {
    SafetensorsFile::from_bytes(bytes, name);
  } catch (const CheckpointError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("every malformed checkpoint in the corpus is rejected with a precise message", "[safetensors][malformed]") {
  TempDir dir;
  std::vector<MalformedCase> cases = corpus();
  CHECK(cases.size() >= 45);
  for (const MalformedCase& malformed : cases) {
    INFO("case " << malformed.label);
    std::string path = dir.write(malformed.label + ".safetensors", malformed.bytes);

    std::optional<std::string> mapped = error_of_open(path);
    REQUIRE(mapped.has_value());
    CHECK_THAT(*mapped, Contains(path));
    for (const std::string& part : malformed.message_parts) CHECK_THAT(*mapped, Contains(part));

    std::optional<std::string> in_memory = error_of_bytes(malformed.bytes, "memory:" + malformed.label);
    REQUIRE(in_memory.has_value());
    CHECK_THAT(*in_memory, Contains("memory:" + malformed.label));
    for (const std::string& part : malformed.message_parts) CHECK_THAT(*in_memory, Contains(part));
  }
}

TEST_CASE("opening something that is not a readable file names it", "[safetensors][malformed]") {
  TempDir dir;
  std::optional<std::string> missing = error_of_open(dir.file("absent.safetensors"));
  REQUIRE(missing.has_value());
  CHECK_THAT(*missing, Contains("absent.safetensors") && Contains("cannot open"));
  std::optional<std::string> directory = error_of_open(dir.path());
  REQUIRE(directory.has_value());
  CHECK_THAT(*directory, Contains("not a regular file"));
}

TEST_CASE("truncating a valid file anywhere gives an error, never a crash", "[safetensors][malformed]") {
  std::vector<std::byte> valid = well_formed({{"a", "F32", {2, 3}, counting_bytes(24)},
                                              {"b", "BF16", {5}, counting_bytes(10)},
                                              {"c", "U8", {7}, counting_bytes(7)}},
                                             R"({"format":"pt"})");
  REQUIRE_NOTHROW(SafetensorsFile::from_bytes(valid, "valid"));
  for (size_t length = 0; length < valid.size(); ++length) {
    std::vector<std::byte> prefix(valid.begin(), valid.begin() + static_cast<ptrdiff_t>(length));
    INFO("length " << length);
    CHECK(error_of_bytes(prefix, "cut").has_value());
  }
}

TEST_CASE("single-byte corruption of the header is either harmless or rejected", "[safetensors][malformed]") {
  std::vector<std::byte> valid = well_formed({{"a", "F32", {2, 3}, counting_bytes(24)}, {"b", "I64", {1}, counting_bytes(8)}});
  uint64_t header_end = 8 + static_cast<uint64_t>(valid[0]);
  for (size_t i = 0; i < header_end; ++i) {
    for (std::byte flip : {std::byte{0x01}, std::byte{0x20}, std::byte{0x80}}) {
      std::vector<std::byte> corrupt = valid;
      corrupt[i] ^= flip;
      try {
        SafetensorsFile file = SafetensorsFile::from_bytes(corrupt, "corrupt");
        // If it still parses, every tensor lies inside the buffer it was given.
        for (const TensorRecord& record : file.tensors()) CHECK(record.data_end <= corrupt.size());
      } catch (const CheckpointError& error) {
        CHECK_THAT(std::string(error.what()), Contains("corrupt"));
      }
    }
  }
}
