// Calls of functions, ops, entries, block methods and struct constructors:
// arguments matched to parameters, generic arguments inferred from the
// argument types (shape packs included), the callee's `where` clause proved
// at the call (E2206), and the result type in the caller's terms.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>

#include "checker_internal.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::check {

namespace {

// Generic inference for one call: the callee's generics, bound to values in
// the caller's terms as argument types reveal them.
struct Inference {
  const std::vector<GenericParamInfo>* generics = nullptr;
  Substitution bound;
  // Dimensions that are not a plain generic (`N * D`, `2 * Inner`, `1`):
  // compared once every generic in them is bound.
  struct Pending {
    DimExpr pattern;
    DimExpr actual;
    std::size_t argument = 0;
    std::size_t axis = 0;
  };
  std::vector<Pending> pending;
  // Contextual literals passed where a dtype generic is expected: they fix
  // the dtype only if nothing else does.
  std::vector<std::pair<std::string, TypePtr>> literal_dtypes;

  const GenericParamInfo* generic(std::string_view name) const {
    for (const GenericParamInfo& g : *generics) {
      if (g.name == name) return &g;
    }
    return nullptr;
  }
  bool is_unbound_dim(const DimExpr& dim) const {
    if (!dim.is_symbol()) return false;
    const GenericParamInfo* g = generic(dim.name());
    return g && g->is_dim() && !bound.dims.count(dim.name());
  }
  std::vector<std::string> unbound_symbols(const DimExpr& dim) const {
    std::vector<std::string> out;
    for (const std::string& symbol : dim.symbols()) {
      const GenericParamInfo* g = generic(symbol);
      if (g && g->is_dim() && !bound.dims.count(symbol)) out.push_back(symbol);
    }
    return out;
  }
};

// Why an argument does not fit its parameter; the first reason wins.
struct Mismatch {
  bool failed = false;
  const char* code = "E2101";
  std::string message;
  std::vector<std::string> notes;
  void set(const char* c, std::string m) {
    if (failed) return;
    failed = true;
    code = c;
    message = std::move(m);
  }
};

}  // namespace

namespace {

class Unifier {
 public:
  Unifier(Checker::Impl& impl, Context& cx, Inference& inference, std::size_t argument)
      : impl_(impl), cx_(cx), inf_(inference), argument_(argument) {}

  Mismatch mismatch;

  void unify(const TypePtr& pattern, const TypePtr& actual) {
    if (pattern->is_error() || actual->is_error() || mismatch.failed) return;
    if (pattern->kind == TypeKind::Optional) {
      if (actual->kind == TypeKind::None) return;
      if (actual->kind == TypeKind::Optional) return unify(pattern->elements.front(), actual->elements.front());
      Unifier probe(impl_, cx_, inf_, argument_);
      probe.unify(pattern->elements.front(), actual);
      mismatch.set("E2101", probe.mismatch.failed ? "has the wrong type" : "must be optional: wrap it as `some(...)`");
      return;
    }
    if (actual->kind == TypeKind::None) {
      mismatch.set("E2113", "is `none`, but the parameter is not optional");
      return;
    }
    switch (pattern->kind) {
      case TypeKind::Scalar:
        if (actual->kind != TypeKind::Scalar) return wrong_kind();
        if (actual->is_contextual()) {
          const DTypeRef dtype = pattern_dtype(pattern->dtype);
          if (dtype.kind == DTypeRef::Kind::Generic && unbound_dtype(dtype)) {
            inf_.literal_dtypes.emplace_back(dtype.name, actual);
            return;
          }
          literal_target = dtype;
          literal = actual;
          return;
        }
        unify_dtype(pattern->dtype, actual->dtype);
        return;
      case TypeKind::Tensor:
        if (actual->kind != TypeKind::Tensor) return wrong_kind();
        unify_dtype(pattern->dtype, actual->dtype);
        unify_shape(pattern->shape, actual->shape);
        return;
      case TypeKind::Tuple:
        if (actual->kind != TypeKind::Tuple || actual->elements.size() != pattern->elements.size()) return wrong_kind();
        for (std::size_t i = 0; i < pattern->elements.size(); ++i) unify(pattern->elements[i], actual->elements[i]);
        return;
      case TypeKind::Struct:
      case TypeKind::Block:
      case TypeKind::Enum:
        if (actual->kind != pattern->kind || actual->structure != pattern->structure ||
            actual->block != pattern->block || actual->enumeration != pattern->enumeration) {
          return wrong_kind();
        }
        for (const auto& [name, dim] : pattern->args.dims) {
          auto it = actual->args.dims.find(name);
          if (it != actual->args.dims.end()) unify_dim(dim, it->second, 0);
        }
        for (const auto& [name, dtype] : pattern->args.dtypes) {
          auto it = actual->args.dtypes.find(name);
          if (it != actual->args.dtypes.end()) unify_dtype(dtype, it->second);
        }
        return;
      default:
        if (pattern->kind != actual->kind) wrong_kind();
        return;
    }
  }

