// Differential tests of the mixture-of-experts kernels (std.nn.moe) and the
// MXFP4 kernels (std.quant) against their bodies. Every product body sums
// in f32 and rounds to T once, so bf16 results are held to one rounding;
// dequantize_mxfp4 is exact and must agree bit for bit.
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

// experts[r, k] with row 0 choosing expert 2 twice.
Tensor routing(std::mt19937& rng, int64_t rows, int64_t slots, int64_t experts) {
  std::uniform_int_distribution<int64_t> pick(0, experts - 1);
  std::vector<int64_t> chosen(static_cast<size_t>(rows * slots));
  for (auto& e : chosen) e = pick(rng);
  chosen[0] = 2;
  if (slots > 1) chosen[1] = 2;
  return i64_tensor(chosen, {rows, slots});
}

GenericBindings moe_generics(int64_t rows, int64_t slots, int64_t experts, int64_t in, int64_t out, DType type) {
  return {{"R", dim(rows)}, {"K", dim(slots)}, {"E", dim(experts)}, {"In", dim(in)}, {"Out", dim(out)},
          {"T", dtype(type)}};
}

}  // namespace

TEST_CASE("the moe products agree with their bodies", "[differential][experts]") {
  const int64_t rows = 5, slots = 3, experts = 6, in = 24, out = 70;
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(401);
    const Tensor weight = random_tensor(rng, {experts, out, in}, type);
    const Tensor chosen = routing(rng, rows, slots, experts);
    const Tensor per_slot = random_tensor(rng, {rows, slots, in}, type);
    const Tensor shared = random_tensor(rng, {rows, in}, type);
    const Tensor mixing = random_tensor(rng, {rows, slots}, type, 0.0, 1.0);
    const GenericBindings generics = moe_generics(rows, slots, experts, in, out, type);

    OpCall own{"std.nn.moe::linear_experts", {v(per_slot), v(weight), v(chosen)}, generics};
    Results results = run_both(own);
    require_agreement(label(own, type), results.native, results.body, 1);

    OpCall common{"std.nn.moe::linear_experts_shared", {v(shared), v(weight), v(chosen)}, generics};
    results = run_both(common);
    require_agreement(label(common, type), results.native, results.body, 1);

    OpCall combined{"std.nn.moe::combine_experts", {v(per_slot), v(weight), v(chosen), v(mixing)}, generics};
    results = run_both(combined);
    require_agreement(label(combined, type), results.native, results.body, 1);
  }
}

TEST_CASE("combine_experts lets an expert outside the range contribute nothing, as its body does",
          "[differential][experts]") {
  std::mt19937 rng(411);
  const int64_t rows = 2, slots = 2, experts = 3, in = 8, out = 5;
  const Tensor weight = random_tensor(rng, {experts, out, in}, DType::F32);
  const Tensor chosen = i64_tensor({0, 7, -1, 2}, {rows, slots});
  OpCall call{"std.nn.moe::combine_experts",
              {v(random_tensor(rng, {rows, slots, in}, DType::F32)), v(weight), v(chosen),
               v(random_tensor(rng, {rows, slots}, DType::F32))},
              moe_generics(rows, slots, experts, in, out, DType::F32)};
  const Results results = run_both(call);
  require_f32_agreement(label(call, DType::F32, "experts 7 and -1"), results.native, results.body);
}

namespace {

// Packed MXFP4 experts [E, Out, G, 16] and scales [E, Out, G], scales near
// 127 so the values stay in a moderate range.
struct Packed {
  Tensor blocks, scales;
};

Packed random_packed(std::mt19937& rng, int64_t experts, int64_t out, int64_t groups) {
  std::uniform_int_distribution<int> byte(0, 255), scale(120, 130);
  std::vector<uint8_t> blocks(static_cast<size_t>(experts * out * groups * 16)), scales(static_cast<size_t>(experts * out * groups));
  for (auto& b : blocks) b = static_cast<uint8_t>(byte(rng));
  for (auto& s : scales) s = static_cast<uint8_t>(scale(rng));
  return {Tensor::from_vector(blocks, {experts, out, groups, 16}), Tensor::from_vector(scales, {experts, out, groups})};
}

}  // namespace

