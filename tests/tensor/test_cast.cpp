// cast<T>: every dtype pair, float->int truncation and saturation, integer
// wrapping, single rounding into narrow floats, bool conversions.
#include <catch2/catch.hpp>

#include "reference_data.inc"
#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

Tensor f32_tensor_from_bits(const std::vector<uint32_t>& bits) {
  std::vector<float> values;
  for (uint32_t b : bits) values.push_back(f32_from_bits(b));
  return Tensor::from_vector(values, {static_cast<int64_t>(values.size())});
}

template <class T>
std::vector<T> cast_values(const Tensor& x, DType dtype) {
  return cast(x, dtype).to_vector<T>();
}

}  // namespace

TEST_CASE("cast f32 to bf16 and f16 matches the exact rounding", "[cast]") {
  const Tensor x = f32_tensor_from_bits(reference::f32_bits_inputs);
  CHECK(half_bits(cast(x, DType::BF16)) == reference::bf16_from_f32);
  CHECK(half_bits(cast(x, DType::F16)) == reference::f16_from_f32);
}

TEST_CASE("cast f64 to bf16, f16 and f32 rounds once", "[cast]") {
  std::vector<double> values;
  for (uint64_t b : reference::f64_bits_inputs) values.push_back(std::bit_cast<double>(b));
  const Tensor x = Tensor::from_vector(values, {static_cast<int64_t>(values.size())});
  CHECK(half_bits(cast(x, DType::BF16)) == reference::bf16_from_f64);
  CHECK(half_bits(cast(x, DType::F16)) == reference::f16_from_f64);
  std::vector<uint32_t> f32_bits;
  for (float v : cast(x, DType::F32).to_vector<float>()) f32_bits.push_back(bits_of(v));
  CHECK(f32_bits == reference::f32_from_f64);
}

TEST_CASE("cast i64 to bf16, f16 and f32 rounds once", "[cast]") {
  const Tensor x = Tensor::from_vector(reference::i64_inputs, {static_cast<int64_t>(reference::i64_inputs.size())});
  CHECK(half_bits(cast(x, DType::BF16)) == reference::bf16_from_i64);
  CHECK(half_bits(cast(x, DType::F16)) == reference::f16_from_i64);
  std::vector<uint32_t> f32_bits;
  for (float v : cast(x, DType::F32).to_vector<float>()) f32_bits.push_back(bits_of(v));
  CHECK(f32_bits == reference::f32_from_i64);
}

TEST_CASE("cast float to integers truncates toward zero and saturates", "[cast]") {
  const Tensor x = f32_tensor_from_bits(reference::float_to_int_input_bits);
  auto as_i64 = [](const auto& values) { return std::vector<int64_t>(values.begin(), values.end()); };
  CHECK(as_i64(cast_values<int8_t>(x, DType::I8)) == reference::float_to_i8);
  CHECK(as_i64(cast_values<int32_t>(x, DType::I32)) == reference::float_to_i32);
  CHECK(cast_values<int64_t>(x, DType::I64) == reference::float_to_i64);
  std::vector<uint64_t> u8;
  for (uint8_t v : cast_values<uint8_t>(x, DType::U8)) u8.push_back(v);
  CHECK(u8 == reference::float_to_u8);
  CHECK(cast_values<uint64_t>(x, DType::U64) == reference::float_to_u64);
  // The same rules from bf16 and f64 sources.
  CHECK(cast_values<int32_t>(Tensor::from_vector<float>({-2.75f, 2.75f, 1e20f}, {3}, DType::BF16), DType::I32) ==
        std::vector<int32_t>{-2, 2, INT32_MAX});
  CHECK(cast_values<int16_t>(Tensor::from_vector<double>({-40000.5, 40000.5, -7.9}, {3}), DType::I16) ==
        std::vector<int16_t>{INT16_MIN, INT16_MAX, -7});
}