  // A contextual literal met a concrete or bound dtype: checked by the caller.
  DTypeRef literal_target;
  TypePtr literal;

 private:
  void wrong_kind() { mismatch.set("E2101", "has the wrong type"); }

  DTypeRef pattern_dtype(const DTypeRef& dtype) const { return substitute(dtype, inf_.bound); }

  bool unbound_dtype(const DTypeRef& dtype) const {
    const GenericParamInfo* g = inf_.generic(dtype.name);
    return g && g->is_dtype() && !inf_.bound.dtypes.count(dtype.name);
  }

  void unify_dtype(const DTypeRef& pattern, const DTypeRef& actual) {
    if (pattern.is_error() || actual.is_error()) return;
    if (pattern.kind == DTypeRef::Kind::Generic && unbound_dtype(pattern)) {
      inf_.bound.dtypes[pattern.name] = actual;
      return;
    }
    const DTypeRef expected = pattern_dtype(pattern);
    if (!(expected == actual)) {
      mismatch.set("E2101", "has dtype " + actual.to_string() + ", not " + expected.to_string());
    }
  }

  void unify_dim(const DimExpr& pattern, const DimExpr& actual, std::size_t axis) {
    if (inf_.is_unbound_dim(pattern)) {
      inf_.bound.dims[pattern.name()] = actual;
      return;
    }
    inf_.pending.push_back({pattern, actual, argument_, axis});
  }

  void unify_shape(const Shape& pattern, const Shape& actual) {
    std::size_t packs = 0, pack_at = 0;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i].is_pack()) {
        ++packs;
        pack_at = i;
      }
    }
    if (packs > 1) {
      mismatch.set("E2110", "cannot be matched: its parameter type has two shape packs");
      return;
    }
    if (packs == 0) {
      if (actual.size() != pattern.size() || has_pack(actual)) {
        mismatch.set("E2202", "has shape " + shape_to_string(actual) + ", not " +
                                  shape_to_string(substitute(pattern, inf_.bound)));
        return;
      }
      for (std::size_t i = 0; i < pattern.size(); ++i) unify_dim(pattern[i].dim, actual[i].dim, i);
      return;
    }
    const std::size_t prefix = pack_at, suffix = pattern.size() - pack_at - 1;
    bool fits = actual.size() >= prefix + suffix;
    for (std::size_t i = 0; fits && i < prefix; ++i) fits = !actual[i].is_pack();
    for (std::size_t i = 0; fits && i < suffix; ++i) fits = !actual[actual.size() - 1 - i].is_pack();
    if (!fits) {
      mismatch.set("E2202", "has shape " + shape_to_string(actual) + ", which does not fit " +
                                shape_to_string(substitute(pattern, inf_.bound)));
      return;
    }
    for (std::size_t i = 0; i < prefix; ++i) unify_dim(pattern[i].dim, actual[i].dim, i);
    for (std::size_t i = 0; i < suffix; ++i) {
      const std::size_t a = actual.size() - suffix + i;
      unify_dim(pattern[pack_at + 1 + i].dim, actual[a].dim, a);
    }
    const Shape middle(actual.begin() + static_cast<std::ptrdiff_t>(prefix),
                       actual.end() - static_cast<std::ptrdiff_t>(suffix));
    const std::string& name = pattern[pack_at].pack;
    const GenericParamInfo* g = inf_.generic(name);
    auto bound = inf_.bound.packs.find(name);
    if (g && bound == inf_.bound.packs.end()) {
      inf_.bound.packs[name] = middle;
      return;
    }
    const Shape expected = bound != inf_.bound.packs.end() ? bound->second : Shape{ShapeItem::pack_of(name)};
    if (!impl_.shapes_equal(expected, middle, cx_)) {
      mismatch.set("E2202", "has shape " + shape_to_string(actual) + ", but " + quoted("*" + name) + " is " +
                                shape_to_string(expected) + " here");
    }
  }

  Checker::Impl& impl_;
  Context& cx_;
  Inference& inf_;
  std::size_t argument_;
};

// `p(X) = a * X + b` with `a` a positive constant: X from the value of p.
std::optional<DimExpr> solve_linear(const DimExpr& pattern, const std::string& symbol, const DimExpr& actual,
                                    const Solver& solver) try {
  std::map<std::string, DimExpr, std::less<>> at0{{symbol, DimExpr(0)}}, at1{{symbol, DimExpr(1)}},
      at2{{symbol, DimExpr(2)}};
  const DimExpr b = pattern.substitute(at0);
  const DimExpr slope = pattern.substitute(at1) - b;
  const std::optional<Rational> a = solver.normalize(slope).as_constant();
  if (!a || !a->is_integer() || a->num() <= 0) return std::nullopt;
  // Linear: p(2) == 2a + b.
  if (!solver.equal(pattern.substitute(at2), DimExpr(2 * a->num()) + b)) return std::nullopt;
  const DimExpr rest = actual - b;
  if (a->num() == 1) return solver.normalize(rest).to_expr();
  if (!solver.prove_divisible(rest, DimExpr(a->num())).proved()) return std::nullopt;
  return solver.normalize(rest / DimExpr(a->num())).to_expr();
} catch (const DimArithmeticError&) {
  return std::nullopt;
}

