// Elementwise binary and unary kernels in each relevant dtype, against
// gen_reference.py's expectations (Python integers, NumPy float32, exact
// rational bf16/f16 rounding) and hand-checked cases.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "reference_data.inc"
#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

const std::map<std::string, BinaryOp> kBinaryByName = {
    {"add", BinaryOp::Add}, {"sub", BinaryOp::Sub}, {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div},
    {"rem", BinaryOp::Rem}, {"pow", BinaryOp::Pow}, {"shl", BinaryOp::Shl}, {"shr", BinaryOp::Shr},
    {"and", BinaryOp::And}, {"or", BinaryOp::Or},   {"xor", BinaryOp::Xor}, {"min", BinaryOp::Min},
    {"max", BinaryOp::Max}};

Tensor from_bits(const std::vector<uint64_t>& bits, DType dtype) {
  return Tensor::from_vector(bits, {static_cast<int64_t>(bits.size())}).to(dtype);
}

Tensor f32_from_bit_list(const std::vector<uint32_t>& bits) {
  std::vector<float> values;
  for (uint32_t b : bits) values.push_back(f32_from_bits(b));
  return Tensor::from_vector(values, {static_cast<int64_t>(values.size())});
}

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }

ErrorKind kind_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const TensorError& error) {
    return error.kind();
  }
  FAIL("expected a TensorError");
  return ErrorKind::InvalidArgument;
}

}  // namespace

TEST_CASE("integer binary operators wrap and truncate in every integer dtype", "[elementwise]") {
  for (const reference::IntegerCase& c : reference::integer_cases) {
    INFO(c.dtype << " " << c.op);
    const DType dtype = *dtype_from_name(c.dtype);
    const Tensor result = binary(kBinaryByName.at(c.op), from_bits(c.a, dtype), from_bits(c.b, dtype));
    CHECK(result.dtype() == dtype);
    CHECK(result.to_vector<uint64_t>() == c.expected);
  }
}

TEST_CASE("integer division by zero is an error, float division is IEEE", "[elementwise]") {
  const Tensor a = Tensor::from_vector<int32_t>({7, -7, 3}, {3});
  const Tensor b = Tensor::from_vector<int32_t>({2, 0, 1}, {3});
  CHECK(kind_of([&] { div(a, b); }) == ErrorKind::DivisionByZero);
  CHECK(kind_of([&] { rem(a, b); }) == ErrorKind::DivisionByZero);
  CHECK(kind_of([&] { div(a, Tensor::scalar(DType::U8, 0).to(DType::I32)); }) == ErrorKind::DivisionByZero);
  // -7 / 2 truncates to -3 and -7 % 2 is -1 (not floor's -4 and 1).
  CHECK(div(Tensor::from_vector<int64_t>({-7, 7}, {2}), Tensor::from_vector<int64_t>({2, -2}, {2})).to_vector<int64_t>() ==
        std::vector<int64_t>{-3, -3});
  CHECK(rem(Tensor::from_vector<int64_t>({-7, 7}, {2}), Tensor::from_vector<int64_t>({2, -2}, {2})).to_vector<int64_t>() ==
        std::vector<int64_t>{-1, 1});
  const std::vector<float> quotient =
      div(Tensor::from_vector<float>({1, -1, 0}, {3}), Tensor::from_vector<float>({0, 0, 0}, {3})).to_vector<float>();
  CHECK(quotient[0] == INFINITY);
  CHECK(quotient[1] == -INFINITY);
  CHECK(std::isnan(quotient[2]));
}

TEST_CASE("f32 arithmetic matches NumPy float32 bit for bit", "[elementwise]") {
  const Tensor a = f32_from_bit_list(reference::f32_a);
  const Tensor b = f32_from_bit_list(reference::f32_b);
  const std::vector<std::pair<BinaryOp, const std::vector<uint32_t>*>> cases = {
      {BinaryOp::Add, &reference::f32_add}, {BinaryOp::Sub, &reference::f32_sub},
      {BinaryOp::Mul, &reference::f32_mul}, {BinaryOp::Div, &reference::f32_div},
      {BinaryOp::Rem, &reference::f32_rem}, {BinaryOp::Min, &reference::f32_min},
      {BinaryOp::Max, &reference::f32_max}};
  for (const auto& [op, expected] : cases) {
    INFO(binary_op_name(op));
    const std::vector<float> result = binary(op, a, b).to_vector<float>();
    REQUIRE(result.size() == expected->size());
    for (size_t i = 0; i < result.size(); ++i) {
      INFO("element " << i);
      CHECK(same_float(result[i], f32_from_bits((*expected)[i])));
    }
  }
}

