// sigmoid and silu sixteen lanes at a time (activations_avx512.cpp), with
// the bits of the scalar loop in kernels_activations.cpp. Call only on CPUs
// with AVX-512F, and only when vector_exp_agrees_avx512() said yes.
#pragma once

#include <cstdint>

namespace linnet::ops::detail {

enum class Activation { Sigmoid, Silu };

// out[i] = the activation of in[i] for i < count (out may be in).
void activation_f32_avx512(Activation kind, const float* in, float* out, int64_t count);
// The same on bf16 bits: widened, computed in f32, rounded to bf16 once.
void activation_bf16_avx512(Activation kind, const uint16_t* in, uint16_t* out, int64_t count);

// Whether the vector exponential gives the C library's expf bits on 2^16
// inputs spread over every exponent (under a millisecond; asked once).
bool vector_exp_agrees_avx512();

}  // namespace linnet::ops::detail
