// Kernels that walk "lanes": reductions over a set of axes, argmax/argmin
// along one axis, and cumsum. Each lane (one output position's elements) is
// combined sequentially in index order, so results do not depend on the
// thread count; lanes are spread over threads.
#include <algorithm>
#include <cmath>
#include <string>

#include "dispatch.hpp"
#include "linnet/tensor/kernels.hpp"
#include "strided_loop.hpp"

namespace linnet::tensor {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Any: return "any";
    case ReduceOp::All: return "all";
  }
  return "?";
}

namespace {

using detail::compute_t;

template <class C>
inline bool is_nan(C value) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(value);
  else return false;
}

// Calls lane(out_element, lane_start) for every position of `out`, where
// `starts` is a view of the same shape as `out` giving the first element of
// each lane. Lanes of `lane_length` elements set the parallel grain.
template <class Lane>
void for_each_lane(Tensor& out, const Tensor& starts, int64_t lane_length, Lane lane) {
  auto loop = detail::plan_loop<2>(out.shape(), {&out, &starts});
  const int64_t grain = std::max<int64_t>(1, detail::kParallelGrain / std::max<int64_t>(lane_length, 1));
  detail::run_loop(
      loop,
      [&](const detail::Pointers<2>& p, const detail::ByteSteps<2>& s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) lane(p[0] + i * s[0], p[1] + i * s[1]);
      },
      grain);
}

// The combining step of `op` in the accumulator's compute type CA, rounded to A.
template <class A, ReduceOp Op>
inline compute_t<A> combine(compute_t<A> acc, compute_t<A> value) {
  using CA = compute_t<A>;
  if constexpr (Op == ReduceOp::Any) {
    return acc || value;
  } else if constexpr (Op == ReduceOp::All) {
    return acc && value;
  } else if constexpr (Op == ReduceOp::Max) {
    return (is_nan(acc) || is_nan(value) || value > acc) ? (is_nan(acc) ? acc : value) : acc;
  } else if constexpr (Op == ReduceOp::Min) {
    return (is_nan(acc) || is_nan(value) || value < acc) ? (is_nan(acc) ? acc : value) : acc;
  } else if constexpr (std::is_integral_v<CA>) {
    return Op == ReduceOp::Sum ? detail::wrapping_add(acc, value) : detail::wrapping_mul(acc, value);
  } else {
    return detail::round_to<A>(Op == ReduceOp::Sum ? acc + value : acc * value);
  }
}

template <class S, class A, ReduceOp Op>
void reduce_lanes(Tensor& out, const Tensor& starts, int64_t length, int64_t stride_bytes) {
  using CA = compute_t<A>;
  auto element = [=](const std::byte* lane, int64_t r) {
    return detail::load(detail::convert<A>(*reinterpret_cast<const S*>(lane + r * stride_bytes)));
  };
  auto initial = [&](const std::byte* lane) -> CA {
    if constexpr (Op == ReduceOp::Max || Op == ReduceOp::Min) return element(lane, 0);  // callers ensure length > 0
    else if constexpr (Op == ReduceOp::Prod || Op == ReduceOp::All) return CA(1);
    else return CA(0);
  };
  constexpr int64_t kFirst = (Op == ReduceOp::Max || Op == ReduceOp::Min) ? 1 : 0;
  // Up to this many neighbouring lanes are reduced side by side.
  constexpr int64_t kGroup = 256;
  auto loop = detail::plan_loop<2>(out.shape(), {&out, &starts});
  const int64_t grain = std::max<int64_t>(1, detail::kParallelGrain / std::max<int64_t>(length, 1));
  detail::run_loop(
      loop,
      [&](const detail::Pointers<2>& p, const detail::ByteSteps<2>& s, int64_t n) {
        if (n > 1 && s[1] == static_cast<int64_t>(sizeof(S)) && stride_bytes != s[1]) {
          // Neighbouring lanes start at neighbouring elements (a reduction over
          // an outer axis): step through the lanes together, one reduced
          // position at a time, so memory is read in order. Each lane still
          // combines its own elements in order, so results do not change.
          CA acc[kGroup];
          for (int64_t first = 0; first < n; first += kGroup) {
            const int64_t count = std::min(kGroup, n - first);
            const std::byte* lanes = p[1] + first * s[1];
            for (int64_t i = 0; i < count; ++i) acc[i] = initial(lanes + i * s[1]);
            for (int64_t r = kFirst; r < length; ++r) {
              const S* row = reinterpret_cast<const S*>(lanes + r * stride_bytes);
              for (int64_t i = 0; i < count; ++i) {
                acc[i] = combine<A, Op>(acc[i], detail::load(detail::convert<A>(row[i])));
              }
            }
            for (int64_t i = 0; i < count; ++i) {
              *reinterpret_cast<A*>(p[0] + (first + i) * s[0]) = detail::store<A>(acc[i]);
            }
          }
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          const std::byte* lane = p[1] + i * s[1];
          CA acc = initial(lane);
          for (int64_t r = kFirst; r < length; ++r) acc = combine<A, Op>(acc, element(lane, r));
          *reinterpret_cast<A*>(p[0] + i * s[0]) = detail::store<A>(acc);
        }
      },
      grain);
}

