// Every CUDA kernel against the CPU table's kernel for the same op, on the
// same random inputs (the CPU kernels are themselves held to the op bodies
// by tests/ops). Held to the rules of docs/ops.md: bit for bit where both
// repeat the body's elementwise steps or only move data (rope, embedding,
// argmax); within 1e-5 of the row scale in f32 and within the derived ulps in
// bf16 where the f32 sums may be taken in another order. Also checks where
// each result lives and that weights are uploaded once.
#include <catch2/catch.hpp>

#include "../ops/test_differential_support.hpp"
#include "linnet/cuda/cuda.hpp"
#include "linnet/nest/device.hpp"
#include "linnet/ops/device_table.hpp"

using namespace ops_test;
using linnet::nest::Device;

namespace {

Value run_on(const OpCall& call, const std::shared_ptr<linnet::eval::OpDispatcher>& dispatcher,
             NumericsPolicy policy = NumericsPolicy::Equivalent) {
  linnet::eval::Options options;
  options.numerics = policy;
  options.dispatcher = dispatcher;
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = call.positional;
  inputs.generics = call.generics;
  const Value result = interpreter.call_function(call.op, inputs);
  INFO("op " << call.op);
  REQUIRE(interpreter.stats().at(call.op).native == 1);
  return result;
}

struct Pair {
  Tensor cpu;
  Tensor cuda;
  uint64_t device_calls = 0;
};

Pair both(const OpCall& call) {
  auto cuda = linnet::nest::make_dispatcher(Device::Cuda);
  Pair pair;
  pair.cpu = run_on(call, linnet::ops::make_cpu_dispatcher()).tensor();
  pair.cuda = run_on(call, cuda).tensor();
  pair.device_calls = std::dynamic_pointer_cast<linnet::ops::DeviceDispatcher>(cuda)->stats().device_calls;
  return pair;
}

void require_bitwise(const Pair& pair) {
  REQUIRE(pair.device_calls == 1);
  REQUIRE(pair.cuda.shape() == pair.cpu.shape());
  const Tensor a = pair.cpu.contiguous(), b = pair.cuda.contiguous();
  REQUIRE(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * a.element_size()) == 0);
}

// f32: within 1e-5 of the row scale; bf16: within `roundings` ulps plus the f32 rule.
void require_close(const Pair& pair, int roundings) {
  REQUIRE(pair.device_calls == 1);
  REQUIRE(pair.cuda.shape() == pair.cpu.shape());
  const std::vector<double> a = as_doubles(pair.cpu), b = as_doubles(pair.cuda);
  const std::vector<double> scales = row_scales(pair.cpu);
  for (size_t i = 0; i < a.size(); ++i) {
    const double allowed = pair.cpu.dtype() == DType::F32
                               ? 1e-5 * scales[i] + 1e-30
                               : roundings * bf16_ulp(std::max(std::fabs(a[i]), std::fabs(b[i]))) + 1e-5 * scales[i];
    INFO("element " << i << ": cpu " << a[i] << ", cuda " << b[i]);
    REQUIRE(std::fabs(a[i] - b[i]) <= allowed);
  }
}

// Attention in bf16: each side rounds every weight exp(s - m) to bf16 as it
// enters the mix (docs/ops.md), the CPU against the running maximum of its
// key tiles and the GPU against the row's maximum, each from its own exp;
// each weight is within u = 2^-8 of its exact value on either side, so the
// two mixes differ by at most 2 u max|v|, plus the roundings above.
void require_close_attention(const Pair& pair, const Tensor& value) {
  if (pair.cpu.dtype() == DType::F32) return require_close(pair, 1);
  REQUIRE(pair.device_calls == 1);
  REQUIRE(pair.cuda.shape() == pair.cpu.shape());
  double largest_value = 0.0;
  for (double x : as_doubles(value)) largest_value = std::max(largest_value, std::fabs(x));
  const std::vector<double> a = as_doubles(pair.cpu), b = as_doubles(pair.cuda);
  const std::vector<double> scales = row_scales(pair.cpu);
  for (size_t i = 0; i < a.size(); ++i) {
    const double allowed = 2 * std::ldexp(1.0, -8) * largest_value +
                           bf16_ulp(std::max(std::fabs(a[i]), std::fabs(b[i]))) + 1e-5 * scales[i];
    INFO("element " << i << ": cpu " << a[i] << ", cuda " << b[i]);
    REQUIRE(std::fabs(a[i] - b[i]) <= allowed);
  }
}

const DType kTypes[] = {DType::F32, DType::BF16};

}  // namespace

