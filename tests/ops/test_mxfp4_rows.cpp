// The AVX-512 MXFP4 row kernels against each other: the two-rows-per-zmm
// kernel a decode step uses (mxfp4_rows_avx512 with few inputs) must give
// the bits of the eight-lane kernel (the documented order, which
// test_mxfp4_experts.cpp holds to its reference) on every row count, input
// count and group count, including the table's subnormal, infinite and NaN
// values (scale bytes 0, 254, 255) and inputs that are infinite, NaN,
// subnormal or huge (a NaN result only has to be a NaN: see below).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../src/ops/mxfp4_rows.hpp"
#include "linnet/tensor/gemm.hpp"

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
