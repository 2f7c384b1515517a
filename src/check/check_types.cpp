// Syntax types and dimension expressions turned into checker Types: scalar
// and tensor types, generic dtypes and packs, aliases, structs, enums, block
// instances and block arrays, with the checks a written type carries
// (divisors positive, dimensions not negative, `where` clauses of the
// blocks it instantiates).
#include "gcc_workarounds.hpp"  // first: see the file

#include "checker_internal.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::check {

namespace {

const ast::NamedType* single_name(const ast::Type& type) {
  const auto* named = type.as<ast::NamedType>();
  if (!named || named->path.size() != 1 || named->has_generic_args) return nullptr;
  return named;
}

}  // namespace

DTypeRef Checker::Impl::resolve_dtype(const ast::Type& type, Context& cx) {
  if (type.kind == ast::TypeKind::Error) return DTypeRef::error();
  const auto* named = type.as<ast::NamedType>();
  if (named && named->path.size() == 1) {
    const std::string& name = named->path.front().text;
    if (std::optional<tensor::DType> dtype = tensor::dtype_from_name(name)) return DTypeRef::of(*dtype);
    auto generic = cx.generics.find(name);
    if (generic != cx.generics.end()) {
      if (generic->second->is_dtype()) return DTypeRef::generic(name, generic->second->kind);
      error("E1208", quoted(name) + " is a " + (generic->second->is_pack() ? "shape pack" : "dimension") +
                         ", not a dtype",
            type.span);
      return DTypeRef::error();
    }
    if (!find_symbol(name, cx) && !was_imported(*cx.module, name)) {
      error("E1201", "cannot find dtype " + quoted(name), type.span);
      return DTypeRef::error();
    }
  }
  if (!named || !named->path.empty()) {
    error("E1208", "expected a dtype (`f32`, `bf16`, ... or a dtype generic), found " + quoted(text_of(type.span)),
          type.span);
  }
  return DTypeRef::error();
}

std::optional<DimExpr> Checker::Impl::resolve_dim(const ast::Expr& expr, Context& cx) {
  const TypePtr type = check_expr(expr, cx);
  if (type->is_error()) return std::nullopt;
  if (type->is_compile_time_int()) return *type->value;
  error("E2123", "a dimension must be a compile-time integer", expr.span)
      .note("this is " + quoted(type_to_string(type)) + "; dimensions are integer literals, `Dim` generics, "
            "integer constants, and arithmetic on them");
  return std::nullopt;
}

std::optional<Shape> Checker::Impl::resolve_shape_elements(const std::vector<ast::ShapeElement>& elements,
                                                           Context& cx) {
  Shape shape;
  bool ok = true;
  for (const ast::ShapeElement& element : elements) {
    if (element.is_pack) {
      auto generic = cx.generics.find(element.pack.text);
      if (generic == cx.generics.end()) {
        error("E1201", "cannot find shape pack " + quoted("*" + element.pack.text), element.span);
        ok = false;
      } else if (!generic->second->is_pack()) {
        error("E1208", quoted(element.pack.text) + " is not a shape pack", element.span)
            .note("only a generic declared `*" + element.pack.text + ": Shape` can be written `*" +
                  element.pack.text + "`");
        ok = false;
      } else {
        shape.push_back(ShapeItem::pack_of(element.pack.text));
      }
      continue;
    }
    if (!element.dim) {
      ok = false;
      continue;
    }
    std::optional<DimExpr> dim = resolve_dim(*element.dim, cx);
    if (!dim) {
      ok = false;
      continue;
    }
    check_nonnegative(*dim, element.span, cx);
    shape.push_back(ShapeItem::of(std::move(*dim)));
  }
  if (!ok) return std::nullopt;
  return shape;
}

