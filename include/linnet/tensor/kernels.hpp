// Whole-tensor kernels. Every kernel takes tensors of any layout (views,
// broadcasts), returns a new owned contiguous tensor, and throws TensorError
// for bad input. Operands of a binary kernel must share a dtype: Linnet never
// promotes implicitly (spec 3.11); shapes broadcast right-aligned.
//
// Numerics:
// - bf16 and f16 are computed in f32 and each kernel's result is rounded once
//   to the dtype, to nearest even (as PyTorch does per operator).
// - Integer arithmetic wraps at the dtype's width (two's complement); integer
//   `/` and `%` truncate toward zero; integer division by zero throws
//   DivisionByZero. MIN / -1 wraps to MIN and MIN % -1 is 0.
// - Casts: float -> integer truncates toward zero and saturates at the
//   integer's range (NaN gives 0); integer -> integer wraps; every narrowing
//   into a float dtype rounds once to nearest even; anything -> bool is
//   `!= 0`; bool -> number is 0 or 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "linnet/tensor/tensor.hpp"

namespace linnet::tensor {

// --- Casts -----------------------------------------------------------------

Tensor cast(const Tensor& x, DType to);

// --- Elementwise binary ------------------------------------------------------

enum class BinaryOp {
  Add, Sub, Mul, Div, Rem,  // numeric; float Rem is fmod (truncating, like integer %)
  Min, Max,                 // numeric; a NaN operand gives NaN
  Pow,                      // numeric; integer powers wrap, a negative integer exponent truncates (1/b^n -> 0 unless |b| = 1)
  Eq, Ne, Lt, Le, Gt, Ge,   // any dtype; the result is bool
  And, Or, Xor,             // logical on bool, bitwise on integers
  Shl, Shr,                 // integers; Shr is arithmetic for signed, logical for unsigned;
                            // a count outside [0, bits) shifts every bit out (0, or -1 for negative signed Shr)
};

const char* binary_op_name(BinaryOp op);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);

inline Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
inline Tensor rem(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Rem, a, b); }
inline Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Min, a, b); }
inline Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Max, a, b); }
inline Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }

// --- Elementwise unary -------------------------------------------------------

enum class UnaryOp {
  Neg, Abs, Sign,              // numeric (Neg and Abs wrap for integers)
  Not,                         // logical on bool, bitwise on integers
  Exp, Log, Log1p, Expm1, Sqrt, Rsqrt, Reciprocal,
  Sin, Cos, Tan, Tanh, Sigmoid, Erf,
  Floor, Ceil, Round, Trunc,   // float only; Round is half-to-even
  IsNan,                       // float only; the result is bool
};

const char* unary_op_name(UnaryOp op);
Tensor unary(UnaryOp op, const Tensor& x);

// --- Choice, layout and constants ------------------------------------------

// Elementwise cond ? a : b; cond is bool; all three broadcast together.
Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b);
// Joins tensors of one dtype and rank along `axis` (negative counts from the
// end); every other extent must match.
Tensor concat(const std::vector<Tensor>& parts, int axis);
// [0, 1, ..., n - 1] as `dtype` (numeric).
Tensor iota(int64_t n, DType dtype = DType::I64);
// A tensor of `shape` holding `value` converted to `dtype`.
Tensor fill(const Shape& shape, DType dtype, Scalar value);
// Copies `src` (broadcast to dst's shape, same dtype) into the elements of
// `dst`, which may be a view (a slice of a cache). dst must be writable and
// must not overlap src.
void assign(Tensor& dst, const Tensor& src);

// Inclusive running sum along `axis`, accumulated and returned in
// `accumulate` (default: x's dtype), rounding after every addition.
Tensor cumsum(const Tensor& x, int axis, std::optional<DType> accumulate = std::nullopt);

// --- Reductions --------------------------------------------------------------

enum class ReduceOp { Sum, Prod, Max, Min, Any, All };

const char* reduce_op_name(ReduceOp op);
// Reduces the listed axes (each once, any order); the result keeps the other
// axes in order. Elements are combined in row-major order of the reduced
// axes, in the accumulator dtype (default: x's dtype), rounding to it after
// each step, so `sum` of bf16 with accumulate = bf16 rounds every partial
// sum and with accumulate = f32 rounds only in f32. The result has the
// accumulator dtype. Any/All take bool. Max/Min over an empty axis throw;
// Sum/Prod/Any/All of nothing give 0/1/false/true.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes,
              std::optional<DType> accumulate = std::nullopt);

// Position (i64) of the largest (smallest) element along `axis`, which is
// removed. The first of equal elements wins; NaN counts as the largest (and
// smallest), so the first NaN wins, as in PyTorch.
Tensor argmax(const Tensor& x, int axis);
Tensor argmin(const Tensor& x, int axis);

// --- Gathers -----------------------------------------------------------------

// NumPy `take`: the result's shape is x.shape[:axis] + index.shape +
// x.shape[axis+1:]; result[..., j..., ...] = x[..., index[j...], ...].
// index holds any integer dtype; a value outside [0, extent) throws
// IndexOutOfRange with the axis, the value and the extent.
Tensor take(const Tensor& x, int axis, const Tensor& index);
// Pointwise gather: one integer index tensor per axis of x, broadcast
// together to the result's shape; result[p] = x[indices[0][p], indices[1][p], ...].
// Bounds errors name the axis of x.
Tensor gather(const Tensor& x, const std::vector<Tensor>& indices);

// --- Contractions ------------------------------------------------------------

// Which axes of a and b pair up. batch_a[i] pairs with batch_b[i] (they stay
// in the result), contract_a[i] with contract_b[i] (summed over). Every other
// axis is free. The result's axes are: the batch axes (in the listed order),
// a's free axes (in a's order), then b's free axes (in b's order). So
//   c[m, n] = sum[k] a[m, k] * b[k, n]      is {batch {}, contract a{1} b{0}}
//   s[b, h, s, t] = sum[d] q[b, h, s, d] * k[b, h, t, d]
//                                          is {batch a{0,1} b{0,1}, contract a{3} b{3}}
struct ContractionAxes {
  std::vector<int> batch_a, batch_b;
  std::vector<int> contract_a, contract_b;
};

// The contraction as matrix products (Eigen) without materialising the outer
// product. f32/f64 run natively; bf16/f16 are widened to f32, multiplied with
// f32 accumulation and rounded once to the output dtype; integer dtypes
// accumulate with wrapping in their own dtype. The result has dtype
// `out_dtype` (default: the inputs' dtype).
Tensor contract(const Tensor& a, const Tensor& b, const ContractionAxes& axes,
                std::optional<DType> out_dtype = std::nullopt);

// The same contraction of two bf16 tensors as `exact` numerics defines
// `sum[k] a * b` in bf16 (docs/semantics.md): every product rounded to bf16,
// then the terms added one at a time in row-major order of the contracted
// axes as listed in `axes.contract_a`, every partial sum rounded to bf16.
// Bit for bit that sequence, vectorized across the outputs (16 at a time
// where the CPU has AVX-512). Result dtype bf16, shape as `contract`.
Tensor contract_rounding_each_step(const Tensor& a, const Tensor& b, const ContractionAxes& axes);

// a[..., M, K] x b[..., K, N] -> [..., M, N]; the leading (batch) axes
// broadcast; b may also be rank 2 (shared by every batch).
Tensor matmul(const Tensor& a, const Tensor& b, std::optional<DType> out_dtype = std::nullopt);

}  // namespace linnet::tensor
