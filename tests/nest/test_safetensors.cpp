// Well-formed safetensors files: every dtype of the format, metadata, scalars
// and empty tensors, zero-copy access, and the golden checkpoints.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <simdjson.h>

#include "linnet/nest/safetensors.hpp"
#include "linnet/tensor/half.hpp"
#include "safetensors_builder.hpp"

using namespace linnet::nest;
using namespace linnet::nest::testing;
using linnet::tensor::DType;

namespace {

std::string golden(const std::string& relative) { return std::string(LINNET_SOURCE_DIR) + "/golden/" + relative; }

// The case's sizes: meta.json "dims" plus "CheckpointLayers" (how many
// layers the checkpoint holds).
std::map<std::string, int64_t> golden_dims(const std::string& case_name) {
  simdjson::dom::parser parser;
  simdjson::dom::element meta;
  REQUIRE_FALSE(parser.load(golden(case_name + "/meta.json")).get(meta));
  std::map<std::string, int64_t> dims;
  simdjson::dom::object object;
  REQUIRE_FALSE(meta["dims"].get_object().get(object));
  for (auto [key, value] : object) dims[std::string(key)] = value.get_int64().value();
  dims["CheckpointLayers"] = meta["checkpoint_layers"].get_int64().value();
  return dims;
}

std::vector<float> bf16_values(std::span<const std::byte> bytes) {
  std::vector<float> values(bytes.size() / 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = static_cast<uint16_t>(static_cast<unsigned>(bytes[2 * i]) | (static_cast<unsigned>(bytes[2 * i + 1]) << 8));
    values[i] = linnet::tensor::bf16_bits_to_float(bits);
  }
  return values;
}

}  // namespace

TEST_CASE("dtype table covers the safetensors format", "[safetensors]") {
  CHECK(safetensors_dtype_bits("BOOL") == 8u);
  CHECK(safetensors_dtype_bits("BF16") == 16u);
  CHECK(safetensors_dtype_bits("F4") == 4u);
  CHECK(safetensors_dtype_bits("F6_E3M2") == 6u);
  CHECK(safetensors_dtype_bits("C64") == 64u);
  CHECK_FALSE(safetensors_dtype_bits("F128").has_value());
  CHECK(linnet_dtype_of("U8") == DType::U8);
  CHECK(linnet_dtype_of("BF16") == DType::BF16);
  CHECK(linnet_dtype_of("BOOL") == DType::Bool);
  CHECK_FALSE(linnet_dtype_of("F8_E4M3").has_value());
  CHECK_FALSE(linnet_dtype_of("F8_E8M0").has_value());
}

TEST_CASE("a well-formed file lists every tensor with dtype, shape and bytes", "[safetensors]") {
  std::vector<TensorSpec> specs = {
      {"bool", "BOOL", {3}, counting_bytes(3, 1)},        {"u8", "U8", {2, 2}, counting_bytes(4, 2)},
      {"i8", "I8", {1}, counting_bytes(1, 3)},            {"i16", "I16", {2}, counting_bytes(4, 4)},
      {"u16", "U16", {2}, counting_bytes(4, 5)},          {"i32", "I32", {2}, counting_bytes(8, 6)},
      {"u32", "U32", {1}, counting_bytes(4, 7)},          {"i64", "I64", {1}, counting_bytes(8, 8)},
      {"u64", "U64", {1}, counting_bytes(8, 9)},          {"f16", "F16", {3}, counting_bytes(6, 10)},
      {"bf16", "BF16", {2, 3}, counting_bytes(12, 11)},   {"f32", "F32", {2}, counting_bytes(8, 12)},
      {"f64", "F64", {1}, counting_bytes(8, 13)},         {"fp8", "F8_E4M3", {4}, counting_bytes(4, 14)},
      {"fp8b", "F8_E5M2", {2}, counting_bytes(2, 15)},    {"scale", "F8_E8M0", {2}, counting_bytes(2, 16)},
      {"fp4", "F4", {2, 3}, counting_bytes(3, 17)},       {"fp6", "F6_E2M3", {4}, counting_bytes(3, 18)},
      {"complex", "C64", {1}, counting_bytes(8, 19)},     {"scalar", "F32", {}, counting_bytes(4, 20)},
      {"empty", "F32", {0, 5}, {}},
  };
  TempDir dir;
  std::string path = dir.write("all.safetensors", well_formed(specs, R"({"format":"pt","note":"ünïcode"})"));
  SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.path() == path);
  CHECK(file.tensors().size() == specs.size());
  CHECK(file.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"note", "ünïcode"}});
  for (const TensorSpec& spec : specs) {
    INFO(spec.name);
    const TensorRecord* record = file.find(spec.name);
    REQUIRE(record != nullptr);
    CHECK(record->name == spec.name);
    CHECK(record->format_dtype == spec.dtype);
    CHECK(record->dtype == linnet_dtype_of(spec.dtype));
    CHECK(record->shape == spec.shape);
    CHECK(record->file == path);
    CHECK(record->data_end - record->data_begin == spec.data.size());
    CHECK(std::vector<std::byte>(record->bytes.begin(), record->bytes.end()) == spec.data);
  }
  CHECK(file.find("scalar")->element_count() == 1);
  CHECK(file.find("empty")->element_count() == 0);
  CHECK(file.find("missing") == nullptr);
  // Tensors come in data order.
  for (size_t i = 1; i < file.tensors().size(); ++i)
    CHECK(file.tensors()[i - 1].data_end == file.tensors()[i].data_begin);
}

