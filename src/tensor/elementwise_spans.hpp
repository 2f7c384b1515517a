// Internal: the span kernels of the elementwise operators. A span kernel
// applies one element rule (linnet/tensor/element_arithmetic.hpp) to `n`
// consecutive elements: a plain loop over arrays that the compiler
// vectorises, with no strides and no call per element. Each is compiled
// three times (elementwise_spans_<isa>.cpp), for the baseline x86-64, AVX2
// and AVX-512, and the kernels take the copy of the path chosen at run time
// (elementwise_path.cpp). The rules are the same C++ expressions the
// per-element loop evaluates, compiled without fast-math or contraction, so
// each element's bits are the same on every path.
#pragma once

#include <cstdint>

#include "linnet/tensor/dtype.hpp"
#include "linnet/tensor/elementwise_path.hpp"
#include "linnet/tensor/kernels.hpp"

namespace linnet::tensor::detail {

// out[i] = rule(a[i], b[i]) for i < n. In the `scalar_left` form a points at
// one element used for every i, in `scalar_right` b does.
using BinarySpan = void (*)(void* out, const void* a, const void* b, int64_t n);
// out[i] = rule(x[i]) for i < n.
using UnarySpan = void (*)(void* out, const void* x, int64_t n);

struct BinarySpans {
  BinarySpan dense = nullptr;
  BinarySpan scalar_left = nullptr;
  BinarySpan scalar_right = nullptr;
  DType out = DType::Bool;  // the result's dtype (Bool for comparisons)
  explicit operator bool() const { return dense != nullptr; }
};

struct UnarySpans {
  UnarySpan dense = nullptr;
  DType out = DType::Bool;
  explicit operator bool() const { return dense != nullptr; }
};

// The span kernels of the active path (elementwise_path.cpp), or empty ones
// where the path is the per-element loop or has no span kernel for this
// dtype and operator: the caller then runs the per-element loop.
BinarySpans binary_spans(DType dtype, BinaryOp op);
UnarySpans unary_spans(DType dtype, UnaryOp op);
UnarySpans cast_spans(DType from, DType to);
// The cast span of a given path (the CPU's best one, whatever a test forces
// for the elementwise operators): for kernels outside them, such as gemm's
// widening of bf16 operands.
UnarySpans cast_spans_on(ElementwisePath path, DType from, DType to);

// One table per instruction set, each in its own file.
#define LINNET_ELEMENTWISE_SPAN_TABLE(isa)                  \
  namespace isa {                                           \
  BinarySpans binary_spans(DType dtype, BinaryOp op);       \
  UnarySpans unary_spans(DType dtype, UnaryOp op);          \
  UnarySpans cast_spans(DType from, DType to);              \
  }
LINNET_ELEMENTWISE_SPAN_TABLE(spans_baseline)
LINNET_ELEMENTWISE_SPAN_TABLE(spans_avx2)
LINNET_ELEMENTWISE_SPAN_TABLE(spans_avx512)
#undef LINNET_ELEMENTWISE_SPAN_TABLE

}  // namespace linnet::tensor::detail
