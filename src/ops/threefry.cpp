// Threefry-2x32 and the std.random functions built on it (see threefry.hpp for
// the contract each one keeps).
#include "linnet/ops/threefry.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace linnet::ops {

namespace {

// Threefry's key-schedule parity constant for 32-bit words (Random123; the
// body writes it as 466688986).
constexpr uint32_t kKeyParity = 0x1BD11BDAu;

// The two rotation schedules of Threefry-2x32, used alternately for each
// group of four rounds.
constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};

// The counter pair (0, i): the body builds `i` as an i64 and masks the sum,
// so only its low 32 bits reach the hash.
std::array<uint32_t, 2> position_counter(size_t position) { return {0u, static_cast<uint32_t>(position)}; }

// The body's f32 literal 6.283185307179586, rounded to f32 as a literal
// meeting an f32 tensor is.
constexpr float kTwoPi = static_cast<float>(6.283185307179586);

}  // namespace

RandomKey random_key_from_words(int64_t word0, int64_t word1) {
  return {static_cast<uint32_t>(static_cast<uint64_t>(word0)), static_cast<uint32_t>(static_cast<uint64_t>(word1))};
}

std::array<uint32_t, 2> threefry2x32(RandomKey key, std::array<uint32_t, 2> counter) {
  const uint32_t schedule[3] = {key[0], key[1], key[0] ^ key[1] ^ kKeyParity};
  uint32_t x0 = counter[0] + schedule[0];
  uint32_t x1 = counter[1] + schedule[1];
  // Five groups of four rounds; after group g (1-based) the key words
  // schedule[g % 3] and schedule[(g + 1) % 3] are injected, plus g.
  for (uint32_t group = 1; group <= 5; ++group) {
    const int* rotations = kRotations[(group - 1) % 2];
    for (int round = 0; round < 4; ++round) {
      x0 += x1;
      x1 = std::rotl(x1, rotations[round]);
      x1 ^= x0;
    }
    x0 += schedule[group % 3];
    x1 += schedule[(group + 1) % 3] + group;
  }
  return {x0, x1};
}

void threefry2x32(RandomKey key, std::span<const uint32_t> counters, std::span<uint32_t> out) {
  if (counters.size() % 2 != 0 || counters.size() != out.size())
    throw std::invalid_argument("threefry2x32: counters hold " + std::to_string(counters.size()) +
                                " words and the output " + std::to_string(out.size()) +
                                "; both must be the same whole number of pairs");
  const size_t pairs = counters.size() / 2;
  for (size_t i = 0; i < pairs; ++i) {
    auto words = threefry2x32(key, {counters[2 * i], counters[2 * i + 1]});
    out[2 * i] = words[0];
    out[2 * i + 1] = words[1];
  }
}

void random_bits(RandomKey key, std::span<uint32_t> out) {
  const size_t count = out.size();
#pragma omp parallel for schedule(static) if (count >= 65536)
  for (size_t i = 0; i < count; ++i) {
    auto words = threefry2x32(key, position_counter(i));
    out[i] = words[0] ^ words[1];
  }
}

void random_split(RandomKey key, std::span<uint32_t> out_keys) {
  if (out_keys.size() % 2 != 0)
    throw std::invalid_argument("random_split: the output holds " + std::to_string(out_keys.size()) +
                                " words, not a whole number of two-word keys");
  const size_t count = out_keys.size() / 2;
  for (size_t i = 0; i < count; ++i) {
    auto words = threefry2x32(key, position_counter(i));
    out_keys[2 * i] = words[0];
    out_keys[2 * i + 1] = words[1];
  }
}

RandomKey random_fold_in(RandomKey key, int32_t data) {
  return threefry2x32(key, {0u, static_cast<uint32_t>(data)});
}

void random_uniform_f32(RandomKey key, std::span<float> out) {
  std::vector<uint32_t> words(out.size());
  random_bits(key, words);
  for (size_t i = 0; i < out.size(); ++i) {
    // The top 23 bits as an integer, times 2^-23: both steps exact in f32.
    out[i] = static_cast<float>(words[i] >> 9) * 0x1p-23f;
  }
}

void random_normal_f32(RandomKey key, std::span<float> out) {
  const size_t count = out.size();
  std::vector<float> uniform(2 * count);
  random_uniform_f32(key, uniform);
  for (size_t n = 0; n < count; ++n) {
    float radius = std::sqrt(-2.0f * std::log(1.0f - uniform[n]));
    float angle = kTwoPi * uniform[count + n];
    out[n] = radius * std::cos(angle);
  }
}

void random_categorical(RandomKey key, std::span<const float> logits, int64_t categories, std::span<int32_t> out) {
  if (categories <= 0)
    throw std::invalid_argument("random_categorical: the number of categories must be positive, got " +
                                std::to_string(categories));
  if (categories > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("random_categorical: " + std::to_string(categories) +
                                " categories do not fit the i32 result");
  const size_t width = static_cast<size_t>(categories);
  if (logits.size() != out.size() * width)
    throw std::invalid_argument("random_categorical: " + std::to_string(logits.size()) + " logits are not " +
                                std::to_string(out.size()) + " rows of " + std::to_string(width));
  std::vector<float> uniform(logits.size());
  random_uniform_f32(key, uniform);
  std::vector<float> noisy(width);
  for (size_t row = 0; row < out.size(); ++row) {
    for (size_t v = 0; v < width; ++v) {
      float gumbel = -std::log(-std::log(1.0f - uniform[row * width + v]));
      noisy[v] = logits[row * width + v] + gumbel;
    }
    float peak = noisy[0];
    for (size_t v = 1; v < width && !std::isnan(peak); ++v)
      if (std::isnan(noisy[v]) || noisy[v] > peak) peak = noisy[v];
    int32_t first = static_cast<int32_t>(width);  // what the body yields when nothing equals the peak
    for (size_t v = 0; v < width; ++v)
      if (noisy[v] == peak) {
        first = static_cast<int32_t>(v);
        break;
      }
    out[row] = first;
  }
}

}  // namespace linnet::ops
