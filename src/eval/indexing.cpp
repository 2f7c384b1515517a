// `x[...]`. Outside index notation an access selects (integer), slices
// (`a:b:c`), keeps (`:`, `...`) or gathers (an integer tensor) along each
// axis; everything but the gather is a view of x's storage.
//
// Inside index notation every axis is indexed by an index variable, a pack,
// or an integer. Index variables make the access a view whose axes are
// labelled by them (a repeated variable is a diagonal, again a view); an
// integer computed from index variables (`table[ids[b], h]`) makes it a
// gather, evaluated once for the whole tensor of positions.
#include <algorithm>

#include "evaluator.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::eval {

namespace {

std::string pack_axis(const std::string& pack, int position) { return pack + "#" + std::to_string(position); }

bool walk_mentions(const ast::Expr& expr, const IndexScope& scope) {
  auto any = [&](const ast::Expr* child) { return child != nullptr && walk_mentions(*child, scope); };
  switch (expr.kind) {
    case ast::ExprKind::Name: {
      const std::string& name = expr.cast<ast::NameExpr>().name.text;
      return scope.is_index(name) || scope.is_pack(name);
    }
    case ast::ExprKind::Member: return any(expr.cast<ast::MemberExpr>().object.get());
    case ast::ExprKind::Call:
      for (const auto& argument : expr.cast<ast::CallExpr>().arguments) {
        if (any(argument.value.get())) return true;
      }
      return false;
    case ast::ExprKind::Index: {
      const auto& index = expr.cast<ast::IndexExpr>();
      if (any(index.object.get())) return true;
      for (const auto& component : index.components) {
        if (component.kind == ast::IndexComponentKind::Pack) {
          if (scope.is_pack(component.pack.text)) return true;
          continue;
        }
        if (any(component.value.get()) || any(component.start.get()) || any(component.stop.get()) ||
            any(component.step.get())) {
          return true;
        }
      }
      return false;
    }
    case ast::ExprKind::Unary: return any(expr.cast<ast::UnaryExpr>().operand.get());
    case ast::ExprKind::Binary: {
      const auto& binary = expr.cast<ast::BinaryExpr>();
      return any(binary.lhs.get()) || any(binary.rhs.get());
    }
    case ast::ExprKind::Tuple:
      for (const auto& element : expr.cast<ast::TupleExpr>().elements) {
        if (any(element.get())) return true;
      }
      return false;
    case ast::ExprKind::Reduction: return any(expr.cast<ast::ReductionExpr>().body.get());
    case ast::ExprKind::Some: return any(expr.cast<ast::SomeExpr>().value.get());
    case ast::ExprKind::If: {
      const auto& branch = expr.cast<ast::IfExpr>();
      return any(branch.condition.get()) || any(branch.then_value.get()) || any(branch.else_value.get());
    }
    case ast::ExprKind::Match: {
      const auto& match = expr.cast<ast::MatchExpr>();
      if (any(match.scrutinee.get())) return true;
      for (const auto& arm : match.arms) {
        if (any(arm.value.get())) return true;
      }
      return false;
    }
    default: return false;
  }
}

// An integer index as int64, for EvalError::index_value (nothing past its range).
std::optional<int64_t> index_of(const tensor::Scalar& scalar) {
  if (scalar.kind() == tensor::Scalar::Kind::Int) return scalar.to<int64_t>();
  if (scalar.kind() == tensor::Scalar::Kind::UInt && scalar.to<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(scalar.to<uint64_t>());
  }
  return std::nullopt;
}

}  // namespace

int64_t Evaluator::scalar_index_in_range(const tensor::Scalar& scalar, int64_t extent, int64_t axis,
                                         const std::string& name, Span span) const {
  const bool negative = scalar.kind() == tensor::Scalar::Kind::Int && scalar.to<int64_t>() < 0;
  if (negative || scalar.to<uint64_t>() >= static_cast<uint64_t>(extent)) {
    fail_index("runtime index " + scalar.to_string() + " is out of range for axis " + std::to_string(axis) + " of `" +
                   name + "`",
               span,
               {"tensor `" + name + "`", "axis " + std::to_string(axis), "value " + scalar.to_string(),
                "extent " + std::to_string(extent)},
               index_of(scalar));
  }
  return scalar.to<int64_t>();
}