// Compound dimensions (`H / Heads`), once the generics in them are known:
// a pattern with one unbound generic is solved for it.
void solve_pending(Inference& inference, Solver& solver) {
  for (bool progress = true; progress;) {
    progress = false;
    for (const Inference::Pending& pending : inference.pending) {
      const std::vector<std::string> unbound = inference.unbound_symbols(pending.pattern);
      if (unbound.size() != 1) continue;
      if (std::optional<DimExpr> value = solve_linear(pending.pattern, unbound.front(), pending.actual, solver)) {
        inference.bound.dims[unbound.front()] = *value;
        progress = true;
      }
    }
  }
}

// Whether `type` still names one of `generics` that `bound` leaves open.
bool mentions_unbound_generic(const Type& type, const std::vector<GenericParamInfo>& generics,
                              const Substitution& bound) {
  auto open = [&](const std::string& name) {
    for (const GenericParamInfo& g : generics) {
      if (g.name == name) return !bound.dims.count(name) && !bound.packs.count(name) && !bound.dtypes.count(name);
    }
    return false;
  };
  if (type.dtype.kind == DTypeRef::Kind::Generic && open(type.dtype.name)) return true;
  for (const ShapeItem& item : type.shape) {
    if (item.is_pack()) {
      if (open(item.pack)) return true;
      continue;
    }
    for (const std::string& symbol : item.dim.symbols()) {
      if (open(symbol)) return true;
    }
  }
  for (const TypePtr& element : type.elements) {
    if (element && mentions_unbound_generic(*element, generics, bound)) return true;
  }
  return false;
}

// A method of a block (or a struct) written with too few generic arguments
// (`sub norm: RmsNorm<H>`) gets the defaults for the rest (`T = bf16`). When
// an argument does not fit, and would fit were those generics inferred from
// the arguments instead, the missing argument is the mistake: it is reported
// once, where the type is written, naming the parameter and the value the
// uses want, instead of as a dtype or shape error at every call.
bool blame_defaulted_generics(Checker::Impl& impl, const FunctionDecl& callee, const Type& instance,
                              const Inference& before_arguments, const std::vector<const ast::Argument*>& assigned,
                              const std::vector<TypePtr>& actual, std::size_t failed_argument, const char* code,
                              const std::string& mismatch, Context& cx) {
  if (instance.defaulted.empty() || !instance.block || !instance.written.valid()) return false;
  // The defaulted generics become free: inferred like the method's own.
  std::vector<GenericParamInfo> free_generics = callee.generics;
  for (const GenericParamInfo& g : instance.block->generics) {
    if (std::find(instance.defaulted.begin(), instance.defaulted.end(), g.name) != instance.defaulted.end()) {
      free_generics.push_back(g);
      free_generics.back().has_default = false;
    }
  }
  Inference probe = before_arguments;
  probe.generics = &free_generics;
  for (const std::string& name : instance.defaulted) {
    probe.bound.dims.erase(name);
    probe.bound.packs.erase(name);
    probe.bound.dtypes.erase(name);
  }
  for (std::size_t i = 0; i < assigned.size(); ++i) {
    if (!assigned[i]) continue;
    Unifier unifier(impl, cx, probe, i);
    unifier.unify(callee.params[i].type, actual[i]);
    if (unifier.mismatch.failed) return false;  // the default is not (only) to blame
  }
  // Compound dimensions must fit too (`H / Heads` with `Heads` inferred).
  if (cx.solver) solve_pending(probe, *cx.solver);
  for (const Inference::Pending& pending : probe.pending) {
    if (!impl.prove_equal_dims(pending.pattern.substitute(probe.bound.dims), pending.actual, cx)) return false;
  }
  // The values the uses want; a default the uses do not constrain stays "".
  std::map<std::string, std::string> wanted;
  for (const std::string& name : instance.defaulted) {
    std::string value;
    if (auto it = probe.bound.dtypes.find(name); it != probe.bound.dtypes.end()) value = it->second.to_string();
    if (auto it = probe.bound.dims.find(name); it != probe.bound.dims.end()) value = it->second.to_string();
    if (auto it = probe.bound.packs.find(name); it != probe.bound.packs.end()) value = shape_to_string(it->second);
    wanted[name] = value;
  }
  return impl.report_defaulted(*instance.block, instance.written, instance.defaulted, wanted, code,
                               "a call of " + quoted(callee.qualified_name()) + " needs another value",
                               assigned[failed_argument]->value->span,
                               "argument " + quoted(callee.params[failed_argument].name) + " " + mismatch);
}