template <class S, class A>
void reduce_typed(ReduceOp op, Tensor& out, const Tensor& starts, int64_t length, int64_t stride_bytes) {
  // reduce() has checked that bool goes with Any/All and numbers with the rest.
  if constexpr (detail::is_bool_storage_v<A>) {
    if (op == ReduceOp::Any) reduce_lanes<S, A, ReduceOp::Any>(out, starts, length, stride_bytes);
    if (op == ReduceOp::All) reduce_lanes<S, A, ReduceOp::All>(out, starts, length, stride_bytes);
  } else {
    switch (op) {
      case ReduceOp::Sum: return reduce_lanes<S, A, ReduceOp::Sum>(out, starts, length, stride_bytes);
      case ReduceOp::Prod: return reduce_lanes<S, A, ReduceOp::Prod>(out, starts, length, stride_bytes);
      case ReduceOp::Max: return reduce_lanes<S, A, ReduceOp::Max>(out, starts, length, stride_bytes);
      case ReduceOp::Min: return reduce_lanes<S, A, ReduceOp::Min>(out, starts, length, stride_bytes);
      case ReduceOp::Any:
      case ReduceOp::All: break;
    }
  }
}

std::vector<int> checked_axes(const std::vector<int>& axes, int rank, const char* what) {
  std::vector<int> result;
  std::vector<bool> seen(rank, false);
  for (int axis : axes) {
    const int normal = normalize_axis(axis, rank);
    if (seen[normal]) {
      throw TensorError(ErrorKind::InvalidAxis, std::string(what) + ": axis " + std::to_string(axis) + " is listed twice",
                        normal, axis, rank);
    }
    seen[normal] = true;
    result.push_back(normal);
  }
  return result;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, std::optional<DType> accumulate) {
  const DType acc_dtype = accumulate.value_or(x.dtype());
  const bool logical = op == ReduceOp::Any || op == ReduceOp::All;
  if (logical != (x.dtype() == DType::Bool) || logical != (acc_dtype == DType::Bool)) {
    throw TensorError(ErrorKind::UnsupportedDType,
                      std::string(reduce_op_name(op)) + (logical ? " reduces bool values" : " reduces numeric values") +
                          ", got " + x.describe() + " accumulated in " + std::string(dtype_name(acc_dtype)));
  }
  const std::vector<int> reduced = checked_axes(axes, x.rank(), reduce_op_name(op));
  std::vector<int> order;
  Shape kept_shape;
  int64_t length = 1;
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (std::find(reduced.begin(), reduced.end(), axis) == reduced.end()) {
      order.push_back(axis);
      kept_shape.push_back(x.shape()[axis]);
    }
  }
  for (int axis : reduced) {
    order.push_back(axis);
    length *= x.shape()[axis];
  }
  Tensor out = Tensor::empty(acc_dtype, kept_shape);
  if (length == 0) {
    if (op == ReduceOp::Max || op == ReduceOp::Min) {
      throw TensorError(ErrorKind::InvalidArgument,
                        std::string(reduce_op_name(op)) + " over an empty axis of " + x.describe() + " has no value");
    }
    const bool one = op == ReduceOp::Prod || op == ReduceOp::All;
    return fill(kept_shape, acc_dtype, one ? Scalar(1) : Scalar(0));
  }
  // Kept axes first, the reduced ones merged into one last axis (a copy only
  // when the reduced axes cannot be merged in place).
  Shape lanes_shape = kept_shape;
  lanes_shape.push_back(length);
  const Tensor lanes = x.permute(order).reshape(lanes_shape);
  const Tensor starts = lanes.select(lanes.rank() - 1, 0);
  const int64_t stride_bytes = lanes.strides().back() * static_cast<int64_t>(lanes.element_size());
  detail::visit_dtype(x.dtype(), [&]<class S>() {
    detail::visit_dtype(acc_dtype, [&]<class A>() {
      if constexpr (detail::is_bool_storage_v<S> == detail::is_bool_storage_v<A>) {
        reduce_typed<S, A>(op, out, starts, length, stride_bytes);
      }
    });
  });
  return out;
}

