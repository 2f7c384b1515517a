// Shared by the card tests: the cards' directories, random weights from a
// parameter manifest, entry calls that report failures with the rendered
// diagnostic, and comparisons of logits.
#pragma once

#include <cmath>
#include <functional>
#include <map>

#include "eval_test_util.hpp"

namespace eval_test {

using linnet::eval::BlockInstance;
using linnet::eval::MapParameterSource;
using linnet::eval::ParameterInfo;
using linnet::eval::ParameterKind;

inline std::string card(const std::string& name) { return std::string(LINNET_SOURCE_DIR) + "/nest/" + name; }

// The GPT-OSS card's MXFP4 expert tensors (the `u8` parameters), for
// `random_weights`' `special`: blocks are any bytes, scales near 127 keep
// the decoded weights near 1. Other parameters are left to the default.
inline Tensor random_mxfp4(const ParameterInfo& info, std::mt19937& rng) {
  if (info.dtype != DType::U8) return Tensor();
  const bool is_scale = info.path.find("scales") != std::string::npos;
  return is_scale ? random_integers(rng, info.shape, DType::U8, 120, 124)
                  : random_integers(rng, info.shape, DType::U8, 0, 255);
}

// Random weights for every parameter the manifest lists. Norm weights sit
// near 1, everything else is small, so activations stay in a sane range.
// `include_optional` decides whether optional parameters (biases) exist.
inline MapParameterSource random_weights(const std::vector<ParameterInfo>& manifest, bool include_optional, uint32_t seed,
                                  const std::function<Tensor(const ParameterInfo&, std::mt19937&)>& special = {}) {
  std::mt19937 rng(seed);
  MapParameterSource source;
  for (const ParameterInfo& info : manifest) {
    if (info.kind == ParameterKind::State) continue;
    if (info.optional && !include_optional) continue;
    if (special) {
      Tensor custom = special(info, rng);
      if (custom.defined()) {
        source.set(info.path, custom);
        continue;
      }
    }
    const bool is_norm = info.path.find("norm") != std::string::npos;
    source.set(info.path, is_norm ? random_tensor(rng, info.shape, info.dtype, 0.8, 1.2)
                                  : random_tensor(rng, info.shape, info.dtype, -0.2, 0.2));
  }
  return source;
}

inline double max_abs_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const auto x = values(a);
  const auto y = values(b);
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

inline bool all_finite(const Tensor& tensor) {
  for (double x : values(tensor)) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

inline Value entry(Interpreter& interpreter, BlockInstance& model, const std::string& name, std::vector<Value> inputs,
            GenericBindings generics = {}) {
  EntryInputs call;
  call.positional = std::move(inputs);
  call.generics = std::move(generics);
  try {
    return interpreter.call(model, name, call);
  } catch (const linnet::eval::EvalError& error) {
    FAIL("entry `" << name << "` failed:\n" << interpreter.render(error));
  }
  return Value();
}

// A card's Model with random weights.
inline std::shared_ptr<BlockInstance> random_model(Interpreter& interpreter, const GenericBindings& generics,
                                                   bool with_biases,
                                                   const std::function<Tensor(const ParameterInfo&, std::mt19937&)>& special = {}) {
  try {
    MapParameterSource weights = random_weights(interpreter.parameters("Model", generics), with_biases, 1234, special);
    auto model = interpreter.instantiate("Model", generics, weights);
    CHECK(weights.unused().empty());
    return model;
  } catch (const linnet::eval::EvalError& error) {
    FAIL(interpreter.render(error));
  }
  return nullptr;
}

}  // namespace eval_test