TEST_CASE("tensor bytes point into the mapping and outlive the file object", "[safetensors]") {
  TempDir dir;
  std::string path = dir.write("one.safetensors", well_formed({{"w", "U8", {5}, counting_bytes(5, 40)}}));
  TensorRecord kept;
  const std::byte* mapped_address = nullptr;
  {
    SafetensorsFile file = SafetensorsFile::open(path);
    kept = *file.find("w");
    mapped_address = file.find("w")->bytes.data();
  }
  // The copy of the record shares the mapping, so its bytes are still valid.
  CHECK(kept.bytes.data() == mapped_address);
  CHECK(kept.keep_alive != nullptr);
  CHECK(std::vector<std::byte>(kept.bytes.begin(), kept.bytes.end()) == counting_bytes(5, 40));
}

TEST_CASE("an empty header is a valid file with no tensors", "[safetensors]") {
  SafetensorsFile file = SafetensorsFile::from_bytes(safetensors_bytes("{}      ", {}), "empty");
  CHECK(file.tensors().empty());
  CHECK(file.metadata().empty());
  CHECK(file.header_length() == 8);
  CHECK(file.file_size() == 16);
}

TEST_CASE("header order does not matter, only the ranges", "[safetensors]") {
  std::string header = R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]},"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})";
  SafetensorsFile file = SafetensorsFile::from_bytes(safetensors_bytes(header, counting_bytes(5)), "order");
  REQUIRE(file.tensors().size() == 2);
  CHECK(file.tensors()[0].name == "a");
  CHECK(file.tensors()[1].name == "b");
  CHECK(static_cast<int>(file.find("b")->bytes[0]) == 3);
}

namespace {

// Expected tensor shapes of a Llama-family checkpoint (Mistral, Qwen3), from
// the case's meta.json sizes.
std::map<std::string, std::vector<int64_t>> llama_family_shapes(const std::map<std::string, int64_t>& dims, bool qk_norm) {
  int64_t vocab = dims.at("V"), hidden = dims.at("H"), heads = dims.at("Heads"), kv_heads = dims.at("KvHeads");
  int64_t head_dim = dims.count("HeadDim") ? dims.at("HeadDim") : hidden / heads;
  int64_t inner = dims.at("Inner");
  std::map<std::string, std::vector<int64_t>> shapes = {
      {"model.embed_tokens.weight", {vocab, hidden}}, {"lm_head.weight", {vocab, hidden}}, {"model.norm.weight", {hidden}}};
  for (int64_t layer = 0; layer < dims.at("CheckpointLayers"); ++layer) {
    std::string prefix = "model.layers." + std::to_string(layer) + ".";
    shapes[prefix + "input_layernorm.weight"] = {hidden};
    shapes[prefix + "post_attention_layernorm.weight"] = {hidden};
    shapes[prefix + "self_attn.q_proj.weight"] = {heads * head_dim, hidden};
    shapes[prefix + "self_attn.k_proj.weight"] = {kv_heads * head_dim, hidden};
    shapes[prefix + "self_attn.v_proj.weight"] = {kv_heads * head_dim, hidden};
    shapes[prefix + "self_attn.o_proj.weight"] = {hidden, heads * head_dim};
    shapes[prefix + "mlp.gate_proj.weight"] = {inner, hidden};
    shapes[prefix + "mlp.up_proj.weight"] = {inner, hidden};
    shapes[prefix + "mlp.down_proj.weight"] = {hidden, inner};
    if (qk_norm) {
      shapes[prefix + "self_attn.q_norm.weight"] = {head_dim};
      shapes[prefix + "self_attn.k_norm.weight"] = {head_dim};
    }
  }
  return shapes;
}

// Every tensor of the file is expected, with that shape, and nothing else.
void check_exact_shapes(const SafetensorsFile& file, const std::map<std::string, std::vector<int64_t>>& expected) {
  CHECK(file.tensors().size() == expected.size());
  for (const auto& [name, shape] : expected) {
    INFO(name);
    const TensorRecord* record = file.find(name);
    REQUIRE(record != nullptr);
    CHECK(record->shape == shape);
    CHECK(record->bytes.size() == record->element_count() * linnet::tensor::dtype_size(*record->dtype));
  }
}

}  // namespace

