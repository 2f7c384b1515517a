// dequantize_mxfp4's native kernel returns its values made on access
// (Storage::made_on_access): a `linear` whose weight is that result, through
// a reshape or a reordering copy as GPT-OSS's dense expert form writes it,
// decodes the weight a tile at a time and never makes it whole, with the
// same bits as the product with the whole weight; reading the result
// directly still gives the body's values.
#include <random>

#include "eval/eval_test_util.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/tensor/allocator.hpp"
#include "linnet/tensor/gemm.hpp"

using namespace eval_test;
using linnet::eval::MapParameterSource;

namespace {

const char* kDenseExperts = R"(
module dense
use std.quant::dequantize_mxfp4
use std.nn.linear::linear

pub block Dense<E: Dim, Out: Dim, G: Dim, T: Float = f32> {
    param blocks: Tensor[E, Out, G, 16; u8]
    param scales: Tensor[E, Out, G; u8]

    // Every expert's rows as one weight: a reshape that is a view.
    pub entry up<R: Dim>(x: Tensor[R, G * 32; T]) -> Tensor[R, E * Out; T] {
        let weight = dequantize_mxfp4<E, Out, G, T>(blocks, scales)
        return linear(x, reshape(weight, [E * Out, G * 32]))
    }

    // The experts side by side along the inner axis: a reshape of a
    // permuted view, which needs a reordering copy.
    pub entry down<R: Dim>(x: Tensor[R, E * G * 32; T]) -> Tensor[R, Out; T] {
        let weight = dequantize_mxfp4<E, Out, G, T>(blocks, scales)
        return linear(x, reshape(permute(weight, [1, 0, 2]), [Out, E * G * 32]))
    }

    pub entry whole() -> Tensor[E, Out, G * 32; T] {
        return dequantize_mxfp4<E, Out, G, T>(blocks, scales)
    }
}
)";

linnet::eval::Options native_options() {
  linnet::eval::Options options;
  options.numerics = linnet::eval::NumericsPolicy::Equivalent;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  return options;
}

// y = x w^T in f32 by the product engine on whole operands, rounded to T as
// the linear kernel does: what the tiled product must equal bit for bit.
Tensor reference_linear(const Tensor& x, const Tensor& weight, DType type) {
  const Tensor left = x.contiguous(), right = weight.contiguous();
  const int64_t rows = left.extent(0), outputs = right.extent(0), inner = right.extent(1);
  Tensor y = Tensor::empty(DType::F32, {rows, outputs});
  namespace gemm = linnet::tensor::gemm;
  gemm::gemm_bt(rows, outputs, inner, gemm::Operand{left.raw_data(), left.dtype() == DType::BF16, inner},
                gemm::Operand{right.raw_data(), right.dtype() == DType::BF16, inner}, y.mutable_data<float>(),
                outputs);
  return y.to(type);
}

std::vector<uint8_t> bits(const Tensor& t) {
  const Tensor dense = t.contiguous();
  const auto* bytes = static_cast<const uint8_t*>(dense.raw_data());
  return std::vector<uint8_t>(bytes, bytes + dense.numel() * static_cast<int64_t>(dense.element_size()));
}

// Random packed blocks and scales (exponents near 127, so values stay
// finite and varied) for `experts` experts of `rows` rows of `groups` groups.
MapParameterSource random_experts(std::mt19937& rng, int64_t experts, int64_t rows, int64_t groups) {
  MapParameterSource parameters;
  parameters.set("blocks", random_integers(rng, {experts, rows, groups, 16}, DType::U8, 0, 255));
  parameters.set("scales", random_integers(rng, {experts, rows, groups}, DType::U8, 118, 136));
  return parameters;
}

// Random inputs of the `up` and `down` entries, `batch` rows each.
struct ProjectionInputs {
  Tensor x_up, x_down;
  EntryInputs up, down;
};

ProjectionInputs projection_inputs(std::mt19937& rng, int64_t batch, int64_t inner, int64_t experts, DType type) {
  ProjectionInputs inputs;
  inputs.x_up = random_tensor(rng, {batch, inner}, type);
  inputs.x_down = random_tensor(rng, {batch, experts * inner}, type);
  inputs.up.positional = {v(inputs.x_up)};
  inputs.up.generics = {{"R", dim(batch)}};
  inputs.down.positional = {v(inputs.x_down)};
  inputs.down.generics = {{"R", dim(batch)}};
  return inputs;
}

