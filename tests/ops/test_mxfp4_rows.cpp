// The AVX-512 MXFP4 row kernels against each other: the two-rows-per-zmm
// kernel a decode step uses (mxfp4_rows_avx512 with few inputs) must give
// the bits of the eight-lane kernel (the documented order, which
// test_mxfp4_experts.cpp holds to its reference) on every row count, input
// count and group count, including the table's subnormal, infinite and NaN
// values (scale bytes 0, 254, 255) and inputs that are infinite, NaN,
// subnormal or huge (a NaN result only has to be a NaN: see below).
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../src/ops/mxfp4_grouped.hpp"
#include "../src/ops/mxfp4_rows.hpp"
#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"

namespace detail = linnet::ops::detail;

TEST_CASE("the paired MXFP4 row kernel keeps the eight-lane kernel's bits") {
  namespace gemm = linnet::tensor::gemm;
  if (!gemm::isa_supported(gemm::Isa::Avx512) || !__builtin_cpu_supports("avx512vbmi")) {
    WARN("no AVX-512 with VBMI on this CPU: the paired kernel is not used here");
    return;
  }
  const int64_t groups = GENERATE(1, 3, 90);
  const int64_t rows = GENERATE(1, 2, 3, 4, 5, 7, 16);
  const int input_count = GENERATE(1, 2, 3, 4, 5);
  const bool special = GENERATE(false, true);
  CAPTURE(groups, rows, input_count, special);
  std::mt19937 random(static_cast<uint32_t>(groups * 1000 + rows * 10 + input_count + (special ? 7 : 0)));
  std::uniform_int_distribution<int> any_byte(0, 255), normal_scale(110, 140), pick(0, 31);
  std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f);
  const int64_t length = groups * 32;
  // rows_after: the kernel may prefetch into them, so they exist.
  const int64_t rows_after = 3;
  std::vector<uint8_t> blocks(static_cast<size_t>((rows + rows_after) * groups * 16)),
      scales(static_cast<size_t>((rows + rows_after) * groups));
  for (auto& byte : blocks) byte = static_cast<uint8_t>(any_byte(random));
  for (auto& scale : scales) {
    const int roll = pick(random);
    scale = static_cast<uint8_t>(!special || roll > 3 ? normal_scale(random) : roll == 0 ? 0 : roll == 1 ? 254 : 255);
  }
  std::vector<std::vector<float>> inputs(static_cast<size_t>(input_count), std::vector<float>(length));
  for (auto& input : inputs)
    for (auto& value : input) {
      const int roll = pick(random);
      value = signed_unit(random);
      if (special && roll == 0) value = std::numeric_limits<float>::infinity();
      if (special && roll == 1) value = std::numeric_limits<float>::quiet_NaN();
      if (special && roll == 2) value = std::numeric_limits<float>::denorm_min() * 3;
      if (special && roll == 3) value = 3e38f;
    }
  std::vector<const float*> input_pointers;
  for (auto& input : inputs) input_pointers.push_back(input.data());
  std::vector<std::vector<float>> paired(inputs.size(), std::vector<float>(rows)), eight(paired);
  std::vector<float*> paired_out, eight_out;
  for (size_t s = 0; s < inputs.size(); ++s) {
    paired_out.push_back(paired[s].data());
    eight_out.push_back(eight[s].data());
  }
  const detail::Mxfp4Rows base{blocks.data(), scales.data(), groups, rows, detail::mxfp4_value_table_f32(),
                               input_pointers.data(), nullptr, input_count, nullptr, rows_after};
  detail::Mxfp4Rows problem = base;
  problem.outputs = paired_out.data();
  detail::mxfp4_rows_avx512(problem);
  problem.outputs = eight_out.data();
  detail::mxfp4_rows_avx512_eight_lanes(problem);
  for (size_t s = 0; s < inputs.size(); ++s)
    for (int64_t r = 0; r < rows; ++r) {
      CAPTURE(s, r, paired[s][r], eight[s][r]);
      // A NaN's sign and payload are not kept: x86 returns the first
      // operand's NaN, and the compiler may swap the operands of a
      // multiplication or addition (for either kernel). Every other result
      // must have the same bits.
      if (std::isnan(eight[s][r])) {
        REQUIRE(std::isnan(paired[s][r]));
      } else {
        REQUIRE(std::bit_cast<uint32_t>(paired[s][r]) == std::bit_cast<uint32_t>(eight[s][r]));
      }
    }
}

