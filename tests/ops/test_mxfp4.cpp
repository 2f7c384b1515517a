// MXFP4 dequantization: the value rules, the layout, transformers' golden
// output, and the dtype variants.
#include <catch2/catch.hpp>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "linnet/ops/mxfp4.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/npz.hpp"

using linnet::ops::Mxfp4Experts;
using linnet::tensor::DType;

namespace {

const double kE2M1Magnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

// The value of (code, scale byte) worked out independently in f64, where
// 2^(s - 127) and the product are exact, then rounded to f32 by hand
// (past f32's range is infinity; below it nothing occurs, the smallest
// nonzero value being 2^-128). Scale 255 is the exception: PyTorch forms the
// power itself in f32, where 2^128 is already infinite, so even 0.5 * 2^128
// is infinite.
float expected_value(int code, int scale) {
  if (scale == 255 && (code & 7) != 0) return (code & 8) ? -INFINITY : INFINITY;
  const double magnitude = std::ldexp(kE2M1Magnitudes[code & 7], scale - 127);
  const double value = (code & 8) ? -magnitude : magnitude;
  if (std::fabs(value) > static_cast<double>(FLT_MAX)) return value > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(value);
}

uint32_t bits_of(float value) { return std::bit_cast<uint32_t>(value); }

Mxfp4Experts view(const std::vector<uint8_t>& blocks, const std::vector<uint8_t>& scales, int64_t experts,
                  int64_t rows, int64_t groups) {
  return Mxfp4Experts{blocks, scales, experts, rows, groups};
}

}  // namespace

TEST_CASE("the scale byte is an exact power of two, as PyTorch's f32 pow gives it") {
  CHECK(linnet::ops::mxfp4_scale_f32(127) == 1.0f);
  CHECK(linnet::ops::mxfp4_scale_f32(128) == 2.0f);
  CHECK(linnet::ops::mxfp4_scale_f32(90) == std::ldexp(1.0f, -37));
  CHECK(linnet::ops::mxfp4_scale_f32(1) == std::ldexp(1.0f, -126));
  CHECK(linnet::ops::mxfp4_scale_f32(254) == std::ldexp(1.0f, 127));
  // 2^-127 is an f32 subnormal; 2^128 overflows to infinity.
  CHECK(bits_of(linnet::ops::mxfp4_scale_f32(0)) == 0x00400000u);
  CHECK(linnet::ops::mxfp4_scale_f32(255) == INFINITY);
}

TEST_CASE("every (code, scale) value is the exact product, infinite past f32's range") {
  for (int scale = 0; scale < 256; ++scale)
    for (int code = 0; code < 16; ++code) {
      const float value = linnet::ops::mxfp4_value_f32(static_cast<uint8_t>(code), static_cast<uint8_t>(scale));
      if (scale == 255 && (code & 7) == 0) {
        // 0 * inf: the canonical quiet NaN.
        REQUIRE(bits_of(value) == 0x7FC00000u);
        continue;
      }
      INFO("code " << code << " scale " << scale);
      REQUIRE(bits_of(value) == bits_of(expected_value(code, scale)));
    }
  // The edges, spelled out.
  CHECK(bits_of(linnet::ops::mxfp4_value_f32(8, 127)) == 0x80000000u);  // code 8 is -0.0
  CHECK(linnet::ops::mxfp4_value_f32(1, 0) == std::ldexp(1.0f, -128));    // a nonzero subnormal
  CHECK(linnet::ops::mxfp4_value_f32(3, 254) == std::ldexp(1.5f, 127));   // the largest finite value
  CHECK(linnet::ops::mxfp4_value_f32(4, 254) == INFINITY);
  CHECK(linnet::ops::mxfp4_value_f32(5, 253) == std::ldexp(3.0f, 126));
  CHECK(linnet::ops::mxfp4_value_f32(6, 253) == INFINITY);
  CHECK(linnet::ops::mxfp4_value_f32(9, 255) == -INFINITY);
  CHECK(linnet::ops::mxfp4_value_f32(0x17, 127) == 6.0f);  // only the low four bits are the code
}

