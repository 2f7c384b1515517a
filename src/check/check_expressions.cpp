// Expressions: literals, names, members, operators, `if`, `match`, tuples,
// `some`/`none`, and the rules that combine operands (contextual literals,
// no implicit dtype promotion, provable broadcasting).
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>
#include <cmath>
#include <limits>

#include "checker_internal.hpp"

namespace linnet::check {

namespace {

// The largest finite value of a float dtype.
double float_max(tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::F16: return 65504.0;
    case tensor::DType::BF16: return 3.3895313892515355e38;
    case tensor::DType::F32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

// Whether an integer fits a concrete dtype.
bool integer_fits(std::int64_t value, tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::I8: return value >= -128 && value <= 127;
    case tensor::DType::I16: return value >= -32768 && value <= 32767;
    case tensor::DType::I32: return value >= std::numeric_limits<std::int32_t>::min() &&
                                    value <= std::numeric_limits<std::int32_t>::max();
    case tensor::DType::U8: return value >= 0 && value <= 255;
    case tensor::DType::U16: return value >= 0 && value <= 65535;
    case tensor::DType::U32: return value >= 0 && value <= static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
    case tensor::DType::U64: return value >= 0;
    default: return true;  // i64 and the float dtypes
  }
}

DimExpr fold(ast::BinaryOp op, const DimExpr& a, const DimExpr& b) {
  switch (op) {
    case ast::BinaryOp::Add: return a + b;
    case ast::BinaryOp::Subtract: return a - b;
    case ast::BinaryOp::Multiply: return a * b;
    case ast::BinaryOp::Divide: return a / b;
    case ast::BinaryOp::Remainder: return a % b;
    default: return a;
  }
}

}  // namespace

// ---------------------------------------------------------------- names

Local* Checker::Impl::find_local(const std::string& name, Context& cx) {
  for (auto scope = cx.scopes.rbegin(); scope != cx.scopes.rend(); ++scope) {
    auto it = scope->find(name);
    if (it != scope->end()) return &cx.locals[it->second];
  }
  return nullptr;
}

Local& Checker::Impl::declare_local(const ast::Ident& name, TypePtr type, Local::Kind kind, Context& cx) {
  if (!check_not_prelude(name.text, name.span)) type = error_type();
  Local& local = cx.locals.emplace_back();
  local.name = name.text;
  local.type = std::move(type);
  local.span = name.span;
  local.kind = kind;
  if (cx.scopes.empty()) cx.scopes.emplace_back();
  cx.scopes.back()[name.text] = cx.locals.size() - 1;
  return local;
}

bool Checker::Impl::was_imported(const ModuleScope& scope, const std::string& name) const {
  auto it = imported_names.find(&scope);
  return it != imported_names.end() && it->second.count(name) > 0 && scope.symbols.count(name) == 0;
}

std::optional<Symbol> Checker::Impl::find_symbol(const std::string& name, Context& cx) {
  if (!cx.module) return std::nullopt;
  auto it = cx.module->symbols.find(name);
  if (it == cx.module->symbols.end()) return std::nullopt;
  auto import = cx.module->imports.find(name);
  if (import != cx.module->imports.end()) import->second.used = true;
  return it->second;
}

Symbol Checker::Impl::module_symbol(ModuleScope& scope, const std::string& name) {
  auto it = scope.symbols.find(name);
  if (it == scope.symbols.end() || scope.imports.count(name)) return {};
  return it->second;
}

TypePtr Checker::Impl::check_name(const ast::NameExpr& expr, Context& cx) {
  const std::string& name = expr.name.text;
  if (cx.in_index_notation()) {
    // A pack index is only ever written `*s`, so a plain `s` is a value
    // (spec 6.9 indexes a tensor `b` with a pack index `*b`).
    if (IndexVar* index = find_index_var(name, cx); index && !index->is_pack) {
      index->used = true;
      error("E3104", "index " + quoted(name) + " can only index a tensor", expr.span)
          .with_help("for the position itself, index a range: `iota(N)[" + name + "]`");
      return error_type();
    }
  }
  if (Local* local = find_local(name, cx)) {
    local->used = true;
    if (local->memory && !cx.in_memory_access) {
      error("E2127", quoted(name) + " is a tensor in memory; a kernel reads it only with `load`", expr.span)
          .with_help("write `load(" + name + "[...])` to read a tile of it");
      return error_type();
    }
    return local->type;
  }
  auto generic = cx.generics.find(name);
  if (generic != cx.generics.end()) {
    const GenericParamInfo& g = *generic->second;
    if (g.is_dim()) return compile_time_int(DimExpr::symbol(name));
    error("E1208", quoted(name) + " is a " + (g.is_pack() ? "shape pack" : "dtype") + ", not a value", expr.span);
    return error_type();
  }
  if (cx.block) {
    resolve_block_members(*cx.block);
    auto member = cx.block->member_index.find(name);
    if (member != cx.block->member_index.end()) {
      MemberDecl& decl = cx.block->members[member->second];
      decl.used = true;
      return decl.type ? decl.type : error_type();
    }
    if (cx.block->methods.count(name)) {
      error("E1208", quoted(name) + " is a method; call it", expr.span);
      return error_type();
    }
  }
  if (std::optional<Symbol> symbol = find_symbol(name, cx)) {
    switch (symbol->kind) {
      case Symbol::Kind::Const:
        resolve_const(*symbol->constant);
        return symbol->constant->type ? symbol->constant->type : error_type();
      case Symbol::Kind::Function:
        error("E1208", quoted(name) + " is a function; call it", expr.span);
        return error_type();
      case Symbol::Kind::Module:
        error("E1208", quoted(name) + " is a module, not a value", expr.span);
        return error_type();
      default:
        error("E1208", quoted(name) + " is a type, not a value", expr.span);
        return error_type();
    }
  }
  if (is_prelude_function(name)) {
    error("E1208", quoted(name) + " is a prelude function; call it", expr.span);
    return error_type();
  }
  if (!was_imported(*cx.module, name)) {
    explain_unknown_name(error("E1201", "cannot find " + quoted(name) + " in this scope", expr.span), name, cx);
  }
  return error_type();
}

TypePtr Checker::Impl::check_member(const ast::MemberExpr& expr, Context& cx) {
  const std::string& member = expr.member.text;
  // `Enum.Variant` and `module.item` name declarations, not values.
  if (const auto* head = expr.object->as<ast::NameExpr>()) {
    const std::string& name = head->name.text;
    const bool is_value = find_local(name, cx) || cx.generics.count(name) ||
                          (cx.block && (cx.block->member_index.count(name) || cx.block->methods.count(name)));
    if (!is_value) {
      if (std::optional<Symbol> symbol = find_symbol(name, cx)) {
        if (symbol->kind == Symbol::Kind::Enum) {
          const EnumDecl& decl = *symbol->enumeration;
          if (std::find(decl.variants.begin(), decl.variants.end(), member) == decl.variants.end()) {
            error("E2107", "enum " + quoted(decl.name) + " has no variant " + quoted(member), expr.member.span);
            return error_type();
          }
          Type t;
          t.kind = TypeKind::Enum;
          t.enumeration = &decl;
          return std::make_shared<const Type>(std::move(t));
        }
        if (symbol->kind == Symbol::Kind::Module) {
          Symbol item = module_symbol(*symbol->module, member);
          if (item.kind == Symbol::Kind::Const) {
            if (!item.constant->item->is_pub) {
              error("E1203", quoted(member) + " is private to module " + quoted(symbol->module->name),
                    expr.member.span);
            }
            resolve_const(*item.constant);
            return item.constant->type ? item.constant->type : error_type();
          }
          if (item.kind == Symbol::Kind::None) {
            error("E1201", "module " + quoted(symbol->module->name) + " has no item " + quoted(member),
                  expr.member.span);
          } else {
            error("E1208", quoted(name + "." + member) + " is not a value", expr.span);
          }
          return error_type();
        }
      }
    }
  }
  // `Module.Enum.Variant`.
  if (const auto* inner = expr.object->as<ast::MemberExpr>()) {
    if (const auto* head = inner->object->as<ast::NameExpr>()) {
      if (!find_local(head->name.text, cx)) {
        std::optional<Symbol> symbol = find_symbol(head->name.text, cx);
        if (symbol && symbol->kind == Symbol::Kind::Module) {
          Symbol item = module_symbol(*symbol->module, inner->member.text);
          if (item.kind == Symbol::Kind::Enum) {
            const EnumDecl& decl = *item.enumeration;
            if (std::find(decl.variants.begin(), decl.variants.end(), member) == decl.variants.end()) {
              error("E2107", "enum " + quoted(decl.name) + " has no variant " + quoted(member), expr.member.span);
              return error_type();
            }
            Type t;
            t.kind = TypeKind::Enum;
            t.enumeration = &decl;
            return std::make_shared<const Type>(std::move(t));
          }
        }
      }
    }
  }
  const TypePtr object = check_expr(*expr.object, cx);
  if (object->is_error()) return object;
  switch (object->kind) {
    case TypeKind::Struct: {
      for (const ParamInfo& field : object->structure->fields) {
        if (field.name == member) return substitute(field.type, object->args);
      }
      error("E2107", "struct " + quoted(object->structure->name) + " has no field " + quoted(member), expr.member.span);
      return error_type();
    }
    case TypeKind::Block: {
      BlockDecl& block = *const_cast<BlockDecl*>(object->block);
      resolve_block_members(block);
      auto it = block.member_index.find(member);
      if (it != block.member_index.end()) {
        MemberDecl& decl = block.members[it->second];
        decl.used = true;
        return decl.type ? substitute(decl.type, object->args) : error_type();
      }
      if (block.methods.count(member)) {
        error("E1208", quoted(member) + " is a method of " + quoted(block.name) + "; call it", expr.member.span);
        return error_type();
      }
      error("E2107", "block " + quoted(block.name) + " has no member " + quoted(member), expr.member.span);
      return error_type();
    }
    case TypeKind::Optional:
      if (object->elements.front()->kind == TypeKind::Block) {
        error("E2107", "an optional `sub` has no members until it is matched", expr.span)
            .with_help("write `match " + text_of(*expr.object) + " { some(b) => ... none => ... }`");
        return error_type();
      }
      break;
    default: break;
  }
  error("E2107", quoted(type_to_string(object)) + " has no field or member " + quoted(member), expr.member.span);
  return error_type();
}

// ---------------------------------------------------------------- operands

TypePtr Checker::Impl::default_literal(const TypePtr& type) {
  if (!type->is_contextual()) return type;
  if (type->contextual == Contextual::Float) return scalar_type(DTypeRef::of(tensor::DType::F64));
  return scalar_type(DTypeRef::of(tensor::DType::I64));
}

bool Checker::Impl::adopt_literal(const Type& literal, const DTypeRef& dtype, Span span) {
  if (dtype.is_error()) return true;
  if (literal.contextual == Contextual::Integer) {
    if (!dtype.is_numeric()) {
      error("E2101", "an integer cannot take the dtype " + dtype.to_string(), span)
          .note("integer literals adopt numeric dtypes only");
      return false;
    }
    if (dtype.kind == DTypeRef::Kind::Concrete && literal.value && literal.value->is_constant() &&
        !integer_fits(literal.value->value(), dtype.concrete)) {
      error("E2105", "the integer " + literal.value->to_string() + " does not fit in " + dtype.to_string(), span);
      return false;
    }
    return true;
  }
  if (!dtype.is_float()) {
    error("E2101", "a floating literal cannot take the dtype " + dtype.to_string(), span)
        .note("floating literals adopt float dtypes only; write an integer or cast");
    return false;
  }
  if (dtype.kind == DTypeRef::Kind::Concrete && std::isfinite(literal.float_value) &&
      std::fabs(literal.float_value) > float_max(dtype.concrete)) {
    error("E2105", "the literal is out of the range of " + dtype.to_string(), span);
    return false;
  }
  return true;
}

bool Checker::Impl::broadcast(const Shape& a, const Shape& b, Shape& out, Span span, Context& cx) {
  std::vector<ShapeItem> reversed;
  std::size_t i = a.size(), j = b.size();
  while (i > 0 && j > 0) {
    const ShapeItem& x = a[i - 1];
    const ShapeItem& y = b[j - 1];
    if (x.is_pack() || y.is_pack()) {
      if (x.is_pack() && y.is_pack() && x.pack == y.pack) {
        reversed.push_back(x);
        --i;
        --j;
        continue;
      }
      Diagnostic& d = error("E2207", "cannot prove that these shapes broadcast", span);
      d.note("shape pack " + quoted("*" + (x.is_pack() ? x.pack : y.pack)) +
             " cannot be aligned with another axis");
      d.note("left shape is " + shape_to_string(a));
      d.note("right shape is " + shape_to_string(b));
      return false;
    }
    if (prove_equal_dims(x.dim, y.dim, cx)) {
      reversed.push_back(x);
    } else if (is_one(x.dim, cx)) {
      reversed.push_back(y);
    } else if (is_one(y.dim, cx)) {
      reversed.push_back(x);
    } else {
      Diagnostic& d = error("E2207", "cannot prove that these shapes broadcast", span);
      d.note(quoted(x.dim.to_string()) + " and " + quoted(y.dim.to_string()) +
             " must be equal, or one of them must be 1");
      d.note("left shape is " + shape_to_string(a));
      d.note("right shape is " + shape_to_string(b));
      if (!cx.facts.empty() && cx.solver) {
        const ProofResult proof = cx.solver->prove_equal(x.dim, y.dim, Detail::Explained);
        d.note(facts_searched_note(proof.facts_searched));
      }
      help_for_unequal(d, x.dim, y.dim, cx);
      return false;
    }
    --i;
    --j;
  }
  while (i > 0) reversed.push_back(a[--i]);
  while (j > 0) reversed.push_back(b[--j]);
  out.assign(reversed.rbegin(), reversed.rend());
  return true;
}

bool Checker::Impl::defaulted_axes_break(const Type& value, const Shape& other, bool broadcasting,
                                         std::map<std::string, std::string>& wanted, Context& cx) {
  if (!value.from_defaults || value.from_defaults->axes.empty() || value.kind != TypeKind::Tensor) return false;
  const Shape& shape = value.shape;
  if (!broadcasting && shape.size() != other.size()) return false;
  const std::size_t aligned = std::min(shape.size(), other.size());
  bool blamed = false;
  for (std::size_t from_last = 0; from_last < aligned; ++from_last) {
    const ShapeItem& mine = shape[shape.size() - 1 - from_last];
    const ShapeItem& theirs = other[other.size() - 1 - from_last];
    if (mine.is_pack() || theirs.is_pack()) {
      if (mine.is_pack() && theirs.is_pack() && mine.pack == theirs.pack) continue;
      return false;
    }
    if (prove_equal_dims(mine.dim, theirs.dim, cx)) continue;
    if (broadcasting && (is_one(mine.dim, cx) || is_one(theirs.dim, cx))) continue;
    const auto& axes = value.from_defaults->axes;
    auto it = std::find_if(axes.begin(), axes.end(), [&](const auto& axis) { return axis.first == from_last; });
    if (it == axes.end()) return false;  // an axis the default does not explain
    wanted[it->second] = theirs.dim.to_string();
    blamed = true;
  }
  return blamed;
}

TypePtr Checker::Impl::elementwise(const TypePtr& lhs, const TypePtr& rhs, Span span, Span lhs_span, Span rhs_span,
                                   Context& cx) {
  if (lhs->is_error() || rhs->is_error()) return error_type();
  for (const TypePtr& side : {lhs, rhs}) {
    if (!side->has_dtype()) {
      error("E2104", "this operator takes scalars or tensors, not " + quoted(type_to_string(side)), span);
      return error_type();
    }
  }
  if (cx.in_index_notation()) {
    for (const TypePtr& side : {lhs, rhs}) {
      if (side->is_tensor()) {
        error("E3104", "a whole tensor cannot appear in index notation", side == lhs ? lhs_span : rhs_span)
            .note("inside a comprehension or reduction every tensor is indexed on all of its axes");
        return error_type();
      }
    }
  }
  if (lhs->is_contextual() && rhs->is_contextual()) {
    if (lhs->contextual == Contextual::Float || rhs->contextual == Contextual::Float) return float_literal(0.0);
    Type t = *lhs;
    t.value.reset();
    return std::make_shared<const Type>(std::move(t));
  }
  if (lhs->is_contextual()) {
    if (!adopt_literal(*lhs, rhs->dtype, lhs_span)) return error_type();
    return rhs->is_tensor() ? rhs : scalar_type(rhs->dtype);
  }
  if (rhs->is_contextual()) {
    if (!adopt_literal(*rhs, lhs->dtype, rhs_span)) return error_type();
    return lhs->is_tensor() ? lhs : scalar_type(lhs->dtype);
  }
  if (!(lhs->dtype == rhs->dtype)) {
    // A method's result at a defaulted dtype: the declaration is to blame.
    for (const auto& [tagged, other] : {std::pair{lhs, rhs}, std::pair{rhs, lhs}}) {
      if (!tagged->from_defaults || tagged->from_defaults->dtype_generic.empty()) continue;
      if (blame_defaulted_result(*tagged, {{tagged->from_defaults->dtype_generic, other->dtype.to_string()}}, "E2103",
                                 span,
                                 "dtype " + tagged->dtype.to_string() + " here meets " + other->dtype.to_string())) {
        return error_type();
      }
    }
    const bool tensors = lhs->is_tensor() || rhs->is_tensor();
    error("E2103", tensors ? "tensor dtypes do not match" : "scalar dtypes do not match", span)
        .note("left operand has dtype " + lhs->dtype.to_string())
        .note("right operand has dtype " + rhs->dtype.to_string())
        .with_help("Linnet does not implicitly promote tensor dtypes; use an explicit cast");
    return error_type();
  }
  if (lhs->is_tensor() && rhs->is_tensor()) {
    for (const auto& [tagged, other] : {std::pair{lhs, rhs}, std::pair{rhs, lhs}}) {
      std::map<std::string, std::string> wanted;
      if (defaulted_axes_break(*tagged, other->shape, true, wanted, cx) &&
          blame_defaulted_result(*tagged, wanted, "E2207", span,
                                 "shape " + shape_to_string(tagged->shape) + " here does not broadcast with " +
                                     shape_to_string(other->shape))) {
        return error_type();
      }
    }
    Shape shape;
    if (!broadcast(lhs->shape, rhs->shape, shape, span, cx)) return error_type();
    return tensor_type(std::move(shape), lhs->dtype);
  }
  if (lhs->is_tensor()) return lhs;
  if (rhs->is_tensor()) return rhs;
  return scalar_type(lhs->dtype);
}

TypePtr Checker::Impl::check_unary(const ast::UnaryExpr& expr, Context& cx, const TypePtr& expected) {
  const TypePtr operand = check_expr(*expr.operand, cx, expected);
  if (operand->is_error()) return operand;
  if (expr.op == ast::UnaryOp::Not) {
    if (operand->is_scalar() && !operand->is_contextual() && operand->dtype.is_bool()) return operand;
    error("E2116", "`!` takes a scalar `bool`, not " + quoted(type_to_string(operand)), expr.span)
        .with_help("for a boolean tensor, write `mask ^ true`");
    return error_type();
  }
  if (!operand->has_dtype() || (!operand->is_contextual() && !operand->dtype.is_numeric())) {
    error("E2104", std::string("`") + ast::unary_op_spelling(expr.op) + "` takes a number, not " +
                       quoted(type_to_string(operand)),
          expr.span);
    return error_type();
  }
  if (cx.in_index_notation() && operand->is_tensor()) {
    error("E3104", "a whole tensor cannot appear in index notation", expr.operand->span);
    return error_type();
  }
  if (expr.op == ast::UnaryOp::Plus) return operand;
  if (operand->is_compile_time_int()) return compile_time_int(-*operand->value);
  if (operand->is_contextual() && operand->contextual == Contextual::Float) {
    return float_literal(-operand->float_value);
  }
  return operand;
}

TypePtr Checker::Impl::check_binary(const ast::BinaryExpr& expr, Context& cx, const TypePtr& expected) {
  if (expr.op == ast::BinaryOp::Or || expr.op == ast::BinaryOp::And) {
    const TypePtr lhs = check_expr(*expr.lhs, cx);
    const TypePtr rhs = check_expr(*expr.rhs, cx);
    bool ok = true;
    for (const auto& [side, span] : {std::pair{lhs, expr.lhs->span}, std::pair{rhs, expr.rhs->span}}) {
      if (side->is_error()) {
        ok = false;
      } else if (!(side->is_scalar() && !side->is_contextual() && side->dtype.is_bool())) {
        error("E2116", std::string("`") + ast::binary_op_spelling(expr.op) + "` takes scalar `bool` operands, not " +
                           quoted(type_to_string(side)),
              span)
            .with_help(std::string("for boolean tensors, use `") + (expr.op == ast::BinaryOp::Or ? "|" : "&") +
                       "`, elementwise");
        ok = false;
      }
    }
    return ok ? scalar_type(DTypeRef::of(tensor::DType::Bool)) : error_type();
  }
  // A literal on one side takes the other side's dtype: check the typed side first.
  const TypePtr lhs = check_expr(*expr.lhs, cx, ast::is_comparison(expr.op) ? nullptr : expected);
  const TypePtr rhs = check_expr(*expr.rhs, cx, lhs->is_contextual() || lhs->is_error() ? expected : lhs);
  if (lhs->is_error() || rhs->is_error()) return error_type();

  const bool arithmetic = !ast::is_comparison(expr.op) && !ast::is_bitwise(expr.op);
  if (arithmetic && lhs->is_compile_time_int() && rhs->is_compile_time_int()) {
    const DimExpr folded = fold(expr.op, *lhs->value, *rhs->value);
    if (expr.op == ast::BinaryOp::Divide || expr.op == ast::BinaryOp::Remainder) check_divisors(folded, expr.span, cx);
    return compile_time_int(folded);
  }
  if (ast::is_bitwise(expr.op) && lhs->is_compile_time_int() && rhs->is_compile_time_int() &&
      lhs->value->is_constant() && rhs->value->is_constant()) {
    const std::int64_t a = lhs->value->value(), b = rhs->value->value();
    const std::int64_t v = expr.op == ast::BinaryOp::BitAnd ? (a & b) : expr.op == ast::BinaryOp::BitOr ? (a | b) : (a ^ b);
    return compile_time_int(DimExpr(v));
  }
  const TypePtr combined = elementwise(lhs, rhs, expr.span, expr.lhs->span, expr.rhs->span, cx);
  if (combined->is_error()) return combined;
  const DTypeRef& dtype = combined->dtype;
  const bool contextual = combined->is_contextual();
  if (ast::is_bitwise(expr.op)) {
    const bool ok = contextual ? combined->contextual == Contextual::Integer : (dtype.is_integer() || dtype.is_bool());
    if (!ok) {
      error("E2104", std::string("`") + ast::binary_op_spelling(expr.op) + "` takes integers or booleans, not " +
                         quoted(type_to_string(combined)),
            expr.op_span.valid() ? expr.op_span : expr.span);
      return error_type();
    }
    return combined;
  }
  if (ast::is_comparison(expr.op)) {
    const bool ordering = expr.op != ast::BinaryOp::Equal && expr.op != ast::BinaryOp::NotEqual;
    if (ordering && !contextual && dtype.is_bool()) {
      error("E2104", std::string("`") + ast::binary_op_spelling(expr.op) + "` does not order booleans",
            expr.op_span.valid() ? expr.op_span : expr.span);
      return error_type();
    }
    return with_dtype(combined, DTypeRef::of(tensor::DType::Bool));
  }
  if (!contextual && !dtype.is_numeric()) {
    error("E2104", std::string("`") + ast::binary_op_spelling(expr.op) + "` takes numbers, not " +
                       quoted(type_to_string(combined)),
          expr.op_span.valid() ? expr.op_span : expr.span);
    return error_type();
  }
  return combined;
}

// ---------------------------------------------------------------- type agreement

bool Checker::Impl::shapes_equal(const Shape& a, const Shape& b, Context& cx) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_pack() || b[i].is_pack()) {
      if (a[i].pack != b[i].pack) return false;
      continue;
    }
    if (!prove_equal_dims(a[i].dim, b[i].dim, cx)) return false;
  }
  return true;
}