std::optional<GenericValue> Checker::Impl::resolve_generic_arg(const ast::GenericArg& arg,
                                                               const GenericParamInfo& param, Context& cx) {
  GenericValue value;
  if (param.is_dtype()) {
    value.kind = GenericValue::Kind::DType;
    if (!arg.type) {
      error("E2111", "generic parameter " + quoted(param.name) + " takes a dtype, not " + quoted(text_of(arg.span)),
            arg.span);
      return std::nullopt;
    }
    value.dtype = resolve_dtype(*arg.type, cx);
    if (value.dtype.is_error()) return std::nullopt;
    return value;
  }
  if (param.is_pack()) {
    value.kind = GenericValue::Kind::Pack;
    if (arg.expr && arg.expr->kind == ast::ExprKind::Shape) {
      for (const ast::ExprPtr& element : arg.expr->cast<ast::ShapeExpr>().elements) {
        std::optional<DimExpr> dim = resolve_dim(*element, cx);
        if (!dim) return std::nullopt;
        check_nonnegative(*dim, element->span, cx);
        value.pack.push_back(ShapeItem::of(std::move(*dim)));
      }
      return value;
    }
    if (arg.type) {
      if (const ast::NamedType* named = single_name(*arg.type)) {
        auto generic = cx.generics.find(named->path.front().text);
        if (generic != cx.generics.end() && generic->second->is_pack()) {
          value.pack.push_back(ShapeItem::pack_of(generic->first));
          return value;
        }
      }
    }
    error("E2111", "shape pack " + quoted("*" + param.name) + " takes a shape such as `[B, S]`, not " +
                       quoted(text_of(arg.span)),
          arg.span);
    return std::nullopt;
  }
  value.kind = GenericValue::Kind::Dim;
  if (arg.expr) {
    std::optional<DimExpr> dim = resolve_dim(*arg.expr, cx);
    if (!dim) return std::nullopt;
    check_nonnegative(*dim, arg.span, cx);
    value.dim = std::move(*dim);
    return value;
  }
  // A bare name parses as a type: `Linear<H, Out, T>`.
  if (const ast::NamedType* named = single_name(*arg.type)) {
    const std::string& name = named->path.front().text;
    auto generic = cx.generics.find(name);
    if (generic != cx.generics.end()) {
      if (generic->second->is_dim()) {
        value.dim = DimExpr::symbol(name);
        return value;
      }
      error("E2111", "generic parameter " + quoted(param.name) + " takes a dimension, but " + quoted(name) + " is a " +
                         (generic->second->is_pack() ? "shape pack" : "dtype"),
            arg.span);
      return std::nullopt;
    }
    if (std::optional<Symbol> symbol = find_symbol(name, cx); symbol && symbol->kind == Symbol::Kind::Const) {
      resolve_const(*symbol->constant);
      const TypePtr& type = symbol->constant->type;
      if (type && type->is_compile_time_int()) return GenericValue{GenericValue::Kind::Dim, *type->value, {}, {}};
      if (type && type->is_error()) return std::nullopt;
      error("E2123", "constant " + quoted(name) + " is not a compile-time integer", arg.span);
      return std::nullopt;
    }
    if (tensor::dtype_from_name(name)) {
      error("E2111", "generic parameter " + quoted(param.name) + " takes a dimension, not the dtype " + quoted(name),
            arg.span);
      return std::nullopt;
    }
    if (!was_imported(*cx.module, name)) explain_unknown_name(error("E1201", "cannot find " + quoted(name), arg.span), name, cx);
    return std::nullopt;
  }
  error("E2111", "generic parameter " + quoted(param.name) + " takes a dimension, not " + quoted(text_of(arg.span)),
        arg.span);
  return std::nullopt;
}

