// Statements and control flow (spec 5.2-5.3, chapter 8, 9.3, 11.2-11.3):
// bindings, `var` reassignment and `state` assignment, returns, `static
// for` over arrays and compile-time ranges, runtime `while` and `for`, and
// `for` scans that `yield`.
#include "gcc_workarounds.hpp"  // first: see the file

#include "checker_internal.hpp"

namespace linnet::check {

namespace {

bool is_bool_scalar(const Type& type) { return type.is_scalar() && !type.is_contextual() && type.dtype.is_bool(); }

}  // namespace

bool Checker::Impl::ends_with_return(const ast::Body& body) const {
  return !body.statements.empty() && body.statements.back() && body.statements.back()->kind == ast::StmtKind::Return;
}

void Checker::Impl::bind_pattern(const ast::Pattern& pattern, const TypePtr& type, Context& cx, Local::Kind kind) {
  switch (pattern.kind) {
    case ast::PatternKind::Binding:
      declare_local(pattern.cast<ast::BindingPattern>().name, type, kind, cx);
      return;
    case ast::PatternKind::Tuple: {
      const auto& tuple = pattern.cast<ast::TuplePattern>();
      const bool fits = type->kind == TypeKind::Tuple && type->elements.size() == tuple.elements.size();
      if (!fits && !type->is_error()) {
        error("E2117", "cannot take " + quoted(type_to_string(type)) + " apart into " +
                           std::to_string(tuple.elements.size()) + " values",
              pattern.span);
      }
      for (std::size_t i = 0; i < tuple.elements.size(); ++i) {
        bind_pattern(*tuple.elements[i], fits ? type->elements[i] : error_type(), cx, kind);
      }
      return;
    }
    case ast::PatternKind::Some:
    case ast::PatternKind::None:
      error("E2117", "`some(...)` and `none` patterns belong in a `match` arm", pattern.span);
      return;
    case ast::PatternKind::Error: return;
  }
}

std::optional<std::pair<DimExpr, DimExpr>> Checker::Impl::check_for_bounds(const ast::ForLoop& loop, Context& cx,
                                                                           const char* code) {
  std::optional<DimExpr> bounds[2];
  const ast::ExprPtr* exprs[2] = {&loop.start, &loop.stop};
  for (int i = 0; i < 2; ++i) {
    if (!*exprs[i]) return std::nullopt;
    const TypePtr type = check_expr(**exprs[i], cx);
    if (type->is_error()) return std::nullopt;
    if (!type->is_compile_time_int()) {
      error(code, std::string("the ") + (i == 0 ? "start" : "stop") + " of the range must be a compile-time integer",
            (*exprs[i])->span)
          .note("this is " + quoted(type_to_string(type)) +
                "; bounds are literals, generic dimensions, or arithmetic on them")
          .with_help("for a bound known only at run time, use `while`");
      return std::nullopt;
    }
    bounds[i] = *type->value;
  }
  const std::pair<DimExpr, DimExpr> range{*bounds[0], *bounds[1]};
  if (!cx.solver) return range;
  const Relation ordered{*bounds[1], RelOp::Ge, *bounds[0]};
  const ProofResult proof = cx.solver->prove(ordered);
  if (proof.proved()) return range;
  Diagnostic& d = error("E2208", "cannot prove that the range " + quoted(text_of(loop.start->span) + ".." +
                                                                         text_of(loop.stop->span)) +
                                     " is not negative",
                        Span::merge(loop.start->span, loop.stop->span));
  d.note("needed: " + quoted(ordered.to_string()));
  explain_failure(d, proof, cx);
  return std::nullopt;
}

TypePtr Checker::Impl::check_scan(const ast::ForExpr& expr, Context& cx) {
  const ast::ForLoop& loop = expr.loop;
  const std::optional<std::pair<DimExpr, DimExpr>> range = check_for_bounds(loop, cx, "E2123");
  const auto& statements = loop.body.statements;
  const bool ends_with_yield = !statements.empty() && statements.back() && statements.back()->kind == ast::StmtKind::Yield;
  if (!ends_with_yield) {
    error("E2124", "a `for` that is a value must end with `yield`", expr.span)
        .note("the loop's value stacks what each iteration yields");
  }
  cx.scopes.emplace_back();
  declare_local(loop.variable, scalar_type(DTypeRef::of(tensor::DType::I64)), Local::Kind::LoopVar, cx).used = true;
  ++cx.loop_depth;
  TypePtr yielded = error_type();
  for (std::size_t i = 0; i < statements.size(); ++i) {
    if (!statements[i]) continue;
    if (ends_with_yield && i + 1 == statements.size()) {
      const auto& yield = statements[i]->cast<ast::YieldStmt>();
      yielded = yield.value ? default_literal(check_expr(*yield.value, cx)) : error_type();
      continue;
    }
    check_stmt(*statements[i], cx);
  }
  --cx.loop_depth;
  lint_locals(cx);
  cx.scopes.pop_back();
  if (!ends_with_yield || yielded->is_error() || !range) return error_type();
  const DimExpr count = simplify(range->second - range->first, cx);
  // Each yielded value gains a leading axis of `stop - start`.
  std::function<TypePtr(const TypePtr&)> stack = [&](const TypePtr& type) -> TypePtr {
    switch (type->kind) {
      case TypeKind::Scalar: return tensor_type(Shape{ShapeItem::of(count)}, type->dtype);
      case TypeKind::Tensor: {
        Shape shape{ShapeItem::of(count)};
        shape.insert(shape.end(), type->shape.begin(), type->shape.end());
        return tensor_type(std::move(shape), type->dtype);
      }
      case TypeKind::Tuple: {
        std::vector<TypePtr> elements;
        for (const TypePtr& element : type->elements) elements.push_back(stack(element));
        return tuple_type(std::move(elements));
      }
      default:
        error("E2101", "a scan stacks scalars, tensors and tuples of them, not " + quoted(type_to_string(type)),
              expr.span);
        return error_type();
    }
  };
  return stack(yielded);
}

void Checker::Impl::check_stmt(const ast::Stmt& stmt, Context& cx) {
  switch (stmt.kind) {
    case ast::StmtKind::Let: {
      const auto& let = stmt.cast<ast::LetStmt>();
      TypePtr declared = let.type ? resolve_type(*let.type, cx) : nullptr;
      cx.scan_position = let.value.get();
      TypePtr value = let.value ? check_expr(*let.value, cx, declared) : error_type();
      cx.scan_position = nullptr;
      if (value->kind == TypeKind::ShapeValue) {
        error("E2101", "a shape literal is not a value", let.value->span)
            .note("shape literals are accepted only by shape primitives such as `reshape`");
        value = error_type();
      }
      TypePtr type;
      if (declared) {
        coerce(value, declared, let.value ? let.value->span : stmt.span, "the value", cx);
        type = declared;
      } else if (value->kind == TypeKind::None) {
        error("E2113", "`none` needs an optional type", let.value->span)
            .with_help("annotate the binding: `let x: Tensor[...; f32]? = none`");
        type = error_type();
      } else if (value->is_contextual() && !(value->is_compile_time_int() && !value->value->is_constant())) {
        // A literal takes its default dtype; a symbolic dimension stays a
        // compile-time integer usable in shapes (spec 1.7).
        type = default_literal(value);
      } else {
        type = value;
      }
      if (let.pattern) bind_pattern(*let.pattern, type, cx, Local::Kind::Let);
      return;
    }
    case ast::StmtKind::Comprehension:
      check_comprehension(stmt.cast<ast::ComprehensionStmt>(), cx);
      return;
    case ast::StmtKind::Var: {
      const auto& var = stmt.cast<ast::VarStmt>();
      TypePtr declared = var.type ? resolve_type(*var.type, cx) : nullptr;
      cx.scan_position = var.value.get();
      TypePtr value = var.value ? check_expr(*var.value, cx, declared) : error_type();
      cx.scan_position = nullptr;
      if (value->kind == TypeKind::ShapeValue) {
        error("E2101", "a shape literal is not a value", var.value->span);
        value = error_type();
      }
      TypePtr type;
      if (declared) {
        coerce(value, declared, var.value ? var.value->span : stmt.span, "the value", cx);
        type = declared;
      } else if (value->kind == TypeKind::None) {
        error("E2113", "`none` needs an optional type", var.value->span);
        type = error_type();
      } else {
        type = default_literal(value);
      }
      declare_local(var.name, type, Local::Kind::Var, cx);
      return;
    }
    case ast::StmtKind::Assign: {
      const auto& assign = stmt.cast<ast::AssignStmt>();
      const std::string& name = assign.target.text;
      TypePtr target;
      if (Local* local = find_local(name, cx)) {
        if (local->kind != Local::Kind::Var) {
          Diagnostic& d = error("E2108", "cannot assign to " + quoted(name), assign.target.span);
          d.also(local->span, local->kind == Local::Kind::Param ? "a parameter, not declared with `var`"
                                                                : "not declared with `var`");
          d.with_help("only locals declared with `var` and `state` members can be assigned");
        } else {
          target = local->type;
        }
      } else if (cx.block && cx.block->member_index.count(name)) {
        resolve_block_members(*cx.block);
        const MemberDecl& member = *cx.block->member(name);
        if (member.kind != ast::MemberKind::State) {
          Diagnostic& d = error("E2108", "cannot assign to " + quoted(name), assign.target.span);
          d.also(member.item->name.span, std::string("a `") + ast::member_kind_spelling(member.kind) + "`, not `state`");
          d.with_help("only `var` locals and the block's own `state` members can be assigned");
        } else {
          target = member.type;
        }
      } else if (cx.generics.count(name) || find_symbol(name, cx)) {
        error("E2108", "cannot assign to " + quoted(name), assign.target.span)
            .with_help("only `var` locals and the block's own `state` members can be assigned");
      } else if (!was_imported(*cx.module, name)) {
        error("E1201", "cannot find " + quoted(name) + " in this scope", assign.target.span);
      }
      cx.scan_position = assign.value.get();
      const TypePtr value = assign.value ? check_expr(*assign.value, cx, target) : error_type();
      cx.scan_position = nullptr;
      if (target && !value->is_error() && !target->is_error()) {
        coerce(value, target, assign.value->span, "the new value of " + quoted(name), cx, "E2109");
      }
      return;
    }
    case ast::StmtKind::Return: {
      const auto& ret = stmt.cast<ast::ReturnStmt>();
      if (cx.in_kernel) {
        error("E2127", "a kernel does not return", stmt.span).note("a kernel writes its results with `store`");
        return;
      }
      if (cx.loop_depth > 0) {
        error("E2120", "`return` is not allowed inside a loop", stmt.span)
            .note("a loop's carried `var`s hold its results; return after the loop");
      }
      const TypePtr result = cx.result ? cx.result : unit_type();
      if (!ret.value) {
        if (result->kind != TypeKind::Unit && !result->is_error()) {
          error("E2101", "`return` needs a value of type " + quoted(type_to_string(result)), stmt.span);
        }
        return;
      }
      cx.scan_position = ret.value.get();
      const TypePtr value = check_expr(*ret.value, cx, result);
      cx.scan_position = nullptr;
      if (result->kind == TypeKind::Unit) {
        if (!value->is_error()) error("E2101", "this function returns nothing", ret.value->span);
        return;
      }
      coerce(value, result, ret.value->span, "the returned value", cx);
      return;
    }
    case ast::StmtKind::StaticFor: {
      const auto& loop = stmt.cast<ast::StaticForStmt>();
      TypePtr element = error_type();
      if (loop.is_range()) {
        bool ok = true;
        for (const ast::ExprPtr* bound : {&loop.iterable, &loop.range_stop}) {
          const TypePtr type = check_expr(**bound, cx);
          if (type->is_error()) {
            ok = false;
          } else if (!type->is_compile_time_int()) {
            error("E2121", "`static for` needs compile-time bounds", (*bound)->span)
                .note("this is " + quoted(type_to_string(type)) +
                      "; bounds are literals, generic dimensions, or arithmetic on them")
                .with_help("for a runtime bound, use `for` with compile-time bounds or `while`");
            ok = false;
          }
        }
        (void)ok;
        element = scalar_type(DTypeRef::of(tensor::DType::I64));
      } else {
        const TypePtr iterable = check_expr(*loop.iterable, cx);
        if (iterable->kind == TypeKind::BlockArray) {
          element = iterable->elements.front();
        } else if (!iterable->is_error()) {
          error("E2121", "`static for` iterates a structural array or a compile-time range, not " +
                             quoted(type_to_string(iterable)),
                loop.iterable->span)
              .with_help("for a runtime loop, use `for i in 0..N` or `while`");
        }
      }
      cx.scopes.emplace_back();
      if (loop.pattern) bind_pattern(*loop.pattern, element, cx, Local::Kind::LoopVar);
      check_body(loop.body, cx, false);
      lint_locals(cx);
      cx.scopes.pop_back();
      return;
    }
    case ast::StmtKind::While: {
      const auto& loop = stmt.cast<ast::WhileStmt>();
      const TypePtr condition = check_expr(*loop.condition, cx);
      if (!condition->is_error() && !is_bool_scalar(*condition)) {
        Diagnostic& d = error("E2114", "the condition of `while` must be a scalar `bool`", loop.condition->span);
        d.note("found " + quoted(type_to_string(condition)));
        if (condition->is_tensor()) d.with_help("reduce it first, for example with `any[i] mask[i]`");
      }
      ++cx.loop_depth;
      check_body(loop.body, cx, false);
      --cx.loop_depth;
      return;
    }
    case ast::StmtKind::For: {
      const auto& loop = stmt.cast<ast::ForStmt>().loop;
      check_for_bounds(loop, cx, "E2123");
      cx.scopes.emplace_back();
      declare_local(loop.variable, scalar_type(DTypeRef::of(tensor::DType::I64)), Local::Kind::LoopVar, cx).used = true;
      ++cx.loop_depth;
      check_body(loop.body, cx, false);
      --cx.loop_depth;
      cx.scopes.pop_back();
      return;
    }
    case ast::StmtKind::Yield: {
      error("E2124", "`yield` belongs at the end of a `for` that is a binding's value", stmt.span)
          .note("write `let values = for i in 0..N { ... yield v }`");
      const auto& yield = stmt.cast<ast::YieldStmt>();
      if (yield.value) check_expr(*yield.value, cx);
      return;
    }
    case ast::StmtKind::Store: {
      const auto& store = stmt.cast<ast::StoreStmt>();
      if (!cx.in_kernel) {
        error("E2127", std::string("`") + ast::store_kind_spelling(store.store) + "` is available only in a kernel",
              store.keyword_span.valid() ? store.keyword_span : stmt.span)
            .note("a kernel writes its results with `store`; elsewhere, values are returned");
        return;
      }
      check_store(store, cx);
      return;
    }
    case ast::StmtKind::Error: return;
  }
}

void Checker::Impl::check_body(const ast::Body& body, Context& cx, bool function_body) {
  cx.scopes.emplace_back();
  for (std::size_t i = 0; i < body.statements.size(); ++i) {
    if (body.statements[i]) check_stmt(*body.statements[i], cx);
  }
  if (function_body && !cx.in_kernel && cx.result && cx.result->kind != TypeKind::Unit && !ends_with_return(body)) {
    Span end = body.span;
    if (end.valid() && end.end > end.begin) end.begin = end.end - 1;
    error("E2120", "this function must end with `return`", end)
        .note("the final expression is never returned implicitly; every path returns " +
              quoted(type_to_string(cx.result)));
  }
  lint_locals(cx);
  cx.scopes.pop_back();
}

}  // namespace linnet::check