// What a result typed through a defaulting declaration records (DefaultedResult):
// the defaulted generics its dtype and last axes are, before they were
// replaced by their defaults. Null when the result holds none of them.
std::shared_ptr<const DefaultedResult> defaulted_result(const FunctionDecl& callee, const Type& instance) {
  if (instance.defaulted.empty() || !instance.block || !instance.written.valid() || !callee.result ||
      callee.result->kind != TypeKind::Tensor) {
    return nullptr;
  }
  auto is_defaulted = [&](const std::string& name) {
    return std::find(instance.defaulted.begin(), instance.defaulted.end(), name) != instance.defaulted.end();
  };
  DefaultedResult origin;
  const Type& result = *callee.result;
  if (result.dtype.kind == DTypeRef::Kind::Generic && is_defaulted(result.dtype.name)) origin.dtype_generic = result.dtype.name;
  // Counted from the last axis, up to the first shape pack (whose length is not known here).
  for (std::size_t from_last = 0; from_last < result.shape.size(); ++from_last) {
    const ShapeItem& item = result.shape[result.shape.size() - 1 - from_last];
    if (item.is_pack()) break;
    if (item.dim.is_symbol() && is_defaulted(item.dim.name())) origin.axes.push_back({from_last, item.dim.name()});
  }
  if (origin.dtype_generic.empty() && origin.axes.empty()) return nullptr;
  origin.block = instance.block;
  origin.written = instance.written;
  origin.defaulted = instance.defaulted;
  origin.callee = callee.qualified_name();
  return std::make_shared<const DefaultedResult>(std::move(origin));
}

}  // namespace

bool Checker::Impl::report_defaulted(const BlockDecl& block, Span written_span, const std::vector<std::string>& defaulted,
                                     const std::map<std::string, std::string>& wanted, const char* code,
                                     const std::string& needs, Span use, const std::string& use_label) {
  // The written spelling with the wanted values appended; a default the
  // uses do not constrain is spelled as its default.
  std::string added;
  std::vector<std::string> blamed;
  for (const std::string& name : defaulted) {
    std::string value;
    if (auto it = wanted.find(name); it != wanted.end()) value = it->second;
    if (value.empty()) {
      for (const GenericParamInfo& g : block.generics) {
        if (g.name == name && g.default_arg) value = text_of(g.default_arg->span);
      }
    } else {
      blamed.push_back(name);
    }
    added += ", " + value;
  }
  if (blamed.empty()) return false;
  std::string written = text_of(written_span);
  const std::size_t open = written.find('<');
  if (!written.empty() && written.back() == '>' && open != std::string::npos) {
    written.insert(written.size() - 1, open + 2 == written.size() ? added.substr(2) : added);
  } else {
    written += "<" + added.substr(2) + ">";
  }
  const std::pair<uint32_t, uint32_t> key{written_span.file, written_span.begin};
  if (!defaults_blamed.insert(key).second) return true;  // reported at its first use
  std::vector<std::string> defaults;
  for (const std::string& name : blamed) {
    for (const GenericParamInfo& g : block.generics) {
      if (g.name == name && g.default_arg) defaults.push_back("`" + name + " = " + text_of(g.default_arg->span) + "`");
    }
  }
  std::string left;
  for (std::size_t i = 0; i < defaults.size(); ++i) left += (i ? ", " : "") + defaults[i];
  error(code,
        quoted(text_of(written_span)) + " leaves " + syntax::quoted_list(blamed) + " of " + quoted(block.name) + " at " +
            (blamed.size() == 1 ? "its default" : "their defaults") + " (" + left + "), but " + needs,
        written_span)
      .with_label(blamed.size() == 1 ? "a generic argument is missing" : "generic arguments are missing")
      .also(use, use_label)
      .with_help("pass " + std::string(blamed.size() == 1 ? "it" : "them") + ": `" + written + "`");
  return true;
}

bool Checker::Impl::blame_defaulted_result(const Type& value, const std::map<std::string, std::string>& wanted,
                                           const char* code, Span use, const std::string& use_label) {
  if (!value.from_defaults) return false;
  const DefaultedResult& origin = *value.from_defaults;
  return report_defaulted(*origin.block, origin.written, origin.defaulted, wanted, code,
                          "the result of " + quoted(origin.callee) + " is used where another value is needed", use,
                          use_label);
}

void Checker::Impl::record_call(const FunctionDecl& callee, Span span, Context& cx) {
  if (cx.function) calls.push_back({cx.function, &callee, span});
}

