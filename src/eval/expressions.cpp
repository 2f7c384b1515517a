// Expressions: literals, names, members, tuples, shape literals, `if` and
// `match`. Operators, indexing, reductions and calls have files of their own.
#include <limits>
#include <new>

#include "evaluator.hpp"

namespace linnet::eval {

Indexed Evaluator::eval(const ast::Expr& expr, Frame& frame) {
  // Tensor kernels report in their own terms; the innermost expression that
  // ran one turns the report into a diagnostic at its span.
  try {
    return eval_inner(expr, frame);
  } catch (const tensor::TensorError& error) {
    fail_tensor(error, expr.span);
  } catch (const std::bad_alloc&) {
    fail(codes::resource_limit, "out of memory while evaluating `" + source_text(expr.span) + "`", expr.span);
  }
}

Value Evaluator::eval_value(const ast::Expr& expr, Frame& frame) {
  Indexed result = eval(expr, frame);
  if (result.has_axes()) {
    fail(codes::invalid_index_expression,
         "this value depends on index variables, which exist only inside index notation", expr.span);
  }
  return std::move(result.value);
}

Indexed Evaluator::eval_inner(const ast::Expr& expr, Frame& frame) {
  switch (expr.kind) {
    case ast::ExprKind::Integer: {
      const auto& literal = expr.cast<ast::IntegerLiteral>();
      if (literal.exceeds_u64 || literal.value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(codes::literal_out_of_range, "integer literal `" + literal.text + "` is outside the i64 range",
             expr.span);
      }
      return {Value::contextual_int(static_cast<int64_t>(literal.value)), {}};
    }
    case ast::ExprKind::Float: return {Value::contextual_float(expr.cast<ast::FloatLiteral>().value), {}};
    case ast::ExprKind::String: return {Value::string(expr.cast<ast::StringLiteral>().value), {}};
    case ast::ExprKind::Bool: return {Value::scalar(DType::Bool, expr.cast<ast::BoolLiteral>().value), {}};
    case ast::ExprKind::Name: return eval_name(expr.cast<ast::NameExpr>(), frame);
    case ast::ExprKind::Member: return {eval_member(expr.cast<ast::MemberExpr>(), frame), {}};
    case ast::ExprKind::Call: return eval_call(expr.cast<ast::CallExpr>(), frame);
    case ast::ExprKind::Index: return eval_index(expr.cast<ast::IndexExpr>(), frame);
    case ast::ExprKind::Unary: return eval_unary(expr.cast<ast::UnaryExpr>(), frame);
    case ast::ExprKind::Binary: return eval_binary(expr.cast<ast::BinaryExpr>(), frame);
    case ast::ExprKind::Tuple: {
      std::vector<Value> elements;
      for (const auto& element : expr.cast<ast::TupleExpr>().elements) elements.push_back(eval_value(*element, frame));
      return {Value::tuple(std::move(elements)), {}};
    }
    case ast::ExprKind::Shape: {
      Shape dims;
      for (const auto& element : expr.cast<ast::ShapeExpr>().elements) {
        const int64_t dim = eval_int(*element, frame, "a shape element");
        if (dim < 0) {
          fail(codes::negative_dimension, "shape element `" + source_text(element->span) + "` is " +
                                              std::to_string(dim), element->span);
        }
        dims.push_back(dim);
      }
      return {Value::shape_literal(std::move(dims)), {}};
    }
    case ast::ExprKind::Reduction: return eval_reduction(expr.cast<ast::ReductionExpr>(), frame);
    case ast::ExprKind::Some: return {Value::some(eval_value(*expr.cast<ast::SomeExpr>().value, frame)), {}};
    case ast::ExprKind::None: return {Value::none(), {}};
    case ast::ExprKind::If: return eval_if(expr.cast<ast::IfExpr>(), frame);
    case ast::ExprKind::Match: return eval_match(expr.cast<ast::MatchExpr>(), frame);
    case ast::ExprKind::For: return {run_for(expr.cast<ast::ForExpr>().loop, frame, expr.span, true), {}};
    case ast::ExprKind::Error: break;
  }
  fail(codes::not_implemented, "this expression did not parse and cannot run", expr.span);
}

// ---------------------------------------------------------------- names

Indexed Evaluator::eval_name(const ast::NameExpr& expr, Frame& frame) {
  const std::string& name = expr.name.text;
  if (frame.index != nullptr && (frame.index->is_index(name) || frame.index->is_pack(name))) {
    fail(codes::invalid_index_expression,
         "index variable `" + name + "` can only index a tensor; write `iota(N)[" + name + "]` for its value",
         expr.span);
  }
  if (Local* local = find_local(frame, name)) return {local->value, {}};
  auto generic = frame.generics.find(name);
  if (generic != frame.generics.end()) {
    switch (generic->second.kind) {
      case GenericValue::Kind::Dim: return {Value::contextual_int(generic->second.dim), {}};
      case GenericValue::Kind::Shape: return {Value::shape_literal(generic->second.shape), {}};
      case GenericValue::Kind::DType:
        fail(codes::wrong_symbol_kind, "`" + name + "` is a dtype, not a value", expr.span,
             {"write `cast<" + name + ">(...)` to convert a value to it"});
    }
  }
  if (frame.self != nullptr) {
    auto member = frame.self->members.find(name);
    if (member != frame.self->members.end()) return {member->second.value, {}};
    if (frame.self->methods.count(name)) {
      fail(codes::wrong_symbol_kind, "method `" + name + "` is not a value; call it", expr.span);
    }
  }
  if (auto resolved = find_item(frame.module, name)) {
    if (resolved->item == nullptr) {
      fail(codes::wrong_symbol_kind, "module `" + name + "` is not a value", expr.span);
    }
    if (const auto* constant = resolved->item->as<ast::ConstItem>()) {
      return {const_value(resolved->module, *constant), {}};
    }
    fail(codes::wrong_symbol_kind, "`" + name + "` is not a value", expr.span);
  }
  fail(codes::unknown_symbol, "cannot find `" + name + "` in this scope", expr.span);
}

std::optional<Value> Evaluator::enum_variant(const ast::MemberExpr& expr, Frame& frame) {
  const auto* base = expr.object->as<ast::NameExpr>();
  if (base == nullptr || find_local(frame, base->name.text) != nullptr) return std::nullopt;
  auto resolved = find_item(frame.module, base->name.text);
  if (!resolved || resolved->item == nullptr) return std::nullopt;
  const auto* enumeration = resolved->item->as<ast::EnumItem>();
  if (enumeration == nullptr) return std::nullopt;
  for (size_t i = 0; i < enumeration->variants.size(); ++i) {
    if (enumeration->variants[i].text == expr.member.text) {
      return Value::enumeration(enumeration, static_cast<int>(i));
    }
  }
  fail(codes::unknown_member, "enum `" + enumeration->name.text + "` has no variant `" + expr.member.text + "`",
       expr.member.span);
}

Value Evaluator::eval_member(const ast::MemberExpr& expr, Frame& frame) {
  if (auto variant = enum_variant(expr, frame)) return *variant;
  // `module.CONST` through a whole-module import.
  if (const auto* base = expr.object->as<ast::NameExpr>()) {
    if (find_local(frame, base->name.text) == nullptr &&
        (frame.self == nullptr || !frame.self->members.count(base->name.text))) {
      auto resolved = find_item(frame.module, base->name.text);
      if (resolved && resolved->item == nullptr) {
        auto item = resolved->module->items.find(expr.member.text);
        if (item == resolved->module->items.end()) {
          fail(codes::unknown_member, "module `" + resolved->module->name + "` has no item `" + expr.member.text + "`",
               expr.member.span);
        }
        if (const auto* constant = item->second->as<ast::ConstItem>()) {
          return const_value(resolved->module, *constant);
        }
        fail(codes::wrong_symbol_kind, "`" + expr.member.text + "` is not a value", expr.member.span);
      }
    }
  }
  return member_of(eval_value(*expr.object, frame), expr.member, expr.span);
}

Value Evaluator::member_of(const Value& object, const ast::Ident& member, Span span) {
  switch (object.kind()) {
    case Value::Kind::Struct: {
      if (const Value* field = object.field(member.text)) return *field;
      fail(codes::unknown_member, "struct `" + object.struct_item()->name.text + "` has no field `" + member.text + "`",
           member.span);
    }
    case Value::Kind::Block: {
      const BlockInstance& block = *object.block();
      auto found = block.members.find(member.text);
      if (found != block.members.end()) return found->second.value;
      if (block.methods.count(member.text)) {
        fail(codes::wrong_symbol_kind, "method `" + member.text + "` is not a value; call it", member.span);
      }
      fail(codes::unknown_member, "block `" + block.item->name.text + "` has no member `" + member.text + "`",
           member.span);
    }
    default: break;
  }
  fail(codes::unknown_member, object.describe() + " has no member `" + member.text + "`", span);
}

// ---------------------------------------------------------------- if and match

bool Evaluator::scalar_condition(const Value& value, Span span, const char* what) {
  DType dtype = DType::Bool;
  uint64_t bits = 0;
  if (value.scalar_element(dtype, bits) && dtype == DType::Bool) return (bits & 0xff) != 0;
  fail(codes::condition_not_bool, std::string(what) + " must be a scalar `bool`, found " + value.describe(), span,
       {"for a tensor condition use `select`"});
}

Indexed Evaluator::eval_if(const ast::IfExpr& expr, Frame& frame) {
  const bool condition = scalar_condition(eval_value(*expr.condition, frame), expr.condition->span,
                                          "the condition of `if`");
  return eval(condition ? *expr.then_value : *expr.else_value, frame);
}

Indexed Evaluator::eval_match(const ast::MatchExpr& expr, Frame& frame) {
  const Value scrutinee = eval_value(*expr.scrutinee, frame);
  for (const ast::MatchArm& arm : expr.arms) {
    const ast::Pattern& pattern = *arm.pattern;
    ScopeGuard scope(frame);
    bool matches = false;
    switch (pattern.kind) {
      case ast::PatternKind::Some:
        if (scrutinee.kind() == Value::Kind::Optional && scrutinee.has_value()) {
          bind_pattern(*pattern.cast<ast::SomePattern>().inner, scrutinee.inner(), frame, false);
          matches = true;
        }
        break;
      case ast::PatternKind::None:
        matches = scrutinee.kind() == Value::Kind::Optional && !scrutinee.has_value();
        break;
      case ast::PatternKind::Binding: {
        const std::string& name = pattern.cast<ast::BindingPattern>().name.text;
        if (scrutinee.kind() == Value::Kind::Enum) {
          const auto& variants = scrutinee.enum_item()->variants;
          bool names_variant = false;
          for (size_t i = 0; i < variants.size(); ++i) {
            if (variants[i].text != name) continue;
            names_variant = true;
            matches = static_cast<int>(i) == scrutinee.variant();
          }
          if (names_variant) break;
        }
        declare(frame, name, scrutinee, false);
        matches = true;
        break;
      }
      case ast::PatternKind::Tuple:
        if (scrutinee.kind() == Value::Kind::Tuple) {
          bind_pattern(pattern, scrutinee, frame, false);
          matches = true;
        }
        break;
      case ast::PatternKind::Error: break;
    }
    if (matches) return eval(*arm.value, frame);
  }
  fail(codes::non_exhaustive_match, "no arm of this `match` covers " + scrutinee.describe(), expr.span);
}

}  // namespace linnet::eval
