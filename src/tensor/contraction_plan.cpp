// plan_contraction (contraction_plan.hpp): the axis checks and the grouping
// into [batch, m, k] x [batch, k, n] that every contraction kernel starts with.
#include "contraction_plan.hpp"

#include <string>

namespace linnet::tensor::detail {

namespace {

void check_axes(const Tensor& t, const std::vector<int>& listed, std::vector<bool>& used, const char* who,
                const char* operand) {
  for (int axis : listed) {
    if (axis < 0 || axis >= t.rank() || used[axis]) {
      throw TensorError(ErrorKind::InvalidAxis,
                        std::string(who) + ": axis " + std::to_string(axis) + " of " + operand + " (" + t.describe() +
                            (axis >= 0 && axis < t.rank() ? ") is listed twice" : ") is out of range"),
                        axis, axis, t.rank());
    }
    used[axis] = true;
  }
}

}  // namespace

ContractionPlan plan_contraction(const Tensor& a, const Tensor& b, const ContractionAxes& axes, const char* who) {
  if (axes.batch_a.size() != axes.batch_b.size() || axes.contract_a.size() != axes.contract_b.size()) {
    throw TensorError(ErrorKind::InvalidArgument,
                      std::string(who) + ": a and b must list as many batch and contracted axes");
  }
  std::vector<bool> used_a(a.rank(), false), used_b(b.rank(), false);
  check_axes(a, axes.batch_a, used_a, who, "a");
  check_axes(a, axes.contract_a, used_a, who, "a");
  check_axes(b, axes.batch_b, used_b, who, "b");
  check_axes(b, axes.contract_b, used_b, who, "b");
  auto check_pair = [&](int axis_a, int axis_b, const char* role) {
    if (a.shape()[axis_a] != b.shape()[axis_b]) {
      throw TensorError(ErrorKind::ShapeMismatch,
                        std::string(who) + ": " + role + " axis " + std::to_string(axis_a) + " of " + a.describe() +
                            " has extent " + std::to_string(a.shape()[axis_a]) + " but its partner axis " +
                            std::to_string(axis_b) + " of " + b.describe() + " has " +
                            std::to_string(b.shape()[axis_b]),
                        axis_a, b.shape()[axis_b], a.shape()[axis_a]);
    }
  };
  for (size_t i = 0; i < axes.batch_a.size(); ++i) check_pair(axes.batch_a[i], axes.batch_b[i], "batch");
  for (size_t i = 0; i < axes.contract_a.size(); ++i) check_pair(axes.contract_a[i], axes.contract_b[i], "contracted");

  ContractionPlan plan;
  plan.order_a = axes.batch_a;
  plan.order_b = axes.batch_b;
  for (int axis : axes.batch_a) {
    plan.shape.push_back(a.shape()[axis]);
    plan.batch *= a.shape()[axis];
  }
  for (int axis = 0; axis < a.rank(); ++axis) {
    if (!used_a[axis]) {
      plan.order_a.push_back(axis);
      plan.shape.push_back(a.shape()[axis]);
      plan.m *= a.shape()[axis];
    }
  }
  plan.order_a.insert(plan.order_a.end(), axes.contract_a.begin(), axes.contract_a.end());
  plan.order_b.insert(plan.order_b.end(), axes.contract_b.begin(), axes.contract_b.end());
  for (int axis : axes.contract_a) plan.k *= a.shape()[axis];
  for (int axis = 0; axis < b.rank(); ++axis) {
    if (!used_b[axis]) {
      plan.order_b.push_back(axis);
      plan.shape.push_back(b.shape()[axis]);
      plan.n *= b.shape()[axis];
    }
  }
  return plan;
}

}  // namespace linnet::tensor::detail