TEST_CASE("bf16 and f16 arithmetic rounds each result once", "[elementwise]") {
  const Tensor a = half_from_bits(reference::bf16_a, DType::BF16);
  const Tensor b = half_from_bits(reference::bf16_b, DType::BF16);
  CHECK(half_bits(add(a, b)) == reference::bf16_add);
  CHECK(half_bits(mul(a, b)) == reference::bf16_mul);
  const Tensor c = half_from_bits(reference::f16_a, DType::F16);
  const Tensor d = half_from_bits(reference::f16_b, DType::F16);
  CHECK(half_bits(add(c, d)) == reference::f16_add);
  CHECK(half_bits(mul(c, d)) == reference::f16_mul);
  CHECK(add(a, b).dtype() == DType::BF16);
}

TEST_CASE("NaN propagates through min and max", "[elementwise]") {
  const Tensor a = Tensor::from_vector<float>({NAN, 1.0f, 2.0f}, {3});
  const Tensor b = Tensor::from_vector<float>({0.0f, NAN, 3.0f}, {3});
  const std::vector<float> low = minimum(a, b).to_vector<float>();
  const std::vector<float> high = maximum(a, b).to_vector<float>();
  CHECK(std::isnan(low[0]));
  CHECK(std::isnan(low[1]));
  CHECK(low[2] == 2.0f);
  CHECK(std::isnan(high[0]));
  CHECK(std::isnan(high[1]));
  CHECK(high[2] == 3.0f);
}

TEST_CASE("comparisons give bool in every dtype", "[elementwise]") {
  for (DType dtype : kAllDTypes) {
    INFO(dtype_name(dtype));
    const Tensor a = Tensor::from_vector<int64_t>({0, 1, 1}, {3}, dtype);
    const Tensor b = Tensor::from_vector<int64_t>({1, 1, 0}, {3}, dtype);
    CHECK(binary(BinaryOp::Eq, a, b).to_vector<bool>() == std::vector<bool>{false, true, false});
    CHECK(binary(BinaryOp::Ne, a, b).to_vector<bool>() == std::vector<bool>{true, false, true});
    CHECK(binary(BinaryOp::Lt, a, b).to_vector<bool>() == std::vector<bool>{true, false, false});
    CHECK(binary(BinaryOp::Le, a, b).to_vector<bool>() == std::vector<bool>{true, true, false});
    CHECK(binary(BinaryOp::Gt, a, b).to_vector<bool>() == std::vector<bool>{false, false, true});
    CHECK(binary(BinaryOp::Ge, a, b).dtype() == DType::Bool);
  }
  // NaN compares unequal to everything, itself included.
  const Tensor nan = Tensor::from_vector<float>({NAN}, {1}, DType::BF16);
  CHECK(binary(BinaryOp::Eq, nan, nan).to_vector<bool>() == std::vector<bool>{false});
  CHECK(binary(BinaryOp::Ne, nan, nan).to_vector<bool>() == std::vector<bool>{true});
}

TEST_CASE("logical operators on bool, bitwise on integers, refused on floats", "[elementwise]") {
  const Tensor p = Tensor::from_vector<bool>({false, false, true, true}, {4});
  const Tensor q = Tensor::from_vector<bool>({false, true, false, true}, {4});
  CHECK(binary(BinaryOp::And, p, q).to_vector<bool>() == std::vector<bool>{false, false, false, true});
  CHECK(binary(BinaryOp::Or, p, q).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(binary(BinaryOp::Xor, p, q).to_vector<bool>() == std::vector<bool>{false, true, true, false});
  // `mask ^ true` negates.
  CHECK(binary(BinaryOp::Xor, p, Tensor::scalar(DType::Bool, true)).to_vector<bool>() ==
        std::vector<bool>{true, true, false, false});
  CHECK(unary(UnaryOp::Not, p).to_vector<bool>() == std::vector<bool>{true, true, false, false});
  const Tensor f = Tensor::from_vector<float>({1.0f}, {1});
  CHECK(kind_of([&] { binary(BinaryOp::And, f, f); }) == ErrorKind::UnsupportedDType);
  CHECK(kind_of([&] { binary(BinaryOp::Shl, f, f); }) == ErrorKind::UnsupportedDType);
  CHECK(kind_of([&] { add(p, q); }) == ErrorKind::UnsupportedDType);
}

TEST_CASE("binary operators broadcast right-aligned", "[elementwise]") {
  const Tensor a = iota(6, DType::F32).reshape({2, 1, 3});
  const Tensor b = Tensor::from_vector<float>({10, 20, 30, 40}, {4, 1});
  const Tensor sum = add(a, b);
  REQUIRE(sum.shape() == Shape{2, 4, 3});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k) CHECK(sum.at<float>({i, j, k}) == float(i * 3 + k) + float(10 * (j + 1)));
  // A scalar on either side.
  CHECK(sub(Tensor::scalar(DType::F32, 1.0), a).at<float>({1, 0, 2}) == -4.0f);
  try {
    add(Tensor::zeros(DType::F32, {2, 3}), Tensor::zeros(DType::F32, {4}));
    FAIL("shapes [2, 3] and [4] must not broadcast");
  } catch (const TensorError& error) {
    CHECK(error.kind() == ErrorKind::ShapeMismatch);
    CHECK(error.axis() == 1);
  }
  CHECK(kind_of([&] { add(Tensor::zeros(DType::F32, {2}), Tensor::zeros(DType::BF16, {2})); }) ==
        ErrorKind::DTypeMismatch);
}