TEST_CASE("cast between integers wraps", "[cast]") {
  const Tensor x = Tensor::from_vector(reference::wrap_inputs, {static_cast<int64_t>(reference::wrap_inputs.size())});
  auto widen = [](const auto& values) {
    using V = typename std::decay_t<decltype(values)>::value_type;
    using Wide = std::conditional_t<std::is_signed_v<V>, int64_t, uint64_t>;
    return std::vector<Wide>(values.begin(), values.end());
  };
  CHECK(widen(cast_values<int8_t>(x, DType::I8)) == reference::wrap_to_i8);
  CHECK(widen(cast_values<int16_t>(x, DType::I16)) == reference::wrap_to_i16);
  CHECK(widen(cast_values<int32_t>(x, DType::I32)) == reference::wrap_to_i32);
  CHECK(widen(cast_values<uint8_t>(x, DType::U8)) == reference::wrap_to_u8);
  CHECK(widen(cast_values<uint16_t>(x, DType::U16)) == reference::wrap_to_u16);
  CHECK(widen(cast_values<uint32_t>(x, DType::U32)) == reference::wrap_to_u32);
  CHECK(widen(cast_values<uint64_t>(x, DType::U64)) == reference::wrap_to_u64);
}

TEST_CASE("cast to and from bool", "[cast]") {
  const Tensor floats = Tensor::from_vector<float>({0.0f, -0.0f, 0.5f, -3.0f, NAN}, {5});
  CHECK(cast(floats, DType::Bool).to_vector<bool>() == std::vector<bool>{false, false, true, true, true});
  const Tensor ints = Tensor::from_vector<int32_t>({0, 7, -1, 256}, {4});
  CHECK(cast(ints, DType::Bool).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  // 256 as u8 would be 0, but the bool test is on the value itself.
  const Tensor flags = Tensor::from_vector<bool>({true, false, true}, {3});
  CHECK(cast(flags, DType::I64).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});
  CHECK(cast(flags, DType::BF16).to_vector<float>() == std::vector<float>{1.0f, 0.0f, 1.0f});
  CHECK(cast(flags, DType::F64).to_vector<double>() == std::vector<double>{1.0, 0.0, 1.0});
}

TEST_CASE("cast between bf16 and f16 rounds once from the exact value", "[cast]") {
  // bf16 1 + 2^-7 is exact in f16 (mantissa 8 * 2^-10); f16 1 + 2^-10 is below half a bf16 ulp above 1.
  CHECK(half_bits(cast(half_from_bits({0x3F81}, DType::BF16), DType::F16)) == std::vector<uint16_t>{0x3C08});
  CHECK(half_bits(cast(half_from_bits({0x3C01}, DType::F16), DType::BF16)) == std::vector<uint16_t>{0x3F80});
  // bf16 1e5 is beyond f16's range: infinity. A bf16 subnormal is 0 in f16.
  CHECK(half_bits(cast(Tensor::from_vector<float>({1e5f, -1e5f}, {2}, DType::BF16), DType::F16)) ==
        std::vector<uint16_t>{0x7C00, 0xFC00});
  CHECK(half_bits(cast(half_from_bits({0x0001}, DType::BF16), DType::F16)) == std::vector<uint16_t>{0x0000});
}

TEST_CASE("every dtype pair carries small values unchanged", "[cast]") {
  const std::vector<int64_t> small = {0, 1, 2, 5, 1, 0};
  const std::vector<int64_t> flags = {0, 1, 1, 1, 1, 0};  // what bool makes of `small`
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      INFO(dtype_name(from) << " -> " << dtype_name(to));
      const Tensor source = Tensor::from_vector(small, {2, 3}, from);
      const Tensor converted = cast(source, to);
      CHECK(converted.dtype() == to);
      CHECK(converted.shape() == Shape{2, 3});
      const bool through_bool = from == DType::Bool || to == DType::Bool;
      CHECK(converted.to_vector<int64_t>() == (through_bool ? flags : small));
    }
  }
}

TEST_CASE("cast of a strided view reads the view's elements", "[cast]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(cast(x.permute({1, 0}), DType::I32).to_vector<int32_t>() == std::vector<int32_t>{1, 4, 2, 5, 3, 6});
  CHECK(cast(x.slice(1, 0, 3, 2), DType::F64).to_vector<double>() == std::vector<double>{1, 3, 4, 6});
}

TEST_CASE("dtype names read back to their dtypes, and nothing else does", "[dtype]") {
  for (DType dtype : linnet::tensor::kAllDTypes) {
    const std::optional<DType> read = linnet::tensor::dtype_from_name(linnet::tensor::dtype_name(dtype));
    REQUIRE(read.has_value());
    CHECK(*read == dtype);
  }
  for (const char* other : {"", "T", "f", "f8", "f32x", "bool8", "F32", "float32", "i128"}) {
    CHECK_FALSE(linnet::tensor::dtype_from_name(other).has_value());
  }
}