bool Checker::Impl::same_type(const TypePtr& a, const TypePtr& b, Context& cx) {
  if (a->is_error() || b->is_error()) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::Scalar:
      if (a->is_contextual() || b->is_contextual()) {
        if (a->is_contextual() && b->is_contextual()) return true;
        const Type& literal = a->is_contextual() ? *a : *b;
        const DTypeRef& dtype = a->is_contextual() ? b->dtype : a->dtype;
        return literal.contextual == Contextual::Integer ? dtype.is_numeric() : dtype.is_float();
      }
      return a->dtype == b->dtype;
    case TypeKind::Tensor: return a->dtype == b->dtype && shapes_equal(a->shape, b->shape, cx);
    case TypeKind::Tuple:
    case TypeKind::Optional:
      if (a->elements.size() != b->elements.size()) return false;
      for (std::size_t i = 0; i < a->elements.size(); ++i) {
        if (!same_type(a->elements[i], b->elements[i], cx)) return false;
      }
      return true;
    case TypeKind::Enum: return a->enumeration == b->enumeration;
    case TypeKind::Struct:
    case TypeKind::Block: {
      if (a->structure != b->structure || a->block != b->block) return false;
      for (const auto& [name, dim] : a->args.dims) {
        auto other = b->args.dims.find(name);
        if (other == b->args.dims.end() || !prove_equal_dims(dim, other->second, cx)) return false;
      }
      for (const auto& [name, dtype] : a->args.dtypes) {
        auto other = b->args.dtypes.find(name);
        if (other == b->args.dtypes.end() || !(dtype == other->second)) return false;
      }
      for (const auto& [name, pack] : a->args.packs) {
        auto other = b->args.packs.find(name);
        if (other == b->args.packs.end() || !shapes_equal(pack, other->second, cx)) return false;
      }
      return true;
    }
    case TypeKind::BlockArray:
      return same_type(a->elements.front(), b->elements.front(), cx) && prove_equal_dims(a->length, b->length, cx);
    default: return true;
  }
}

