// Threefry-2x32 and the std.random recipes, against published known answers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "linnet/ops/threefry.hpp"

using linnet::ops::RandomKey;
using linnet::ops::threefry2x32;

namespace {

// JAX's threefry_2x32(key, count) applied to a flat array, the layout that
// jax.random used before `jax_threefry_partitionable` (an odd count is padded
// with a zero, the first half of the array is the first counter word, the
// second half the second, and the two output halves are concatenated). It
// exists here only to check the block function against JAX's published
// known values, which were recorded in that layout.
std::vector<uint32_t> jax_original_hash(RandomKey key, std::vector<uint32_t> counts) {
  const size_t size = counts.size();
  if (size % 2 != 0) counts.push_back(0);
  const size_t half = counts.size() / 2;
  std::vector<uint32_t> out(counts.size());
  for (size_t i = 0; i < half; ++i) {
    auto words = threefry2x32(key, {counts[i], counts[half + i]});
    out[i] = words[0];
    out[half + i] = words[1];
  }
  out.resize(size);
  return out;
}

std::vector<uint32_t> iota_words(uint32_t count) {
  std::vector<uint32_t> words(count);
  for (uint32_t i = 0; i < count; ++i) words[i] = i;
  return words;
}

float uniform_from_word(uint32_t word) { return static_cast<float>(word >> 9) * 0x1p-23f; }

float uniform_at(RandomKey key, size_t count, size_t index) {
  std::vector<float> values(count);
  linnet::ops::random_uniform_f32(key, values);
  return values[index];
}

}  // namespace

TEST_CASE("threefry2x32 matches Random123's known-answer vectors") {
  // Random123's own test vectors for threefry2x32_20, as JAX's testThreefry2x32
  // quotes them: Random123-Boost, libs/random/test/test_threefry.cpp lines 30-32
  // (commit 65e3d874b67aa7b3e02d5ad8306462f52d2079c0).
  CHECK(threefry2x32({0u, 0u}, {0u, 0u}) == std::array<uint32_t, 2>{0x6b200159u, 0x99ba4efeu});
  CHECK(threefry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}) ==
        std::array<uint32_t, 2>{0x1cb996fcu, 0xbb002be7u});
  CHECK(threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}) ==
        std::array<uint32_t, 2>{0xc4923a9cu, 0x483df7a0u});
}

TEST_CASE("threefry2x32 reproduces JAX's recorded values for split, fold_in and bits") {
  // jax tests/random_test.py, testPRNGValues: key = jax.random.key(0), whose
  // words are (0, 0). These were recorded in JAX's original layout, so split
  // is rebuilt here from the block function in that layout.
  const RandomKey zero{0u, 0u};
  std::vector<uint32_t> split_original = jax_original_hash(zero, iota_words(8));
  CHECK(split_original == std::vector<uint32_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u,
                                                4221794875u, 839183663u, 3740430601u});
  // fold_in hashes the single counter (0, data) in either layout.
  CHECK(linnet::ops::random_fold_in(zero, 4) == RandomKey{2285895361u, 433833334u});

  // testRngRandomBits: 32-bit words of shape (3,) from jax.random.PRNGKey(1701) = (0, 1701).
  CHECK(jax_original_hash({0u, 1701u}, iota_words(3)) == std::vector<uint32_t>{56197195u, 4200222568u, 961309823u});
}

TEST_CASE("uniform agrees with the values jax.random's documentation prints") {
  // https://docs.jax.dev/en/latest/jax.random.html (partitionable Threefry, the
  // current default): key = random.key(0); random.uniform(key) prints
  // 0.947667; key, subkey = random.split(key); random.uniform(subkey) prints
  // 0.00729382. A scalar draw uses counter (0, 0), the first of uniform<N>.
  const RandomKey key{0u, 0u};
  CHECK(std::fabs(uniform_at(key, 1, 0) - 0.947667f) < 5e-7f);
  std::vector<uint32_t> keys(4);
  linnet::ops::random_split(key, keys);
  const RandomKey subkey{keys[2], keys[3]};
  CHECK(std::fabs(uniform_at(subkey, 1, 0) - 0.00729382f) < 5e-9f);

  // The same page before the switch (the original layout) printed 0.41845703
  // and 0.10536897: a scalar was the first output word of counter (0, 0), and
  // split(key) took the second key from the hash of iota(4).
  CHECK(uniform_from_word(jax_original_hash(key, {0u})[0]) == 0.41845703125f);
  std::vector<uint32_t> old_keys = jax_original_hash(key, iota_words(4));
  const RandomKey old_subkey{old_keys[2], old_keys[3]};
  CHECK(std::fabs(uniform_from_word(jax_original_hash(old_subkey, {0u})[0]) - 0.10536897f) < 5e-9f);
}

