// Synthetic checkpoints (see synth_weights.hpp).
#include "linnet/nest/synth_weights.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "linnet/nest/summary.hpp"
#include "linnet/nest/weights.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/tensor/half.hpp"

namespace linnet::nest {

namespace {

namespace fs = std::filesystem;
using tensor::DType;

constexpr double kSmallDeviation = 0.02;  // biases, sinks, a norm weight's spread around 1
// The root mean square of the 16 E2M1 codes drawn uniformly:
// sqrt((0 + 0.25 + 1 + 2.25 + 4 + 9 + 16 + 36) / 8).
const double kE2m1Rms = std::sqrt(68.5 / 8.0);
constexpr int64_t kMxfp4BlockBytes = 16;  // 32 four-bit codes per scale byte
constexpr size_t kChunkElements = size_t{1} << 16;  // the generator restarts per chunk

// splitmix64: a counter-based generator, so that any chunk of any tensor
// can be made on its own.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t name_hash(const std::string& name) {  // FNV-1a
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001B3ull;
  return hash;
}

class ChunkRandom {
 public:
  ChunkRandom(uint64_t seed, const std::string& name, uint64_t chunk)
      : state_(mix(mix(seed) ^ name_hash(name)) ^ mix(chunk)) {}
  uint64_t next() { return mix(state_++); }
  // Zero mean, unit variance: four 16-bit uniforms summed (Irwin-Hall).
  double normal() {
    const uint64_t bits = next();
    const double sum = static_cast<double>(bits & 0xFFFF) + static_cast<double>((bits >> 16) & 0xFFFF) +
                       static_cast<double>((bits >> 32) & 0xFFFF) + static_cast<double>(bits >> 48);
    constexpr double kMean = 4 * 65535.0 / 2;
    static const double kDeviation = std::sqrt(4 * (65536.0 * 65536.0 - 1) / 12);
    return (sum - kMean) / kDeviation;
  }

 private:
  uint64_t state_;
};

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::U8: return "U8";
    default: return nullptr;
  }
}

