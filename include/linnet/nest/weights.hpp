// Where a card's checkpoint is, and what its config.json says.
//
// Weights come from `--weights` (one directory, or .safetensors files) or
// else from the Hugging Face cache: `$HF_HUB_CACHE`, else `$HF_HOME/hub`,
// else `~/.cache/huggingface/hub`, in
// `models--ORG--NAME/snapshots/REVISION/` with the files nest.toml's
// [weights] lists.
//
// config.json is read in both spellings transformers has used: `torch_dtype`
// or `dtype`, and `rope_theta`/`rope_scaling` or transformers 5's
// `rope_parameters`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/value.hpp"
#include "linnet/nest/card.hpp"

namespace linnet::nest {

struct WeightsLocation {
  std::string directory;           // where the files are; config.json is looked for here
  std::vector<std::string> files;  // .safetensors files; empty: open `directory` as a checkpoint
  std::string description;         // for the summary: the directory or the file
};

// Thrown when no weights can be found; the message says where it looked.
class WeightsNotFound : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// The Hugging Face hub cache directory, by the environment (see above).
std::string huggingface_hub_directory();

// `--weights` paths when given (a single directory, or files), else the
// card's snapshot in the hub cache. Throws WeightsNotFound.
WeightsLocation locate_weights(const Card& card, const std::vector<std::string>& explicit_paths);

struct ModelConfig {
  std::string path;
  std::string model_type;             // "mistral"; empty when absent
  std::optional<std::string> dtype;   // "bfloat16", from `dtype` or `torch_dtype`
  std::optional<double> rope_theta;   // `rope_theta`, or `rope_parameters.rope_theta`
  std::optional<std::string> rope_type;  // `rope_scaling.rope_type` (or `.type`), `rope_parameters.rope_type`
  std::optional<double> rope_factor;     // the same objects' `factor`
  // Every top-level non-negative integer (hidden_size, num_hidden_layers, ...).
  std::map<std::string, int64_t> sizes;
};

// Reads a config.json; nothing, with `why`, when it is not a JSON object.
std::optional<ModelConfig> read_model_config(const std::string& path, std::string& why);
std::optional<ModelConfig> parse_model_config(std::string_view json, const std::string& path, std::string& why);

// Generic name -> the config.json keys that hold the same size (Vocab ->
// vocab_size, Experts -> num_local_experts or num_experts, ...); a reader
// takes the first key found, a writer the first key.
const std::vector<std::pair<std::string, std::vector<std::string>>>& config_size_keys();

// What the config says about the bound generics: a warning for each size
// that disagrees (Vocab vs vocab_size, H vs hidden_size, ...), and a note
// when fewer layers run than the checkpoint holds.
struct ConfigComparison {
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};
ConfigComparison compare_config(const ModelConfig& config, const eval::GenericBindings& generics);

// The naming convention between generics and config.json sizes: generic
// name -> the config keys holding its size, first found wins (Vocab ->
// vocab_size, H -> hidden_size, ...). Layers (num_hidden_layers) is apart.
const std::vector<std::pair<std::string, std::vector<std::string>>>& config_size_keys();

}  // namespace linnet::nest