TEST_CASE("split, fold_in and bits use the partitionable counters (0, i)") {
  const RandomKey key{0u, 72u};  // jax.random.key(72), as in JAX's split/fold_in symmetry test
  std::vector<uint32_t> keys(2 * 5);
  linnet::ops::random_split(key, keys);
  std::vector<uint32_t> words(5);
  linnet::ops::random_bits(key, words);
  for (uint32_t i = 0; i < 5; ++i) {
    // Under the partitionable layout fold_in(key, i) is split(key, n)[i].
    CHECK(linnet::ops::random_fold_in(key, static_cast<int32_t>(i)) == RandomKey{keys[2 * i], keys[2 * i + 1]});
    CHECK(words[i] == (keys[2 * i] ^ keys[2 * i + 1]));
    CHECK(threefry2x32(key, {0u, i}) == std::array<uint32_t, 2>{keys[2 * i], keys[2 * i + 1]});
  }
  // Word i does not depend on how many are drawn.
  std::vector<uint32_t> longer(1000);
  linnet::ops::random_bits(key, longer);
  CHECK(std::vector<uint32_t>(longer.begin(), longer.begin() + 5) == words);
  std::vector<uint32_t> many(70000);  // large enough to run in parallel
  linnet::ops::random_bits(key, many);
  CHECK(std::vector<uint32_t>(many.begin(), many.begin() + 1000) == longer);
  CHECK(many[69999] == (threefry2x32(key, {0u, 69999u})[0] ^ threefry2x32(key, {0u, 69999u})[1]));
}

TEST_CASE("fold_in takes the data word modulo 2^32, and key words keep their low 32 bits") {
  const RandomKey key{7u, 11u};
  CHECK(linnet::ops::random_fold_in(key, -1) == threefry2x32(key, {0u, 0xffffffffu}));
  CHECK(linnet::ops::random_fold_in(key, INT32_MIN) == threefry2x32(key, {0u, 0x80000000u}));
  CHECK(linnet::ops::random_key_from_words(-1, (int64_t{1} << 32) + 5) == RandomKey{0xffffffffu, 5u});
  CHECK(linnet::ops::random_key_from_words(4294967295, 0) == RandomKey{0xffffffffu, 0u});
}

TEST_CASE("threefry2x32 over many counters is the block function pair by pair") {
  const RandomKey key{0x13198a2eu, 0x03707344u};
  std::vector<uint32_t> counters = {0x243f6a88u, 0x85a308d3u, 0u, 0u, 5u, 9u};
  std::vector<uint32_t> out(6);
  threefry2x32(key, counters, out);
  CHECK(out[0] == 0xc4923a9cu);
  CHECK(out[1] == 0x483df7a0u);
  for (size_t i = 0; i < 3; ++i)
    CHECK(threefry2x32(key, {counters[2 * i], counters[2 * i + 1]}) == std::array<uint32_t, 2>{out[2 * i], out[2 * i + 1]});

  std::vector<uint32_t> odd(3);
  CHECK_THROWS_AS(threefry2x32(key, odd, odd), std::invalid_argument);
  std::vector<uint32_t> shorter(4);
  CHECK_THROWS_AS(threefry2x32(key, counters, shorter), std::invalid_argument);
  std::vector<uint32_t> odd_keys(3);
  CHECK_THROWS_AS(linnet::ops::random_split(key, odd_keys), std::invalid_argument);
}

TEST_CASE("uniform takes the top 23 bits of each word") {
  const RandomKey key{0u, 1701u};
  std::vector<uint32_t> words(4096);
  linnet::ops::random_bits(key, words);
  std::vector<float> values(4096);
  linnet::ops::random_uniform_f32(key, values);
  for (size_t i = 0; i < values.size(); ++i) {
    REQUIRE(values[i] >= 0.0f);
    REQUIRE(values[i] < 1.0f);
    REQUIRE(values[i] * 8388608.0f == static_cast<float>(words[i] >> 9));
  }
}