bool Checker::Impl::blame_defaulted_tensor(const TypePtr& value, const TypePtr& target, const char* dtype_code,
                                           const char* shape_code, Span span, const std::string& what, Context& cx) {
  if (!value->from_defaults || value->kind != TypeKind::Tensor || target->kind != TypeKind::Tensor) return false;
  // A method's result whose defaulted dtype or axes are all that differ:
  // the declaration that left them out is to blame.
  std::map<std::string, std::string> wanted;
  const bool dtype_differs = !(value->dtype == target->dtype);
  const std::string& dtype_generic = value->from_defaults->dtype_generic;
  if (dtype_differs && !dtype_generic.empty()) wanted[dtype_generic] = target->dtype.to_string();
  const bool axes_fit =
      defaulted_axes_break(*value, target->shape, false, wanted, cx) || shapes_equal(value->shape, target->shape, cx);
  return (!dtype_differs || !dtype_generic.empty()) && axes_fit && !wanted.empty() &&
         blame_defaulted_result(*value, wanted, dtype_differs ? dtype_code : shape_code, span,
                                what + " is " + quoted(type_to_string(value)) + ", not " + quoted(type_to_string(target)));
}

bool Checker::Impl::coerce(const TypePtr& value, const TypePtr& target, Span span, const std::string& what,
                           Context& cx, const char* mismatch_code) {
  if (value->is_error() || target->is_error()) return true;
  if (target->kind == TypeKind::Optional) {
    if (value->kind == TypeKind::None) return true;
    if (value->kind == TypeKind::Optional) {
      return coerce(value->elements.front(), target->elements.front(), span, what, cx, mismatch_code);
    }
    if (same_type(value, target->elements.front(), cx)) {
      error("E2101", what + " must be optional: wrap it as `some(...)`", span)
          .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)));
      return false;
    }
    error(mismatch_code, what + " has the wrong type", span)
        .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)));
    return false;
  }
  if (value->kind == TypeKind::None) {
    error("E2113", "`none` needs an optional type", span)
        .note("expected " + quoted(type_to_string(target)));
    return false;
  }
  if (target->kind == TypeKind::Scalar && value->kind == TypeKind::Scalar) {
    if (value->is_contextual()) return adopt_literal(*value, target->dtype, span);
    if (target->is_contextual()) return true;
    if (value->dtype == target->dtype) return true;
    error(mismatch_code, what + " has dtype " + value->dtype.to_string() + ", not " + target->dtype.to_string(), span)
        .with_help("convert it with `cast<" + target->dtype.to_string() + ">(...)`");
    return false;
  }
  if (target->kind == TypeKind::Tensor && value->kind == TypeKind::Tensor) {
    // A wrong shape is E2202, except where the caller has its own code for
    // any change of type (E2109 for an assignment).
    const char* shape_code = std::string_view(mismatch_code) == "E2101" ? "E2202" : mismatch_code;
    if (blame_defaulted_tensor(value, target, mismatch_code, shape_code, span, what, cx)) return false;
    bool ok = true;
    if (!(value->dtype == target->dtype)) {
      error(mismatch_code, what + " has dtype " + value->dtype.to_string() + ", not " + target->dtype.to_string(), span)
          .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)))
          .with_help("convert it with `cast<" + target->dtype.to_string() + ">(...)`");
      ok = false;
    }
    const Shape& a = value->shape;
    const Shape& b = target->shape;
    bool layout = a.size() == b.size();
    for (std::size_t i = 0; layout && i < a.size(); ++i) layout = a[i].is_pack() == b[i].is_pack() && a[i].pack == b[i].pack;
    if (!layout) {
      error(shape_code, what + " has shape " + shape_to_string(a) + ", not " + shape_to_string(b), span)
          .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)));
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_pack() || prove_equal_dims(a[i].dim, b[i].dim, cx)) continue;
      const ProofResult proof = cx.solver ? cx.solver->prove_equal(a[i].dim, b[i].dim) : ProofResult{};
      Diagnostic& d = error(shape_code, what + " has shape " + shape_to_string(a) + ", not " + shape_to_string(b), span);
      d.note("axis " + std::to_string(i) + ": cannot prove " + quoted(a[i].dim.to_string() + " == " + b[i].dim.to_string()));
      if (cx.solver) explain_failure(d, proof, cx);
      return false;
    }
    return ok;
  }
  if (target->kind == TypeKind::Tuple && value->kind == TypeKind::Tuple) {
    if (value->elements.size() != target->elements.size()) {
      error(mismatch_code, what + " has " + std::to_string(value->elements.size()) + " elements, not " +
                               std::to_string(target->elements.size()),
            span)
          .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)));
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < value->elements.size(); ++i) {
      ok = coerce(value->elements[i], target->elements[i], span, what + " (element " + std::to_string(i) + ")", cx,
                  mismatch_code) && ok;
    }
    return ok;
  }
  if (value->kind == target->kind && same_type(value, target, cx)) return true;
  error(mismatch_code, what + " has the wrong type", span)
      .note("expected " + quoted(type_to_string(target)) + ", found " + quoted(type_to_string(value)));
  return false;
}