namespace {

template <bool Largest>
Tensor arg_extreme(const Tensor& x, int axis) {
  const char* name = Largest ? "argmax" : "argmin";
  if (x.rank() == 0) throw TensorError(ErrorKind::InvalidAxis, std::string(name) + " of a rank-0 tensor");
  axis = normalize_axis(axis, x.rank());
  const int64_t length = x.shape()[axis];
  if (length == 0) {
    throw TensorError(ErrorKind::InvalidArgument,
                      std::string(name) + " along an empty axis of " + x.describe(), axis, 0, 0);
  }
  Shape shape = x.shape();
  shape.erase(shape.begin() + axis);
  Tensor out = Tensor::empty(DType::I64, shape);
  const Tensor starts = x.select(axis, 0);
  const int64_t stride_bytes = x.strides()[axis] * static_cast<int64_t>(x.element_size());
  detail::visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    for_each_lane(out, starts, length, [=](std::byte* target, const std::byte* lane) {
      auto element = [&](int64_t r) { return detail::load(*reinterpret_cast<const S*>(lane + r * stride_bytes)); };
      C best = element(0);
      int64_t best_position = 0;
      if (!is_nan(best)) {
        for (int64_t r = 1; r < length; ++r) {
          const C value = element(r);
          if (is_nan(value)) {
            best_position = r;
            break;
          }
          if (Largest ? value > best : value < best) {
            best = value;
            best_position = r;
          }
        }
      }
      *reinterpret_cast<int64_t*>(target) = best_position;
    });
  });
  return out;
}

}  // namespace

Tensor argmax(const Tensor& x, int axis) { return arg_extreme<true>(x, axis); }
Tensor argmin(const Tensor& x, int axis) { return arg_extreme<false>(x, axis); }

Tensor cumsum(const Tensor& x, int axis, std::optional<DType> accumulate) {
  const DType acc_dtype = accumulate.value_or(x.dtype());
  if (x.dtype() == DType::Bool || acc_dtype == DType::Bool) {
    throw TensorError(ErrorKind::UnsupportedDType, "cumsum needs numeric values, got " + x.describe() +
                                                       " accumulated in " + std::string(dtype_name(acc_dtype)));
  }
  if (x.rank() == 0) throw TensorError(ErrorKind::InvalidAxis, "cumsum of a rank-0 tensor");
  axis = normalize_axis(axis, x.rank());
  Tensor out = Tensor::empty(acc_dtype, x.shape());
  const int64_t length = x.shape()[axis];
  if (out.numel() == 0) return out;
  Tensor out_starts = out.select(axis, 0);
  const Tensor in_starts = x.select(axis, 0);
  const int64_t in_stride = x.strides()[axis] * static_cast<int64_t>(x.element_size());
  const int64_t out_stride = out.strides()[axis] * static_cast<int64_t>(out.element_size());
  detail::visit_dtype(x.dtype(), [&]<class S>() {
    detail::visit_dtype(acc_dtype, [&]<class A>() {
      if constexpr (!detail::is_bool_storage_v<S> && !detail::is_bool_storage_v<A>) {
        for_each_lane(out_starts, in_starts, length, [=](std::byte* target, const std::byte* lane) {
          compute_t<A> acc(0);
          for (int64_t r = 0; r < length; ++r) {
            const compute_t<A> value = detail::load(detail::convert<A>(*reinterpret_cast<const S*>(lane + r * in_stride)));
            acc = combine<A, ReduceOp::Sum>(acc, value);
            *reinterpret_cast<A*>(target + r * out_stride) = detail::store<A>(acc);
          }
        });
      }
    });
  });
  return out;
}

}  // namespace linnet::tensor
