// Unary and binary operators. Contextual numbers fold among themselves as
// exact compile-time arithmetic and take the dtype of a typed operand they
// meet; typed operands must share a dtype (Linnet never promotes). Inside
// index notation the operands' axes are aligned by index variable first, so
// `a[i] * b[j]` is an outer product and `a[i] + b[i]` elementwise.
#include <algorithm>
#include <cmath>
#include <limits>

#include "evaluator.hpp"

namespace linnet::eval {

namespace {

tensor::BinaryOp kernel_op(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Or:
    case ast::BinaryOp::BitOr: return tensor::BinaryOp::Or;
    case ast::BinaryOp::And:
    case ast::BinaryOp::BitAnd: return tensor::BinaryOp::And;
    case ast::BinaryOp::BitXor: return tensor::BinaryOp::Xor;
    case ast::BinaryOp::Equal: return tensor::BinaryOp::Eq;
    case ast::BinaryOp::NotEqual: return tensor::BinaryOp::Ne;
    case ast::BinaryOp::Less: return tensor::BinaryOp::Lt;
    case ast::BinaryOp::LessEqual: return tensor::BinaryOp::Le;
    case ast::BinaryOp::Greater: return tensor::BinaryOp::Gt;
    case ast::BinaryOp::GreaterEqual: return tensor::BinaryOp::Ge;
    case ast::BinaryOp::Add: return tensor::BinaryOp::Add;
    case ast::BinaryOp::Subtract: return tensor::BinaryOp::Sub;
    case ast::BinaryOp::Multiply: return tensor::BinaryOp::Mul;
    case ast::BinaryOp::Divide: return tensor::BinaryOp::Div;
    case ast::BinaryOp::Remainder: return tensor::BinaryOp::Rem;
  }
  return tensor::BinaryOp::Add;
}

template <class T>
bool compare(ast::BinaryOp op, T a, T b) {
  switch (op) {
    case ast::BinaryOp::Equal: return a == b;
    case ast::BinaryOp::NotEqual: return a != b;
    case ast::BinaryOp::Less: return a < b;
    case ast::BinaryOp::LessEqual: return a <= b;
    case ast::BinaryOp::Greater: return a > b;
    case ast::BinaryOp::GreaterEqual: return a >= b;
    default: return false;
  }
}

}  // namespace

// ---------------------------------------------------------------- axes

std::vector<std::string> Evaluator::union_axes(const std::vector<const Indexed*>& values) const {
  std::vector<std::string> order;
  for (const Indexed* value : values) {
    for (const std::string& axis : value->axes) {
      if (std::find(order.begin(), order.end(), axis) == order.end()) order.push_back(axis);
    }
  }
  return order;
}

Tensor Evaluator::aligned(const Indexed& x, const std::vector<std::string>& order) const {
  const Tensor& source = x.value.tensor();
  // x's axes sorted by where they sit in `order`.
  std::vector<int> permutation(x.axes.size());
  for (size_t i = 0; i < permutation.size(); ++i) permutation[i] = static_cast<int>(i);
  auto position = [&](int axis) {
    return std::find(order.begin(), order.end(), x.axes[static_cast<size_t>(axis)]) - order.begin();
  };
  std::stable_sort(permutation.begin(), permutation.end(), [&](int a, int b) { return position(a) < position(b); });
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) identity = identity && permutation[i] == static_cast<int>(i);
  Tensor result = identity ? source : source.permute(permutation);
  for (size_t i = 0; i < order.size(); ++i) {
    if (std::find(x.axes.begin(), x.axes.end(), order[i]) == x.axes.end()) {
      result = result.expand_dims(static_cast<int>(i));
    }
  }
  return result;
}

// ---------------------------------------------------------------- operands

Tensor Evaluator::as_tensor(const Value& value, Span span, const char* what) {
  if (value.is_tensor()) return value.tensor();
  fail(codes::invalid_operand, std::string(what) + " needs a tensor or a typed scalar, found " + value.describe(),
       span);
}

std::pair<Tensor, Tensor> Evaluator::typed_pair(const Value& a, const Value& b, Span span, const char* what) {
  const auto usable = [](const Value& value) { return value.is_tensor() || value.is_contextual(); };
  if (!usable(a) || !usable(b)) {
    fail(codes::invalid_operand,
         std::string("`") + what + "` cannot be applied to " + a.describe() + " and " + b.describe(), span);
  }
  if (a.is_tensor() && b.is_tensor()) {
    if (a.tensor().dtype() != b.tensor().dtype()) {
      fail(codes::dtype_mismatch, "tensor dtypes do not match", span,
           {"left operand has dtype " + std::string(tensor::dtype_name(a.tensor().dtype())),
            "right operand has dtype " + std::string(tensor::dtype_name(b.tensor().dtype())),
            "Linnet does not promote dtypes implicitly; use an explicit `cast`"});
    }
    return {a.tensor(), b.tensor()};
  }
  if (a.is_tensor()) return {a.tensor(), literal_as(b, a.tensor().dtype(), span)};
  return {literal_as(a, b.tensor().dtype(), span), b.tensor()};
}

