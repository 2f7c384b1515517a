// Synthetic checkpoints: deterministic random weights for a card at any
// bound generics (`linnet synth-weights`), so that a card can be run, timed
// and measured at its real widths without downloading its checkpoint.
//
// The tensors are the ones `linnet inspect --parameters` lists: every
// required parameter and buffer of the instance, plus each optional one
// that the card's bindings.json names explicitly (bindings.json describes
// the published checkpoint, so a name there is a tensor that checkpoint
// holds: GPT-OSS's attention biases, not Mistral's absent ones). Values:
// - floating tensors named like a norm's weight (a path containing "norm",
//   rank 1): 1 + N(0, 0.02);
// - other rank-1 floating tensors (biases, sinks): N(0, 0.02);
// - floating matrices and higher: N(0, 1/sqrt(fan_in)), fan_in the last axis;
// - MXFP4 pairs (u8 blocks [..., G, 16] with u8 scales [..., G]): random
//   E2M1 codes, and scale exponents chosen so that a row of G * 32 values has
//   a standard deviation near 1/sqrt(G * 32).
// "N(0, s)" is a sum of four uniform draws (Irwin-Hall), scaled to that
// standard deviation: bounded at 3.5 s, which keeps activations finite.
//
// Each tensor's values depend only on the seed and the tensor's name (a
// counter-based generator), never on the other tensors: the first layers
// of a 2-layer and of a 4-layer checkpoint are the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "linnet/eval/parameters.hpp"
#include "linnet/eval/value.hpp"
#include "linnet/nest/bindings.hpp"

namespace linnet::nest {

// A problem that keeps a synthetic checkpoint from being planned or
// written; what() says which tensor or file.
class SynthError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

struct SynthTensor {
  enum class Fill { Normal, NearOne, Mxfp4Blocks, Mxfp4Scales };
  std::string name;  // the checkpoint's tensor name (bindings.json)
  tensor::DType dtype = tensor::DType::F32;
  tensor::Shape shape;
  Fill fill = Fill::Normal;
  double deviation = 0;      // Normal, NearOne: the standard deviation
  int scale_exponent = 0;    // Mxfp4Scales: the unbiased exponent of a group's scale

  uint64_t byte_size() const;  // SynthError past a 64-bit count
};

struct SynthPlan {
  std::vector<SynthTensor> tensors;  // in file order
  std::string config_json;           // config.json's text
  uint64_t byte_size() const;        // of the data region; SynthError past a 64-bit count
};

// The tensors for `manifest` (an instance's parameter list) named through
// `bindings`, and the config.json for `generics` (`card_name` is recorded
// in it). `dtype`, when given, is the stored dtype of every floating
// tensor; else each keeps its parameter's dtype. Throws SynthError for a
// parameter whose dtype it cannot fill (integers other than MXFP4 pairs).
SynthPlan plan_synth_weights(const std::vector<eval::ParameterInfo>& manifest, const Bindings& bindings,
                             const eval::GenericBindings& generics, std::optional<tensor::DType> dtype,
                             const std::string& card_name, uint64_t seed);

// Writes `directory`/model.safetensors (streamed: a few MB of memory
// whatever the size) and `directory`/config.json, creating the directory.
// Each file is written under a temporary name and renamed into place.
// Throws SynthError when a file cannot be written.
void write_synth_weights(const SynthPlan& plan, const std::string& directory, uint64_t seed);

}  // namespace linnet::nest
