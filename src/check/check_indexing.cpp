// Indexing and index notation (spec 5.8 and chapter 6).
//
// Outside index notation, `x[...]` takes integers (removing axes), slices
// (keeping them, with the extent formula of 5.8) and one `...`. Inside a
// comprehension or a reduction every tensor access names all axes: with
// index variables, which take their domain from the axis they index, a
// pack index `*s`, or integers (a runtime integer is a gather).
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>

#include "checker_internal.hpp"

namespace linnet::check {

namespace {

bool is_integer_scalar(const Type& type) {
  if (!type.is_scalar()) return false;
  if (type.is_contextual()) return type.contextual == Contextual::Integer;
  return type.dtype.is_integer();
}

}  // namespace

IndexVar* Checker::Impl::find_index_var(const std::string& name, Context& cx) {
  for (auto scope = cx.index_scopes.rbegin(); scope != cx.index_scopes.rend(); ++scope) {
    for (IndexVar& var : scope->vars) {
      if (var.name == name) return &var;
    }
  }
  return nullptr;
}

namespace {

// The scope an index variable belongs to.
IndexScope* scope_of(const IndexVar& var, Context& cx) {
  for (IndexScope& scope : cx.index_scopes) {
    for (const IndexVar& candidate : scope.vars) {
      if (&candidate == &var) return &scope;
    }
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------- notation

namespace {

struct NotationAccess {
  Checker::Impl& impl;
  Context& cx;
  const ast::IndexExpr& expr;
  const Type& tensor;
  std::string source;  // the indexed tensor as written

  // Binds or checks the domain of an index variable against one axis (or,
  // for a pack index, a run of axes).
  bool bind(IndexVar& var, const Shape& axes, Span use) {
    if (!var.has_domain) {
      var.has_domain = true;
      if (var.is_pack) {
        var.pack_extent = axes;
      } else {
        var.extent = axes.front().dim;
      }
      var.source = source;
      var.domain_span = use;
      return true;
    }
    const bool same = var.is_pack ? impl.shapes_equal(var.pack_extent, axes, cx)
                                  : impl.prove_equal_dims(var.extent, axes.front().dim, cx);
    if (same) return true;
    const std::string first = var.is_pack ? shape_to_string(var.pack_extent) : var.extent.to_string();
    const std::string second = var.is_pack ? shape_to_string(axes) : axes.front().dim.to_string();
    const IndexScope* scope = scope_of(var, cx);
    Span primary = var.span;
    std::string label;
    std::string message;
    if (scope && scope->reduction) {
      // `sum[k]`: the keyword through the closing bracket.
      primary = scope->reduction->keyword_span;
      if (!scope->reduction->indices.empty()) {
        primary.end = scope->reduction->indices.back().span.end;
        const std::string& text = impl.sources.file(primary.file).text();
        while (primary.end < text.size() && text[primary.end] != ']') ++primary.end;
        if (primary.end < text.size()) ++primary.end;
      }
      message = "incompatible contraction dimensions";
      label = "reduction index " + quoted(var.name) + " has incompatible domains";
    } else {
      message = "incompatible extents for index " + quoted(var.name);
      label = "index " + quoted(var.name) + " has incompatible domains";
    }
    Diagnostic& d = impl.error("E2201", message, primary);
    d.with_label(label);
    d.also(use, "used here with a different extent");
    d.note(quoted(var.source) + " binds " + quoted(var.name) + " to " + first);
    d.note(quoted(source) + " binds " + quoted(var.name) + " to " + second);
    if (!cx.facts.empty() && !var.is_pack && cx.solver) {
      const ProofResult proof = cx.solver->prove_equal(var.extent, axes.front().dim, Detail::Explained);
      d.note(impl.facts_searched_note(proof.facts_searched));
    }
    if (var.is_pack) {
      d.with_help("use one shared dimension parameter or add a constraint that proves " + first + " == " + second);
    } else {
      impl.help_for_unequal(d, var.extent, axes.front().dim, cx);
    }
    return false;
  }

  // An integer used as an index: compile-time ones must lie in the axis.
  bool integer(const ast::Expr& value, const DimExpr& extent) {
    const TypePtr type = impl.check_expr(value, cx);
    if (type->is_error()) return false;
    if (type->is_tensor()) {
      impl.error("E3104", "a whole tensor cannot index a tensor in index notation", value.span)
          .note("index it too, on all of its axes");
      return false;
    }
    if (!is_integer_scalar(*type)) {
      impl.error("E2101", "an index must be an integer, not " + quoted(type_to_string(type)), value.span);
      return false;
    }
    if (type->is_compile_time_int()) return impl_in_bounds(*type->value, extent, value.span);
    return true;
  }

  bool impl_in_bounds(const DimExpr& index, const DimExpr& extent, Span span);
};

}  // namespace

namespace {

bool in_bounds(Checker::Impl& impl, Context& cx, const DimExpr& index, const DimExpr& extent, Span span) {
  if (!cx.solver) return true;
  const ProofResult low = cx.solver->prove_nonnegative(index);
  if (!low.proved()) {
    Diagnostic& d = impl.error("E2209",
                               low.disproved() ? "index " + quoted(index.to_string()) + " is negative"
                                               : "cannot prove that index " + quoted(index.to_string()) +
                                                     " is not negative",
                               span);
    d.note("indices count from 0; the last element of an axis of size `N` is `N - 1`");
    if (!low.disproved()) impl.explain_failure(d, low, cx);
    return false;
  }
  const Relation below{index, RelOp::Lt, extent};
  const ProofResult high = cx.solver->prove(below);
  if (!high.proved()) {
    Diagnostic& d = impl.error("E2209",
                               "cannot prove that index " + quoted(index.to_string()) + " lies in an axis of extent " +
                                   quoted(extent.to_string()),
                               span);
    d.note("needed: " + quoted(below.to_string()));
    impl.explain_failure(d, high, cx);
    return false;
  }
  return true;
}

}  // namespace

bool NotationAccess::impl_in_bounds(const DimExpr& index, const DimExpr& extent, Span span) {
  return in_bounds(impl, cx, index, extent, span);
}

TypePtr Checker::Impl::check_index(const ast::IndexExpr& expr, Context& cx) {
  const TypePtr object = check_expr(*expr.object, cx);
  if (object->is_error()) return object;
  if (object->kind == TypeKind::BlockArray) {
    if (expr.components.size() != 1 || expr.components.front().kind != ast::IndexComponentKind::Value) {
      error("E2204", "a structural array is indexed with exactly one compile-time integer", expr.span);
      return error_type();
    }
    const ast::Expr& value = *expr.components.front().value;
    const TypePtr index = check_expr(value, cx);
    if (index->is_error()) return index;
    if (!index->is_compile_time_int()) {
      error("E2123", "a structural array is indexed with a compile-time integer", value.span)
          .note("`static for` over the array visits each element");
      return error_type();
    }
    if (!in_bounds(*this, cx, *index->value, object->length, value.span)) return error_type();
    return object->elements.front();
  }
  if (!object->is_tensor()) {
    error("E2104", "cannot index " + quoted(type_to_string(object)), expr.object->span);
    return error_type();
  }
  const Shape& shape = object->shape;

  if (cx.in_index_notation()) {
    NotationAccess access{*this, cx, expr, *object, text_of(*expr.object)};
    std::size_t pack_components = 0;
    for (const ast::IndexComponent& component : expr.components) {
      if (component.kind == ast::IndexComponentKind::Ellipsis || component.kind == ast::IndexComponentKind::Slice) {
        error("E3104", "slices and `...` cannot appear in index notation", component.span)
            .note("index every axis with an index variable, a pack index `*s`, or an integer");
        return error_type();
      }
      if (component.kind == ast::IndexComponentKind::Pack) ++pack_components;
    }
    // Which axes each component covers.
    std::vector<Shape> covered;
    if (has_pack(shape)) {
      if (expr.components.size() != shape.size()) {
        error("E2204", "index notation names every axis: " + shape_to_string(shape) + " takes " +
                           std::to_string(shape.size()) + " indices, not " + std::to_string(expr.components.size()),
              expr.span);
        return error_type();
      }
      for (const ShapeItem& item : shape) covered.push_back(Shape{item});
    } else if (pack_components == 0) {
      if (expr.components.size() != shape.size()) {
        error("E2204", "index notation names every axis: " + quoted(text_of(*expr.object)) + " has rank " +
                           std::to_string(shape.size()) + ", not " + std::to_string(expr.components.size()),
              expr.span);
        return error_type();
      }
      for (const ShapeItem& item : shape) covered.push_back(Shape{item});
    } else if (pack_components == 1 && expr.components.size() - 1 <= shape.size()) {
      const std::size_t pack_width = shape.size() - (expr.components.size() - 1);
      std::size_t axis = 0;
      for (const ast::IndexComponent& component : expr.components) {
        const std::size_t width = component.kind == ast::IndexComponentKind::Pack ? pack_width : 1;
        covered.emplace_back(shape.begin() + static_cast<std::ptrdiff_t>(axis),
                             shape.begin() + static_cast<std::ptrdiff_t>(axis + width));
        axis += width;
      }
    } else {
      error("E2204", "these indices do not fit " + shape_to_string(shape), expr.span);
      return error_type();
    }
    bool ok = true;
    for (std::size_t i = 0; i < expr.components.size(); ++i) {
      const ast::IndexComponent& component = expr.components[i];
      const Shape& axes = covered[i];
      const bool pack_axis = axes.size() == 1 && axes.front().is_pack();
      if (component.kind == ast::IndexComponentKind::Pack) {
        IndexVar* var = find_index_var(component.pack.text, cx);
        if (!var) {
          error("E3101", "index " + quoted("*" + component.pack.text) + " is not bound", component.span)
              .note("Linnet does not perform implicit Einstein summation");
          ok = false;
          continue;
        }
        var->used = true;
        if (!var->is_pack) {
          error("E3106", quoted(component.pack.text) + " is a plain index, not a pack index", component.span)
              .with_help("write " + quoted(component.pack.text));
          ok = false;
          continue;
        }
        ok = access.bind(*var, axes, component.span) && ok;
        continue;
      }
      const ast::Expr& value = *component.value;
      if (const auto* name = value.as<ast::NameExpr>()) {
        if (IndexVar* var = find_index_var(name->name.text, cx)) {
          var->used = true;
          if (var->is_pack) {
            error("E3106", quoted(name->name.text) + " is a pack index; write " + quoted("*" + name->name.text),
                  component.span);
            ok = false;
            continue;
          }
          if (pack_axis) {
            error("E3106", "axis " + std::to_string(i) + " of " + quoted(text_of(*expr.object)) +
                               " is the shape pack " + quoted("*" + axes.front().pack) +
                               "; index it with a pack index such as " + quoted("*" + name->name.text),
                  component.span);
            ok = false;
            continue;
          }
          ok = access.bind(*var, axes, component.span) && ok;
          continue;
        }
        const std::string& text = name->name.text;
        const bool resolvable = find_local(text, cx) || cx.generics.count(text) ||
                                (cx.block && cx.block->member_index.count(text)) ||
                                cx.module->symbols.count(text) > 0;
        if (!resolvable) {
          // Once per name and comprehension: every further use is the same mistake.
          const std::string key = "E3101 " + text + " " + std::to_string(cx.index_scopes.front().vars.empty() ? 0 : cx.index_scopes.front().vars.front().span.begin);
          if (cx.reported.insert(key).second) {
            error("E3101", "index " + quoted(text) + " is not bound", component.span)
                .note("Linnet does not perform implicit Einstein summation")
                .with_help("reduce over it explicitly, for example `sum[" + text + "] ...`, or make it an output index");
          }
          ok = false;
          continue;
        }
      }
      if (pack_axis) {
        error("E3106", "axis " + std::to_string(i) + " of " + quoted(text_of(*expr.object)) + " is the shape pack " +
                           quoted("*" + axes.front().pack) + "; index it with a pack index",
              component.span);
        ok = false;
        continue;
      }
      ok = access.integer(value, axes.front().dim) && ok;
    }
    if (!ok) return error_type();
    return scalar_type(object->dtype);
  }

  // Outside index notation.
  std::size_t ellipses = 0;
  for (const ast::IndexComponent& component : expr.components) {
    if (component.kind == ast::IndexComponentKind::Ellipsis) ++ellipses;
    if (component.kind == ast::IndexComponentKind::Pack) {
      error("E3104", "a pack index " + quoted("*" + component.pack.text) + " belongs in index notation",
            component.span)
          .with_help("write a comprehension: `let y[*s, i] = x[*s, i]`");
      return error_type();
    }
  }
  if (ellipses > 1) {
    error("E2209", "`...` may appear only once in an index", expr.span);
    return error_type();
  }
  const std::size_t explicit_count = expr.components.size() - ellipses;
  if (explicit_count > shape.size() && !has_pack(shape)) {
    error("E2204", "too many indices: " + quoted(text_of(*expr.object)) + " has rank " + std::to_string(shape.size()) +
                       ", not " + std::to_string(explicit_count),
          expr.span);
    return error_type();
  }
  // Map each component to an axis: before `...` from the front, after it
  // from the back; without `...`, from the front, later axes kept whole.
  std::vector<std::ptrdiff_t> axis_of(expr.components.size(), -1);
  std::size_t before = 0;
  for (; before < expr.components.size(); ++before) {
    if (expr.components[before].kind == ast::IndexComponentKind::Ellipsis) break;
    axis_of[before] = static_cast<std::ptrdiff_t>(before);
  }
  const std::size_t after_count = expr.components.size() - before - (ellipses ? 1 : 0);
  for (std::size_t k = 0; k < after_count; ++k) {
    axis_of[before + 1 + k] = static_cast<std::ptrdiff_t>(shape.size() - after_count + k);
  }
  if (explicit_count > shape.size()) {
    error("E2204", "too many indices for " + shape_to_string(shape), expr.span);
    return error_type();
  }
  std::vector<std::optional<ShapeItem>> result(shape.begin(), shape.end());
  bool ok = true;
  for (std::size_t i = 0; i < expr.components.size(); ++i) {
    const ast::IndexComponent& component = expr.components[i];
    if (component.kind == ast::IndexComponentKind::Ellipsis) continue;
    const auto axis = static_cast<std::size_t>(axis_of[i]);
    if (shape[axis].is_pack()) {
      error("E2209", "the axes of shape pack " + quoted("*" + shape[axis].pack) + " cannot be indexed one by one",
            component.span)
          .with_help("use `...` for the pack's axes");
      ok = false;
      continue;
    }
    const DimExpr& extent = shape[axis].dim;
    if (component.kind == ast::IndexComponentKind::Value) {
      const TypePtr index = check_expr(*component.value, cx);
      if (index->is_error()) {
        ok = false;
        continue;
      }
      if (!is_integer_scalar(*index)) {
        error("E2101", "an index must be an integer scalar, not " + quoted(type_to_string(index)), component.span);
        ok = false;
        continue;
      }
      if (index->is_compile_time_int() && !in_bounds(*this, cx, *index->value, extent, component.span)) {
        ok = false;
        continue;
      }
      result[axis].reset();
      continue;
    }
    // A slice: compile-time bounds, a positive constant step.
    auto bound = [&](const ast::ExprPtr& value, DimExpr fallback, const char* which) -> std::optional<DimExpr> {
      if (!value) return fallback;
      const TypePtr type = check_expr(*value, cx);
      if (type->is_error()) return std::nullopt;
      if (!type->is_compile_time_int()) {
        error("E2123", std::string("a slice's ") + which + " must be a compile-time integer", value->span)
            .note("this is " + quoted(type_to_string(type)) + "; for a runtime position, use a comprehension");
        return std::nullopt;
      }
      return *type->value;
    };
    std::optional<DimExpr> start = bound(component.start, DimExpr(0), "start");
    std::optional<DimExpr> stop = bound(component.stop, extent, "stop");
    std::optional<DimExpr> step = bound(component.step, DimExpr(1), "step");
    if (!start || !stop || !step) {
      ok = false;
      continue;
    }
    const std::optional<std::int64_t> step_constant = constant_value(*step, cx);
    if (!step_constant || *step_constant <= 0) {
      error("E2209", "a slice's step must be a positive integer constant, not " + quoted(step->to_string()),
            component.step ? component.step->span : component.span);
      ok = false;
      continue;
    }
    bool bounds_ok = true;
    for (const auto& [value, expr_ptr] : {std::pair{*start, &component.start}, std::pair{*stop, &component.stop}}) {
      if (!*expr_ptr || !cx.solver) continue;
      const ProofResult proof = cx.solver->prove_nonnegative(value);
      if (proof.proved()) continue;
      Diagnostic& d = error("E2209",
                            proof.disproved() ? "slice bound " + quoted(value.to_string()) + " is negative"
                                              : "cannot prove that slice bound " + quoted(value.to_string()) +
                                                    " is not negative",
                            (*expr_ptr)->span);
      d.note("slice bounds are non-negative; the last element of an axis of size `N` is `N - 1`");
      if (!proof.disproved()) explain_failure(d, proof, cx);
      bounds_ok = false;
    }
    if (!bounds_ok) {
      ok = false;
      continue;
    }
    // max(0, (min(stop, D) - start + step - 1) / step)
    DimExpr length = DimExpr::min(*stop, extent) - *start;
    if (*step_constant != 1) length = (length + DimExpr(*step_constant - 1)) / DimExpr(*step_constant);
    result[axis] = ShapeItem::of(simplify(DimExpr::max(DimExpr(0), length), cx));
  }
  if (!ok) return error_type();
  Shape out;
  for (const std::optional<ShapeItem>& item : result) {
    if (item) out.push_back(*item);
  }
  if (out.empty()) return scalar_type(object->dtype);
  return tensor_type(std::move(out), object->dtype);
}

// ---------------------------------------------------------------- reductions

TypePtr Checker::Impl::check_reduction(const ast::ReductionExpr& expr, Context& cx) {
  IndexScope scope;
  scope.reduction = &expr;
  bool ok = true;
  for (const ast::Ident& index : expr.indices) {
    const bool duplicate = std::any_of(scope.vars.begin(), scope.vars.end(),
                                       [&](const IndexVar& v) { return v.name == index.text; });
    if (duplicate || find_index_var(index.text, cx)) {
      error("E3105", "index " + quoted(index.text) + " is listed twice", index.span);
      ok = false;
      continue;
    }
    IndexVar var;
    var.name = index.text;
    var.span = index.span;
    scope.vars.push_back(std::move(var));
  }
  cx.index_scopes.push_back(std::move(scope));
  const TypePtr body = check_expr(*expr.body, cx);
  IndexScope done = std::move(cx.index_scopes.back());
  cx.index_scopes.pop_back();
  for (const IndexVar& var : done.vars) {
    // After an error in the body, an index may look unused only because the
    // access that used it failed first.
    if (!var.used && !body->is_error()) {
      error("E3102", "reduction index " + quoted(var.name) + " is not used", var.span)
          .note("every reduction index must index the reduced expression");
      ok = false;
    }
  }
  if (!ok || body->is_error()) return error_type();
  if (!body->is_scalar()) {
    error("E3104", "the reduced expression must be one element, not " + quoted(type_to_string(body)), expr.body->span);
    return error_type();
  }
  const bool logical = expr.reduction == ast::ReductionKind::Any || expr.reduction == ast::ReductionKind::All;
  const char* keyword = ast::reduction_spelling(expr.reduction);
  if (logical) {
    if (body->is_contextual() || !body->dtype.is_bool()) {
      error("E2104", std::string("`") + keyword + "` reduces `bool` values, not " + quoted(type_to_string(body)),
            expr.body->span);
      return error_type();
    }
  } else if (!body->is_contextual() && !body->dtype.is_numeric()) {
    error("E2104", std::string("`") + keyword + "` reduces numbers, not " + quoted(type_to_string(body)),
          expr.body->span);
    return error_type();
  }
  if (expr.accumulator) {
    const DTypeRef accumulator = resolve_dtype(*expr.accumulator, cx);
    if (accumulator.is_error()) return error_type();
    if (body->is_contextual()) {
      if (!adopt_literal(*body, accumulator, expr.body->span)) return error_type();
    } else if (!(body->dtype == accumulator)) {
      error("E2103", std::string("the reduced expression has dtype ") + body->dtype.to_string() +
                         ", not the accumulator's " + accumulator.to_string(),
            expr.body->span)
          .with_help("cast the operands: `" + std::string(keyword) + "<" + accumulator.to_string() + ">[...] cast<" +
                     accumulator.to_string() + ">(...)`");
      return error_type();
    }
    return scalar_type(accumulator);
  }
  return body->is_contextual() ? default_literal(body) : body;
}

void Checker::Impl::check_comprehension(const ast::ComprehensionStmt& stmt, Context& cx) {
  IndexScope scope;
  scope.comprehension = &stmt;
  bool ok = true;
  for (const ast::IndexOutput& output : stmt.outputs) {
    const bool duplicate = std::any_of(scope.vars.begin(), scope.vars.end(),
                                       [&](const IndexVar& v) { return v.name == output.name.text; });
    if (duplicate) {
      error("E3105", "index " + quoted(output.name.text) + " is listed twice", output.span);
      ok = false;
      continue;
    }
    IndexVar var;
    var.name = output.name.text;
    var.is_pack = output.is_pack;
    var.is_output = true;
    var.span = output.span;
    scope.vars.push_back(std::move(var));
  }
  cx.index_scopes.push_back(std::move(scope));
  TypePtr body = stmt.value ? check_expr(*stmt.value, cx) : error_type();
  IndexScope done = std::move(cx.index_scopes.back());
  cx.index_scopes.pop_back();
  Shape shape;
  for (const IndexVar& var : done.vars) {
    if (!var.used || !var.has_domain) {
      ok = false;
      if (body->is_error()) continue;
      error("E3103", "output index " + quoted(var.name) + " indexes no tensor axis", var.span)
          .note("an output index takes its extent from the axes it indexes");
      continue;
    }
    if (var.is_pack) {
      shape.insert(shape.end(), var.pack_extent.begin(), var.pack_extent.end());
    } else {
      shape.push_back(ShapeItem::of(var.extent));
    }
  }
  if (ok && !body->is_error() && !body->is_scalar()) {
    error("E3104", "a comprehension's value must be one element, not " + quoted(type_to_string(body)),
          stmt.value->span);
    ok = false;
  }
  TypePtr type = error_type();
  if (ok && !body->is_error()) type = tensor_type(std::move(shape), default_literal(body)->dtype);
  declare_local(stmt.name, type, Local::Kind::Let, cx);
}

}  // namespace linnet::check