// ---------------------------------------------------------------- unary

Indexed Evaluator::eval_unary(const ast::UnaryExpr& expr, Frame& frame) {
  Indexed operand = eval(*expr.operand, frame);
  Value& value = operand.value;
  if (expr.op != ast::UnaryOp::Plus) {
    scalar_elements::Element element;
    if (value.scalar_element(element.dtype, element.bits)) {
      const auto op = expr.op == ast::UnaryOp::Negate ? tensor::UnaryOp::Neg : tensor::UnaryOp::Not;
      // `!` on an integer is refused below, though the kernel would complement it.
      const bool refused = op == tensor::UnaryOp::Not && element.dtype != DType::Bool;
      if (!refused) {
        if (auto result = scalar_elements::unary(op, element)) {
          return {Value::from_element(result->dtype, result->bits), operand.axes};
        }
      }
    }
  }
  switch (expr.op) {
    case ast::UnaryOp::Plus:
      if (value.is_contextual() || (value.is_tensor() && value.tensor().dtype() != DType::Bool)) return operand;
      break;
    case ast::UnaryOp::Negate:
      if (value.kind() == Value::Kind::Int) {
        if (value.int_value() == std::numeric_limits<int64_t>::min()) {
          fail(codes::literal_out_of_range, "compile-time integer overflow in negation", expr.span);
        }
        return {Value::contextual_int(-value.int_value()), operand.axes};
      }
      if (value.kind() == Value::Kind::Float) return {Value::contextual_float(-value.float_value()), operand.axes};
      if (value.is_tensor()) return {Value::from_tensor(tensor::unary(tensor::UnaryOp::Neg, value.tensor())), operand.axes};
      break;
    case ast::UnaryOp::Not:
      if (value.is_tensor() && value.tensor().dtype() == DType::Bool) {
        return {Value::from_tensor(tensor::unary(tensor::UnaryOp::Not, value.tensor())), operand.axes};
      }
      fail(codes::logical_not_bool, "`!` takes a `bool`, found " + value.describe(), expr.span);
  }
  fail(codes::invalid_operand,
       std::string("`") + ast::unary_op_spelling(expr.op) + "` cannot be applied to " + value.describe(), expr.span);
}

// ---------------------------------------------------------------- binary

const Value* Evaluator::local_scalar(const ast::Expr& expr, Frame& frame) const {
  const auto* name = expr.as<ast::NameExpr>();
  if (name == nullptr || frame.index != nullptr) return nullptr;
  const Local* local = find_local(frame, name->name.text);
  return local != nullptr && local->value.is_scalar_tensor() ? &local->value : nullptr;
}

Indexed Evaluator::eval_binary(const ast::BinaryExpr& expr, Frame& frame) {
  const bool logical = expr.op == ast::BinaryOp::And || expr.op == ast::BinaryOp::Or;
  if (!logical) {
    // Scalar loops: a local scalar operand is read where it is, not copied.
    Indexed held_lhs;
    Indexed held_rhs;
    const Value* left = local_scalar(*expr.lhs, frame);
    if (left == nullptr) {
      held_lhs = eval(*expr.lhs, frame);
      left = &held_lhs.value;
    }
    const Value* right = local_scalar(*expr.rhs, frame);
    if (right == nullptr) {
      held_rhs = eval(*expr.rhs, frame);
      right = &held_rhs.value;
    }
    if (!held_lhs.has_axes() && !held_rhs.has_axes()) {
      if (auto result = scalar_binary(expr.op, *left, *right)) return {std::move(*result), {}};
    }
    if (left != &held_lhs.value) held_lhs.value = *left;
    if (right != &held_rhs.value) held_rhs.value = *right;
    return binary(expr.op, held_lhs, held_rhs, expr.span);
  }
  // `&&` and `||`: a scalar left operand decides alone when it can.
  Indexed lhs = eval(*expr.lhs, frame);
  {
    const Value& left = lhs.value;
    if (!(left.is_tensor() && left.tensor_dtype() == DType::Bool)) {
      fail(codes::logical_not_bool,
           std::string("`") + ast::binary_op_spelling(expr.op) + "` takes `bool` operands, found " + left.describe(),
           expr.lhs->span);
    }
    DType dtype = DType::Bool;
    uint64_t bits = 0;
    if (!lhs.has_axes() && left.scalar_element(dtype, bits)) {
      const bool value = (bits & 0xff) != 0;
      if (expr.op == ast::BinaryOp::And && !value) return lhs;
      if (expr.op == ast::BinaryOp::Or && value) return lhs;
    }
  }
  Indexed rhs = eval(*expr.rhs, frame);
  if (!(rhs.value.is_tensor() && rhs.value.tensor_dtype() == DType::Bool)) {
    fail(codes::logical_not_bool,
         std::string("`") + ast::binary_op_spelling(expr.op) + "` takes `bool` operands, found " + rhs.value.describe(),
         expr.rhs->span);
  }
  if (!lhs.has_axes() && !rhs.has_axes()) {
    if (auto result = scalar_binary(expr.op, lhs.value, rhs.value)) return {std::move(*result), {}};
  }
  return binary(expr.op, lhs, rhs, expr.span);
}

