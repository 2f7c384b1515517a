// bf16/f16 rounding: ties to even, NaN, infinities, subnormals, and narrowing
// from f64 and from integers rounded once. Expected bits come from
// gen_reference.py (exact rational rounding, cross-checked with NumPy).
#include <catch2/catch.hpp>
#include <cmath>

#include "linnet/tensor/half.hpp"
#include "reference_data.inc"
#include "tensor_test_util.hpp"

using namespace tensor_test;

TEST_CASE("f32 to bf16 and f16 rounds to nearest even", "[half]") {
  REQUIRE(reference::f32_bits_inputs.size() == reference::bf16_from_f32.size());
  for (size_t i = 0; i < reference::f32_bits_inputs.size(); ++i) {
    const float value = f32_from_bits(reference::f32_bits_inputs[i]);
    INFO("input bits 0x" << std::hex << reference::f32_bits_inputs[i]);
    CHECK(float_to_bf16_bits(value) == reference::bf16_from_f32[i]);
    CHECK(float_to_f16_bits(value) == reference::f16_from_f32[i]);
  }
}

TEST_CASE("hand-checked bf16 and f16 rounding cases", "[half]") {
  // 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: the even one (1.0) wins.
  CHECK(float_to_bf16_bits(1.0f + 0x1p-8f) == 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(float_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3F82);
  CHECK(float_to_bf16_bits(-0.0f) == 0x8000);
  CHECK(float_to_bf16_bits(INFINITY) == 0x7F80);
  CHECK(float_to_bf16_bits(-INFINITY) == 0xFF80);
  // f16: 65504 is the largest value; 65520 is the tie to the (odd) max, so it rounds to infinity.
  CHECK(float_to_f16_bits(65504.0f) == 0x7BFF);
  CHECK(float_to_f16_bits(65519.0f) == 0x7BFF);
  CHECK(float_to_f16_bits(65520.0f) == 0x7C00);
  // f16 subnormals: 2^-24 is the smallest; 2^-25 is a tie between 0 and it (0 is even).
  CHECK(float_to_f16_bits(0x1p-24f) == 0x0001);
  CHECK(float_to_f16_bits(0x1p-25f) == 0x0000);
  CHECK(float_to_f16_bits(3 * 0x1p-25f) == 0x0002);
  CHECK(f16_bits_to_float(0x0001) == 0x1p-24f);
  CHECK(bf16_bits_to_float(0x0001) == 0x1p-133f);  // bf16 keeps f32's subnormal range
}

TEST_CASE("NaN stays NaN through bf16 and f16", "[half]") {
  const float nan = std::nanf("");
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(nan))));
  CHECK(std::isnan(f16_bits_to_float(float_to_f16_bits(nan))));
  // A NaN whose payload lives only in the low 16 bits must not become infinity.
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f32_from_bits(0x7F800001u)))));
  CHECK(std::isnan(round_to_bf16(-nan)));
}

TEST_CASE("f64 narrowing rounds once", "[half]") {
  for (size_t i = 0; i < reference::f64_bits_inputs.size(); ++i) {
    const double value = std::bit_cast<double>(reference::f64_bits_inputs[i]);
    INFO("input " << value);
    CHECK(double_to_bf16_bits(value) == reference::bf16_from_f64[i]);
    CHECK(double_to_f16_bits(value) == reference::f16_from_f64[i]);
  }
  // The trap itself: through f32 first, 1 + 2^-8 + 2^-40 would become the tie 1 + 2^-8 and then 1.0.
  CHECK(double_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40) == 0x3F81);
  CHECK(float_to_bf16_bits(static_cast<float>(1.0 + 0x1p-8 + 0x1p-40)) == 0x3F80);
}
