// Typed scalars held as bare elements (src/eval/scalar_elements.hpp): every
// operator gives the bits the tensor kernels give on rank-0 tensors, and a
// scalar loop allocates no tensor per iteration.
#include <cmath>
#include <cstring>
#include <limits>

#include "../../src/eval/scalar_elements.hpp"
#include "eval_test_util.hpp"
#include "linnet/tensor/allocator.hpp"

using namespace eval_test;
namespace elements = linnet::eval::scalar_elements;
using linnet::tensor::BinaryOp;
using linnet::tensor::Scalar;
using linnet::tensor::UnaryOp;

namespace {

const std::vector<DType> kDTypes = {DType::Bool, DType::I8,  DType::I16,  DType::I32, DType::I64,
                                    DType::U8,   DType::U16, DType::U32,  DType::U64, DType::F16,
                                    DType::BF16, DType::F32, DType::F64};

const std::vector<BinaryOp> kBinaryOps = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem,
                                          BinaryOp::Min, BinaryOp::Max, BinaryOp::Pow, BinaryOp::Eq,  BinaryOp::Ne,
                                          BinaryOp::Lt,  BinaryOp::Le,  BinaryOp::Gt,  BinaryOp::Ge,  BinaryOp::And,
                                          BinaryOp::Or,  BinaryOp::Xor, BinaryOp::Shl, BinaryOp::Shr};

// Values at the edges of every dtype: zero, signs, overflow, fractions, NaN.
std::vector<Scalar> edge_values() {
  return {Scalar(0),
          Scalar(1),
          Scalar(-1),
          Scalar(2),
          Scalar(7),
          Scalar(-8),
          Scalar(127),
          Scalar(-128),
          Scalar(int64_t{2147483647}),
          Scalar(std::numeric_limits<int64_t>::min()),
          Scalar(std::numeric_limits<uint64_t>::max()),
          Scalar(0.5),
          Scalar(-2.75),
          Scalar(1e30),
          Scalar(std::numeric_limits<double>::quiet_NaN()),
          Scalar(true)};
}

// The kernel's answer as an element, or nullopt when it throws.
std::optional<elements::Element> kernel_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  try {
    return elements::of_tensor(linnet::tensor::binary(op, a, b));
  } catch (const linnet::tensor::TensorError&) {
    return std::nullopt;
  }
}

std::optional<elements::Element> kernel_unary(UnaryOp op, const Tensor& x) {
  try {
    return elements::of_tensor(linnet::tensor::unary(op, x));
  } catch (const linnet::tensor::TensorError&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("a scalar element's operators give the kernels' bits", "[scalar]") {
  const std::vector<Scalar> values = edge_values();
  size_t compared = 0;
  for (DType dtype : kDTypes) {
    for (const Scalar& x : values) {
      const elements::Element a = elements::from_scalar(dtype, x);
      const Tensor ta = Tensor::scalar(dtype, x);
      REQUIRE(elements::of_tensor(ta).bits == a.bits);
      REQUIRE(elements::of_tensor(elements::to_tensor(a)).bits == a.bits);
      for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Not}) {
        const auto expected = kernel_unary(op, ta);
        const auto got = elements::unary(op, a);
        INFO(linnet::tensor::dtype_name(dtype) << " " << x.to_string());
        REQUIRE(got.has_value() == expected.has_value());
        if (got) CHECK(got->bits == expected->bits);
      }
      for (const Scalar& y : values) {
        const elements::Element b = elements::from_scalar(dtype, y);
        const Tensor tb = Tensor::scalar(dtype, y);
        for (BinaryOp op : kBinaryOps) {
          const auto expected = kernel_binary(op, ta, tb);
          const auto got = elements::binary(op, a, b);
          INFO(linnet::tensor::dtype_name(dtype) << " " << x.to_string() << " " << linnet::tensor::binary_op_name(op)
                                                 << " " << y.to_string());
          REQUIRE(got.has_value() == expected.has_value());
          if (!got) continue;
          CHECK(got->dtype == expected->dtype);
          CHECK(got->bits == expected->bits);
          ++compared;
        }
      }
    }
  }
  CHECK(compared > 30000);
}

TEST_CASE("a scalar `while` loop allocates no tensor per iteration", "[scalar]") {
  // Scalars were rank-0 tensors with storage of their own: every `+` and
  // every comparison allocated one, and the default limit of 10 million
  // iterations took tens of seconds.
  auto program = load_source(R"(
pub fn spin(limit: i32) -> i32 {
    var count: i32 = 0
    var total: i32 = 0
    var flag = false
    var x: f32 = 1.0
    while count < limit && !flag {
        count = count + 1
        total = total + count * 2 - (count % 3)
        x = -x * 0.5 + 1.0
        flag = total < 0
    }
    return total
}
)");
  auto allocations_for = [&](int32_t limit, int64_t& total) {
    const size_t before = linnet::tensor::memory_stats().allocations;
    total = call_tensor(program, "spin", {scalar_i32(limit)}).item().to<int64_t>();
    return linnet::tensor::memory_stats().allocations - before;
  };
  int64_t small_total = 0;
  int64_t large_total = 0;
  const size_t small = allocations_for(10, small_total);
  const size_t large = allocations_for(10000, large_total);
  CHECK(small_total == 100);      // sum of 2c - c % 3 for c = 1..10
  CHECK(large_total == 100000000);
  CHECK(large == small);
}