TEST_CASE("golden Llama-family checkpoints match their meta.json sizes", "[safetensors][golden]") {
  for (const char* name : {"mistral-a", "mistral-trunc", "qwen3-a"}) {
    INFO(name);
    std::string case_name = name;
    SafetensorsFile file = SafetensorsFile::open(golden(case_name + "/model.safetensors"));
    CHECK(file.metadata().at("format") == "pt");
    for (const TensorRecord& record : file.tensors()) {
      INFO(record.name);
      CHECK(record.format_dtype == "BF16");
      CHECK(record.dtype == DType::BF16);
    }
    check_exact_shapes(file, llama_family_shapes(golden_dims(case_name), case_name == "qwen3-a"));
    // Norm weights are 1 + 0.1 * randn (meta.json): all near 1, not all equal.
    std::vector<float> norm = bf16_values(file.find("model.norm.weight")->bytes);
    float low = *std::min_element(norm.begin(), norm.end()), high = *std::max_element(norm.begin(), norm.end());
    CHECK(low > 0.4f);
    CHECK(high < 1.6f);
    CHECK(high - low > 0.05f);
  }
}

TEST_CASE("golden gptoss-a checkpoint has MXFP4 experts as u8 blocks and scales", "[safetensors][golden]") {
  SafetensorsFile file = SafetensorsFile::open(golden("gptoss-a/model.safetensors"));
  std::map<std::string, int64_t> dims = golden_dims("gptoss-a");
  int64_t vocab = dims.at("V"), hidden = dims.at("H"), heads = dims.at("Heads"), kv_heads = dims.at("KvHeads");
  int64_t head_dim = dims.at("HeadDim"), inner = dims.at("Inner"), experts = dims.at("Experts");
  // MXFP4: 32 values per group, two 4-bit codes per byte, one u8 scale per group.
  std::map<std::string, std::vector<int64_t>> expected = {
      {"model.embed_tokens.weight", {vocab, hidden}}, {"lm_head.weight", {vocab, hidden}}, {"model.norm.weight", {hidden}}};
  for (int64_t layer = 0; layer < dims.at("CheckpointLayers"); ++layer) {
    std::string prefix = "model.layers." + std::to_string(layer) + ".";
    expected[prefix + "input_layernorm.weight"] = {hidden};
    expected[prefix + "post_attention_layernorm.weight"] = {hidden};
    expected[prefix + "self_attn.q_proj.weight"] = {heads * head_dim, hidden};
    expected[prefix + "self_attn.q_proj.bias"] = {heads * head_dim};
    expected[prefix + "self_attn.k_proj.weight"] = {kv_heads * head_dim, hidden};
    expected[prefix + "self_attn.k_proj.bias"] = {kv_heads * head_dim};
    expected[prefix + "self_attn.v_proj.weight"] = {kv_heads * head_dim, hidden};
    expected[prefix + "self_attn.v_proj.bias"] = {kv_heads * head_dim};
    expected[prefix + "self_attn.o_proj.weight"] = {hidden, heads * head_dim};
    expected[prefix + "self_attn.o_proj.bias"] = {hidden};
    expected[prefix + "self_attn.sinks"] = {heads};
    expected[prefix + "mlp.router.weight"] = {experts, hidden};
    expected[prefix + "mlp.router.bias"] = {experts};
    expected[prefix + "mlp.experts.gate_up_proj_blocks"] = {experts, 2 * inner, hidden / 32, 16};
    expected[prefix + "mlp.experts.gate_up_proj_scales"] = {experts, 2 * inner, hidden / 32};
    expected[prefix + "mlp.experts.gate_up_proj_bias"] = {experts, 2 * inner};
    expected[prefix + "mlp.experts.down_proj_blocks"] = {experts, hidden, inner / 32, 16};
    expected[prefix + "mlp.experts.down_proj_scales"] = {experts, hidden, inner / 32};
    expected[prefix + "mlp.experts.down_proj_bias"] = {experts, hidden};
  }
  check_exact_shapes(file, expected);
  for (const TensorRecord& record : file.tensors()) {
    INFO(record.name);
    bool mxfp4 = record.name.ends_with("_blocks") || record.name.ends_with("_scales");
    CHECK(record.format_dtype == (mxfp4 ? "U8" : "BF16"));
    CHECK(record.dtype == (mxfp4 ? DType::U8 : DType::BF16));
    if (record.name.ends_with("_scales")) {
      // Scales are biased exponents (2^(scale - 127)) of weights of modest size.
      for (std::byte scale : record.bytes) {
        CHECK(static_cast<int>(scale) > 100);
        CHECK(static_cast<int>(scale) < 140);
      }
    }
  }
}

TEST_CASE("the small fuzzing seed is a valid file covering every kind of entry", "[safetensors]") {
  SafetensorsFile file = SafetensorsFile::open(std::string(LINNET_SOURCE_DIR) + "/tests/nest/seeds/small.safetensors");
  CHECK(file.tensors().size() == 7);
  CHECK(file.find("fp8")->dtype == std::nullopt);
  CHECK(file.find("fp4")->bytes.size() == 2);
  CHECK(file.find("scalar")->shape.empty());
  CHECK(file.find("empty")->element_count() == 0);
}