TEST_CASE("dequantize_mxfp4 agrees with its body bit for bit", "[differential][experts]") {
  std::mt19937 rng(421);
  Packed packed = random_packed(rng, 3, 4, 2);
  // The extreme scales: 2^-127 (a subnormal) and 2^128 (infinity, NaN for zero codes).
  std::vector<uint8_t> scales = packed.scales.to_vector<uint8_t>();
  scales[0] = 0;
  scales[1] = 255;
  scales[2] = 254;
  packed.scales = Tensor::from_vector(scales, {3, 4, 2});
  for (DType type : {DType::F32, DType::BF16}) {
    OpCall call{"std.quant::dequantize_mxfp4", {v(packed.blocks), v(packed.scales)},
                {{"E", dim(3)}, {"Out", dim(4)}, {"G", dim(2)}, {"T", dtype(type)}}};
    const Results results = run_both(call);
    require_identical(label(call, type, "with scales 0, 255 and 254"), results.native, results.body);
  }
}

TEST_CASE("the MXFP4 expert products agree with their bodies", "[differential][experts]") {
  const int64_t rows = 4, slots = 3, experts = 5, out = 9, groups = 2, in = groups * 32;
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(431);
    const Packed packed = random_packed(rng, experts, out, groups);
    const Tensor chosen = routing(rng, rows, slots, experts);
    const GenericBindings generics{{"R", dim(rows)}, {"K", dim(slots)}, {"E", dim(experts)},
                                   {"Out", dim(out)}, {"G", dim(groups)}, {"T", dtype(type)}};
    const Tensor per_slot = random_tensor(rng, {rows, slots, in}, type);
    const Tensor shared = random_tensor(rng, {rows, 1, in}, type);
    const Tensor flat = random_tensor(rng, {rows, in}, type);
    const Tensor mixing = random_tensor(rng, {rows, slots}, type, 0.0, 1.0);

    const std::vector<OpCall> calls{
        {"std.quant::mxfp4_experts", {v(per_slot), v(packed.blocks), v(packed.scales), v(chosen)}, generics},
        {"std.quant::mxfp4_experts_shared", {v(shared), v(packed.blocks), v(packed.scales), v(chosen)}, generics},
        {"std.quant::mxfp4_linear_experts_shared", {v(flat), v(packed.blocks), v(packed.scales), v(chosen)}, generics},
        {"std.quant::mxfp4_combine_experts",
         {v(per_slot), v(packed.blocks), v(packed.scales), v(chosen), v(mixing)},
         generics},
    };
    for (const OpCall& call : calls) {
      const Results results = run_both(call);
      require_agreement(label(call, type), results.native, results.body, 1);
    }
  }
}

// A prompt's routing: every expert but the last chosen by many slots, so the
// kernels take the grouped product (mxfp4.hpp): expert 0 by more than 64
// (oneDNN's engine where the build has it), the others by fewer (our
// kernels), the last by none; 131 output rows, not a multiple of the
// 128-row tile. bf16 inputs multiply as bf16 there.
TEST_CASE("the MXFP4 expert products of a prompt agree with their bodies", "[differential][experts]") {
  const int64_t rows = 40, slots = 4, experts = 5, out = 131, groups = 3, in = groups * 32;
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(977);
    const Packed packed = random_packed(rng, experts, out, groups);
    std::uniform_int_distribution<int64_t> pick(1, experts - 2);
    std::vector<int64_t> choice(static_cast<size_t>(rows * slots));
    for (size_t i = 0; i < choice.size(); ++i) choice[i] = i % 2 == 0 ? 0 : pick(rng);
    const Tensor chosen = i64_tensor(choice, {rows, slots});
    const GenericBindings generics{{"R", dim(rows)}, {"K", dim(slots)}, {"E", dim(experts)},
                                   {"Out", dim(out)}, {"G", dim(groups)}, {"T", dtype(type)}};
    const Tensor per_slot = random_tensor(rng, {rows, slots, in}, type);
    const Tensor flat = random_tensor(rng, {rows, in}, type);
    const Tensor mixing = random_tensor(rng, {rows, slots}, type, 0.0, 1.0);
    const std::vector<OpCall> calls{
        {"std.quant::mxfp4_experts", {v(per_slot), v(packed.blocks), v(packed.scales), v(chosen)}, generics},
        {"std.quant::mxfp4_linear_experts_shared", {v(flat), v(packed.blocks), v(packed.scales), v(chosen)}, generics},
        {"std.quant::mxfp4_combine_experts",
         {v(per_slot), v(packed.blocks), v(packed.scales), v(chosen), v(mixing)},
         generics},
    };
    for (const OpCall& call : calls) {
      const Results results = run_both(call);
      require_agreement(label(call, type, "a prompt"), results.native, results.body, 1);
    }
  }
}