TEST_CASE("cuda linear and matmul agree with the CPU kernels", "[gpu]") {
  std::mt19937 rng(7);
  for (DType type : kTypes) {
    for (bool with_bias : {false, true}) {
      OpCall call{"std.nn.linear::linear",
                  {v(random_tensor(rng, {3, 5, 96}, type)), v(random_tensor(rng, {40, 96}, type)),
                   with_bias ? Value::some(v(random_tensor(rng, {40}, type))) : Value::none()},
                  {{"S", shape({3, 5})}, {"In", dim(96)}, {"Out", dim(40)}, {"T", dtype(type)}}};
      require_close(both(call), with_bias ? 2 : 1);
    }
    OpCall matmul{"std.linalg::matmul",
                  {v(random_tensor(rng, {17, 64}, type)), v(random_tensor(rng, {64, 33}, type))},
                  {{"M", dim(17)}, {"K", dim(64)}, {"N", dim(33)}, {"T", dtype(type)}}};
    require_close(both(matmul), 1);
    OpCall batched{"std.linalg::batched_matmul",
                   {v(random_tensor(rng, {2, 3, 9, 16}, type)), v(random_tensor(rng, {2, 3, 16, 11}, type))},
                   {{"B", shape({2, 3})}, {"M", dim(9)}, {"K", dim(16)}, {"N", dim(11)}, {"T", dtype(type)}}};
    require_close(both(batched), 1);
  }
}

TEST_CASE("cuda row ops agree with the CPU kernels", "[gpu]") {
  std::mt19937 rng(11);
  for (DType type : kTypes) {
    for (int64_t width : {1, 7, 300, 4096}) {
      const Tensor x = random_tensor(rng, {4, width}, type, -3, 3);
      require_close(both({"std.nn.softmax::softmax", {v(x)}, {{"S", shape({4})}, {"N", dim(width)}, {"T", dtype(type)}}}), 1);
      require_close(both({"std.nn.norm::rms_norm", {v(x), v(random_tensor(rng, {width}, type)), f32_scalar(1e-5f)},
                          {{"S", shape({4})}, {"H", dim(width)}, {"T", dtype(type)}}}),
                    3);
      require_close(both({"std.nn.norm::layer_norm",
                          {v(x), v(random_tensor(rng, {width}, type)), Value::some(v(random_tensor(rng, {width}, type))),
                           f32_scalar(1e-5f)},
                          {{"S", shape({4})}, {"H", dim(width)}, {"T", dtype(type)}}}),
                    4);
      require_bitwise(both({"std.nn.decoding::argmax", {v(x)}, {{"S", shape({4})}, {"N", dim(width)}, {"T", dtype(type)}}}));
    }
    // Ties take the first index; a row holding NaN gives N.
    Tensor ties = Tensor::from_vector<float>({1, 5, 5, 2, 0, std::nanf(""), 9, 1}, {2, 4}, type);
    require_bitwise(both({"std.nn.decoding::argmax", {v(ties)}, {{"S", shape({2})}, {"N", dim(4)}, {"T", dtype(type)}}}));
  }
}

TEST_CASE("cuda rope and embedding are bit for bit the CPU's", "[gpu]") {
  std::mt19937 rng(13);
  for (DType type : kTypes) {
    require_bitwise(both({"std.nn.rope::rope",
                          {v(random_tensor(rng, {2, 3, 5, 16}, type)), v(random_tensor(rng, {5, 16}, type)),
                           v(random_tensor(rng, {5, 16}, type))},
                          {{"B", dim(2)}, {"H", dim(3)}, {"S", dim(5)}, {"D", dim(16)}, {"T", dtype(type)}}}));
    require_bitwise(both({"std.nn.embedding::embedding",
                          {v(i32_tensor({3, 0, 9, 3}, {2, 2})), v(random_tensor(rng, {10, 24}, type))},
                          {{"S", shape({2, 2})}, {"Vocab", dim(10)}, {"H", dim(24)}, {"T", dtype(type)}}}));
  }
}