TypePtr Checker::Impl::call_function(const ast::CallExpr& call, FunctionDecl& callee, const Type* instance,
                                     Context& cx) {
  resolve_function(callee);
  const Span callee_span = call.callee->kind == ast::ExprKind::Member
                               ? call.callee->cast<ast::MemberExpr>().member.span
                               : call.callee->span;
  record_call(callee, callee_span, cx);
  const std::string what = quoted(callee.qualified_name());

  Inference inference;
  inference.generics = &callee.generics;
  if (instance) {
    inference.bound = instance->args;
  } else if (callee.block) {
    // A sibling method: the block's generics are the caller's own.
    for (const GenericParamInfo& g : callee.block->generics) {
      if (g.is_dim()) inference.bound.dims[g.name] = DimExpr::symbol(g.name);
      if (g.is_pack()) inference.bound.packs[g.name] = Shape{ShapeItem::pack_of(g.name)};
      if (g.is_dtype()) inference.bound.dtypes[g.name] = DTypeRef::generic(g.name, g.kind);
    }
  }
  bool ok = true;
  if (call.has_generic_args) {
    if (call.generic_args.size() > callee.generics.size()) {
      error("E2111", what + " takes " + std::to_string(callee.generics.size()) + " generic argument" +
                         (callee.generics.size() == 1 ? "" : "s") + ", not " +
                         std::to_string(call.generic_args.size()),
            call.span);
      return error_type();
    }
    for (std::size_t i = 0; i < call.generic_args.size(); ++i) {
      const GenericParamInfo& g = callee.generics[i];
      std::optional<GenericValue> value = resolve_generic_arg(call.generic_args[i], g, cx);
      if (!value) {
        ok = false;
        continue;
      }
      if (value->kind == GenericValue::Kind::Dim) inference.bound.dims[g.name] = value->dim;
      if (value->kind == GenericValue::Kind::Pack) inference.bound.packs[g.name] = value->pack;
      if (value->kind == GenericValue::Kind::DType) inference.bound.dtypes[g.name] = value->dtype;
    }
  }

  // Arguments to parameters: positional first, then by name.
  std::vector<const ast::Argument*> assigned(callee.params.size(), nullptr);
  std::size_t position = 0;
  for (const ast::Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      if (position >= callee.params.size()) {
        error("E2102", what + " takes " + std::to_string(callee.params.size()) + " argument" +
                           (callee.params.size() == 1 ? "" : "s") + ", but more were given",
              argument.span);
        ok = false;
        break;
      }
      assigned[position++] = &argument;
      continue;
    }
    auto it = std::find_if(callee.params.begin(), callee.params.end(),
                           [&](const ParamInfo& p) { return p.name == argument.name.text; });
    if (it == callee.params.end()) {
      error("E2102", what + " has no parameter " + quoted(argument.name.text), argument.name.span);
      ok = false;
      continue;
    }
    const std::size_t index = static_cast<std::size_t>(it - callee.params.begin());
    if (assigned[index]) {
      error("E2102", "parameter " + quoted(argument.name.text) + " is given twice", argument.span);
      ok = false;
      continue;
    }
    assigned[index] = &argument;
  }
  for (std::size_t i = 0; i < callee.params.size(); ++i) {
    if (!assigned[i] && !callee.params[i].has_default) {
      error("E2102", what + " is missing its argument " + quoted(callee.params[i].name), call.span);
      ok = false;
    }
  }
  std::vector<TypePtr> actual(callee.params.size());
  for (std::size_t i = 0; i < callee.params.size(); ++i) {
    if (!assigned[i]) continue;
    actual[i] = check_expr(*assigned[i]->value, cx);
    if (actual[i]->kind == TypeKind::ShapeValue) {
      error("E2101", "a shape literal is not a value; only shape primitives such as `reshape` take one",
            assigned[i]->value->span);
      actual[i] = error_type();
    }
    if (actual[i]->is_error()) ok = false;
  }
  if (!ok || !callee.signature_ok) return error_type();

  // An argument that is a result typed through a defaulting declaration
  // (`f(x, norm.forward(x))`) and does not fit: the declaration is blamed
  // when the parameter's type is known here, none of the callee's own
  // generics left open.
  auto blame_argument_default = [&](std::size_t i, const char* code) {
    if (!actual[i]->from_defaults) return false;
    const TypePtr target = substitute(callee.params[i].type, inference.bound);
    return !mentions_unbound_generic(*target, callee.generics, inference.bound) &&
           blame_defaulted_tensor(actual[i], target, code, code, assigned[i]->value->span,
                                  "argument " + quoted(callee.params[i].name) + " of " + what, cx);
  };
  // Inference and argument types.
  const Inference before_arguments = inference;
  std::vector<std::pair<DTypeRef, std::pair<TypePtr, Span>>> literals;
  for (std::size_t i = 0; i < callee.params.size(); ++i) {
    if (!assigned[i]) continue;
    Unifier unifier(*this, cx, inference, i);
    unifier.unify(callee.params[i].type, actual[i]);
    if (unifier.mismatch.failed && instance &&
        blame_defaulted_generics(*this, callee, *instance, before_arguments, assigned, actual, i,
                                 unifier.mismatch.code, unifier.mismatch.message, cx)) {
      ok = false;
      continue;
    }
    if (unifier.mismatch.failed && blame_argument_default(i, unifier.mismatch.code)) {
      ok = false;
      continue;
    }
    if (unifier.mismatch.failed) {
      error(unifier.mismatch.code, "argument " + quoted(callee.params[i].name) + " of " + what + " " +
                                       unifier.mismatch.message,
            assigned[i]->value->span)
          .note("the parameter is " + quoted(type_to_string(callee.params[i].type)) + ", the argument is " +
                quoted(type_to_string(actual[i])));
      ok = false;
    }
    if (unifier.literal) literals.push_back({unifier.literal_target, {unifier.literal, assigned[i]->value->span}});
  }
  // Compound dimensions, and generics that only appear in them.
  solve_pending(inference, *cx.solver);
  for (const auto& [name, literal] : inference.literal_dtypes) {
    if (!inference.bound.dtypes.count(name)) {
      inference.bound.dtypes[name] = default_literal(literal)->dtype;
    }
  }
  // Defaults, then what is still unknown.
  for (const GenericParamInfo& g : callee.generics) {
    const bool bound = g.is_dim() ? inference.bound.dims.count(g.name) > 0
                       : g.is_pack() ? inference.bound.packs.count(g.name) > 0
                                     : inference.bound.dtypes.count(g.name) > 0;
    if (bound) continue;
    if (g.has_default) {
      switch (g.default_value.kind) {
        case GenericValue::Kind::Dim: inference.bound.dims[g.name] = g.default_value.dim.substitute(inference.bound.dims); break;
        case GenericValue::Kind::Pack: inference.bound.packs[g.name] = substitute(g.default_value.pack, inference.bound); break;
        case GenericValue::Kind::DType: inference.bound.dtypes[g.name] = substitute(g.default_value.dtype, inference.bound); break;
      }
      continue;
    }
    if (ok) {
      // The generic arguments written, then every generic's name up to this one.
      std::string spelled;
      for (std::size_t i = 0; i < callee.generics.size(); ++i) {
        const std::string value = i < call.generic_args.size() ? text_of(call.generic_args[i].span) : callee.generics[i].name;
        spelled += (i ? ", " : "") + value;
        if (callee.generics[i].name == g.name) break;
      }
      error("E2110", "cannot infer the generic " + quoted(g.name) + " of " + what, call.span)
          .with_help("write it out: `" + callee.name + "<" + spelled + ">(...)`");
    }
    ok = false;
  }
  if (!ok) return error_type();
  for (const GenericParamInfo& g : callee.generics) {
    if (!g.is_dtype()) continue;
    const DTypeRef& dtype = inference.bound.dtypes[g.name];
    if (!satisfies(dtype, g.kind)) {
      error("E2112", quoted(dtype.to_string()) + " is not " + ast::generic_kind_spelling(g.kind) + ", as the generic " +
                         quoted(g.name) + " of " + what + " requires",
            call.span);
      ok = false;
    }
  }
  for (const auto& [dtype, literal] : literals) {
    if (!adopt_literal(*literal.first, substitute(dtype, inference.bound), literal.second)) ok = false;
  }
  for (const Inference::Pending& pending : inference.pending) {
    const DimExpr expected = pending.pattern.substitute(inference.bound.dims);
    if (prove_equal_dims(expected, pending.actual, cx)) continue;
    const std::size_t i = pending.argument;
    if (instance && blame_defaulted_generics(*this, callee, *instance, before_arguments, assigned, actual, i, "E2202",
                                             "has shape " + shape_to_string(actual[i]->kind == TypeKind::Tensor
                                                                                ? actual[i]->shape
                                                                                : Shape{}),
                                             cx)) {
      ok = false;
      break;
    }
    if (blame_argument_default(i, "E2202")) {
      ok = false;
      break;
    }
    const ProofResult proof = cx.solver->prove_equal(pending.actual, expected);
    Diagnostic& d = error("E2202",
                          "argument " + quoted(callee.params[i].name) + " of " + what + " has shape " +
                              shape_to_string(actual[i]->kind == TypeKind::Tensor ? actual[i]->shape : Shape{}) +
                              ", not " +
                              shape_to_string(substitute(callee.params[i].type->kind == TypeKind::Tensor
                                                             ? callee.params[i].type->shape
                                                             : Shape{},
                                                         inference.bound)),
                          assigned[i]->value->span);
    d.note("axis " + std::to_string(pending.axis) + ": cannot prove " +
           quoted(pending.actual.to_string() + " == " + expected.to_string()));
    explain_failure(d, proof, cx);
    ok = false;
    break;
  }
  if (!ok) return error_type();
  prove_instantiation(callee.where, inference.bound, call.span, "the `where` clause of " + what, cx);
  TypePtr result = substitute(callee.result, inference.bound);
  if (instance && result->kind == TypeKind::Tensor) {
    if (std::shared_ptr<const DefaultedResult> origin = defaulted_result(callee, *instance)) {
      Type tagged = *result;
      tagged.from_defaults = std::move(origin);
      result = std::make_shared<const Type>(std::move(tagged));
    }
  }
  return result;
}