TEST_CASE("element j of a block is byte j / 2, low nibble first") {
  // One expert, one row, two groups. Group 0: byte j holds code j in its low
  // nibble and code 15 - j in its high one. Group 1: every byte 0x71.
  std::vector<uint8_t> blocks(32);
  for (int j = 0; j < 16; ++j) blocks[static_cast<size_t>(j)] = static_cast<uint8_t>((15 - j) << 4 | j);
  for (int j = 0; j < 16; ++j) blocks[static_cast<size_t>(16 + j)] = 0x71;  // low 0.5, high 6
  std::vector<uint8_t> scales = {127, 129};
  std::vector<float> out(64);
  linnet::ops::dequantize_mxfp4_f32(view(blocks, scales, 1, 1, 2), out);
  for (int j = 0; j < 16; ++j) {
    CHECK(bits_of(out[static_cast<size_t>(2 * j)]) == bits_of(expected_value(j, 127)));
    CHECK(bits_of(out[static_cast<size_t>(2 * j + 1)]) == bits_of(expected_value(15 - j, 127)));
    CHECK(out[static_cast<size_t>(32 + 2 * j)] == 2.0f);  // 0.5 * 4
    CHECK(out[static_cast<size_t>(32 + 2 * j + 1)] == 24.0f);  // 6 * 4
  }
  std::vector<float> row(64);
  linnet::ops::dequantize_mxfp4_row_f32(view(blocks, scales, 1, 1, 2), 0, 0, row);
  CHECK(row == out);
}

TEST_CASE("dequantize_mxfp4 reproduces transformers' convert_moe_packed_tensors bit for bit") {
  // golden/mxfp4-dequant: blocks [4, 16, 6, 16] covering all 256 byte values,
  // scales [4, 16, 6] in 90..164; outputs in transformers' transposed layout
  // [E, G * 32, Out] (see its meta.json).
  auto arrays = linnet::tensor::read_npz(LINNET_SOURCE_DIR "/golden/mxfp4-dequant/expected.npz");
  const auto& blocks = arrays.at("blocks");
  const auto& scales = arrays.at("scales");
  const auto& golden_bf16 = arrays.at("bf16_bits");
  const auto& golden_f32 = arrays.at("f32");
  REQUIRE(blocks.dtype == DType::U8);
  REQUIRE(blocks.shape == std::vector<int64_t>{4, 16, 6, 16});
  REQUIRE(scales.dtype == DType::U8);
  REQUIRE(scales.shape == std::vector<int64_t>{4, 16, 6});
  REQUIRE(golden_bf16.dtype == DType::U16);
  REQUIRE(golden_bf16.shape == std::vector<int64_t>{4, 192, 16});
  REQUIRE(golden_f32.dtype == DType::F32);
  REQUIRE(golden_f32.shape == std::vector<int64_t>{4, 192, 16});

  constexpr int64_t kExperts = 4, kRows = 16, kGroups = 6, kLength = kGroups * 32;
  const Mxfp4Experts weights{
      {reinterpret_cast<const uint8_t*>(blocks.data.data()), blocks.data.size()},
      {reinterpret_cast<const uint8_t*>(scales.data.data()), scales.data.size()},
      kExperts, kRows, kGroups};
  std::vector<float> ours_f32(kExperts * kRows * kLength);
  linnet::ops::dequantize_mxfp4_f32(weights, ours_f32);
  std::vector<uint16_t> ours_bf16(ours_f32.size());
  linnet::ops::dequantize_mxfp4_bf16(weights, ours_bf16);

  int64_t mismatches_f32 = 0, mismatches_bf16 = 0;
  for (int64_t e = 0; e < kExperts; ++e)
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t k = 0; k < kLength; ++k) {
        const size_t ours = static_cast<size_t>((e * kRows + r) * kLength + k);
        const size_t theirs = static_cast<size_t>((e * kLength + k) * kRows + r);  // transposed
        uint32_t golden_bits = 0;
        std::memcpy(&golden_bits, golden_f32.data.data() + theirs * 4, 4);
        uint16_t golden_half = 0;
        std::memcpy(&golden_half, golden_bf16.data.data() + theirs * 2, 2);
        if (bits_of(ours_f32[ours]) != golden_bits) ++mismatches_f32;
        if (ours_bf16[ours] != golden_half) ++mismatches_bf16;
      }
  CHECK(mismatches_f32 == 0);
  CHECK(mismatches_bf16 == 0);
}