bool Evaluator::mentions_index(const ast::Expr& expr, const IndexScope* scope) const {
  return scope != nullptr && walk_mentions(expr, *scope);
}

void Evaluator::fix_extent(IndexScope& scope, const std::string& name, int64_t extent, Span span,
                           const std::string& tensor_name, int axis) {
  auto& known = scope.extents[name];
  if (!known) {
    known = extent;
    scope.fixed_at[name] = span;
    return;
  }
  if (*known == extent) return;
  const std::string shown = name.find('#') == std::string::npos ? name : "*" + name.substr(0, name.find('#'));
  fail(codes::contraction_mismatch,
       "index `" + shown + "` ranges over " + std::to_string(*known) + " elsewhere, but axis " + std::to_string(axis) +
           " of `" + tensor_name + "` has extent " + std::to_string(extent),
       span, {"its extent was fixed at " + location(scope.fixed_at[name])});
}

Indexed Evaluator::eval_index(const ast::IndexExpr& expr, Frame& frame) {
  // The indexed tensor's name is never an index variable, even when one is
  // spelled the same (`b[b, k, n]` in a batched product).
  Value object;
  if (expr.object->kind == ast::ExprKind::Name && frame.index != nullptr) {
    IndexScope* scope = frame.index;
    frame.index = nullptr;
    try {
      object = eval_value(*expr.object, frame);
    } catch (...) {
      frame.index = scope;
      throw;
    }
    frame.index = scope;
  } else {
    object = eval_value(*expr.object, frame);
  }
  if (object.kind() == Value::Kind::BlockArray) {
    if (expr.components.size() != 1 || expr.components.front().kind != ast::IndexComponentKind::Value) {
      fail(codes::invalid_slice, "a block array is indexed by one compile-time integer", expr.span);
    }
    const int64_t position = eval_int(*expr.components.front().value, frame, "a block array index");
    const auto& blocks = object.blocks();
    if (position < 0 || position >= static_cast<int64_t>(blocks.size())) {
      fail(codes::invalid_slice,
           "index " + std::to_string(position) + " is out of range for an array of " + std::to_string(blocks.size()) +
               " blocks",
           expr.components.front().span);
    }
    return {Value::block(blocks[static_cast<size_t>(position)]), {}};
  }
  bool notation = false;
  if (frame.index != nullptr) {
    for (const ast::IndexComponent& component : expr.components) {
      if (component.kind == ast::IndexComponentKind::Pack ||
          (component.kind == ast::IndexComponentKind::Value && mentions_index(*component.value, frame.index))) {
        notation = true;
      }
    }
  }
  if (notation) return index_access(object, expr, frame);
  return {index_value(object, expr, frame), {}};
}

