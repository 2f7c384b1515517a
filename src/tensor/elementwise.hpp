// Internal: typed elementwise maps on top of the strided loop. `out` is a
// fresh contiguous tensor; inputs are views already broadcast to out's shape.
// The function objects take and return storage values (bf16_t, float, ...),
// so each one decides where its single rounding happens.
#pragma once

#include <algorithm>
#include <cstring>

#include "elementwise_spans.hpp"
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

// ---------------------------------------------------------------- span kernels
//
// The same maps with the element rule applied by span kernels
// (elementwise_spans.hpp) to whole runs of the innermost axis. A run whose
// operands are dense along it (or one repeated element, stride 0) goes to
// the kernel as it is; otherwise its strided operands are gathered into
// small buffers, kSpanBlock elements at a time, and a strided output is
// scattered back from one, so that the arithmetic is still one vectorised
// loop. The split over threads is run_loop's, as for the maps above.

// Elements per gathered block: buffers of a few KiB on the stack.
inline constexpr int64_t kSpanBlock = 256;
inline constexpr size_t kSpanMaxElement = 8;  // bytes

template <class Word>
void copy_strided(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t n) {
  if (dst_step == sizeof(Word) && src_step == 2 * static_cast<int64_t>(sizeof(Word))) {
    // Every other element (GPT-OSS's interleaved gate and up halves): a
    // constant stride, which the compiler turns into vector shuffles.
    Word* __restrict to = reinterpret_cast<Word*>(dst);
    const Word* __restrict from = reinterpret_cast<const Word*>(src);
    for (int64_t i = 0; i < n; ++i) to[i] = from[2 * i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    Word value;
    std::memcpy(&value, src + i * src_step, sizeof(Word));
    std::memcpy(dst + i * dst_step, &value, sizeof(Word));
  }
}

// Copies n elements of `width` bytes from src (byte step src_step) to dst (dst_step).
inline void copy_elements(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t n,
                          size_t width) {
  switch (width) {
    case 1: copy_strided<uint8_t>(dst, dst_step, src, src_step, n); break;
    case 2: copy_strided<uint16_t>(dst, dst_step, src, src_step, n); break;
    case 4: copy_strided<uint32_t>(dst, dst_step, src, src_step, n); break;
    default: copy_strided<uint64_t>(dst, dst_step, src, src_step, n); break;
  }
}

// An input run's elements [done, done + count) as the kernel reads them:
// in place when dense or repeated, else gathered into `buffer`.
inline const std::byte* span_input(const std::byte* base, int64_t step, size_t width, int64_t done, int64_t count,
                                   std::byte* buffer) {
  const auto dense = static_cast<int64_t>(width);
  if (step == 0) return base;
  if (step == dense) return base + done * dense;
  copy_elements(buffer, dense, base + done * step, step, count, width);
  return buffer;
}

// out[i] = rule(a[i], b[i]) with the rule's span kernels.
inline void map_binary_spans(Tensor& out, const Tensor& a, const Tensor& b, const BinarySpans& spans) {
  const size_t out_width = out.element_size();
  const size_t a_width = a.element_size();
  const size_t b_width = b.element_size();
  auto loop = plan_loop<3>(out.shape(), {&out, &a, &b});
  run_loop(loop, [&](const Pointers<3>& p, const ByteSteps<3>& s, int64_t n) {
    const bool a_repeats = s[1] == 0;
    const bool b_repeats = s[2] == 0;
    if (a_repeats && b_repeats) {
      // One value for the whole run: computed once, then copied.
      alignas(kSpanMaxElement) std::byte value[kSpanMaxElement];
      spans.dense(value, p[1], p[2], 1);
      copy_elements(p[0], s[0], value, 0, n, out_width);
      return;
    }
    const BinarySpan kernel = a_repeats ? spans.scalar_left : b_repeats ? spans.scalar_right : spans.dense;
    const bool out_dense = s[0] == static_cast<int64_t>(out_width);
    if (out_dense && (a_repeats || s[1] == static_cast<int64_t>(a_width)) &&
        (b_repeats || s[2] == static_cast<int64_t>(b_width))) {
      kernel(p[0], p[1], p[2], n);
      return;
    }
    alignas(64) std::byte a_block[kSpanBlock * kSpanMaxElement];
    alignas(64) std::byte b_block[kSpanBlock * kSpanMaxElement];
    alignas(64) std::byte out_block[kSpanBlock * kSpanMaxElement];
    for (int64_t done = 0; done < n; done += kSpanBlock) {
      const int64_t count = std::min(kSpanBlock, n - done);
      const std::byte* x = span_input(p[1], s[1], a_width, done, count, a_block);
      const std::byte* y = span_input(p[2], s[2], b_width, done, count, b_block);
      std::byte* o = out_dense ? p[0] + done * s[0] : out_block;
      kernel(o, x, y, count);
      if (!out_dense) copy_elements(p[0] + done * s[0], s[0], out_block, static_cast<int64_t>(out_width), count, out_width);
    }
  });
}

// out[i] = rule(x[i]) with the rule's span kernel (a unary operator or a cast).
inline void map_unary_spans(Tensor& out, const Tensor& x, const UnarySpans& spans) {
  const size_t out_width = out.element_size();
  const size_t x_width = x.element_size();
  auto loop = plan_loop<2>(out.shape(), {&out, &x});
  run_loop(loop, [&](const Pointers<2>& p, const ByteSteps<2>& s, int64_t n) {
    if (s[1] == 0) {
      alignas(kSpanMaxElement) std::byte value[kSpanMaxElement];
      spans.dense(value, p[1], 1);
      copy_elements(p[0], s[0], value, 0, n, out_width);
      return;
    }
    const bool out_dense = s[0] == static_cast<int64_t>(out_width);
    if (out_dense && s[1] == static_cast<int64_t>(x_width)) {
      spans.dense(p[0], p[1], n);
      return;
    }
    alignas(64) std::byte x_block[kSpanBlock * kSpanMaxElement];
    alignas(64) std::byte out_block[kSpanBlock * kSpanMaxElement];
    for (int64_t done = 0; done < n; done += kSpanBlock) {
      const int64_t count = std::min(kSpanBlock, n - done);
      const std::byte* in = span_input(p[1], s[1], x_width, done, count, x_block);
      std::byte* o = out_dense ? p[0] + done * s[0] : out_block;
      spans.dense(o, in, count);
      if (!out_dense) copy_elements(p[0] + done * s[0], s[0], out_block, static_cast<int64_t>(out_width), count, out_width);
    }
  });
}

}  // namespace linnet::tensor::detail