TEST_CASE("every dtype rounds the same f32 product") {
  // All 256 byte values under all 256 scales: expert 0, 256 rows, one group.
  std::vector<uint8_t> blocks(256 * 16);
  std::vector<uint8_t> scales(256);
  for (int scale = 0; scale < 256; ++scale) {
    scales[static_cast<size_t>(scale)] = static_cast<uint8_t>(scale);
    for (int j = 0; j < 16; ++j)
      blocks[static_cast<size_t>(scale * 16 + j)] = static_cast<uint8_t>(j | ((15 - j) << 4));
  }
  const Mxfp4Experts weights = view(blocks, scales, 1, 256, 1);
  std::vector<float> f32(256 * 32);
  linnet::ops::dequantize_mxfp4_f32(weights, f32);
  std::vector<uint16_t> bf16(f32.size());
  linnet::ops::dequantize_mxfp4_bf16(weights, bf16);
  std::vector<std::byte> f16_bytes(f32.size() * 2);
  linnet::ops::dequantize_mxfp4(weights, DType::F16, f16_bytes);
  std::vector<std::byte> f64_bytes(f32.size() * 8);
  linnet::ops::dequantize_mxfp4(weights, DType::F64, f64_bytes);

  for (size_t i = 0; i < f32.size(); ++i) {
    const int scale = static_cast<int>(i / 32);
    const int code = (i % 2 == 0) ? static_cast<int>((i % 32) / 2) : 15 - static_cast<int>((i % 32) / 2);
    uint16_t f16 = 0;
    std::memcpy(&f16, f16_bytes.data() + i * 2, 2);
    double f64 = 0;
    std::memcpy(&f64, f64_bytes.data() + i * 8, 8);
    INFO("code " << code << " scale " << scale);
    if (std::isnan(f32[i])) {
      REQUIRE(bf16[i] == 0x7FC0);
      REQUIRE(f16 == 0x7E00);
      REQUIRE(std::isnan(f64));
      continue;
    }
    // bf16 holds every f32 value exactly (same exponent range, at most two significant bits).
    REQUIRE(linnet::tensor::bf16_bits_to_float(bf16[i]) == f32[i]);
    REQUIRE(bits_of(linnet::tensor::bf16_bits_to_float(bf16[i])) == bits_of(f32[i]));
    REQUIRE(f16 == linnet::tensor::float_to_f16_bits(f32[i]));
    // f64 multiplies in f64: exact, finite where f32 overflowed (except the infinite scale 255).
    const double exact = std::ldexp(kE2M1Magnitudes[code & 7], scale - 127) * ((code & 8) ? -1.0 : 1.0);
    if (scale == 255)
      REQUIRE(f64 == static_cast<double>(f32[i]));
    else
      REQUIRE(f64 == exact);
  }
  // A few f16 landmarks: 6 * 2^16 overflows f16, 0.5 * 2^-25 = 2^-26 is under half
  // of f16's smallest subnormal and rounds to zero.
  uint16_t overflow = 0, underflow = 0;
  std::memcpy(&overflow, f16_bytes.data() + ((127 + 16) * 32 + 14) * 2, 2);  // code 7 at element 14
  std::memcpy(&underflow, f16_bytes.data() + ((127 - 25) * 32 + 2) * 2, 2);   // code 1 at element 2
  CHECK(overflow == 0x7C00);
  CHECK(underflow == 0x0000);
}

TEST_CASE("dequantize_mxfp4 refuses inconsistent inputs") {
  std::vector<uint8_t> blocks(2 * 3 * 16), scales(2 * 3);
  std::vector<float> out(2 * 3 * 32);
  CHECK_NOTHROW(linnet::ops::dequantize_mxfp4_f32(view(blocks, scales, 2, 3, 1), out));
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_f32(view(blocks, scales, 2, 3, 2), out), std::invalid_argument);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_f32(view(blocks, scales, 0, 3, 1), out), std::invalid_argument);
  std::vector<uint8_t> short_scales(5);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_f32(view(blocks, short_scales, 2, 3, 1), out),
                  std::invalid_argument);
  std::vector<float> short_out(10);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_f32(view(blocks, scales, 2, 3, 1), short_out),
                  std::invalid_argument);
  std::vector<std::byte> bytes(2 * 3 * 32 * 4);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4(view(blocks, scales, 2, 3, 1), DType::I32, bytes),
                  std::invalid_argument);
  std::vector<float> row(32);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_row_f32(view(blocks, scales, 2, 3, 1), 2, 0, row),
                  std::out_of_range);
  CHECK_THROWS_AS(linnet::ops::dequantize_mxfp4_row_f32(view(blocks, scales, 2, 3, 1), 0, -1, row),
                  std::out_of_range);
}
