// Native kernels for `std.random`: the Threefry-2x32 block function and the
// functions the standard library derives from it, on raw buffers.
//
// What they must agree with is the standard library's own bodies
// (upstream's stdlib/random.linnet and docs/random.md):
//
// - A key is `Tensor[2; i64]` holding two 32-bit words. Every step of the
//   body masks with 0xFFFFFFFF, so only the low 32 bits of each key word
//   matter; random_key_from_words() takes exactly those.
// - threefry2x32 is Random123's Threefry-2x32 with 20 rounds, JAX's layout.
// - Counter `i` of `bits<N>` and `split<N>` is the pair (0, i): JAX's
//   partitionable Threefry layout (`jax_threefry_partitionable`, the default in
//   current JAX). The body writes `i` as an i64 and masks the sum, so the
//   low word is i mod 2^32 and the high word is always 0.
// - bits:    word i = out0 ^ out1 of counter (0, i)       == jax.random.bits
// - split:   key i  = (out0, out1) of counter (0, i)      == jax.random.split
// - fold_in: (out0, out1) of counter (0, data mod 2^32)   == jax.random.fold_in
// - uniform: (word >> 9) * 2^-23 in f32, in [0, 1)        == jax.random.uniform (f32)
// - normal and categorical use the same words with the library's own
//   arithmetic (Box-Muller; Gumbel-max), so they agree across Linnet
//   backends, not with jax.random.normal / categorical.
//
// Results are f32; `uniform<N, T>` and `normal<N, T>` cast the f32 result to
// T at the end, which the caller does (e.g. tensor::round_to_bf16).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace linnet::ops {

// Two 32-bit words: (k0, k1) as `key[0]`, `key[1]` of a `Tensor[2; i64]`.
using RandomKey = std::array<uint32_t, 2>;

// The low 32 bits of each i64 key word (the body masks every sum it forms).
RandomKey random_key_from_words(int64_t word0, int64_t word1);

// Threefry-2x32, 20 rounds: one counter pair in, one output pair out.
std::array<uint32_t, 2> threefry2x32(RandomKey key, std::array<uint32_t, 2> counter);

// `std.random::threefry2x32<N>(key, counter[N, 2])`: `counters` and `out`
// hold N interleaved pairs (2 * N words). Throws std::invalid_argument when
// the sizes are odd or differ.
void threefry2x32(RandomKey key, std::span<const uint32_t> counters, std::span<uint32_t> out);

// `bits<N>(key)`: out.size() words.
void random_bits(RandomKey key, std::span<uint32_t> out);

// `split<N>(key)`: out_keys holds N interleaved keys (2 * N words).
void random_split(RandomKey key, std::span<uint32_t> out_keys);

// `fold_in(key, data)`.
RandomKey random_fold_in(RandomKey key, int32_t data);

// `uniform<N, f32>(key)`: out.size() numbers in [0, 1), each a multiple of 2^-23.
void random_uniform_f32(RandomKey key, std::span<float> out);

// `normal<N, f32>(key)` by Box-Muller from `u = uniform<2 * N, f32>(key)`:
// out[n] = sqrt(-2 * log(1 - u[n])) * cos(f32(2 pi) * u[N + n]), every step
// an f32 operation (std::log, std::sqrt, std::cos on float), as the body's
// f32 elementwise ops are. Note that out[n] depends on N.
void random_normal_f32(RandomKey key, std::span<float> out);

// `categorical<B, V, T>(key, logits[B, V])` by Gumbel-max: with
// u = uniform<B * V, f32>(key) and noisy[b, v] = logits[b, v] +
// -log(-log(1 - u[b * V + v])) in f32, out[b] is the first v where noisy[b, v]
// equals the row's maximum. The maximum propagates NaN (as torch.amax does),
// and a NaN maximum equals nothing, so such a row yields V, as the body's
// `min[v] select(noisy == peak, v, V)` does. `logits` holds B * V values
// already cast to f32 (the body's first step); categories == 0 is refused.
void random_categorical(RandomKey key, std::span<const float> logits, int64_t categories, std::span<int32_t> out);

}  // namespace linnet::ops
