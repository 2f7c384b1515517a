// Random entry inputs (see random_inputs.hpp).
#include "linnet/nest/random_inputs.hpp"

#include <algorithm>
#include <random>

namespace linnet::nest {

using tensor::DType;
using tensor::Tensor;

namespace {

// FNV-1a: mixes the parameter's name into the seed, so each input has its
// own stream.
uint64_t name_hash(const std::string& name) {
  uint64_t hash = 14695981039346656037ull;
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

// The engine's raw 64-bit outputs are specified by the standard; the
// distributions are not, so the values are derived from them by hand to be
// the same with every standard library.
double uniform_unit(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

int64_t uniform_below(std::mt19937_64& engine, int64_t bound) {
  return static_cast<int64_t>(engine() % static_cast<uint64_t>(bound));
}

}  // namespace

Tensor random_input(const InputSlot& slot, uint64_t seed, int64_t position_limit) {
  if (!slot.shape) {
    throw InputError("input `" + slot.name + "`: cannot make a random `" + slot.declared + "`: " +
                     slot.shape_problem);
  }
  const DType dtype = *slot.dtype;
  const tensor::Shape& shape = *slot.shape;
  int64_t count = 1;
  for (const int64_t extent : shape) count *= extent;

  std::mt19937_64 engine(seed ^ name_hash(slot.name));
  if (dtype == DType::Bool) {
    std::vector<bool> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = (engine() >> 63) != 0;
    return Tensor::from_vector(values, shape);
  }
  if (tensor::is_integer(dtype)) {
    const int64_t bound = shape.empty() ? std::max<int64_t>(position_limit, 1) : random_integer_bound;
    std::vector<int64_t> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = uniform_below(engine, bound);
    return Tensor::from_vector(values, shape, dtype);
  }
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = 2.0 * uniform_unit(engine) - 1.0;
  return Tensor::from_vector(values, shape, dtype);
}

}  // namespace linnet::nest