Value Evaluator::index_value(const Value& object, const ast::IndexExpr& expr, Frame& frame) {
  if (!object.is_tensor() || object.tensor().rank() == 0) {
    fail(codes::invalid_operand, "cannot index " + object.describe(), expr.object->span);
  }
  Tensor x = object.tensor();
  const int rank = x.rank();
  const std::string name = source_text(expr.object->span);
  int explicit_count = 0;
  int ellipses = 0;
  for (const ast::IndexComponent& component : expr.components) {
    if (component.kind == ast::IndexComponentKind::Ellipsis) {
      ++ellipses;
    } else {
      ++explicit_count;
    }
  }
  if (ellipses > 1) fail(codes::invalid_slice, "`...` may appear once in an index", expr.span);
  if (explicit_count > rank) {
    fail(codes::rank_mismatch,
         syntax::count_of(static_cast<std::size_t>(explicit_count), "index", "indices") + " for `" + name + "`, which has rank " + std::to_string(rank),
         expr.span, {"`" + name + "` is " + x.describe()});
  }
  // `position` is where the next original axis now sits in the result.
  int position = 0;
  int axis = 0;  // the original axis
  for (const ast::IndexComponent& component : expr.components) {
    switch (component.kind) {
      case ast::IndexComponentKind::Ellipsis: {
        const int kept = rank - explicit_count;
        position += kept;
        axis += kept;
        break;
      }
      case ast::IndexComponentKind::Pack:
        fail(codes::pack_index_misuse, "a pack index `*" + component.pack.text + "` belongs inside index notation",
             component.span);
      case ast::IndexComponentKind::Slice: {
        const int64_t extent = x.shape()[static_cast<size_t>(position)];
        const int64_t start = component.start ? eval_int(*component.start, frame, "a slice start") : 0;
        const int64_t stop = component.stop ? eval_int(*component.stop, frame, "a slice stop") : extent;
        const int64_t step = component.step ? eval_int(*component.step, frame, "a slice step") : 1;
        if (start < 0 || stop < 0 || step <= 0) {
          fail(codes::invalid_slice,
               "slice `" + source_text(component.span) + "` needs non-negative bounds and a positive step", component.span,
               {"start " + std::to_string(start) + ", stop " + std::to_string(stop) + ", step " + std::to_string(step)});
        }
        x = x.slice(position, std::min(start, extent), stop, step);
        ++position;
        ++axis;
        break;
      }
      case ast::IndexComponentKind::Value: {
        const int64_t extent = x.shape()[static_cast<size_t>(position)];
        const Value index = eval_value(*component.value, frame);
        if (index.kind() == Value::Kind::Int) {
          const int64_t at = index.int_value();
          if (at < 0 || at >= extent) {
            fail(codes::invalid_slice,
                 "index " + std::to_string(at) + " is out of range for axis " + std::to_string(axis) + " of `" + name +
                     "`",
                 component.span, {"the axis has extent " + std::to_string(extent), "`" + name + "` is " + x.describe()});
          }
          x = x.select(position, at);
        } else if (index.is_scalar_tensor() && tensor::is_integer(index.tensor().dtype())) {
          const int64_t at = scalar_index_in_range(index.tensor().item(), extent, axis, name, component.span);
          x = x.select(position, at);
        } else if (index.is_tensor() && tensor::is_integer(index.tensor().dtype())) {
          try {
            x = tensor::take(x, position, index.tensor());
          } catch (const tensor::TensorError& error) {
            if (error.kind() != tensor::ErrorKind::IndexOutOfRange) throw;
            fail_index("an index in `" + source_text(component.span) + "` is out of range for axis " +
                           std::to_string(axis) + " of `" + name + "`",
                       component.span,
                       {"tensor `" + name + "`", "axis " + std::to_string(axis),
                        "value " + std::to_string(error.value().value_or(0)), "extent " + std::to_string(extent)},
                       error.value());
          }
          position += index.tensor().rank();
        } else {
          fail(codes::invalid_slice, "an index must be an integer, found " + index.describe(), component.span);
        }
        ++axis;
        break;
      }
    }
  }
  return Value::from_tensor(x);
}