// ---------------------------------------------------------------- if / match

namespace {

// The type two branches agree on, when they do.
TypePtr common_branch_type(const TypePtr& a, const TypePtr& b) {
  if (a->is_error()) return b;
  if (b->is_error()) return a;
  if (a->is_contextual() && !b->is_contextual()) return b;
  if (b->is_contextual() && !a->is_contextual()) return a;
  if (a->kind == TypeKind::None) return b;
  if (b->kind == TypeKind::None) return a;
  return a;
}

}  // namespace

TypePtr Checker::Impl::check_if(const ast::IfExpr& expr, Context& cx, const TypePtr& expected) {
  const TypePtr condition = check_expr(*expr.condition, cx);
  if (!condition->is_error() && !(condition->is_scalar() && !condition->is_contextual() && condition->dtype.is_bool())) {
    Diagnostic& d = error("E2114", "the condition of `if` must be a scalar `bool`", expr.condition->span);
    d.note("found " + quoted(type_to_string(condition)));
    if (condition->is_tensor()) d.with_help("for an elementwise choice, use `select(condition, a, b)`");
  }
  const TypePtr then_type = check_expr(*expr.then_value, cx, expected);
  const TypePtr else_type = check_expr(*expr.else_value, cx, then_type->is_contextual() ? expected : then_type);
  const TypePtr common = common_branch_type(then_type, else_type);
  if (!then_type->is_error() && !else_type->is_error() && !same_type(then_type, else_type, cx)) {
    error("E2115", "the branches of `if` have different types", expr.span)
        .note("`then` is " + quoted(type_to_string(then_type)))
        .note("`else` is " + quoted(type_to_string(else_type)));
    return error_type();
  }
  if (then_type->kind == TypeKind::None && else_type->kind == TypeKind::None) return none_type();
  return common;
}