std::optional<Value> Evaluator::scalar_binary(ast::BinaryOp op, const Value& a, const Value& b) {
  // A contextual operand takes the typed one's dtype when it fits it as
  // literal_as would take it; anything else takes the general path, which
  // reports what is wrong.
  const auto element_of = [this](const Value& value, const Value& other, scalar_elements::Element& element) {
    if (value.scalar_element(element.dtype, element.bits)) return true;
    if (!value.is_contextual() || !other.scalar_element(element.dtype, element.bits)) return false;
    const auto converted = literal_element(value, element.dtype);
    if (converted) element = *converted;
    return converted.has_value();
  };
  scalar_elements::Element left;
  scalar_elements::Element right;
  if (!element_of(a, b, left) || !element_of(b, a, right)) return std::nullopt;
  auto result = scalar_elements::binary(kernel_op(op), left, right);
  if (!result) return std::nullopt;
  return Value::from_element(result->dtype, result->bits);
}

Indexed Evaluator::binary(ast::BinaryOp op, const Indexed& a, const Indexed& b, Span span) {
  return elementwise({a, b}, [&](const std::vector<Value>& values) { return binary_values(op, values[0], values[1], span); });
}

Value Evaluator::binary_values(ast::BinaryOp op, const Value& a, const Value& b, Span span) {
  if (a.is_contextual() && b.is_contextual()) return contextual_binary(op, a, b, span);
  auto [left, right] = typed_pair(a, b, span, ast::binary_op_spelling(op));
  return Value::from_tensor(tensor::binary(kernel_op(op), left, right));
}

Value Evaluator::contextual_binary(ast::BinaryOp op, const Value& a, const Value& b, Span span) {
  const char* spelling = ast::binary_op_spelling(op);
  if (a.kind() == Value::Kind::Int && b.kind() == Value::Kind::Int) {
    const int64_t x = a.int_value();
    const int64_t y = b.int_value();
    int64_t result = 0;
    auto overflow = [&]() {
      fail(codes::literal_out_of_range,
           "compile-time integer overflow in `" + std::to_string(x) + " " + spelling + " " + std::to_string(y) + "`",
           span);
    };
    switch (op) {
      case ast::BinaryOp::Add:
        if (__builtin_add_overflow(x, y, &result)) overflow();
        return Value::contextual_int(result);
      case ast::BinaryOp::Subtract:
        if (__builtin_sub_overflow(x, y, &result)) overflow();
        return Value::contextual_int(result);
      case ast::BinaryOp::Multiply:
        if (__builtin_mul_overflow(x, y, &result)) overflow();
        return Value::contextual_int(result);
      case ast::BinaryOp::Divide:
      case ast::BinaryOp::Remainder:
        if (y == 0) fail(codes::division_by_zero, "integer division by zero in `" + source_text(span) + "`", span);
        if (x == std::numeric_limits<int64_t>::min() && y == -1) overflow();
        return Value::contextual_int(op == ast::BinaryOp::Divide ? x / y : x % y);
      case ast::BinaryOp::BitAnd: return Value::contextual_int(x & y);
      case ast::BinaryOp::BitOr: return Value::contextual_int(x | y);
      case ast::BinaryOp::BitXor: return Value::contextual_int(x ^ y);
      case ast::BinaryOp::And:
      case ast::BinaryOp::Or:
        fail(codes::logical_not_bool, std::string("`") + spelling + "` takes `bool` operands, found integers", span);
      default: return Value::scalar(DType::Bool, compare(op, x, y));
    }
  }
  const double x = a.float_value();
  const double y = b.float_value();
  switch (op) {
    case ast::BinaryOp::Add: return Value::contextual_float(x + y);
    case ast::BinaryOp::Subtract: return Value::contextual_float(x - y);
    case ast::BinaryOp::Multiply: return Value::contextual_float(x * y);
    case ast::BinaryOp::Divide: return Value::contextual_float(x / y);
    case ast::BinaryOp::Remainder: return Value::contextual_float(std::fmod(x, y));
    default:
      if (ast::is_comparison(op)) return Value::scalar(DType::Bool, compare(op, x, y));
      fail(codes::invalid_operand, std::string("`") + spelling + "` cannot be applied to floating literals", span);
  }
}

}  // namespace linnet::eval
