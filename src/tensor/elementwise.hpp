// Internal: typed elementwise maps on top of the strided loop. `out` is a
// fresh contiguous tensor; inputs are views already broadcast to out's shape.
// The function objects take and return storage values (bf16_t, float, ...),
// so each one decides where its single rounding happens.
#pragma once

#include "strided_loop.hpp"

namespace linnet::tensor::detail {

// out[i] = f(x[i])
template <class Out, class In, class F>
void map_unary(Tensor& out, const Tensor& x, F f) {
  auto loop = plan_loop<2>(out.shape(), {&out, &x});
  run_loop(loop, [&](const Pointers<2>& p, const ByteSteps<2>& s, int64_t n) {
    Out* __restrict o = reinterpret_cast<Out*>(p[0]);
    const In* __restrict a = reinterpret_cast<const In*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else if (s[0] == sizeof(Out) && s[1] == 0) {
      const Out value = f(*a);
      for (int64_t i = 0; i < n; ++i) o[i] = value;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const In*>(p[1] + i * s[1]));
      }
    }
  });
}

// out[i] = f(a[i], b[i]); dense and scalar-broadcast runs get plain loops.
template <class Out, class A, class B, class F>
void map_binary(Tensor& out, const Tensor& a, const Tensor& b, F f) {
  auto loop = plan_loop<3>(out.shape(), {&out, &a, &b});
  run_loop(loop, [&](const Pointers<3>& p, const ByteSteps<3>& s, int64_t n) {
    Out* __restrict o = reinterpret_cast<Out*>(p[0]);
    const A* __restrict x = reinterpret_cast<const A*>(p[1]);
    const B* __restrict y = reinterpret_cast<const B*>(p[2]);
    const bool dense_out = s[0] == sizeof(Out);
    if (dense_out && s[1] == sizeof(A) && s[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (dense_out && s[1] == sizeof(A) && s[2] == 0) {
      const B right = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], right);
    } else if (dense_out && s[1] == 0 && s[2] == sizeof(B)) {
      const A left = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(left, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            f(*reinterpret_cast<const A*>(p[1] + i * s[1]), *reinterpret_cast<const B*>(p[2] + i * s[2]));
      }
    }
  });
}

// out[i] = f(c[i], a[i], b[i])
template <class Out, class C, class A, class B, class F>
void map_ternary(Tensor& out, const Tensor& c, const Tensor& a, const Tensor& b, F f) {
  auto loop = plan_loop<4>(out.shape(), {&out, &c, &a, &b});
  run_loop(loop, [&](const Pointers<4>& p, const ByteSteps<4>& s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(C) && s[2] == sizeof(A) && s[3] == sizeof(B)) {
      Out* __restrict o = reinterpret_cast<Out*>(p[0]);
      const C* __restrict w = reinterpret_cast<const C*>(p[1]);
      const A* __restrict x = reinterpret_cast<const A*>(p[2]);
      const B* __restrict y = reinterpret_cast<const B*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(w[i], x[i], y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = f(*reinterpret_cast<const C*>(p[1] + i * s[1]),
                                                     *reinterpret_cast<const A*>(p[2] + i * s[2]),
                                                     *reinterpret_cast<const B*>(p[3] + i * s[3]));
      }
    }
  });
}

}  // namespace linnet::tensor::detail