TypePtr Checker::Impl::check_match(const ast::MatchExpr& expr, Context& cx, const TypePtr& expected) {
  const TypePtr scrutinee = check_expr(*expr.scrutinee, cx);
  const bool optional = scrutinee->kind == TypeKind::Optional;
  const bool enumeration = scrutinee->kind == TypeKind::Enum;
  if (!scrutinee->is_error() && !optional && !enumeration) {
    error("E2101", "`match` takes an optional value or an enum, not " + quoted(type_to_string(scrutinee)),
          expr.scrutinee->span);
  }
  bool covers_some = false, covers_none = false, catch_all = false;
  std::set<std::string> variants_covered;
  TypePtr result;
  for (const ast::MatchArm& arm : expr.arms) {
    cx.scopes.emplace_back();
    const ast::Pattern& pattern = *arm.pattern;
    // An arm after one that already matches all its values never runs (spec 11.9).
    const bool reachable = !catch_all && !(pattern.kind == ast::PatternKind::None && covers_none) &&
                           !(pattern.kind == ast::PatternKind::Some && covers_some) &&
                           !(pattern.kind == ast::PatternKind::Binding && enumeration &&
                             variants_covered.count(pattern.cast<ast::BindingPattern>().name.text));
    if (!reachable && !scrutinee->is_error()) {
      error("E2117", "this arm is unreachable: an earlier arm matches all of its values", pattern.span);
    }
    switch (pattern.kind) {
      case ast::PatternKind::Some: {
        if (enumeration) {
          error("E2117", "an enum value cannot match `some(...)`", pattern.span);
        } else if (optional) {
          covers_some = true;
          const ast::Pattern& inner = *pattern.cast<ast::SomePattern>().inner;
          if (inner.kind == ast::PatternKind::None || inner.kind == ast::PatternKind::Some) {
            error("E2117", "the value inside `some(...)` is not optional", inner.span);
          } else {
            bind_pattern(inner, scrutinee->elements.front(), cx, Local::Kind::MatchBinding);
          }
        }
        break;
      }
      case ast::PatternKind::None:
        if (enumeration) error("E2117", "an enum value cannot match `none`", pattern.span);
        covers_none = true;
        break;
      case ast::PatternKind::Binding: {
        const std::string& name = pattern.cast<ast::BindingPattern>().name.text;
        if (enumeration) {
          const auto& variants = scrutinee->enumeration->variants;
          if (std::find(variants.begin(), variants.end(), name) != variants.end()) {
            variants_covered.insert(name);
            break;
          }
        }
        catch_all = true;
        Local& local = declare_local(pattern.cast<ast::BindingPattern>().name, scrutinee, Local::Kind::MatchBinding, cx);
        local.used = local.used || name == "_";
        break;
      }
      case ast::PatternKind::Tuple:
        error("E2117", "a tuple pattern can only appear inside `some(...)`", pattern.span);
        break;
      case ast::PatternKind::Error: break;
    }
    const TypePtr value = check_expr(*arm.value, cx, result && !result->is_contextual() ? result : expected);
    lint_locals(cx);
    cx.scopes.pop_back();
    if (!result) {
      result = value;
    } else if (!value->is_error() && !result->is_error()) {
      if (!same_type(result, value, cx)) {
        error("E2115", "the arms of `match` have different types", arm.value->span)
            .note("an earlier arm is " + quoted(type_to_string(result)))
            .note("this arm is " + quoted(type_to_string(value)));
        result = error_type();
      } else {
        result = common_branch_type(result, value);
      }
    } else if (value->is_error()) {
      result = value;
    }
  }
  if (!catch_all) {
    std::vector<std::string> missing;
    if (optional) {
      if (!covers_some) missing.push_back("some(_)");
      if (!covers_none) missing.push_back("none");
    } else if (enumeration) {
      for (const std::string& variant : scrutinee->enumeration->variants) {
        if (!variants_covered.count(variant)) missing.push_back(variant);
      }
    }
    if (!missing.empty()) {
      std::string list;
      for (std::size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
      error("E2118", "`match` does not cover every case", expr.span).note("not covered: " + list);
    }
  }
  return result ? result : error_type();
}

TypePtr Checker::Impl::check_shape_literal(const ast::ShapeExpr& expr, Context& cx) {
  Shape shape;
  bool ok = true;
  for (const ast::ExprPtr& element : expr.elements) {
    std::optional<DimExpr> dim = resolve_dim(*element, cx);
    if (!dim) {
      ok = false;
      continue;
    }
    check_nonnegative(*dim, element->span, cx);
    shape.push_back(ShapeItem::of(std::move(*dim)));
  }
  return ok ? shape_value_type(std::move(shape)) : error_type();
}

// ---------------------------------------------------------------- dispatch

TypePtr Checker::Impl::check_expr(const ast::Expr& expr, Context& cx, const TypePtr& expected) {
  switch (expr.kind) {
    case ast::ExprKind::Integer: {
      const auto& literal = expr.cast<ast::IntegerLiteral>();
      if (literal.exceeds_u64 || literal.value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        error("E2105", "the integer " + literal.text + " is out of the i64 range", expr.span)
            .note("integer literals are limited to the i64 range");
        return error_type();
      }
      return compile_time_int(DimExpr(static_cast<std::int64_t>(literal.value)));
    }
    case ast::ExprKind::Float: return float_literal(expr.cast<ast::FloatLiteral>().value);
    case ast::ExprKind::String: return string_type();
    case ast::ExprKind::Bool: return scalar_type(DTypeRef::of(tensor::DType::Bool));
    case ast::ExprKind::Name: return check_name(expr.cast<ast::NameExpr>(), cx);
    case ast::ExprKind::Member: return check_member(expr.cast<ast::MemberExpr>(), cx);
    case ast::ExprKind::Call: return check_call(expr.cast<ast::CallExpr>(), cx);
    case ast::ExprKind::Index: return check_index(expr.cast<ast::IndexExpr>(), cx);
    case ast::ExprKind::Unary: return check_unary(expr.cast<ast::UnaryExpr>(), cx, expected);
    case ast::ExprKind::Binary: return check_binary(expr.cast<ast::BinaryExpr>(), cx, expected);
    case ast::ExprKind::Tuple: {
      const auto& tuple = expr.cast<ast::TupleExpr>();
      std::vector<TypePtr> elements;
      for (std::size_t i = 0; i < tuple.elements.size(); ++i) {
        TypePtr hint = expected && expected->kind == TypeKind::Tuple && i < expected->elements.size()
                           ? expected->elements[i]
                           : nullptr;
        TypePtr element = check_expr(*tuple.elements[i], cx, hint);
        if (element->is_error()) return element;
        elements.push_back(std::move(element));
      }
      return tuple_type(std::move(elements));
    }
    case ast::ExprKind::Shape: return check_shape_literal(expr.cast<ast::ShapeExpr>(), cx);
    case ast::ExprKind::Reduction: return check_reduction(expr.cast<ast::ReductionExpr>(), cx);
    case ast::ExprKind::Some: {
      TypePtr hint = expected && expected->kind == TypeKind::Optional ? expected->elements.front() : nullptr;
      const TypePtr inner = check_expr(*expr.cast<ast::SomeExpr>().value, cx, hint);
      if (inner->is_error()) return inner;
      if (inner->kind == TypeKind::Optional || inner->kind == TypeKind::None) {
        error("E2101", "`some(...)` of an optional value", expr.span);
        return error_type();
      }
      return optional_type(inner);
    }
    case ast::ExprKind::None:
      if (expected && expected->kind == TypeKind::Optional) return expected;
      return none_type();
    case ast::ExprKind::If: return check_if(expr.cast<ast::IfExpr>(), cx, expected);
    case ast::ExprKind::Match: return check_match(expr.cast<ast::MatchExpr>(), cx, expected);
    case ast::ExprKind::For:
      // A parenthesized `(for ...)` is an operand, not the whole value (spec 8.5).
      if (cx.scan_position == &expr && !expr.parenthesized) return check_scan(expr.cast<ast::ForExpr>(), cx);
      error("E2124", "a `for` value must be the whole value of a `let`, `var`, assignment or `return`", expr.span)
          .with_help("bind the scan first: `let values = for ... { ... yield v }`");
      return error_type();
    case ast::ExprKind::Error: return error_type();
  }
  return error_type();
}

}  // namespace linnet::check
