// sigmoid and silu (kernels_activations.cpp) sixteen lanes at a time, for
// CPUs with AVX-512F, giving the bits of the scalar loop they replace:
// `1 / (1 + exp(-x))` and `x / (1 + exp(-x))` in f32, with exp the C
// library's expf.
//
// The scalar loop spends nearly all its time in expf (a GPT-OSS prompt of
// 512 tokens calls sigmoid on 5.9 M elements per layer). glibc's expf, in
// the build glibc picks on every CPU with FMA (and so on every CPU that
// reaches this file), works in double precision: x / ln2 * 32 = k + r with
// k rounded to an integer, 2^(k/32) from a table of 32 entries and the
// exponent bits, 2^(r/32) by a cubic, the product rounded to f32 once.
// exp16 below takes the same steps, with the same constants and the same
// fused multiply-adds (read from Debian 12's libm: glibc 2.36), eight
// doubles at a time. Only the lanes where expf takes another path, |x| >= 88
// (overflow, underflow, infinities, NaN), are left to expf itself.
//
// Whether the C library in use agrees is not assumed: vector_exp_agrees_avx512()
// compares the two on 2^16 inputs spread over every exponent once per
// process, and callers keep the scalar loop when it does not (another libm,
// another glibc). On the development machine every one of the 2^32 inputs
// agreed (docs/performance.md, "A routed prompt call by op, and four
// kernels").
// g++ 12's AVX-512 intrinsics (the casts, the widening conversions) start
// from `_mm512_undefined_*()`, which -Wuninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

#include "activations_vector.hpp"
#include "linnet/tensor/bf16_round_avx512.hpp"

// Only code defined here runs with AVX-512 enabled: no standard-library
// templates or inline functions of shared headers are used (the linker could
// pick this file's copy of one for callers on any x86-64), hence the
// builtins below.
namespace linnet::ops::detail {

namespace {

// glibc's __exp2f_data as bit patterns: 2^(i/32) minus i << 47, so that
// adding k << 47 to entry k % 32 makes 2^(k/32); 32 / ln 2; the cubic's
// coefficients scaled for r in units of 1/32; the rounding shift 1.5 * 2^52.
alignas(64) constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr uint64_t kInvLn2Scaled = 0x40471547652b82fe;
constexpr uint64_t kCubic[3] = {0x3ebc6af84b912394, 0x3f2ebfce50fac4f3, 0x3f962e42ff0c52d6};
constexpr uint64_t kShift = 0x4338000000000000;

__m512d splat_bits(uint64_t bits) { return _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(bits))); }

__m512i table_part(int first) { return _mm512_load_si512(kTable + first); }

// expf's main path on eight doubles (each an f32 widened), before the final
// rounding to f32.
__m512d exp_main_path(__m512d x) {
  const __m512d inv_ln2 = splat_bits(kInvLn2Scaled);
  const __m512d shift = splat_bits(kShift);
  const __m512d shifted = _mm512_fmadd_pd(inv_ln2, x, shift);  // k + shift, k rounded to nearest
  const __m512i k = _mm512_castpd_si512(shifted);
  const __m512d k_double = _mm512_sub_pd(shifted, shift);
  const __m512d r = _mm512_fmsub_pd(inv_ln2, x, k_double);
  // Entry k % 32 of the table: two 16-entry lookups, picked by bit 4.
  const __m512i low = _mm512_permutex2var_epi64(table_part(0), k, table_part(8));
  const __m512i high = _mm512_permutex2var_epi64(table_part(16), k, table_part(24));
  const __mmask8 upper_half = _mm512_test_epi64_mask(k, _mm512_set1_epi64(16));
  const __m512i entry = _mm512_mask_blend_epi64(upper_half, low, high);
  const __m512d scale = _mm512_castsi512_pd(_mm512_add_epi64(entry, _mm512_slli_epi64(k, 47)));
  const __m512d z = _mm512_fmadd_pd(splat_bits(kCubic[0]), r, splat_bits(kCubic[1]));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, splat_bits(kCubic[2]), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_mul_pd(y, scale);
}

// expf of 16 lanes. `elsewhere` gets the lanes whose result expf computes
// another way (|x| >= 88, infinities, NaN); their values here are not expf's.
__m512 exp16(__m512 x, __mmask16& elsewhere) {
  const __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
  elsewhere = _mm512_cmpge_epu32_mask(top, _mm512_set1_epi32(0x42b));  // 0x42b: the top 12 bits of 88.0f
  const __m256 low = _mm512_castps512_ps256(x);
  const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
  const __m256 low_result = _mm512_cvtpd_ps(exp_main_path(_mm512_cvtps_pd(low)));
  const __m256 high_result = _mm512_cvtpd_ps(exp_main_path(_mm512_cvtps_pd(high)));
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(low_result)), _mm256_castps_pd(high_result), 1));
}

// The scalar loop's step, for the lanes exp16 leaves to expf.
float activation_scalar(Activation kind, float value) {
  const float denominator = 1.0f + __builtin_expf(-value);
  return (kind == Activation::Sigmoid ? 1.0f : value) / denominator;
}

// 16 results of the f32 inputs `x`; lanes outside `lanes` hold no value.
__m512 activation16(Activation kind, __m512 x, __mmask16 lanes) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 minus_x = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  __mmask16 elsewhere;
  const __m512 denominator = _mm512_add_ps(one, exp16(minus_x, elsewhere));
  const __m512 result = _mm512_div_ps(kind == Activation::Sigmoid ? one : x, denominator);
  elsewhere &= lanes;
  if (elsewhere == 0) return result;
  alignas(64) float values[16], results[16];
  _mm512_store_ps(values, x);
  _mm512_store_ps(results, result);
  for (int lane = 0; lane < 16; ++lane) {
    if ((elsewhere >> lane) & 1u) results[lane] = activation_scalar(kind, values[lane]);
  }
  return _mm512_load_ps(results);
}

__mmask16 first_lanes(int64_t count) { return static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u); }

}  // namespace

void activation_f32_avx512(Activation kind, const float* in, float* out, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 lanes = first_lanes(count - i);
    _mm512_mask_storeu_ps(out + i, lanes, activation16(kind, _mm512_maskz_loadu_ps(lanes, in + i), lanes));
  }
}

void activation_bf16_avx512(Activation kind, const uint16_t* in, uint16_t* out, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 lanes = first_lanes(count - i);
    const __m512i words = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(lanes, in + i));
    const __m512 x = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
    _mm256_mask_storeu_epi16(out + i, lanes, tensor::avx512::round_to_bf16_bits(activation16(kind, x, lanes)));
  }
}

bool vector_exp_agrees_avx512() {
  // 2^16 inputs: every 65536th f32 bit pattern (both signs, every exponent,
  // 256 patterns of the upper mantissa bits each), the lower 16 bits varied.
  constexpr uint32_t kCount = uint32_t{1} << 16;
  alignas(64) float in[16], out[16];
  for (uint32_t start = 0; start < kCount; start += 16) {
    for (uint32_t lane = 0; lane < 16; ++lane) {
      const uint32_t index = start + lane;
      in[lane] = __builtin_bit_cast(float, (index << 16) | ((index * 2654435761u) >> 16));
    }
    __mmask16 elsewhere;
    _mm512_store_ps(out, exp16(_mm512_load_ps(in), elsewhere));
    for (int lane = 0; lane < 16; ++lane) {
      if ((elsewhere >> lane) & 1u) continue;
      if (__builtin_bit_cast(uint32_t, out[lane]) != __builtin_bit_cast(uint32_t, __builtin_expf(in[lane]))) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace linnet::ops::detail
