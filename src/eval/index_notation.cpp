// Index notation over whole tensors: comprehensions (`let y[i, j] = ...`) and
// reductions (`sum<f32>[k] ...`).
//
// The body of a comprehension is evaluated once, not once per element: each
// subexpression becomes a tensor whose axes are labelled by the index
// variables it uses (see Indexed), operators align the labels and broadcast,
// and the result is arranged in the order of the output indices. A
// reduction reduces the axes of its indices. A sum of a product of two
// tensors, `sum[k] a[.., k] * b[.., k]`, is a contraction: it runs as one
// matrix product (tensor::contract) instead of materialising the product of
// every pair of elements.
#include <algorithm>

#include "evaluator.hpp"

namespace linnet::eval {

namespace {

// Restores the frame's index scope and removes a reduction's indices on
// every way out.
class IndexScopeGuard {
 public:
  IndexScopeGuard(Frame& frame, IndexScope* scope, std::vector<std::string> added)
      : frame_(frame), saved_(frame.index), added_(std::move(added)) {
    frame_.index = scope;
  }
  ~IndexScopeGuard() {
    if (frame_.index != nullptr) {
      for (const std::string& name : added_) {
        frame_.index->extents.erase(name);
        frame_.index->fixed_at.erase(name);
      }
    }
    frame_.index = saved_;
  }
  IndexScopeGuard(const IndexScopeGuard&) = delete;
  IndexScopeGuard& operator=(const IndexScopeGuard&) = delete;