TEST_CASE("normal is Box-Muller over uniform<2N>, first half radius, second half angle") {
  const RandomKey key{3u, 4u};
  constexpr size_t kCount = 3;
  std::vector<float> u(2 * kCount);
  linnet::ops::random_uniform_f32(key, u);
  std::vector<float> z(kCount);
  linnet::ops::random_normal_f32(key, z);
  for (size_t n = 0; n < kCount; ++n) {
    const float radius = std::sqrt(-2.0f * std::log(1.0f - u[n]));
    const float angle = static_cast<float>(6.283185307179586) * u[kCount + n];
    CHECK(z[n] == radius * std::cos(angle));
  }

  // A large draw has the standard normal's mean and variance.
  std::vector<float> sample(200000);
  linnet::ops::random_normal_f32({0u, 42u}, sample);
  double sum = 0.0, sum_squares = 0.0;
  for (float value : sample) {
    REQUIRE(std::isfinite(value));
    sum += value;
    sum_squares += static_cast<double>(value) * value;
  }
  const double mean = sum / sample.size();
  const double variance = sum_squares / sample.size() - mean * mean;
  CHECK(std::fabs(mean) < 0.01);  // standard error 0.0022
  CHECK(std::fabs(variance - 1.0) < 0.02);
}

TEST_CASE("categorical is Gumbel-max over uniform<B * V>") {
  const RandomKey key{1u, 2u};
  SECTION("each row's answer is the first argmax of logits plus Gumbel noise") {
    constexpr int64_t kRows = 4, kCategories = 5;
    std::vector<float> logits = {0.1f, -0.3f, 2.0f, 0.0f, 1.0f, 0.5f,  0.5f, 0.5f, 0.5f, 0.5f,
                                 -1.f, 3.0f,  0.2f, 0.4f, 0.f,  -2.0f, 1.5f, 1.0f, 0.9f, 0.3f};
    std::vector<float> u(logits.size());
    linnet::ops::random_uniform_f32(key, u);
    std::vector<int32_t> drawn(kRows);
    linnet::ops::random_categorical(key, logits, kCategories, drawn);
    for (int64_t row = 0; row < kRows; ++row) {
      int32_t best = 0;
      float best_value = -INFINITY;
      for (int64_t v = 0; v < kCategories; ++v) {
        const size_t flat = static_cast<size_t>(row * kCategories + v);
        const float noisy = logits[flat] + -std::log(-std::log(1.0f - u[flat]));
        if (noisy > best_value) {
          best_value = noisy;
          best = static_cast<int32_t>(v);
        }
      }
      CHECK(drawn[static_cast<size_t>(row)] == best);
    }
  }
  SECTION("a dominant logit always wins; a row of -inf picks 0; a NaN row yields V") {
    std::vector<float> logits = {-1e30f, -1e30f, 0.0f, -1e30f,  // category 2
                                 -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, NAN, 0.0f, 0.0f};
    std::vector<int32_t> drawn(3);
    linnet::ops::random_categorical(key, logits, 4, drawn);
    CHECK(drawn == std::vector<int32_t>{2, 0, 4});
  }
  SECTION("draws follow the probabilities exp(logits)") {
    const std::vector<double> probabilities = {0.1, 0.2, 0.3, 0.4};
    constexpr size_t kRows = 40000;
    std::vector<float> logits;
    for (size_t row = 0; row < kRows; ++row)
      for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)) - 42.0f);  // unnormalised
    std::vector<int32_t> drawn(kRows);
    linnet::ops::random_categorical({0u, 0u}, logits, 4, drawn);
    std::vector<double> counts(4, 0.0);
    for (int32_t category : drawn) {
      REQUIRE(category >= 0);
      REQUIRE(category < 4);
      counts[static_cast<size_t>(category)] += 1.0;
    }
    for (size_t c = 0; c < 4; ++c) {
      const double expected = probabilities[c] * kRows;
      const double deviation = std::sqrt(kRows * probabilities[c] * (1.0 - probabilities[c]));
      CHECK(std::fabs(counts[c] - expected) < 5.0 * deviation);
    }
  }
  SECTION("bad shapes are refused") {
    std::vector<float> logits(6);
    std::vector<int32_t> drawn(2);
    CHECK_THROWS_AS(linnet::ops::random_categorical(key, logits, 0, drawn), std::invalid_argument);
    CHECK_THROWS_AS(linnet::ops::random_categorical(key, logits, 4, drawn), std::invalid_argument);
  }
}
