// Writes a Mistral-shaped bf16 checkpoint for scripts/bench_shards, with no
// Python: real Mistral 7B widths (H=4096, Inner=14336, Heads=32,
// KvHeads=8, Vocab=32768, head dim 128), LAYERS decoder layers, the tensor
// names Hugging Face uses. Weights are random bf16 numbers of magnitude
// 2^-8 to 2^-6 from a fixed seed (norm weights are 1), written a tensor at
// a time.
//
// usage: bench_shards_checkpoint DIRECTORY LAYERS
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int64_t kH = 4096, kInner = 14336, kHeads = 32, kKvHeads = 8, kVocab = 32768;
constexpr int64_t kHeadDim = kH / kHeads;

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  int64_t count() const {
    int64_t total = 1;
    for (int64_t extent : shape) total *= extent;
    return total;
  }
};

std::vector<Entry> listing(int layers) {
  std::vector<Entry> entries{{"model.embed_tokens.weight", {kVocab, kH}}};
  for (int i = 0; i < layers; ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    entries.push_back({prefix + "input_layernorm.weight", {kH}});
    entries.push_back({prefix + "self_attn.q_proj.weight", {kHeads * kHeadDim, kH}});
    entries.push_back({prefix + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kH}});
    entries.push_back({prefix + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kH}});
    entries.push_back({prefix + "self_attn.o_proj.weight", {kH, kHeads * kHeadDim}});
    entries.push_back({prefix + "post_attention_layernorm.weight", {kH}});
    entries.push_back({prefix + "mlp.gate_proj.weight", {kInner, kH}});
    entries.push_back({prefix + "mlp.up_proj.weight", {kInner, kH}});
    entries.push_back({prefix + "mlp.down_proj.weight", {kH, kInner}});
  }
  entries.push_back({"model.norm.weight", {kH}});
  entries.push_back({"lm_head.weight", {kVocab, kH}});
  return entries;
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// sign | exponent 119..121 (2^-8 .. 2^-6) | 7 random mantissa bits.
uint16_t random_weight(uint16_t bits) {
  const uint16_t sign = bits & 0x8000;
  const uint16_t mantissa = bits & 0x007F;
  const uint16_t exponent = static_cast<uint16_t>((119 + (bits >> 7) % 3) << 7);
  return static_cast<uint16_t>(sign | exponent | mantissa);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_shards_checkpoint DIRECTORY LAYERS\n");
    return 2;
  }
  const std::filesystem::path directory = argv[1];
  const int layers = std::atoi(argv[2]);
  if (layers < 1) {
    std::fprintf(stderr, "LAYERS must be at least 1\n");
    return 2;
  }
  std::filesystem::create_directories(directory);
  const std::vector<Entry> entries = listing(layers);

  std::string header = "{";
  int64_t offset = 0;
  for (const Entry& entry : entries) {
    const int64_t bytes = 2 * entry.count();
    if (header.size() > 1) header += ",";
    header += "\"" + entry.name + "\":{\"dtype\":\"BF16\",\"shape\":[";
    for (size_t i = 0; i < entry.shape.size(); ++i) header += (i ? "," : "") + std::to_string(entry.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';  // as the reference writer pads

  std::ofstream out(directory / "model.safetensors", std::ios::binary);
  const uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xFF));
  out << header;
  uint64_t state = 0;
  std::vector<uint16_t> values;
  for (const Entry& entry : entries) {
    values.resize(static_cast<size_t>(entry.count()));
    const bool norm = entry.name.ends_with("norm.weight");
    for (size_t i = 0; i < values.size(); i += 4) {
      const uint64_t bits = splitmix(state);
      for (size_t k = 0; k < 4 && i + k < values.size(); ++k) {
        values[i + k] = norm ? uint16_t{0x3F80} : random_weight(static_cast<uint16_t>(bits >> (16 * k)));
      }
    }
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 2));
  }
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", (directory / "model.safetensors").c_str());
    return 1;
  }
  return 0;
}
