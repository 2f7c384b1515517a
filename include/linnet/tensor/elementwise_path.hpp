// Which loop the elementwise kernels (binary, unary, cast) run their element
// rules in. The span loops apply the same rule to a whole run of elements at
// once, compiled for an instruction set the CPU reports, so the compiler can
// vectorise them; the per-element loop is the plain reference they must
// match bit for bit. The default is the widest span loop this CPU supports.
#pragma once

#include <optional>
#include <string>

namespace linnet::tensor {

enum class ElementwisePath {
  PerElement,  // one call of the element rule per element through the strided loop (the reference)
  Baseline,    // span loops for any x86-64 (SSE2)
  Avx2,        // span loops compiled for AVX2
  Avx512,      // span loops compiled for AVX-512F/BW/VL
};

// The path the kernels use now: the best this CPU supports, unless overridden.
ElementwisePath active_elementwise_path();
ElementwisePath best_elementwise_path();
bool elementwise_path_supported(ElementwisePath path);
// Forces a path (tests compare paths bit for bit); nullopt restores the
// default. Throws TensorError for a path this CPU lacks.
void override_elementwise_path(std::optional<ElementwisePath> path);
std::string elementwise_path_name(ElementwisePath path);

}  // namespace linnet::tensor
