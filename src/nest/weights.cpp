// Finding a card's checkpoint, and reading its config.json.
#include "linnet/nest/weights.hpp"
#include "linnet/syntax/file_reading.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <simdjson.h>
#include <sstream>

namespace linnet::nest {

namespace fs = std::filesystem;

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string read_text(const fs::path& path) {
  // Never blocks on a FIFO; what cannot be read reads as empty, which the
  // callers report as not JSON.
  std::string text, problem;
  if (!syntax::read_whole_file(path.string(), text, problem)) return "";
  return text;
}

// A directory with a sharding index or a model.safetensors opens as a whole.
bool is_checkpoint_directory(const fs::path& directory) {
  std::error_code ec;
  return fs::is_regular_file(directory / "model.safetensors.index.json", ec) ||
         fs::is_regular_file(directory / "model.safetensors", ec);
}

WeightsLocation from_explicit_paths(const Card& card, const std::vector<std::string>& paths) {
  std::error_code ec;
  std::vector<std::string> files;
  std::vector<std::string> directories;
  for (const std::string& path : paths) {
    if (fs::is_directory(path, ec)) {
      directories.push_back(path);
    } else if (fs::is_regular_file(path, ec)) {
      files.push_back(path);
    } else {
      throw WeightsNotFound("--weights `" + path + "` does not exist");
    }
  }
  if (!directories.empty() && (directories.size() > 1 || !files.empty())) {
    throw WeightsNotFound("--weights takes one directory, or .safetensors files, not both");
  }
  WeightsLocation location;
  if (!files.empty()) {
    location.files = files;
    location.directory = fs::path(files.front()).parent_path().string();
    location.description = files.size() == 1 ? files.front() : std::to_string(files.size()) + " files in `" +
                                                                  location.directory + "`";
    if (location.directory.empty()) location.directory = ".";
    return location;
  }
  const fs::path directory = directories.front();
  location.directory = directory.string();
  location.description = directory.string();
  if (is_checkpoint_directory(directory)) return location;
  // A directory holding the card's shard files but no index.
  if (card.weights) {
    bool all_there = true;
    for (const std::string& file : card.weights->files) all_there = all_there && fs::is_regular_file(directory / file, ec);
    if (all_there) {
      for (const std::string& file : card.weights->files) location.files.push_back((directory / file).string());
      return location;
    }
  }
  throw WeightsNotFound("--weights `" + directory.string() +
                        "` holds neither model.safetensors nor model.safetensors.index.json" +
                        (card.weights ? " nor the files nest.toml lists" : ""));
}

// REVISION may be a commit (a snapshot directory) or a branch/tag name
// (refs/NAME holds the commit).
fs::path snapshot_directory(const fs::path& repository, const std::string& revision) {
  const fs::path direct = repository / "snapshots" / revision;
  std::error_code ec;
  if (fs::is_directory(direct, ec)) return direct;
  const fs::path reference = repository / "refs" / revision;
  if (fs::is_regular_file(reference, ec)) {
    std::string commit = read_text(reference);
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
    if (!commit.empty()) return repository / "snapshots" / commit;
  }
  return direct;
}

std::optional<double> number_field(const simdjson::dom::object& object, const char* key) {
  double value = 0;
  if (object[key].get(value) == simdjson::SUCCESS) return value;
  int64_t integer = 0;
  if (object[key].get(integer) == simdjson::SUCCESS) return static_cast<double>(integer);
  return std::nullopt;
}

std::optional<std::string> string_field(const simdjson::dom::object& object, const char* key) {
  std::string_view text;
  if (object[key].get(text) == simdjson::SUCCESS) return std::string(text);
  return std::nullopt;
}

}  // namespace

std::string huggingface_hub_directory() {
  if (std::string hub = environment("HF_HUB_CACHE"); !hub.empty()) return hub;
  if (std::string home = environment("HF_HOME"); !home.empty()) return (fs::path(home) / "hub").string();
  const std::string user_home = environment("HOME");
  return (fs::path(user_home.empty() ? "." : user_home) / ".cache" / "huggingface" / "hub").string();
}

WeightsLocation locate_weights(const Card& card, const std::vector<std::string>& explicit_paths) {
  if (!explicit_paths.empty()) return from_explicit_paths(card, explicit_paths);
  if (!card.weights) {
    throw WeightsNotFound("card `" + card.name + "` has no [weights] in nest.toml; pass --weights DIR or FILE...");
  }
  const CardWeights& weights = *card.weights;
  std::string repository_folder = "models--" + weights.repo;
  for (size_t slash = repository_folder.find('/'); slash != std::string::npos; slash = repository_folder.find('/')) {
    repository_folder.replace(slash, 1, "--");
  }
  const fs::path hub = huggingface_hub_directory();
  const fs::path repository = hub / repository_folder;
  const fs::path snapshot = snapshot_directory(repository, weights.revision);
  std::error_code ec;
  std::vector<std::string> missing;
  WeightsLocation location;
  location.directory = snapshot.string();
  location.description = snapshot.string();
  for (const std::string& file : weights.files) {
    const fs::path path = snapshot / file;
    if (fs::is_regular_file(path, ec)) {
      location.files.push_back(path.string());
    } else {
      missing.push_back(file);
    }
  }
  if (missing.empty()) return location;

  std::string message = "no weights for card `" + card.name + "`: looked for " + weights.repo + " at revision " +
                        weights.revision + " in `" + snapshot.string() + "`";
  message += missing.size() == weights.files.size() ? " (not there)" : " (missing " + missing.front() +
                                                                         (missing.size() > 1 ? " and others)" : ")");
  std::vector<std::string> other_snapshots;
  if (fs::is_directory(repository / "snapshots", ec)) {
    for (const auto& entry : fs::directory_iterator(repository / "snapshots", ec)) {
      other_snapshots.push_back(entry.path().filename().string());
    }
  }
  if (!other_snapshots.empty()) {
    message += "; the cache holds other revisions of it:";
    for (const std::string& name : other_snapshots) message += " " + name;
  }
  message += ". The hub cache is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. Download with "
             "`huggingface-cli download " + weights.repo + " --revision " + weights.revision +
             "`, or pass --weights DIR or FILE...";
  throw WeightsNotFound(message);
}