TypePtr Checker::Impl::construct_struct(const ast::CallExpr& call, StructDecl& decl, Context& cx) {
  resolve_struct(decl);
  const std::string what = quoted(decl.name);
  Inference inference;
  inference.generics = &decl.generics;
  bool ok = true;
  if (call.has_generic_args) {
    std::optional<Substitution> explicit_args =
        bind_explicit_generics(decl.generics, call.generic_args, call.span, what, cx, false);
    if (!explicit_args) return error_type();
    inference.bound = std::move(*explicit_args);
  }
  std::vector<const ast::Argument*> assigned(decl.fields.size(), nullptr);
  for (const ast::Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      error("E2102", "the fields of " + what + " are given by name", argument.span)
          .with_help("write `" + decl.name + "(field = value, ...)`");
      ok = false;
      continue;
    }
    auto it = std::find_if(decl.fields.begin(), decl.fields.end(),
                           [&](const ParamInfo& f) { return f.name == argument.name.text; });
    if (it == decl.fields.end()) {
      error("E2102", "struct " + what + " has no field " + quoted(argument.name.text), argument.name.span);
      ok = false;
      continue;
    }
    const std::size_t index = static_cast<std::size_t>(it - decl.fields.begin());
    if (assigned[index]) {
      error("E2102", "field " + quoted(argument.name.text) + " is given twice", argument.span);
      ok = false;
      continue;
    }
    assigned[index] = &argument;
  }
  for (std::size_t i = 0; i < decl.fields.size(); ++i) {
    if (!assigned[i]) {
      error("E2102", what + " is missing its field " + quoted(decl.fields[i].name), call.span);
      ok = false;
    }
  }
  for (std::size_t i = 0; i < decl.fields.size(); ++i) {
    if (!assigned[i]) continue;
    const TypePtr value = check_expr(*assigned[i]->value, cx);
    if (value->is_error()) {
      ok = false;
      continue;
    }
    Unifier unifier(*this, cx, inference, i);
    unifier.unify(decl.fields[i].type, value);
    if (unifier.mismatch.failed) {
      error(unifier.mismatch.code, "field " + quoted(decl.fields[i].name) + " of " + what + " " +
                                       unifier.mismatch.message,
            assigned[i]->value->span)
          .note("the field is " + quoted(type_to_string(decl.fields[i].type)) + ", the value is " +
                quoted(type_to_string(value)));
      ok = false;
    } else if (unifier.literal &&
               !adopt_literal(*unifier.literal, substitute(unifier.literal_target, inference.bound),
                              assigned[i]->value->span)) {
      ok = false;
    }
  }
  for (const auto& [name, literal] : inference.literal_dtypes) {
    if (!inference.bound.dtypes.count(name)) inference.bound.dtypes[name] = default_literal(literal)->dtype;
  }
  for (const GenericParamInfo& g : decl.generics) {
    const bool bound = g.is_dim() ? inference.bound.dims.count(g.name) > 0
                       : g.is_pack() ? inference.bound.packs.count(g.name) > 0
                                     : inference.bound.dtypes.count(g.name) > 0;
    if (bound) continue;
    if (g.has_default) {
      if (g.is_dim()) inference.bound.dims[g.name] = g.default_value.dim;
      if (g.is_pack()) inference.bound.packs[g.name] = g.default_value.pack;
      if (g.is_dtype()) inference.bound.dtypes[g.name] = g.default_value.dtype;
      continue;
    }
    if (ok) {
      error("E2110", "cannot infer the generic " + quoted(g.name) + " of " + what, call.span)
          .with_help("write it out: `" + decl.name + "<...>(...)`");
    }
    ok = false;
  }
  for (const Inference::Pending& pending : inference.pending) {
    const DimExpr expected = pending.pattern.substitute(inference.bound.dims);
    if (!prove_equal_dims(expected, pending.actual, cx)) {
      error("E2101", "field " + quoted(decl.fields[pending.argument].name) + " of " + what + " has the wrong shape",
            assigned[pending.argument]->value->span)
          .note("cannot prove " + quoted(pending.actual.to_string() + " == " + expected.to_string()));
      ok = false;
    }
  }
  if (!ok) return error_type();
  Type t;
  t.kind = TypeKind::Struct;
  t.structure = &decl;
  t.args = std::move(inference.bound);
  return std::make_shared<const Type>(std::move(t));
}

