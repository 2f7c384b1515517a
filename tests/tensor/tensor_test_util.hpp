// Helpers shared by the tensor tests: bit patterns, ulp distances, random data.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/tensor.hpp"

namespace tensor_test {

using namespace linnet::tensor;

inline float f32_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t bits_of(float value) { return std::bit_cast<uint32_t>(value); }

// Distance in units in the last place between two finite floats of the same sign.
inline int64_t ulp_distance(float a, float b) {
  auto ordered = [](float v) {
    const int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  return std::llabs(ordered(a) - ordered(b));
}

// A tensor of bf16/f16 from raw 16-bit patterns.
inline Tensor half_from_bits(const std::vector<uint16_t>& bits, DType dtype) {
  Tensor t = Tensor::empty(dtype, {static_cast<int64_t>(bits.size())});
  auto* out = static_cast<uint16_t*>(t.raw_mutable_data());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = bits[i];
  return t;
}

inline std::vector<uint16_t> half_bits(const Tensor& t) {
  const Tensor dense = t.contiguous();
  const auto* values = static_cast<const uint16_t*>(dense.raw_data());
  return std::vector<uint16_t>(values, values + dense.numel());
}

inline std::vector<float> random_floats(size_t count, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(generator);
  return values;
}

}  // namespace tensor_test