// The `up` and `down` results have the bits of the products with `made`,
// the whole weight [E, Out, In]: `up` with it as [E * Out, In], `down`
// with it reordered to [Out, E * In].
void require_whole_weight_bits(const Tensor& y_up, const Tensor& y_down, const ProjectionInputs& inputs,
                               const Tensor& made, DType type) {
  const int64_t experts = made.extent(0), rows = made.extent(1), inner = made.extent(2);
  CHECK(bits(y_up) == bits(reference_linear(inputs.x_up, made.reshape({experts * rows, inner}), type)));
  const Tensor reordered = made.permute({1, 0, 2}).reshape({rows, experts * inner});
  CHECK(bits(y_down) == bits(reference_linear(inputs.x_down, reordered, type)));
}

}  // namespace

TEST_CASE("a linear over dequantize_mxfp4 decodes tiles, never the whole weight", "[mxfp4][on-access]") {
  // Out * E = 200 rows: several tiles of 48, the last one partial.
  const int64_t experts = 4, rows = 50, groups = 3, inner = groups * 32, batch = 5;
  std::mt19937 rng(23);
  MapParameterSource parameters = random_experts(rng, experts, rows, groups);
  for (DType type : {DType::F32, DType::BF16}) {
    CAPTURE(linnet::tensor::dtype_name(type));
    auto program = load_source(kDenseExperts, native_options());
    auto block = program->instantiate(
        "Dense", {{"E", dim(experts)}, {"Out", dim(rows)}, {"G", dim(groups)}, {"T", dtype(type)}}, parameters);
    EntryInputs none;
    const Tensor whole = program->call(*block, "whole", none).tensor();
    CHECK(whole.unmade());
    const size_t weight_bytes = static_cast<size_t>(whole.numel()) * whole.element_size();

    const ProjectionInputs inputs = projection_inputs(rng, batch, inner, experts, type);

    linnet::tensor::reset_peak_bytes();
    const size_t before = linnet::tensor::current_bytes();
    const Tensor y_up = program->call(*block, "up", inputs.up).tensor();
    const Tensor y_down = program->call(*block, "down", inputs.down).tensor();
    // The results and the inputs' copies, nothing of the weight's size.
    CHECK(linnet::tensor::peak_bytes() - before < weight_bytes / 2);
    CHECK(program->stats().at("std.quant::dequantize_mxfp4").native == 3);
    CHECK(program->stats().at("std.nn.linear::linear").native == 2);
    CHECK(whole.unmade());

    // The same bits as the products with the whole weight, made here.
    const Tensor made = whole.contiguous();
    CHECK(bits(made) == bits(whole));
    CHECK_FALSE(whole.unmade());
    require_whole_weight_bits(y_up, y_down, inputs, made, type);

    // And the body's values (exact numerics runs the op as written).
    auto reference = load_source(kDenseExperts);
    auto body_block = reference->instantiate(
        "Dense", {{"E", dim(experts)}, {"Out", dim(rows)}, {"G", dim(groups)}, {"T", dtype(type)}}, parameters);
    CHECK(bits(reference->call(*body_block, "whole", none).tensor()) == bits(made));
  }
}

TEST_CASE("a tiled product over dequantize_mxfp4 keeps the whole product's bits from 64 rows on",
          "[mxfp4][on-access]") {
  // From gemm::kLibraryMinRows x rows a product may go to oneDNN in blocks
  // of 128 outputs: the tiles must be whole blocks for the bits to agree.
  // E * Out = 600 rows (four full tiles of 128 and a partial one) for `up`,
  // Out = 150 for `down`; 70 x rows, past the 64-row threshold; rows of
  // 2880 values, the width of GPT-OSS (where oneDNN splits the inner sum).
  const int64_t experts = 4, rows = 150, groups = 90, inner = groups * 32, batch = 70;
  std::mt19937 rng(29);
  MapParameterSource parameters = random_experts(rng, experts, rows, groups);
  for (DType type : {DType::F32, DType::BF16}) {
    CAPTURE(linnet::tensor::dtype_name(type));
    auto program = load_source(kDenseExperts, native_options());
    auto block = program->instantiate(
        "Dense", {{"E", dim(experts)}, {"Out", dim(rows)}, {"G", dim(groups)}, {"T", dtype(type)}}, parameters);
    EntryInputs none;
    const Tensor made = program->call(*block, "whole", none).tensor().contiguous();
    const ProjectionInputs inputs = projection_inputs(rng, batch, inner, experts, type);
    const Tensor y_up = program->call(*block, "up", inputs.up).tensor();
    const Tensor y_down = program->call(*block, "down", inputs.down).tensor();
    require_whole_weight_bits(y_up, y_down, inputs, made, type);
  }
}