std::optional<ModelConfig> parse_model_config(std::string_view json, const std::string& path, std::string& why) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root)) {
    why = "`" + path + "` is not valid JSON (" + std::string(simdjson::error_message(error)) + ")";
    return std::nullopt;
  }
  simdjson::dom::object object;
  if (root.get(object)) {
    why = "`" + path + "` is not a JSON object";
    return std::nullopt;
  }
  ModelConfig config;
  config.path = path;
  config.model_type = string_field(object, "model_type").value_or("");
  config.dtype = string_field(object, "dtype");
  if (!config.dtype) config.dtype = string_field(object, "torch_dtype");
  config.rope_theta = number_field(object, "rope_theta");
  // transformers 5 moves the rope settings into `rope_parameters`; older
  // configs keep `rope_theta` at the top and scaling in `rope_scaling`.
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    simdjson::dom::object rope;
    if (object[key].get(rope) != simdjson::SUCCESS) continue;
    if (!config.rope_theta) config.rope_theta = number_field(rope, "rope_theta");
    if (!config.rope_type) config.rope_type = string_field(rope, "rope_type");
    if (!config.rope_type) config.rope_type = string_field(rope, "type");
    if (!config.rope_factor) config.rope_factor = number_field(rope, "factor");
  }
  for (const simdjson::dom::key_value_pair field : object) {
    int64_t value = 0;
    if (field.value.get(value) == simdjson::SUCCESS && value >= 0) config.sizes[std::string(field.key)] = value;
  }
  return config;
}

std::optional<ModelConfig> read_model_config(const std::string& path, std::string& why) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    why = "`" + path + "` does not exist";
    return std::nullopt;
  }
  return parse_model_config(read_text(path), path, why);
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& config_size_keys() {
  // Generic name -> the config keys that hold the same size, first found wins.
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kSizes = {
      {"Vocab", {"vocab_size"}},
      {"H", {"hidden_size"}},
      {"Heads", {"num_attention_heads"}},
      {"KvHeads", {"num_key_value_heads"}},
      {"HeadDim", {"head_dim"}},
      {"Inner", {"intermediate_size"}},
      {"Experts", {"num_local_experts", "num_experts"}},
      {"TopK", {"num_experts_per_tok"}},
      {"Window", {"sliding_window"}},
  };
  return kSizes;
}

ConfigComparison compare_config(const ModelConfig& config, const eval::GenericBindings& generics) {
  const auto& kSizes = config_size_keys();
  ConfigComparison comparison;
  auto bound_dim = [&](const std::string& name) -> std::optional<int64_t> {
    auto found = generics.find(name);
    if (found == generics.end() || found->second.kind != eval::GenericValue::Kind::Dim) return std::nullopt;
    return found->second.dim;
  };
  for (const auto& [generic, keys] : kSizes) {
    const std::optional<int64_t> bound = bound_dim(generic);
    if (!bound) continue;
    for (const std::string& key : keys) {
      auto found = config.sizes.find(key);
      if (found == config.sizes.end()) continue;
      if (found->second != *bound) {
        comparison.warnings.push_back("the checkpoint's config.json has " + key + " = " +
                                      std::to_string(found->second) + ", but " + generic + " is bound to " +
                                      std::to_string(*bound));
      }
      break;
    }
  }
  if (const std::optional<int64_t> layers = bound_dim("Layers")) {
    auto found = config.sizes.find("num_hidden_layers");
    if (found != config.sizes.end() && found->second < *layers) {
      comparison.warnings.push_back("the checkpoint's config.json has num_hidden_layers = " +
                                    std::to_string(found->second) + ", but Layers is bound to " +
                                    std::to_string(*layers));
    } else if (found != config.sizes.end() && found->second > *layers) {
      comparison.notes.push_back("running " + std::to_string(*layers) + " of the checkpoint's " +
                                 std::to_string(found->second) + " layers");
    }
  }
  if (const std::optional<int64_t> max_seq = bound_dim("MaxSeq")) {
    auto found = config.sizes.find("max_position_embeddings");
    if (found != config.sizes.end() && found->second < *max_seq) {
      comparison.warnings.push_back("MaxSeq is bound to " + std::to_string(*max_seq) +
                                    ", past the config's max_position_embeddings = " + std::to_string(found->second));
    }
  }
  return comparison;
}

}  // namespace linnet::nest