TEST_CASE("cuda attention agrees with the CPU kernels", "[gpu]") {
  std::mt19937 rng(19);
  for (DType type : kTypes) {
    for (int64_t keys : {1, 5, 300}) {
      const int64_t B = 2, H = 8, Hk = 2, Q = 3, D = 64;
      const Tensor query = random_tensor(rng, {B, H, Q, D}, type), key = random_tensor(rng, {B, Hk, keys, D}, type),
                   value = random_tensor(rng, {B, Hk, keys, D}, type);
      std::vector<bool> shown(static_cast<size_t>(B * Q * keys));
      for (size_t i = 0; i < shown.size(); ++i) shown[i] = (i * 7919) % 3 != 0;
      shown[0] = false;  // with keys = 1 this hides every key of a row
      const Tensor row_mask = bool_tensor(shown, {B, Q, keys});
      const Tensor shared_mask = row_mask.select(0, 1).contiguous();
      GenericBindings grouped{{"B", dim(B)}, {"H", dim(H)}, {"Hk", dim(Hk)}, {"Q", dim(Q)},
                              {"K", dim(keys)}, {"D", dim(D)},   {"T", dtype(type)}};
      require_close_attention(
          both({"std.nn.attention::grouped_attention",
                {v(query), v(key), v(value), f32_scalar(0.125f), Value::some(v(shared_mask))}, grouped}),
          value);
      require_close_attention(both({"std.nn.attention::grouped_attention",
                                    {v(query), v(key), v(value), f32_scalar(0.125f), Value::none()}, grouped}),
                              value);
      require_close_attention(both({"std.nn.attention::grouped_attention_rows",
                                    {v(query), v(key), v(value), f32_scalar(0.125f), v(row_mask)}, grouped}),
                              value);
      GenericBindings sink{{"B", dim(B)}, {"Hq", dim(H)}, {"Hk", dim(Hk)}, {"Q", dim(Q)},
                           {"K", dim(keys)}, {"D", dim(D)},   {"T", dtype(type)}};
      require_close_attention(
          both({"std.nn.attention::sink_attention",
                {v(query), v(key), v(value), v(random_tensor(rng, {H}, type)), f32_scalar(0.125f), v(row_mask)},
                sink}),
          value);
    }
  }
}

TEST_CASE("cuda cache writes are bit for bit the CPU's", "[gpu]") {
  std::mt19937 rng(23);
  for (DType type : kTypes) {
    const Tensor cache = random_tensor(rng, {1, 2, 8, 16}, type);
    for (int32_t at : {0, 5, 7, 8, 30}) {
      require_bitwise(both({"std.nn.cache::write_at", {v(cache), v(random_tensor(rng, {1, 2, 1, 16}, type)), i32_scalar(at)},
                            {{"B", dim(1)}, {"H", dim(2)}, {"S", dim(8)}, {"D", dim(16)}, {"T", dtype(type)}}}));
      require_bitwise(both({"std.nn.cache::write_span", {v(cache), v(random_tensor(rng, {1, 2, 3, 16}, type)), i32_scalar(at)},
                            {{"B", dim(1)}, {"H", dim(2)}, {"S", dim(8)}, {"N", dim(3)}, {"D", dim(16)}, {"T", dtype(type)}}}));
    }
  }
}

TEST_CASE("cuda dequantize_mxfp4 is bit for bit the CPU's, extreme scales included", "[gpu]") {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> blocks(2 * 3 * 4 * 16), scales(2 * 3 * 4);
  for (uint8_t& b : blocks) b = static_cast<uint8_t>(byte(rng));
  for (uint8_t& s : scales) s = static_cast<uint8_t>(byte(rng));
  scales[0] = 0, scales[1] = 254, scales[2] = 255, scales[3] = 127;
  const Tensor packed = Tensor::from_vector(blocks, {2, 3, 4, 16}), scale = Tensor::from_vector(scales, {2, 3, 4});
  for (DType type : kTypes) {
    require_bitwise(both({"std.quant::dequantize_mxfp4", {v(packed), v(scale)},
                          {{"E", dim(2)}, {"Out", dim(3)}, {"G", dim(4)}, {"T", dtype(type)}}}));
  }
}

TEST_CASE("cuda results stay on the device; a weight is uploaded once", "[gpu]") {
  std::mt19937 rng(17);
  const Tensor weight = random_tensor(rng, {64, 128}, DType::BF16);
  auto backend = linnet::cuda::backend();
  auto cuda = linnet::nest::make_dispatcher(Device::Cuda);
  const auto before = backend->stats();
  for (int call = 0; call < 3; ++call) {
    OpCall linear{"std.nn.linear::linear", {v(random_tensor(rng, {4, 128}, DType::BF16)), v(weight), Value::none()},
                  {{"S", shape({4})}, {"In", dim(128)}, {"Out", dim(64)}, {"T", dtype(DType::BF16)}}};
    const Tensor result = run_on(linear, cuda).tensor();
    CHECK_FALSE(result.storage()->host_current());
  }
  const auto after = backend->stats();
  // Three inputs and one weight.
  CHECK(after.uploads - before.uploads == 4);
  CHECK(after.downloads == before.downloads);
}
