// Differential tests of the activation kernels against their bodies: silu
// and sigmoid must give the body's bits (the same f32 steps, rounded to T
// once) for any shape, strided inputs, overflowing exponentials, NaN and
// infinities, and with any number of threads. Both ops go through the same
// checks below, parameterised by the op's name.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "linnet/tensor/threading.hpp"
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

// The kernels under test: std.nn.activations ops with one argument `x`.
const std::vector<std::string> kActivations{"std.nn.activations::silu", "std.nn.activations::sigmoid"};

OpCall activation_call(const std::string& op, const Tensor& x, DType type) {
  GenericBindings generics{{"S", shape(x.shape())}, {"T", dtype(type)}};
  return OpCall{op, {v(x)}, std::move(generics)};
}

}  // namespace

TEST_CASE("activations agree with their bodies bit for bit", "[differential][activations]") {
  for (const std::string& op : kActivations) {
    for (DType type : {DType::F32, DType::BF16}) {
      std::mt19937 rng(701);
      // Size 1, odd sizes, several axes; values wide enough for exp(-x) to
      // overflow to infinity (x < -89) and to underflow to zero.
      for (const Shape& dims : std::vector<Shape>{{1}, {7}, {3, 33}, {2, 5, 17}, {4099}}) {
        const Tensor x = random_tensor(rng, dims, type, -120.0, 120.0);
        const OpCall call = activation_call(op, x, type);
        const Results results = run_both(call);
        require_identical(label(call, type, "values in [-120, 120)"), results.native, results.body);
      }
      // A transposed view goes through the kernel's contiguous copy.
      const Tensor x = random_tensor(rng, {6, 9}, type, -8.0, 8.0).permute({1, 0});
      const OpCall call = activation_call(op, x, type);
      const Results results = run_both(call);
      require_identical(label(call, type, "transposed"), results.native, results.body);
    }
  }
}

TEST_CASE("activations keep their bodies' NaN, infinity and signed-zero results", "[differential][activations]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values{std::nanf(""), inf, -inf, 0.0f, -0.0f, 88.7f, -88.7f, 1e-40f, -1e-40f};
  for (const std::string& op : kActivations) {
    for (DType type : {DType::F32, DType::BF16}) {
      const Tensor x = Tensor::from_vector(values, {static_cast<int64_t>(values.size())}).to(type);
      const OpCall call = activation_call(op, x, type);
      const Results results = run_both(call);
      require_identical(label(call, type, "special values"), results.native, results.body);
    }
  }
}

TEST_CASE("activation results do not depend on the number of threads", "[differential][activations][threads]") {
  for (const std::string& op : kActivations) {
    std::mt19937 rng(711);
    for (DType type : {DType::F32, DType::BF16}) {
      // Large enough to start threads (tensor::kParallelWork elements).
      const Tensor x = random_tensor(rng, {3, 40001}, type, -10.0, 10.0);
      const OpCall call = activation_call(op, x, type);
      const int before = linnet::tensor::num_threads();
      linnet::tensor::set_num_threads(1);
      const Tensor one = run_native(call).tensor();
      linnet::tensor::set_num_threads(2);
      const Tensor two = run_native(call).tensor();
      linnet::tensor::set_num_threads(before);
      require_identical(label(call, type, "1 and 2 threads"), two, one);
    }
  }
}

// Every bf16 value, and every 4096th f32 bit pattern (both signs, every
// exponent, an odd offset varying the low mantissa bits): on CPUs with
// AVX-512F the kernels compute expf's steps in vectors (activations_avx512.cpp)
// and must still give the body's bits, which call the C library's expf.
TEST_CASE("activations agree with their bodies over every exponent", "[differential][activations]") {
  std::vector<float> every_bf16(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits) every_bf16[bits] = std::bit_cast<float>(bits << 16);
  std::vector<float> spread_f32(uint32_t{1} << 20);
  for (uint32_t index = 0; index < spread_f32.size(); ++index) {
    spread_f32[index] = std::bit_cast<float>(index * 4096u + index % 4093u);
  }
  for (const std::string& op : kActivations) {
    for (DType type : {DType::F32, DType::BF16}) {
      const std::vector<float>& values = type == DType::BF16 ? every_bf16 : spread_f32;
      const Tensor x = Tensor::from_vector(values, {static_cast<int64_t>(values.size())}).to(type);
      const OpCall call = activation_call(op, x, type);
      const Results results = run_both(call);
      require_identical(label(call, type, type == DType::BF16 ? "every bf16" : "every 4096th f32"), results.native,
                        results.body);
    }
  }
}
