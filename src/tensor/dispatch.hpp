// Internal: the kernels' element rules (public, in
// linnet/tensor/element_arithmetic.hpp) under the kernels' own namespace
// `detail`, and the switch on an element width for kernels that only move
// elements.
#pragma once

#include <cstdint>
#include <string>

#include "linnet/tensor/element_arithmetic.hpp"
#include "linnet/tensor/error.hpp"

namespace linnet::tensor::detail {

using namespace linnet::tensor::elements;

// Calls f.template operator()<U>() with U an unsigned integer of the given
// byte width: kernels that only move elements need no more than that.
template <class F>
decltype(auto) visit_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
  }
  throw TensorError(ErrorKind::UnsupportedDType, "unsupported element width " + std::to_string(bytes));
}

}  // namespace linnet::tensor::detail