std::optional<Substitution> Checker::Impl::bind_explicit_generics(const std::vector<GenericParamInfo>& generics,
                                                                  const std::vector<ast::GenericArg>& args,
                                                                  Span span, const std::string& what,
                                                                  Context& cx, bool require_all,
                                                                  std::vector<std::string>* defaulted) {
  if (args.size() > generics.size()) {
    error("E2111",
          what + " takes " + std::to_string(generics.size()) + " generic argument" +
              (generics.size() == 1 ? "" : "s") + ", not " + std::to_string(args.size()),
          span);
    return std::nullopt;
  }
  Substitution bound;
  bool ok = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const GenericParamInfo& param = generics[i];
    std::optional<GenericValue> value = resolve_generic_arg(args[i], param, cx);
    if (!value) {
      ok = false;
      continue;
    }
    switch (value->kind) {
      case GenericValue::Kind::Dim: bound.dims[param.name] = value->dim; break;
      case GenericValue::Kind::Pack: bound.packs[param.name] = value->pack; break;
      case GenericValue::Kind::DType:
        if (!satisfies(value->dtype, param.kind)) {
          error("E2112",
                quoted(value->dtype.to_string()) + " is not " + ast::generic_kind_spelling(param.kind) +
                    ", as " + quoted(param.name) + " of " + what + " requires",
                args[i].span);
          ok = false;
        }
        bound.dtypes[param.name] = value->dtype;
        break;
    }
  }
  if (!ok) return std::nullopt;
  if (!require_all) return bound;
  // Too few arguments: every parameter still missing a value is named at
  // once, with the full spelling to write.
  std::vector<std::string> missing;
  std::size_t last_required = 0;
  for (std::size_t i = args.size(); i < generics.size(); ++i) {
    if (generics[i].has_default) continue;
    missing.push_back(generics[i].name);
    last_required = i;
  }
  if (!missing.empty()) {
    std::string written = text_of(span);
    std::string added;
    for (std::size_t i = args.size(); i <= last_required; ++i) {
      added += (added.empty() && args.empty() ? "" : ", ") + generics[i].name;
    }
    if (!written.empty() && written.back() == '>') {
      written.insert(written.size() - 1, added);
    } else {
      written += "<" + added + ">";
    }
    error("E2111",
          what + " is missing " + (missing.size() == 1 ? "a value for its generic parameter " : "values for its generic parameters ") +
              syntax::quoted_list(missing),
          span)
        .with_help("write " + std::string(missing.size() == 1 ? "it" : "them") + " out: `" + written + "`");
    return std::nullopt;
  }
  for (std::size_t i = args.size(); i < generics.size(); ++i) {
    const GenericParamInfo& param = generics[i];
    if (defaulted) defaulted->push_back(param.name);
    // A default is written in the declaration's own generics.
    switch (param.default_value.kind) {
      case GenericValue::Kind::Dim: bound.dims[param.name] = param.default_value.dim.substitute(bound.dims); break;
      case GenericValue::Kind::Pack: bound.packs[param.name] = substitute(param.default_value.pack, bound); break;
      case GenericValue::Kind::DType: bound.dtypes[param.name] = substitute(param.default_value.dtype, bound); break;
    }
  }
  return bound;
}

void Checker::Impl::prove_instantiation(const std::vector<WhereFact>& where, const Substitution& args, Span span,
                                        const std::string& what, Context& cx, const BlockDecl* block,
                                        const std::vector<std::string>& defaulted) {
  if (!cx.solver) return;
  for (const WhereFact& fact : where) {
    const Relation needed = fact.relation.substitute(args.dims);
    // Once per relation and declaration: fifty calls of `rope` need the same fact.
    const std::string key = "E2206 " + needed.to_string() + " " + what;
    if (cx.reported.count(key)) continue;
    const ProofResult proof = cx.solver->prove(needed);
    if (proof.proved()) continue;
    cx.reported.insert(key);
    Diagnostic& d = error("E2206", "cannot prove " + quoted(needed.to_string()) + ", which " + what + " requires", span);
    d.note("needed for " + quoted(fact.relation.to_string()) + " in the " + fact.origin);
    // A generic the declaration left to its default may be the mistake.
    std::vector<std::string> defaults;
    for (const std::string& name : defaulted) {
      const std::set<std::string> lhs = fact.relation.lhs.symbols();
      const std::set<std::string> rhs = fact.relation.rhs.symbols();
      if (!lhs.count(name) && !rhs.count(name)) continue;
      if (!block) continue;
      for (const GenericParamInfo& g : block->generics) {
        if (g.name == name && g.default_arg) defaults.push_back("`" + name + " = " + text_of(g.default_arg->span) + "`");
      }
    }
    if (!defaults.empty()) {
      std::string listed;
      for (std::size_t i = 0; i < defaults.size(); ++i) listed += (i ? ", " : "") + defaults[i];
      d.note("the clause holds a generic left to its default here (" + listed +
             "): if another value is meant, a generic argument is missing");
    }
    explain_failure(d, proof, cx);
  }
}

void Checker::Impl::check_divisors(const DimExpr& dim, Span span, Context& cx) {
  switch (dim.kind()) {
    case DimExpr::Kind::Constant:
    case DimExpr::Kind::Symbol: return;
    case DimExpr::Kind::Negate: check_divisors(dim.operand(), span, cx); return;
    default: break;
  }
  check_divisors(dim.lhs(), span, cx);
  check_divisors(dim.rhs(), span, cx);
  if (dim.kind() != DimExpr::Kind::Div && dim.kind() != DimExpr::Kind::Mod) return;
  const DimExpr& divisor = dim.rhs();
  if (divisor.is_constant()) {
    if (divisor.value() <= 0) {
      error("E2205", "the divisor in " + quoted(dim.to_string()) + " is " + std::to_string(divisor.value()), span)
          .note("a compile-time division needs a positive divisor");
    }
    return;
  }
  if (!cx.solver) return;
  const std::string key = "E2205 " + divisor.to_string();
  if (cx.reported.count(key)) return;
  const ProofResult proof = cx.solver->prove_positive(divisor);
  if (proof.proved()) return;
  cx.reported.insert(key);
  Diagnostic& d = error("E2205", "cannot prove that the divisor " + quoted(divisor.to_string()) + " is positive",
                        span);
  d.with_label("in " + quoted(dim.to_string()));
  explain_failure(d, proof, cx);
}