TEST_CASE("large strided operands take the parallel path correctly", "[elementwise]") {
  // 64 x 50 x 40 elements, a transposed left operand and a broadcast right one.
  const std::vector<float> values = random_floats(64 * 40 * 50, 11);
  const Tensor base = Tensor::from_vector(values, {64, 40, 50});
  const Tensor left = base.permute({0, 2, 1});  // [64, 50, 40]
  const Tensor right = Tensor::from_vector(random_floats(40, 12), {40});
  const Tensor product = mul(left, right);
  const std::vector<float> r = right.to_vector<float>();
  const std::vector<float> out = product.to_vector<float>();
  bool all_match = true;
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 50; ++j)
      for (int64_t k = 0; k < 40; ++k)
        all_match &= out[(i * 50 + j) * 40 + k] == values[(i * 40 + k) * 50 + j] * r[k];
  CHECK(all_match);
}

TEST_CASE("f32 math functions are accurate to a few ulp", "[elementwise]") {
  const Tensor x = Tensor::from_vector(reference::f32_math_inputs, {static_cast<int64_t>(reference::f32_math_inputs.size())});
  const Tensor p =
      Tensor::from_vector(reference::f32_positive_inputs, {static_cast<int64_t>(reference::f32_positive_inputs.size())});
  const std::vector<std::tuple<UnaryOp, const Tensor*, const std::vector<double>*, int>> cases = {
      {UnaryOp::Exp, &x, &reference::math_exp, 2},     {UnaryOp::Sin, &x, &reference::math_sin, 2},
      {UnaryOp::Cos, &x, &reference::math_cos, 2},     {UnaryOp::Tanh, &x, &reference::math_tanh, 3},
      {UnaryOp::Sigmoid, &x, &reference::math_sigmoid, 4}, {UnaryOp::Erf, &x, &reference::math_erf, 2},
      {UnaryOp::Floor, &x, &reference::math_floor, 0}, {UnaryOp::Ceil, &x, &reference::math_ceil, 0},
      {UnaryOp::Round, &x, &reference::math_round, 0}, {UnaryOp::Trunc, &x, &reference::math_trunc, 0},
      {UnaryOp::Abs, &x, &reference::math_abs, 0},     {UnaryOp::Neg, &x, &reference::math_neg, 0},
      {UnaryOp::Log, &p, &reference::math_log, 2},     {UnaryOp::Sqrt, &p, &reference::math_sqrt, 0},
      {UnaryOp::Rsqrt, &p, &reference::math_rsqrt, 2}, {UnaryOp::Log1p, &p, &reference::math_log1p, 2}};
  for (const auto& [op, input, expected, max_ulp] : cases) {
    INFO(unary_op_name(op));
    const std::vector<float> result = unary(op, *input).to_vector<float>();
    int64_t worst = 0;
    for (size_t i = 0; i < result.size(); ++i) {
      const float want = static_cast<float>((*expected)[i]);
      // Signs agree except at zero crossings, where an absolute tolerance is the fair measure.
      if (std::fabs(want) < 1e-6f) {
        CHECK(std::fabs(result[i] - want) < 1e-6f);
      } else {
        worst = std::max(worst, ulp_distance(result[i], want));
      }
    }
    CHECK(worst <= max_ulp);
  }
}