// The AVX-512 pieces of the grouped products and of mxfp4_combine_experts
// that round to bf16 16 lanes at a time: the same bits as
// tensor::float_to_bf16_bits on every kind of value (ties both ways, values
// that round up into the next binade or to infinity, subnormals, infinities,
// NaNs of either sign with payloads), and the combine's sum the scalar one's.
TEST_CASE("grouped stores and combine on AVX-512 round as float_to_bf16_bits") {
  if (!linnet::tensor::gemm::isa_supported(linnet::tensor::gemm::Isa::Avx512)) {
    SUCCEED("no AVX-512 on this CPU: these kernels are never chosen");
    return;
  }
  std::mt19937 random(23);
  const std::vector<uint32_t> special = {0x00000000u, 0x80000000u, 0x3F808000u, 0x3F818000u, 0x3F80FFFFu,
                                         0x7F7FFFFFu, 0xFF7F8000u, 0x00000001u, 0x807FFFFFu, 0x7F800000u,
                                         0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFFBFFFFFu,
                                         0x3F7FFFFFu, 0x477FFFFFu};
  auto any_value = [&](size_t i) {
    if (i % 5 == 0) return std::bit_cast<float>(special[(i / 5) % special.size()]);
    return std::bit_cast<float>(static_cast<uint32_t>(random()));
  };

  // A tile of 125 outputs (7 vectors of 16 and 13 more) for 37 tokens,
  // c[t * 128 + o]; the tokens' rows land in a shuffled order.
  const int64_t outputs = 125, rows = 37, c_stride = linnet::ops::detail::kGroupedTileOutputs;
  std::vector<float> c(static_cast<size_t>(rows * c_stride));
  for (size_t i = 0; i < c.size(); ++i) c[i] = any_value(i);
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) order[static_cast<size_t>(r)] = r;
  std::shuffle(order.begin(), order.end(), random);
  std::vector<int64_t> offsets;
  for (int64_t r : order) offsets.push_back(r * outputs);
  std::vector<float> y_f32(static_cast<size_t>(rows * outputs), 1.0f);
  std::vector<uint16_t> y_bf16(y_f32.size(), 0x1234);
  using linnet::ops::detail::ProductsOut;
  linnet::ops::detail::grouped_store_rows_avx512(c.data(), outputs, offsets.data(), rows,
                                                 ProductsOut{y_f32.data(), nullptr});
  linnet::ops::detail::grouped_store_rows_avx512(c.data(), outputs, offsets.data(), rows,
                                                 ProductsOut{nullptr, y_bf16.data()});
  size_t wrong_f32 = 0, wrong_bf16 = 0;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t o = 0; o < outputs; ++o) {
      const float value = c[static_cast<size_t>(row * c_stride + o)];
      const size_t at = static_cast<size_t>(offsets[static_cast<size_t>(row)] + o);
      wrong_f32 += std::bit_cast<uint32_t>(y_f32[at]) != std::bit_cast<uint32_t>(value);
      wrong_bf16 += y_bf16[at] != linnet::tensor::float_to_bf16_bits(value);
    }
  CHECK(wrong_f32 == 0);
  CHECK(wrong_bf16 == 0);

  // The combine: 21 rows of 3 slots, 37 outputs (two vectors and 5 more).
  const int64_t combine_rows = 21, slots = 3, out_rows = 37;
  std::vector<float> products(static_cast<size_t>(combine_rows * slots * out_rows)),
      mixing(static_cast<size_t>(combine_rows * slots));
  for (size_t i = 0; i < products.size(); ++i) products[i] = any_value(i);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (float& m : mixing) m = unit(random);
  std::vector<float> out(static_cast<size_t>(combine_rows * out_rows));
  std::vector<uint16_t> out_bf16(out.size());
  linnet::ops::detail::mxfp4_combine_rows_avx512(products.data(), mixing.data(), 0, combine_rows, slots, out_rows,
                                                 out.data(), nullptr);
  linnet::ops::detail::mxfp4_combine_rows_avx512(products.data(), mixing.data(), 0, combine_rows, slots, out_rows,
                                                 nullptr, out_bf16.data());
  size_t wrong_sum = 0, wrong_rounded = 0;
  for (int64_t r = 0; r < combine_rows; ++r)
    for (int64_t o = 0; o < out_rows; ++o) {
      float total = 0.0f;
      for (int64_t k = 0; k < slots; ++k) {
        const size_t flat = static_cast<size_t>(r * slots + k);
        total += mixing[flat] * products[flat * static_cast<size_t>(out_rows) + static_cast<size_t>(o)];
      }
      const size_t at = static_cast<size_t>(r * out_rows + o);
      // A NaN's sign and payload are the compiler's choice in either loop.
      if (std::isnan(total)) {
        wrong_sum += !std::isnan(out[at]);
        wrong_rounded += !std::isnan(linnet::tensor::bf16_bits_to_float(out_bf16[at]));
        continue;
      }
      wrong_sum += std::bit_cast<uint32_t>(out[at]) != std::bit_cast<uint32_t>(total);
      wrong_rounded += out_bf16[at] != linnet::tensor::float_to_bf16_bits(total);
    }
  CHECK(wrong_sum == 0);
  CHECK(wrong_rounded == 0);
}