void Checker::Impl::check_nonnegative(const DimExpr& dim, Span span, Context& cx) {
  if (!cx.solver) return;
  if (dim.is_constant()) {
    if (dim.value() < 0) {
      error("E2208", "dimension " + quoted(dim.to_string()) + " is negative", span)
          .note("tensor dimensions are non-negative");
    }
    return;
  }
  if (dim.is_symbol()) return;
  const ProofResult proof = cx.solver->prove_nonnegative(dim);
  if (!proof.disproved()) return;
  Diagnostic& d = error("E2208", "dimension " + quoted(dim.to_string()) + " is negative", span);
  d.note("tensor dimensions are non-negative");
  if (!proof.reason.empty()) d.note(proof.reason);
}

TypePtr Checker::Impl::resolve_type(const ast::Type& type, Context& cx) {
  switch (type.kind) {
    case ast::TypeKind::Error: return error_type();
    case ast::TypeKind::Tensor: {
      const auto& tensor = type.cast<ast::TensorType>();
      std::optional<Shape> shape = resolve_shape_elements(tensor.shape, cx);
      DTypeRef dtype = tensor.dtype ? resolve_dtype(*tensor.dtype, cx) : DTypeRef::error();
      if (!shape || dtype.is_error()) return error_type();
      return tensor_type(std::move(*shape), std::move(dtype));
    }
    case ast::TypeKind::Tuple: {
      std::vector<TypePtr> elements;
      for (const ast::TypePtr& element : type.cast<ast::TupleType>().elements) {
        TypePtr resolved = resolve_type(*element, cx);
        if (resolved->is_error()) return error_type();
        elements.push_back(std::move(resolved));
      }
      return tuple_type(std::move(elements));
    }
    case ast::TypeKind::Optional: {
      TypePtr inner = resolve_type(*type.cast<ast::OptionalType>().inner, cx);
      if (inner->is_error()) return inner;
      if (inner->kind == TypeKind::Optional) {
        error("E2101", "an optional of an optional is not a type", type.span);
        return error_type();
      }
      return optional_type(std::move(inner));
    }
    case ast::TypeKind::Array: {
      const auto& array = type.cast<ast::ArrayType>();
      TypePtr element = resolve_type(*array.element, cx);
      std::optional<DimExpr> length = array.length ? resolve_dim(*array.length, cx) : std::nullopt;
      if (element->is_error() || !length) return error_type();
      if (element->kind != TypeKind::Block) {
        error("E4101", "a structural array holds blocks, not " + quoted(type_to_string(element)), array.element->span);
        return error_type();
      }
      check_nonnegative(*length, array.length->span, cx);
      // The count of blocks must be a whole number: `Layers / 2` needs
      // `Layers % 2 == 0`, or a layer would silently be dropped.
      if (cx.solver && length->kind() == DimExpr::Kind::Div) {
        require(Relation{length->lhs() % length->rhs(), RelOp::Eq, DimExpr(0)}, "E2202",
                "cannot prove that the array length " + quoted(length->to_string()) + " is a whole number",
                array.length->span, "the number of blocks in the array", cx);
      }
      return block_array_type(std::move(element), std::move(*length));
    }
    case ast::TypeKind::Named: break;
  }
  const auto& named = type.cast<ast::NamedType>();
  if (named.path.empty()) return error_type();
  const std::string& head = named.path.front().text;
  ModuleScope* scope = cx.module;
  Symbol symbol;
  std::size_t segment = 0;
  if (named.path.size() == 1) {
    if (std::optional<tensor::DType> dtype = tensor::dtype_from_name(head)) {
      if (named.has_generic_args) error("E2111", quoted(head) + " takes no generic arguments", type.span);
      return scalar_type(DTypeRef::of(*dtype));
    }
    auto generic = cx.generics.find(head);
    if (generic != cx.generics.end()) {
      if (generic->second->is_dtype()) return scalar_type(DTypeRef::generic(head, generic->second->kind));
      error("E1208", quoted(head) + " is a " + (generic->second->is_pack() ? "shape pack" : "dimension") +
                         ", not a type",
            type.span);
      return error_type();
    }
    if (head == "Tensor") {
      error("E2101", "a tensor type needs a shape and a dtype: `Tensor[B, H; f32]`", type.span);
      return error_type();
    }
    std::optional<Symbol> found = find_symbol(head, cx);
    if (!found) {
      if (!was_imported(*cx.module, head)) {
        explain_unknown_name(error("E1201", "cannot find type " + quoted(head), named.path.front().span), head, cx);
      }
      return error_type();
    }
    symbol = *found;
  } else {
    // `module.Item`: the first segment names a module imported whole.
    std::optional<Symbol> found = find_symbol(head, cx);
    if (!found) {
      if (!was_imported(*cx.module, head)) {
        explain_unknown_name(error("E1201", "cannot find " + quoted(head), named.path.front().span), head, cx);
      }
      return error_type();
    }
    symbol = *found;
    for (segment = 1; segment < named.path.size(); ++segment) {
      if (symbol.kind != Symbol::Kind::Module) {
        error("E1208", quoted(named.path[segment - 1].text) + " is not a module", named.path[segment - 1].span);
        return error_type();
      }
      scope = symbol.module;
      auto it = scope->symbols.find(named.path[segment].text);
      if (it == scope->symbols.end() || scope->imports.count(named.path[segment].text)) {
        error("E1201", "module " + quoted(scope->name) + " has no item " + quoted(named.path[segment].text),
              named.path[segment].span);
        return error_type();
      }
      symbol = it->second;
    }
  }
  const std::string display = ast::join_path(named.path);
  switch (symbol.kind) {
    case Symbol::Kind::Alias: {
      AliasDecl& alias = *symbol.alias;
      resolve_alias(alias);
      if (!alias.aliased || alias.aliased->is_error()) return error_type();
      std::optional<Substitution> args =
          bind_explicit_generics(alias.generics, named.generic_args, type.span, quoted(display), cx, true);
      if (!args) return error_type();
      return substitute(alias.aliased, *args);
    }
    case Symbol::Kind::Struct: {
      StructDecl& decl = *symbol.structure;
      resolve_struct(decl);
      std::vector<std::string> defaulted;
      std::optional<Substitution> args =
          bind_explicit_generics(decl.generics, named.generic_args, type.span, quoted(display), cx, true, &defaulted);
      if (!args) return error_type();
      Type t;
      t.defaulted = std::move(defaulted);
      t.written = type.span;
      t.kind = TypeKind::Struct;
      t.structure = &decl;
      t.args = std::move(*args);
      return std::make_shared<const Type>(std::move(t));
    }
    case Symbol::Kind::Enum: {
      if (named.has_generic_args && !named.generic_args.empty()) {
        error("E2111", quoted(display) + " takes no generic arguments", type.span);
      }
      Type t;
      t.kind = TypeKind::Enum;
      t.enumeration = symbol.enumeration;
      return std::make_shared<const Type>(std::move(t));
    }
    case Symbol::Kind::Block: {
      BlockDecl& block = *symbol.block;
      resolve_block(block);
      std::vector<std::string> defaulted;
      std::optional<Substitution> args =
          bind_explicit_generics(block.generics, named.generic_args, type.span, quoted(display), cx, true, &defaulted);
      if (!args) return error_type();
      prove_instantiation(block.where, *args, type.span, quoted(display), cx, &block, defaulted);
      Type t;
      t.defaulted = std::move(defaulted);
      t.written = type.span;
      t.kind = TypeKind::Block;
      t.block = &block;
      t.args = std::move(*args);
      return std::make_shared<const Type>(std::move(t));
    }
    case Symbol::Kind::Module:
      error("E1208", quoted(display) + " is a module, not a type", type.span);
      return error_type();
    case Symbol::Kind::Const:
    case Symbol::Kind::Function:
      error("E1208", quoted(display) + " is a " + (symbol.kind == Symbol::Kind::Const ? "constant" : "function") +
                         ", not a type",
            type.span);
      return error_type();
    case Symbol::Kind::None: break;
  }
  return error_type();
}

}  // namespace linnet::check