std::string shape_json(const tensor::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

bool has_shape(const std::vector<eval::ParameterInfo>& manifest, const std::set<std::string>& written,
               const tensor::Shape& shape) {
  for (const eval::ParameterInfo& info : manifest) {
    if (info.dtype == DType::U8 && info.shape == shape && written.count(info.path)) return true;
  }
  return false;
}

bool looks_like_norm(const std::string& path) { return path.find("norm") != std::string::npos; }

// Appends one element of `dtype` made from `value` to `out`.
void put(std::vector<unsigned char>& out, DType dtype, double value) {
  unsigned char bytes[8];
  size_t size = 0;
  switch (dtype) {
    case DType::BF16: {
      const uint16_t bits = tensor::double_to_bf16_bits(value);
      std::memcpy(bytes, &bits, 2);
      size = 2;
      break;
    }
    case DType::F16: {
      const uint16_t bits = tensor::double_to_f16_bits(value);
      std::memcpy(bytes, &bits, 2);
      size = 2;
      break;
    }
    case DType::F32: {
      const float single = static_cast<float>(value);
      std::memcpy(bytes, &single, 4);
      size = 4;
      break;
    }
    case DType::F64: std::memcpy(bytes, &value, 8); size = 8; break;
    default: throw SynthError("internal: no floating format for " + std::string(tensor::dtype_name(dtype)));
  }
  out.insert(out.end(), bytes, bytes + size);
}

// The bytes of elements [first, first + count) of `spec`; `count` lies in one chunk.
void fill_chunk(const SynthTensor& spec, uint64_t seed, uint64_t chunk, size_t count, std::vector<unsigned char>& out) {
  ChunkRandom random(seed, spec.name, chunk);
  out.clear();
  switch (spec.fill) {
    case SynthTensor::Fill::Normal:
      for (size_t i = 0; i < count; ++i) put(out, spec.dtype, spec.deviation * random.normal());
      break;
    case SynthTensor::Fill::NearOne:
      for (size_t i = 0; i < count; ++i) put(out, spec.dtype, 1.0 + spec.deviation * random.normal());
      break;
    case SynthTensor::Fill::Mxfp4Blocks:
      // Any byte is two valid E2M1 codes.
      for (size_t i = 0; i < count; i += 8) {
        const uint64_t bits = random.next();
        for (size_t j = 0; j < 8 && i + j < count; ++j) out.push_back(static_cast<unsigned char>(bits >> (8 * j)));
      }
      break;
    case SynthTensor::Fill::Mxfp4Scales:
      // The exponent or one below it, so that groups differ.
      for (size_t i = 0; i < count; ++i) {
        out.push_back(static_cast<unsigned char>(127 + spec.scale_exponent - static_cast<int>(random.next() & 1)));
      }
      break;
  }
}

// Writes through a temporary file renamed into place on success.
class AtomicFile {
 public:
  explicit AtomicFile(fs::path path) : path_(std::move(path)), temporary_(path_.string() + ".partial") {
    file_ = std::fopen(temporary_.c_str(), "wb");
    if (file_ == nullptr) fail("cannot create");
  }
  ~AtomicFile() {
    if (file_ != nullptr) {
      std::fclose(file_);
      std::error_code ignored;
      fs::remove(temporary_, ignored);
    }
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size) {
    if (size > 0 && std::fwrite(data, 1, size, file_) != size) fail("cannot write");
  }
  void commit() {
    const int status = std::fclose(file_);
    file_ = nullptr;
    std::error_code ec;
    if (status != 0) {
      fs::remove(temporary_, ec);
      fail("cannot write");
    }
    fs::rename(temporary_, path_, ec);
    if (ec) {
      fs::remove(temporary_, ec);
      throw SynthError("cannot rename `" + temporary_ + "` to `" + path_.string() + "`: " + ec.message());
    }
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw SynthError(std::string(what) + " `" + temporary_ + "`: " + std::strerror(errno));
  }
  fs::path path_;
  std::string temporary_;
  std::FILE* file_ = nullptr;
};

std::string config_text(const eval::GenericBindings& generics, std::optional<DType> floating, bool mxfp4,
                        const std::string& card_name, uint64_t seed) {
  auto bound_dim = [&](const std::string& name) -> std::optional<int64_t> {
    auto found = generics.find(name);
    if (found == generics.end() || found->second.kind != eval::GenericValue::Kind::Dim) return std::nullopt;
    return found->second.dim;
  };
  std::vector<std::pair<std::string, std::string>> fields;
  if (floating) {
    const char* name = *floating == DType::BF16 ? "bfloat16"
                       : *floating == DType::F16 ? "float16"
                       : *floating == DType::F64 ? "float64"
                                                 : "float32";
    fields.emplace_back("dtype", std::string("\"") + name + "\"");
  }
  for (const auto& [generic, keys] : config_size_keys()) {
    if (const std::optional<int64_t> value = bound_dim(generic)) fields.emplace_back(keys.front(), std::to_string(*value));
  }
  if (const std::optional<int64_t> layers = bound_dim("Layers")) {
    fields.emplace_back("num_hidden_layers", std::to_string(*layers));
  }
  if (const std::optional<int64_t> max_seq = bound_dim("MaxSeq")) {
    fields.emplace_back("max_position_embeddings", std::to_string(*max_seq));
  }
  if (mxfp4) fields.emplace_back("quantization_config", "{\"quant_method\": \"mxfp4\"}");
  fields.emplace_back("linnet_synth_weights",
                      "{\"card\": \"" + syntax::json_escape(card_name) + "\", \"seed\": " + std::to_string(seed) + "}");
  std::sort(fields.begin(), fields.end());
  std::string text = "{\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    text += "  \"" + fields[i].first + "\": " + fields[i].second + (i + 1 < fields.size() ? ",\n" : "\n");
  }
  return text + "}\n";
}

}  // namespace

uint64_t SynthTensor::byte_size() const {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(tensor::shape_numel(shape)), tensor::dtype_size(dtype), &bytes)) {
    throw SynthError("the tensor `" + name + "` needs more bytes than a 64-bit count holds");
  }
  return bytes;
}

uint64_t SynthPlan::byte_size() const {
  // Checked: thousands of tensors of 2^60 bytes each would wrap the sum and
  // the safetensors header's offsets with it.
  uint64_t total = 0;
  for (const SynthTensor& spec : tensors) {
    if (__builtin_add_overflow(total, spec.byte_size(), &total)) {
      throw SynthError("the checkpoint's " + std::to_string(tensors.size()) +
                       " tensors need more bytes than a 64-bit count holds");
    }
  }
  return total;
}