TEST_CASE("bf16 and f16 math is the f32 result rounded once", "[elementwise]") {
  for (DType dtype : {DType::BF16, DType::F16}) {
    const Tensor x = Tensor::from_vector(reference::f32_math_inputs,
                                         {static_cast<int64_t>(reference::f32_math_inputs.size())}, dtype);
    for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Sin, UnaryOp::Erf, UnaryOp::Rsqrt}) {
      INFO(dtype_name(dtype) << " " << unary_op_name(op));
      const Tensor result = unary(op, x);
      CHECK(result.dtype() == dtype);
      // The same function on the widened input, in f32, rounded by cast.
      const Tensor in_f32 = unary(op, x.to(DType::F32));
      CHECK(half_bits(result) == half_bits(cast(in_f32, dtype)));
    }
  }
  // One hand-checked value: exp(1) = 2.71828... -> bf16 2.71875 (0x402E), f16 2.71875 (0x4170).
  CHECK(half_bits(unary(UnaryOp::Exp, Tensor::from_vector<float>({1.0f}, {1}, DType::BF16))) ==
        std::vector<uint16_t>{0x402E});
  CHECK(half_bits(unary(UnaryOp::Exp, Tensor::from_vector<float>({1.0f}, {1}, DType::F16))) ==
        std::vector<uint16_t>{0x4170});
}

TEST_CASE("f64 math runs in double precision", "[elementwise]") {
  const Tensor x = Tensor::from_vector(reference::f32_math_inputs,
                                       {static_cast<int64_t>(reference::f32_math_inputs.size())}, DType::F64);
  const std::vector<double> e = unary(UnaryOp::Exp, x).to_vector<double>();
  const std::vector<double> t = unary(UnaryOp::Tanh, x).to_vector<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    CHECK(std::fabs(e[i] - reference::math_exp[i]) <= 4e-16 * std::fabs(reference::math_exp[i]));
    CHECK(std::fabs(t[i] - reference::math_tanh[i]) <= 4e-16 * std::fabs(reference::math_tanh[i]) + 1e-300);
  }
}

TEST_CASE("integer unary operators wrap", "[elementwise]") {
  const Tensor x = Tensor::from_vector<int8_t>({-128, -5, 0, 7, 127}, {5});
  CHECK(unary(UnaryOp::Neg, x).to_vector<int8_t>() == std::vector<int8_t>{-128, 5, 0, -7, -127});
  CHECK(unary(UnaryOp::Abs, x).to_vector<int8_t>() == std::vector<int8_t>{-128, 5, 0, 7, 127});
  CHECK(unary(UnaryOp::Sign, x).to_vector<int8_t>() == std::vector<int8_t>{-1, -1, 0, 1, 1});
  CHECK(unary(UnaryOp::Not, x).to_vector<int8_t>() == std::vector<int8_t>{127, 4, -1, -8, -128});
  const Tensor u = Tensor::from_vector<uint16_t>({0, 1, 65535}, {3});
  CHECK(unary(UnaryOp::Neg, u).to_vector<uint16_t>() == std::vector<uint16_t>{0, 65535, 1});
  CHECK(unary(UnaryOp::Sign, u).to_vector<uint16_t>() == std::vector<uint16_t>{0, 1, 1});
  CHECK(kind_of([&] { unary(UnaryOp::Exp, x); }) == ErrorKind::UnsupportedDType);
  CHECK(kind_of([&] { unary(UnaryOp::Neg, Tensor::zeros(DType::Bool, {1})); }) == ErrorKind::UnsupportedDType);
}

TEST_CASE("float sign, round half to even, isnan", "[elementwise]") {
  const Tensor x = Tensor::from_vector<double>({-2.5, -0.5, 0.5, 1.5, 2.5, 0.0, NAN}, {7});
  CHECK(unary(UnaryOp::Round, x.slice(0, 0, 6)).to_vector<double>() ==
        std::vector<double>{-2.0, -0.0, 0.0, 2.0, 2.0, 0.0});
  const std::vector<double> sign = unary(UnaryOp::Sign, x).to_vector<double>();
  CHECK(std::vector<double>(sign.begin(), sign.end() - 1) == std::vector<double>{-1, -1, 1, 1, 1, 0});
  CHECK(std::isnan(sign.back()));
  CHECK(unary(UnaryOp::IsNan, x).to_vector<bool>() ==
        std::vector<bool>{false, false, false, false, false, false, true});
  CHECK(unary(UnaryOp::Reciprocal, Tensor::from_vector<float>({4.0f}, {1})).at<float>({0}) == 0.25f);
  CHECK(pow(Tensor::from_vector<float>({2.0f, 9.0f}, {2}), Tensor::from_vector<float>({10.0f, 0.5f}, {2}))
            .to_vector<float>() == std::vector<float>{1024.0f, 3.0f});
}