TypePtr Checker::Impl::check_call(const ast::CallExpr& call, Context& cx) {
  const ast::Expr& callee = *call.callee;
  if (const auto* name_expr = callee.as<ast::NameExpr>()) {
    const std::string& name = name_expr->name.text;
    if (Local* local = find_local(name, cx)) {
      local->used = true;
      error("E2106", quoted(name) + " is a value of type " + quoted(type_to_string(local->type)) +
                         ", not a function",
            callee.span);
      return error_type();
    }
    if (cx.generics.count(name)) {
      error("E2106", quoted(name) + " is a generic parameter, not a function", callee.span);
      return error_type();
    }
    if (cx.block) {
      auto method = cx.block->methods.find(name);
      if (method != cx.block->methods.end()) return call_function(call, *method->second, nullptr, cx);
      if (cx.block->member_index.count(name)) {
        error("E2106", quoted(name) + " is a member of " + quoted(cx.block->name) + ", not a function", callee.span)
            .with_help("call one of its methods: `" + name + ".forward(...)`");
        return error_type();
      }
    }
    if (std::optional<Symbol> symbol = find_symbol(name, cx)) {
      switch (symbol->kind) {
        case Symbol::Kind::Function:
          if (symbol->function->is_kernel()) {
            error("E2126", "a kernel is not called", callee.span)
                .note("an op names the kernel that may compute it: `op f(...) -> ... kernel " + name + "<...> { ... }`");
            return error_type();
          }
          return call_function(call, *symbol->function, nullptr, cx);
        case Symbol::Kind::Struct: return construct_struct(call, *symbol->structure, cx);
        default:
          error("E2106", quoted(name) + " is not a function", callee.span);
          return error_type();
      }
    }
    if (cx.in_kernel && (name == "program_id" || name == "load")) return kernel_builtin(call, name, cx);
    if (is_prelude_function(name)) return call_prelude(call, name, cx);
    if (name == "program_id" || name == "load") {
      error("E2127", quoted(name) + " is available only in a kernel", callee.span);
      return error_type();
    }
    if (!was_imported(*cx.module, name)) {
      explain_unknown_name(error("E1201", "cannot find function " + quoted(name), callee.span), name, cx, true);
    }
    return error_type();
  }
  if (const auto* member = callee.as<ast::MemberExpr>()) {
    const std::string& method = member->member.text;
    if (const auto* head = member->object->as<ast::NameExpr>()) {
      const std::string& name = head->name.text;
      const bool is_value = find_local(name, cx) || cx.generics.count(name) ||
                            (cx.block && (cx.block->member_index.count(name) || cx.block->methods.count(name)));
      if (!is_value) {
        std::optional<Symbol> symbol = find_symbol(name, cx);
        if (symbol && symbol->kind == Symbol::Kind::Module) {
          Symbol item = module_symbol(*symbol->module, method);
          if (item.kind == Symbol::Kind::Function && !item.function->is_kernel()) {
            if (!item.function->item().is_pub) {
              error("E1203", quoted(method) + " is private to module " + quoted(symbol->module->name),
                    member->member.span);
            }
            return call_function(call, *item.function, nullptr, cx);
          }
          if (item.kind == Symbol::Kind::Struct) return construct_struct(call, *item.structure, cx);
          if (item.kind == Symbol::Kind::None) {
            error("E1201", "module " + quoted(symbol->module->name) + " has no item " + quoted(method),
                  member->member.span);
          } else {
            error("E2106", quoted(name + "." + method) + " is not a function", callee.span);
          }
          return error_type();
        }
      }
    }
    const TypePtr object = check_expr(*member->object, cx);
    if (object->is_error()) return object;
    if (object->kind == TypeKind::Block) {
      BlockDecl& block = *const_cast<BlockDecl*>(object->block);
      auto it = block.methods.find(method);
      if (it != block.methods.end()) {
        if (it->second->function && !it->second->function->is_pub && block.module != cx.module) {
          error("E1203", "method " + quoted(method) + " of " + quoted(block.name) + " is not `pub`", member->member.span);
        }
        return call_function(call, *it->second, object.get(), cx);
      }
      resolve_block_members(block);
      if (block.member_index.count(method)) {
        error("E2106", quoted(method) + " is a member of " + quoted(block.name) + ", not a method", member->member.span);
      } else {
        error("E2107", "block " + quoted(block.name) + " has no method " + quoted(method), member->member.span);
      }
      return error_type();
    }
    if (object->kind == TypeKind::Optional && object->elements.front()->kind == TypeKind::Block) {
      error("E2107", "an optional `sub` has no methods until it is matched", callee.span)
          .with_help("write `match " + text_of(*member->object) + " { some(b) => b." + method + "(...) none => ... }`");
      return error_type();
    }
    error("E2107", quoted(type_to_string(object)) + " has no method " + quoted(method), member->member.span);
    return error_type();
  }
  error("E2106", "only functions, ops, methods and structs can be called", callee.span);
  return error_type();
}

}  // namespace linnet::check