SynthPlan plan_synth_weights(const std::vector<eval::ParameterInfo>& manifest, const Bindings& bindings,
                             const eval::GenericBindings& generics, std::optional<DType> dtype,
                             const std::string& card_name, uint64_t seed) {
  if (dtype && !tensor::is_float(*dtype)) {
    throw SynthError("--dtype must be a floating dtype, not " + std::string(tensor::dtype_name(*dtype)));
  }
  // The parameters written: required ones, and optional ones bindings.json names.
  std::set<std::string> written;
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind == eval::ParameterKind::State) continue;
    if (!info.optional || bindings.maps(info.path)) written.insert(info.path);
  }
  SynthPlan plan;
  std::optional<DType> floating = dtype;
  bool mxfp4 = false;
  std::set<std::string> names;
  for (const eval::ParameterInfo& info : manifest) {
    if (!written.count(info.path)) continue;
    SynthTensor spec;
    spec.name = bindings.tensor_for(info.path);
    spec.shape = info.shape;
    spec.dtype = info.dtype;
    if (!names.insert(spec.name).second) {
      throw SynthError("two parameters bind the tensor `" + spec.name + "`; a checkpoint holds it once");
    }
    const std::string what = "`" + info.path + "` (" + std::string(tensor::dtype_name(info.dtype)) +
                             tensor::shape_to_string(info.shape) + ")";
    if (tensor::is_float(info.dtype)) {
      if (dtype) spec.dtype = *dtype;
      if (!floating) floating = spec.dtype;
      if (info.shape.size() <= 1) {
        spec.fill = looks_like_norm(info.path) ? SynthTensor::Fill::NearOne : SynthTensor::Fill::Normal;
        spec.deviation = kSmallDeviation;
      } else {
        const int64_t fan_in = std::max<int64_t>(1, info.shape.back());
        spec.fill = SynthTensor::Fill::Normal;
        spec.deviation = 1.0 / std::sqrt(static_cast<double>(fan_in));
      }
    } else if (info.dtype == DType::U8 && !info.shape.empty()) {
      // MXFP4 blocks [..., G, 16] go with scales [..., G].
      tensor::Shape scales_shape = info.shape;
      scales_shape.pop_back();
      tensor::Shape blocks_shape = info.shape;
      blocks_shape.push_back(kMxfp4BlockBytes);
      if (info.shape.back() == kMxfp4BlockBytes && has_shape(manifest, written, scales_shape)) {
        spec.fill = SynthTensor::Fill::Mxfp4Blocks;
      } else if (has_shape(manifest, written, blocks_shape)) {
        spec.fill = SynthTensor::Fill::Mxfp4Scales;
        const double fan_in = static_cast<double>(std::max<int64_t>(1, info.shape.back()) * 2 * kMxfp4BlockBytes);
        spec.scale_exponent = static_cast<int>(std::lround(std::log2(1.0 / (kE2m1Rms * std::sqrt(fan_in)))));
      } else {
        throw SynthError("cannot make values for " + what +
                         ": a u8 tensor is filled only as MXFP4 blocks [..., G, 16] or their scales [..., G]");
      }
      mxfp4 = true;
    } else {
      throw SynthError("cannot make values for " + what +
                       ": synth-weights fills floating tensors and MXFP4 blocks and scales only");
    }
    if (safetensors_dtype(spec.dtype) == nullptr) {
      throw SynthError("cannot store " + what + " in safetensors as " + std::string(tensor::dtype_name(spec.dtype)));
    }
    plan.tensors.push_back(std::move(spec));
  }
  // Widest elements first, as the reference writer orders them, so that
  // every tensor starts aligned to its element size and loads without a copy.
  std::stable_sort(plan.tensors.begin(), plan.tensors.end(), [](const SynthTensor& a, const SynthTensor& b) {
    return tensor::dtype_size(a.dtype) > tensor::dtype_size(b.dtype);
  });
  plan.config_json = config_text(generics, floating, mxfp4, card_name, seed);
  return plan;
}

void write_synth_weights(const SynthPlan& plan, const std::string& directory, uint64_t seed) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory, ec)) {
    throw SynthError("cannot create the directory `" + directory + "`" + (ec ? ": " + ec.message() : ""));
  }
  // Refused before the first byte: a checkpoint larger than the free space
  // would otherwise be streamed until the disk is full (and a 2^40-byte one
  // for minutes).
  const uint64_t data_bytes = plan.byte_size();
  const fs::space_info space = fs::space(directory, ec);
  if (!ec && data_bytes > space.available) {
    throw SynthError("the checkpoint needs " + format_bytes(static_cast<double>(data_bytes)) + ", but `" + directory +
                     "` has " + format_bytes(static_cast<double>(space.available)) + " free");
  }
  std::string header = "{";
  uint64_t offset = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const SynthTensor& spec = plan.tensors[i];
    const uint64_t end = offset + spec.byte_size();
    header += (i ? ",\"" : "\"") + syntax::json_escape(spec.name) + "\":{\"dtype\":\"" +
              safetensors_dtype(spec.dtype) + "\",\"shape\":" + shape_json(spec.shape) + ",\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data region starts 8-byte aligned

  AtomicFile weights(fs::path(directory) / "model.safetensors");
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  weights.write(length, 8);
  weights.write(header.data(), header.size());
  std::vector<unsigned char> buffer;
  buffer.reserve(kChunkElements * 8);
  for (const SynthTensor& spec : plan.tensors) {
    const uint64_t count = static_cast<uint64_t>(tensor::shape_numel(spec.shape));
    for (uint64_t first = 0, chunk = 0; first < count; first += kChunkElements, ++chunk) {
      fill_chunk(spec, seed, chunk, static_cast<size_t>(std::min<uint64_t>(kChunkElements, count - first)), buffer);
      weights.write(buffer.data(), buffer.size());
    }
  }
  weights.commit();

  AtomicFile config(fs::path(directory) / "config.json");
  config.write(plan.config_json.data(), plan.config_json.size());
  config.commit();
}

}  // namespace linnet::nest