 private:
  Frame& frame_;
  IndexScope* saved_;
  std::vector<std::string> added_;
};

tensor::ReduceOp reduce_op(ast::ReductionKind kind) {
  switch (kind) {
    case ast::ReductionKind::Sum: return tensor::ReduceOp::Sum;
    case ast::ReductionKind::Prod: return tensor::ReduceOp::Prod;
    case ast::ReductionKind::Max: return tensor::ReduceOp::Max;
    case ast::ReductionKind::Min: return tensor::ReduceOp::Min;
    case ast::ReductionKind::Any: return tensor::ReduceOp::Any;
    case ast::ReductionKind::All: return tensor::ReduceOp::All;
  }
  return tensor::ReduceOp::Sum;
}

bool low_precision(DType dtype) { return dtype == DType::BF16 || dtype == DType::F16; }

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

int position_of(const std::vector<std::string>& list, const std::string& name) {
  return static_cast<int>(std::find(list.begin(), list.end(), name) - list.begin());
}

// What one reduction needs while it runs.
struct Reduction {
  const ast::ReductionExpr& expr;
  std::vector<std::string> indices;
  std::optional<DType> accumulator;
  NumericsPolicy policy;
};

}  // namespace

void Evaluator::exec_comprehension(const ast::ComprehensionStmt& stmt, Frame& frame) {
  IndexScope scope;
  for (const ast::IndexOutput& output : stmt.outputs) {
    if (scope.is_index(output.name.text) || scope.is_pack(output.name.text)) {
      fail(codes::duplicate_index, "output index `" + output.name.text + "` appears twice", output.span);
    }
    if (output.is_pack) {
      scope.packs[output.name.text] = std::nullopt;
    } else {
      scope.extents[output.name.text] = std::nullopt;
    }
  }
  Indexed body;
  {
    IndexScopeGuard guard(frame, &scope, {});
    body = eval(*stmt.value, frame);
  }
  std::vector<std::string> order;
  Shape extents;
  for (const ast::IndexOutput& output : stmt.outputs) {
    if (output.is_pack) {
      const auto& length = scope.packs.at(output.name.text);
      if (!length) {
        fail(codes::index_without_domain,
             "pack index `*" + output.name.text + "` indexes no tensor, so its axes are unknown", output.span);
      }
      for (int k = 0; k < *length; ++k) {
        const std::string variable = output.name.text + "#" + std::to_string(k);
        order.push_back(variable);
        extents.push_back(*scope.extents.at(variable));
      }
      continue;
    }
    const auto& extent = scope.extents.at(output.name.text);
    if (!extent) {
      fail(codes::index_without_domain,
           "index `" + output.name.text + "` indexes no tensor, so its extent is unknown", output.span,
           {"an index takes its extent from the tensor axes it indexes"});
    }
    order.push_back(output.name.text);
    extents.push_back(*extent);
  }
  for (const std::string& axis : body.axes) {
    if (!contains(order, axis)) {
      fail(codes::unbound_index, "index `" + axis + "` is neither an output index nor reduced", stmt.value->span);
    }
  }
  const Tensor arranged = body.has_axes() ? aligned(body, order) : as_tensor(body.value, stmt.value->span, "a comprehension");
  declare(frame, stmt.name.text, Value::from_tensor(arranged.broadcast_to(extents)), false);
}

namespace {

// Reduces the axes of `reduction.indices` of a value over index variables.
Indexed reduce_value(Evaluator& evaluator, const Reduction& reduction, const Indexed& value) {
  const Span span = reduction.expr.span;
  const char* keyword = ast::reduction_spelling(reduction.expr.reduction);
  if (!value.value.is_tensor()) {
    evaluator.fail(codes::invalid_operand,
                   std::string("`") + keyword + "` reduces a tensor over its indices, found " + value.value.describe(),
                   reduction.expr.body->span);
  }
  const Tensor& tensor = value.value.tensor();
  std::vector<int> axes;
  for (const std::string& index : reduction.indices) {
    if (!contains(value.axes, index)) {
      evaluator.fail(codes::unused_reduction_index,
                     std::string("`") + keyword + "` over `" + index + "`, but the reduced expression does not use `" +
                         index + "`",
                     span);
    }
    axes.push_back(position_of(value.axes, index));
  }
  const DType dtype = tensor.dtype();
  const bool logical = reduction.expr.reduction == ast::ReductionKind::Any ||
                       reduction.expr.reduction == ast::ReductionKind::All;
  if (logical != (dtype == DType::Bool)) {
    evaluator.fail(codes::invalid_operand,
                   std::string("`") + keyword + "` reduces " + (logical ? "`bool`" : "numeric") + " values, found " +
                       std::string(tensor::dtype_name(dtype)),
                   reduction.expr.body->span);
  }
  std::optional<DType> accumulate;
  const bool additive = reduction.expr.reduction == ast::ReductionKind::Sum ||
                        reduction.expr.reduction == ast::ReductionKind::Prod;
  if (additive && low_precision(dtype) && reduction.policy != NumericsPolicy::Exact) accumulate = DType::F32;
  Tensor reduced = tensor::reduce(reduce_op(reduction.expr.reduction), tensor, axes, accumulate);
  if (reduced.dtype() != dtype) reduced = tensor::cast(reduced, dtype);
  std::vector<std::string> remaining;
  for (const std::string& axis : value.axes) {
    if (!contains(reduction.indices, axis)) remaining.push_back(axis);
  }
  return {Value::from_tensor(reduced), remaining};
}

// `x` with the axes of `variables` fixed at `positions` (a view).
// The contraction of a * b over `contracted` (in that order) as
// tensor::contract takes it, and the variables of its result: the shared
// uncontracted ones, then a's own, then b's own.
std::pair<tensor::ContractionAxes, std::vector<std::string>> contraction_layout(
    const Indexed& a, const Indexed& b, const std::vector<std::string>& contracted) {
  tensor::ContractionAxes axes;
  std::vector<std::string> result_axes;
  for (const std::string& variable : a.axes) {
    if (contains(b.axes, variable) && !contains(contracted, variable)) {
      axes.batch_a.push_back(position_of(a.axes, variable));
      axes.batch_b.push_back(position_of(b.axes, variable));
      result_axes.push_back(variable);
    }
  }
  for (const std::string& index : contracted) {
    axes.contract_a.push_back(position_of(a.axes, index));
    axes.contract_b.push_back(position_of(b.axes, index));
  }
  for (const std::string& variable : a.axes) {
    if (!contains(b.axes, variable)) result_axes.push_back(variable);
  }
  for (const std::string& variable : b.axes) {
    if (!contains(a.axes, variable)) result_axes.push_back(variable);
  }
  return {axes, result_axes};
}

Indexed select_variables(const Indexed& x, const std::vector<std::string>& variables,
                         const std::vector<int64_t>& positions) {
  std::vector<std::pair<int, int64_t>> picks;
  for (size_t i = 0; i < variables.size(); ++i) picks.push_back({position_of(x.axes, variables[i]), positions[i]});
  std::sort(picks.begin(), picks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  Tensor tensor = x.value.tensor();
  for (const auto& [axis, position] : picks) tensor = tensor.select(axis, position);
  std::vector<std::string> axes;
  for (const std::string& axis : x.axes) {
    if (!contains(variables, axis)) axes.push_back(axis);
  }
  return {Value::from_tensor(tensor), axes};
}

}  // namespace

Indexed Evaluator::eval_reduction(const ast::ReductionExpr& expr, Frame& frame) {
  IndexScope own_scope;
  IndexScope* scope = frame.index != nullptr ? frame.index : &own_scope;
  std::vector<std::string> indices;
  for (const ast::Ident& index : expr.indices) {
    if (scope->is_index(index.text) || scope->is_pack(index.text) || contains(indices, index.text)) {
      fail(codes::duplicate_index, "reduction index `" + index.text + "` is already an index here", index.span);
    }
    indices.push_back(index.text);
  }
  for (const std::string& index : indices) scope->extents[index] = std::nullopt;
  IndexScopeGuard guard(frame, scope, indices);

  Reduction reduction{expr, indices, std::nullopt, options.numerics};
  if (expr.accumulator) reduction.accumulator = eval_dtype(*expr.accumulator, frame);
  auto check_accumulator = [&](DType dtype) {
    if (reduction.accumulator && *reduction.accumulator != dtype) {
      const std::string wanted(tensor::dtype_name(*reduction.accumulator));
      fail(codes::dtype_mismatch,
           std::string("`") + ast::reduction_spelling(expr.reduction) + "<" + wanted + ">` reduces " + wanted +
               " values, but this expression is " + std::string(tensor::dtype_name(dtype)),
           expr.body->span, {"cast the reduced expression: `cast<" + wanted + ">(...)`"});
    }
  };

  const auto* product = expr.body->as<ast::BinaryExpr>();
  if (expr.reduction != ast::ReductionKind::Sum || product == nullptr || product->op != ast::BinaryOp::Multiply) {
    Indexed body = eval(*expr.body, frame);
    if (body.value.is_tensor()) check_accumulator(body.value.tensor().dtype());
    return reduce_value(*this, reduction, body);
  }

  Indexed a = eval(*product->lhs, frame);
  Indexed b = eval(*product->rhs, frame);
  const bool both_tensors = a.value.is_tensor() && b.value.is_tensor() && a.has_axes() && b.has_axes() &&
                            a.value.tensor().dtype() == b.value.tensor().dtype();
  bool contractible = both_tensors;
  for (const std::string& index : indices) {
    contractible = contractible && contains(a.axes, index) && contains(b.axes, index);
  }
  if (!contractible) {
    Indexed body = binary(ast::BinaryOp::Multiply, a, b, product->span);
    if (body.value.is_tensor()) check_accumulator(body.value.tensor().dtype());
    return reduce_value(*this, reduction, body);
  }
  const DType dtype = a.value.tensor().dtype();
  check_accumulator(dtype);
  if (dtype == DType::Bool) {
    fail(codes::invalid_operand, "`sum` reduces numeric values, found `bool`", expr.body->span);
  }

  // The variables of the product, in the order the materialised product
  // would have them.
  const std::vector<std::string> all = union_axes({&a, &b});
  if (low_precision(dtype) && options.numerics == NumericsPolicy::Exact) {
    // Every product and every partial sum rounds to the dtype, in row-major
    // order of the reduced indices, as the body says.
    int64_t product_size = 1;
    bool too_large = false;
    for (const std::string& variable : all) {
      too_large = too_large || __builtin_mul_overflow(product_size, *scope->extents.at(variable), &product_size);
    }
    if (!too_large && product_size <= options.exact_product_limit) {
      return reduce_value(*this, reduction, binary(ast::BinaryOp::Multiply, a, b, product->span));
    }
    std::vector<std::string> ordered;
    for (const std::string& variable : all) {
      if (contains(indices, variable)) ordered.push_back(variable);
    }
    if (dtype == DType::BF16) {
      // The same sequence of roundings, vectorized across the outputs.
      auto [axes, result_axes] = contraction_layout(a, b, ordered);
      bool empty = false;
      for (const std::string& variable : ordered) empty = empty || *scope->extents.at(variable) == 0;
      if (!empty) {
        return {Value::from_tensor(tensor::contract_rounding_each_step(a.value.tensor(), b.value.tensor(), axes)),
                result_axes};
      }
    }
    std::vector<int64_t> extents;
    for (const std::string& variable : ordered) extents.push_back(*scope->extents.at(variable));
    int64_t combinations = 1;
    for (int64_t extent : extents) combinations *= extent;
    Indexed total;
    for (int64_t combination = 0; combination < combinations; ++combination) {
      // The reduced indices' positions for this step, row-major.
      std::vector<int64_t> position(ordered.size());
      int64_t rest = combination;
      for (size_t digit = ordered.size(); digit-- > 0;) {
        position[digit] = rest % extents[digit];
        rest /= extents[digit];
      }
      Indexed term = binary(ast::BinaryOp::Multiply, select_variables(a, ordered, position),
                            select_variables(b, ordered, position), product->span);
      total = combination == 0 ? term : binary(ast::BinaryOp::Add, total, term, expr.span);
    }
    if (combinations == 0) {
      // A sum of nothing is zero.
      return reduce_value(*this, reduction, binary(ast::BinaryOp::Multiply, a, b, product->span));
    }
    return total;
  }

  auto [axes, result_axes] = contraction_layout(a, b, indices);
  Tensor contracted = tensor::contract(a.value.tensor(), b.value.tensor(), axes, dtype);
  return {Value::from_tensor(contracted), result_axes};
}

}  // namespace linnet::eval