// A decode step's bf16 input through vdpbf16ps (AVX512-BF16): the bits of
// the eight-lane kernel on every row and group count, with scale bytes
// across the kernel's range and, in some tiles, outside it (those tiles
// take the f32 paired kernel, an eight-row tile as two of its own), and inputs of every magnitude the range
// check lets through, zeros included.
TEST_CASE("the vdpbf16ps MXFP4 row kernel keeps the eight-lane kernel's bits") {
  namespace gemm = linnet::tensor::gemm;
  if (!gemm::isa_supported(gemm::Isa::Avx512) || !__builtin_cpu_supports("avx512vbmi") ||
      !__builtin_cpu_supports("avx512bf16")) {
    WARN("no AVX-512 with VBMI and BF16 on this CPU: the vdpbf16ps kernel is not used here");
    return;
  }
  const int64_t groups = GENERATE(1, 3, 90);
  // Tiles of eight rows (four pairs), then four, then two, then one.
  const int64_t rows = GENERATE(1, 2, 3, 4, 5, 7, 8, 11, 13, 15, 16);
  const bool outside = GENERATE(false, true);
  CAPTURE(groups, rows, outside);
  std::mt19937 random(static_cast<uint32_t>(groups * 1000 + rows * 10 + (outside ? 5 : 0)));
  std::uniform_int_distribution<int> any_byte(0, 255), scale_in_range(100, 154), pick(0, 63), exponent(-60, 59);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  const int64_t length = groups * 32, rows_after = 3;
  std::vector<uint8_t> blocks(static_cast<size_t>((rows + rows_after) * groups * 16)),
      scales(static_cast<size_t>((rows + rows_after) * groups));
  for (auto& byte : blocks) byte = static_cast<uint8_t>(any_byte(random));
  for (auto& scale : scales) {
    // Outside the range now and then (every kind: tiny, huge, infinite, NaN).
    const int roll = pick(random);
    scale = static_cast<uint8_t>(outside && roll < 3 ? (roll == 0 ? 99 : roll == 1 ? 155 : 255)
                                                     : scale_in_range(random));
  }
  // And a whole row of scale byte 0, whose small values are subnormal: a
  // vdpbf16ps tile would read them as zero (a different sum, still normal).
  if (outside) std::fill(scales.begin(), scales.begin() + groups, uint8_t{0});
  std::vector<float> input(static_cast<size_t>(length));
  for (auto& value : input) {
    const int roll = pick(random);
    const float magnitude = roll == 0 ? 0.0f : std::ldexp(mantissa(random), roll == 1 ? -60 : exponent(random));
    value = linnet::tensor::round_to_bf16(roll % 2 == 0 ? magnitude : -magnitude);
  }
  REQUIRE(detail::mxfp4_bf16_pairs_safe(input.data(), length));
  std::vector<uint16_t> pairs(static_cast<size_t>(length * 2));
  detail::mxfp4_bf16_pairs(input.data(), length, pairs.data());
  const float* input_pointer = input.data();
  std::vector<float> dot(static_cast<size_t>(rows)), eight(dot);
  float* dot_out = dot.data();
  float* eight_out = eight.data();
  detail::Mxfp4Rows problem{blocks.data(), scales.data(), groups, rows, detail::mxfp4_value_table_f32(),
                            &input_pointer, &dot_out, 1, nullptr, rows_after, pairs.data()};
  detail::mxfp4_rows_avx512(problem);
  problem.outputs = &eight_out;
  problem.input_pairs = nullptr;
  detail::mxfp4_rows_avx512_eight_lanes(problem);
  for (int64_t r = 0; r < rows; ++r) {
    CAPTURE(r, dot[r], eight[r]);
    if (std::isnan(eight[r])) {
      REQUIRE(std::isnan(dot[r]));
    } else {
      REQUIRE(std::bit_cast<uint32_t>(dot[r]) == std::bit_cast<uint32_t>(eight[r]));
    }
  }
}

TEST_CASE("mxfp4_bf16_pairs_safe admits zero and bf16 magnitudes from 2^-60 to 2^60 only") {
  const auto safe = [](float value) { return detail::mxfp4_bf16_pairs_safe(&value, 1); };
  CHECK(safe(0.0f));
  CHECK(safe(-0.0f));
  CHECK(safe(0x1p-60f));
  CHECK(safe(-0x1p60f));
  CHECK(safe(1.5f));
  CHECK_FALSE(safe(0x1p-61f));
  CHECK_FALSE(safe(0x1.02p60f));
  CHECK_FALSE(safe(std::numeric_limits<float>::infinity()));
  CHECK_FALSE(safe(std::numeric_limits<float>::quiet_NaN()));
  CHECK_FALSE(safe(std::numeric_limits<float>::denorm_min()));
  CHECK_FALSE(safe(1.0f + 0x1p-20f));  // not a bf16 value
}