Indexed Evaluator::index_access(const Value& object, const ast::IndexExpr& expr, Frame& frame) {
  IndexScope& scope = *frame.index;
  const std::string name = source_text(expr.object->span);
  if (!object.is_tensor()) fail(codes::invalid_operand, "cannot index " + object.describe(), expr.object->span);
  Tensor x = object.tensor();
  const int rank = x.rank();

  int packs = 0;
  for (const ast::IndexComponent& component : expr.components) {
    if (component.kind == ast::IndexComponentKind::Pack) ++packs;
    if (component.kind == ast::IndexComponentKind::Ellipsis || component.kind == ast::IndexComponentKind::Slice) {
      fail(codes::invalid_index_expression,
           "inside index notation every axis is indexed by an index variable, a pack or an integer", component.span,
           {"slice before the comprehension, or index every axis"});
    }
  }
  if (packs > 1) fail(codes::pack_index_misuse, "one access may use at most one pack index", expr.span);
  const int fixed = static_cast<int>(expr.components.size()) - packs;
  const int pack_length = rank - fixed;
  if (pack_length < 0 || (packs == 0 && pack_length != 0)) {
    fail(codes::rank_mismatch,
         "index notation must index every axis of `" + name + "`: " + syntax::count_of(static_cast<std::size_t>(std::max(fixed, 0)), "index", "indices") + " for rank " +
             std::to_string(rank),
         expr.span, {"`" + name + "` is " + x.describe()});
  }

  // What indexes each axis of x.
  struct AxisUse {
    enum Kind { Label, Constant, Gather } kind = Label;
    std::string variable;
    int64_t position = 0;
    Indexed gather;
    Span span;
    int axis = 0;  // x's original axis
  };
  std::vector<AxisUse> uses;
  int axis = 0;
  for (const ast::IndexComponent& component : expr.components) {
    if (component.kind == ast::IndexComponentKind::Pack) {
      const std::string& pack = component.pack.text;
      if (!scope.is_pack(pack)) {
        fail(codes::pack_index_misuse, "`*" + pack + "` is not a pack index of this comprehension", component.span);
      }
      auto& length = scope.packs[pack];
      if (!length) {
        length = pack_length;
      } else if (*length != pack_length) {
        fail(codes::pack_index_misuse,
             "pack `*" + pack + "` stands for " + std::to_string(*length) + " axes elsewhere but " +
                 std::to_string(pack_length) + " in `" + source_text(expr.span) + "`",
             component.span);
      }
      for (int k = 0; k < pack_length; ++k, ++axis) {
        const std::string variable = pack_axis(pack, k);
        if (!scope.is_index(variable)) scope.extents[variable] = std::nullopt;
        fix_extent(scope, variable, x.shape()[static_cast<size_t>(axis)], component.span, name, axis);
        uses.push_back({AxisUse::Label, variable, 0, {}, component.span, axis});
      }
      continue;
    }
    const ast::Expr& value = *component.value;
    const auto* variable = value.as<ast::NameExpr>();
    if (variable != nullptr && scope.is_index(variable->name.text)) {
      fix_extent(scope, variable->name.text, x.shape()[static_cast<size_t>(axis)], component.span, name, axis);
      uses.push_back({AxisUse::Label, variable->name.text, 0, {}, component.span, axis});
    } else if (mentions_index(value, &scope)) {
      Indexed positions = eval(value, frame);
      if (!positions.value.is_tensor() || !tensor::is_integer(positions.value.tensor().dtype())) {
        fail(codes::invalid_slice, "a computed position must be an integer, found " + positions.value.describe(),
             component.span);
      }
      uses.push_back({AxisUse::Gather, "", 0, std::move(positions), component.span, axis});
    } else {
      const Value index = eval_value(value, frame);
      const int64_t extent = x.shape()[static_cast<size_t>(axis)];
      int64_t at = 0;
      if (index.kind() == Value::Kind::Int) {
        at = index.int_value();
        if (at < 0 || at >= extent) {
          fail(codes::invalid_slice,
               "index " + std::to_string(at) + " is out of range for axis " + std::to_string(axis) + " of `" + name + "`",
               component.span, {"the axis has extent " + std::to_string(extent)});
        }
      } else if (index.is_scalar_tensor() && tensor::is_integer(index.tensor().dtype())) {
        at = scalar_index_in_range(index.tensor().item(), extent, axis, name, component.span);
      } else {
        fail(codes::invalid_slice, "an index must be an integer, found " + index.describe(), component.span);
      }
      uses.push_back({AxisUse::Constant, "", at, {}, component.span, axis});
    }
    ++axis;
  }

  // Constant positions select their axes (a view), last axis first so the
  // earlier axes keep their numbers.
  for (int a = rank - 1; a >= 0; --a) {
    if (uses[static_cast<size_t>(a)].kind == AxisUse::Constant) x = x.select(a, uses[static_cast<size_t>(a)].position);
  }
  std::vector<AxisUse> remaining;
  for (AxisUse& use : uses) {
    if (use.kind != AxisUse::Constant) remaining.push_back(std::move(use));
  }

  const bool has_gather = std::any_of(remaining.begin(), remaining.end(),
                                      [](const AxisUse& use) { return use.kind == AxisUse::Gather; });
  if (!has_gather) {
    // A view; a variable used on several axes walks their diagonal.
    std::vector<std::string> variables;
    Shape shape;
    tensor::Strides strides;
    for (size_t a = 0; a < remaining.size(); ++a) {
      auto found = std::find(variables.begin(), variables.end(), remaining[a].variable);
      if (found == variables.end()) {
        variables.push_back(remaining[a].variable);
        shape.push_back(x.shape()[a]);
        strides.push_back(x.strides()[a]);
      } else {
        strides[static_cast<size_t>(found - variables.begin())] += x.strides()[a];
      }
    }
    if (variables.size() == remaining.size()) return {Value::from_tensor(x), variables};
    return {Value::from_tensor(Tensor::from_storage(x.storage(), x.dtype(), shape, strides, x.offset())), variables};
  }

  auto out_of_range = [&](const tensor::TensorError& error) {
    const int failing = error.axis().value_or(0);
    const AxisUse& use = remaining[static_cast<size_t>(std::clamp(failing, 0, static_cast<int>(remaining.size()) - 1))];
    fail_index("a computed index is out of range for axis " + std::to_string(use.axis) + " of `" + name + "`",
               use.span,
               {"tensor `" + name + "`", "axis " + std::to_string(use.axis),
                "value " + std::to_string(error.value().value_or(0)),
                "extent " + std::to_string(error.extent().value_or(0))},
               error.value());
  };

  // One gather whose positions share no variable with the other axes: whole
  // slices taken along its axis.
  int gathers = 0;
  size_t gather_at = 0;
  std::vector<std::string> labels;
  for (size_t a = 0; a < remaining.size(); ++a) {
    if (remaining[a].kind == AxisUse::Gather) {
      ++gathers;
      gather_at = a;
    } else {
      labels.push_back(remaining[a].variable);
    }
  }
  std::vector<std::string> sorted_labels = labels;
  std::sort(sorted_labels.begin(), sorted_labels.end());
  const bool labels_distinct = std::adjacent_find(sorted_labels.begin(), sorted_labels.end()) == sorted_labels.end();
  if (gathers == 1 && labels_distinct) {
    const Indexed& positions = remaining[gather_at].gather;
    const bool shares = std::any_of(positions.axes.begin(), positions.axes.end(), [&](const std::string& variable) {
      return std::find(labels.begin(), labels.end(), variable) != labels.end();
    });
    if (!shares) {
      Tensor taken;
      try {
        taken = tensor::take(x, static_cast<int>(gather_at), positions.value.tensor());
      } catch (const tensor::TensorError& error) {
        if (error.kind() != tensor::ErrorKind::IndexOutOfRange) throw;
        out_of_range(error);
        throw;
      }
      std::vector<std::string> axes;
      for (size_t a = 0; a < remaining.size(); ++a) {
        if (a == gather_at) {
          axes.insert(axes.end(), positions.axes.begin(), positions.axes.end());
        } else {
          axes.push_back(remaining[a].variable);
        }
      }
      return {Value::from_tensor(taken), axes};
    }
  }

  // The general case: one position tensor per axis over the union of the
  // variables involved, read pointwise.
  std::vector<std::string> order;
  auto add = [&](const std::string& variable) {
    if (std::find(order.begin(), order.end(), variable) == order.end()) order.push_back(variable);
  };
  for (const AxisUse& use : remaining) {
    if (use.kind == AxisUse::Label) {
      add(use.variable);
    } else {
      for (const std::string& variable : use.gather.axes) add(variable);
    }
  }
  std::vector<Tensor> positions;
  for (const AxisUse& use : remaining) {
    if (use.kind == AxisUse::Label) {
      const int64_t extent = *scope.extents.at(use.variable);
      positions.push_back(aligned({Value::from_tensor(tensor::iota(extent, DType::I64)), {use.variable}}, order));
    } else if (use.gather.has_axes()) {
      positions.push_back(aligned(use.gather, order));
    } else {
      positions.push_back(use.gather.value.tensor());
    }
  }
  try {
    return {Value::from_tensor(tensor::gather(x, positions)), order};
  } catch (const tensor::TensorError& error) {
    if (error.kind() != tensor::ErrorKind::IndexOutOfRange) throw;
    out_of_range(error);
    throw;
  }
}

}  // namespace linnet::eval
