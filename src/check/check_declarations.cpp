// Declarations: collecting every module's items into scopes, resolving
// signatures (generics, `where` facts, parameter and member types), and
// driving the body checks and the recursion check.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>
#include <functional>

#include "checker_internal.hpp"
#include "linnet/check/dim_text.hpp"

namespace linnet::check {

namespace {

// Every name the prelude defines (spec 2.3): no declaration may take one.
constexpr std::string_view kPreludeNames[] = {
    "Tensor", "Dim", "Shape", "DType", "Numeric", "Integer", "Float",
    "cast", "reshape", "permute", "broadcast_to", "concat", "pad",
    "iota", "fill", "cumsum", "gather", "scatter",
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "abs",
    "min", "max", "shl", "shr", "select",
};

std::optional<RelOp> relation_of(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Equal: return RelOp::Eq;
    case ast::BinaryOp::NotEqual: return RelOp::Ne;
    case ast::BinaryOp::Less: return RelOp::Lt;
    case ast::BinaryOp::LessEqual: return RelOp::Le;
    case ast::BinaryOp::Greater: return RelOp::Gt;
    case ast::BinaryOp::GreaterEqual: return RelOp::Ge;
    default: return std::nullopt;
  }
}

}  // namespace

bool Checker::Impl::is_prelude_name(std::string_view name) {
  if (tensor::dtype_from_name(name)) return true;
  return std::find(std::begin(kPreludeNames), std::end(kPreludeNames), name) != std::end(kPreludeNames);
}

bool Checker::Impl::check_not_prelude(const std::string& name, Span span) {
  if (name.empty() || !is_prelude_name(name)) return true;
  error("E1207", quoted(name) + " is a prelude name", span)
      .note("prelude names cannot be redefined or shadowed");
  return false;
}

const ast::Item& FunctionDecl::item() const {
  if (kernel) return *kernel;
  return *function;
}

std::string FunctionDecl::qualified_name() const { return block ? block->name + "." + name : name; }

const MemberDecl* BlockDecl::member(std::string_view member_name) const {
  auto it = member_index.find(member_name);
  return it == member_index.end() ? nullptr : &members[it->second];
}

// ---------------------------------------------------------------- collection

Symbol Checker::Impl::symbol_for_item(const ast::Item& item, ModuleScope& scope, BlockDecl* block) {
  Symbol symbol;
  switch (item.kind) {
    case ast::ItemKind::Const: {
      ConstDecl& decl = consts.emplace_back();
      decl.item = &item.cast<ast::ConstItem>();
      decl.module = &scope;
      symbol.kind = Symbol::Kind::Const;
      symbol.constant = &decl;
      break;
    }
    case ast::ItemKind::TypeAlias: {
      AliasDecl& decl = aliases.emplace_back();
      decl.item = &item.cast<ast::TypeAliasItem>();
      decl.module = &scope;
      symbol.kind = Symbol::Kind::Alias;
      symbol.alias = &decl;
      break;
    }
    case ast::ItemKind::Struct: {
      StructDecl& decl = structs.emplace_back();
      decl.item = &item.cast<ast::StructItem>();
      decl.module = &scope;
      decl.name = item.name.text;
      symbol.kind = Symbol::Kind::Struct;
      symbol.structure = &decl;
      break;
    }
    case ast::ItemKind::Enum: {
      EnumDecl& decl = enums.emplace_back();
      decl.item = &item.cast<ast::EnumItem>();
      decl.module = &scope;
      decl.name = item.name.text;
      for (const ast::Ident& variant : decl.item->variants) {
        if (std::find(decl.variants.begin(), decl.variants.end(), variant.text) != decl.variants.end()) {
          error("E1205", "variant " + quoted(variant.text) + " is defined more than once", variant.span);
          continue;
        }
        decl.variants.push_back(variant.text);
      }
      symbol.kind = Symbol::Kind::Enum;
      symbol.enumeration = &decl;
      break;
    }
    case ast::ItemKind::Function:
    case ast::ItemKind::Kernel: {
      FunctionDecl& decl = functions.emplace_back();
      if (item.kind == ast::ItemKind::Kernel) {
        decl.kernel = &item.cast<ast::KernelItem>();
      } else {
        decl.function = &item.cast<ast::FunctionItem>();
      }
      decl.module = &scope;
      decl.block = block;
      decl.name = item.name.text;
      symbol.kind = Symbol::Kind::Function;
      symbol.function = &decl;
      break;
    }
    case ast::ItemKind::Block: {
      BlockDecl& decl = blocks.emplace_back();
      decl.item = &item.cast<ast::BlockItem>();
      decl.module = &scope;
      decl.name = item.name.text;
      symbol.kind = Symbol::Kind::Block;
      symbol.block = &decl;
      for (const ast::ItemPtr& member : decl.item->members) {
        if (!member || member->kind == ast::ItemKind::Error || member->name.empty()) continue;
        check_not_prelude(member->name.text, member->name.span);
        const bool duplicate =
            decl.member_index.count(member->name.text) > 0 || decl.methods.count(member->name.text) > 0;
        if (duplicate) {
          error("E1205", quoted(member->name.text) + " is defined more than once", member->name.span)
              .with_label("redefined here");
          continue;
        }
        if (member->kind == ast::ItemKind::Member) {
          MemberDecl record;
          record.item = &member->cast<ast::MemberItem>();
          record.kind = record.item->member;
          record.name = member->name.text;
          decl.member_index.emplace(record.name, decl.members.size());
          decl.members.push_back(std::move(record));
        } else if (member->kind == ast::ItemKind::Function) {
          Symbol method = symbol_for_item(*member, scope, &decl);
          symbol_of_item[member.get()] = method;
          decl.methods.emplace(member->name.text, method.function);
        } else {
          // Other items nested in a block (a const, a struct) are collected so
          // that their bodies are checked; they are reached through the module.
          Symbol nested = symbol_for_item(*member, scope, &decl);
          symbol_of_item[member.get()] = nested;
        }
      }
      break;
    }
    default: break;
  }
  return symbol;
}

void Checker::Impl::collect_module(const syntax::Module& module, ModuleScope& scope) {
  scope.module = &module;
  scope.name = module.name;
  if (!module.ast) return;
  for (const ast::ItemPtr& item : module.ast->items) {
    if (!item || item->kind == ast::ItemKind::Error || item->kind == ast::ItemKind::Member || item->name.empty()) {
      continue;
    }
    check_not_prelude(item->name.text, item->name.span);
    Symbol symbol = symbol_for_item(*item, scope, nullptr);
    symbol_of_item[item.get()] = symbol;
    // The loader reported a duplicate (E1204); the first declaration stays.
    scope.symbols.emplace(item->name.text, symbol);
  }
}

void Checker::Impl::resolve_imports(ModuleScope& scope) {
  const syntax::Module& module = *scope.module;
  std::set<std::string, std::less<>>& names = imported_names[&scope];
  if (module.ast) {
    for (const ast::UseDecl& use : module.ast->uses) {
      if (use.imports_module) {
        if (!use.path.empty()) names.insert(use.path.back().text);
      }
      for (const ast::ImportName& name : use.names) names.insert(name.local().text);
    }
  }
  for (const auto& [name, imported] : module.imports) {
    Symbol symbol;
    if (imported.item) {
      auto it = symbol_of_item.find(imported.item);
      if (it == symbol_of_item.end()) continue;
      symbol = it->second;
    } else if (imported.module >= 0 && static_cast<std::size_t>(imported.module) < program.modules().size()) {
      auto it = scope_of_module.find(program.modules()[imported.module].get());
      if (it == scope_of_module.end()) continue;
      symbol.kind = Symbol::Kind::Module;
      symbol.module = it->second;
    } else {
      continue;
    }
    scope.symbols.emplace(name, symbol);
    scope.imports.emplace(name, ModuleScope::Import{imported.span, false});
  }
}

void Checker::Impl::collect() {
  for (const auto& module : program.modules()) {
    ModuleScope& scope = modules.emplace_back();
    scope_of_module[module.get()] = &scope;
  }
  for (ModuleScope& scope : modules) {
    for (const auto& [module, found] : scope_of_module) {
      if (found == &scope) collect_module(*module, scope);
    }
  }
  for (ModuleScope& scope : modules) resolve_imports(scope);
}

// ---------------------------------------------------------------- contexts

void Checker::Impl::add_generics(Context& cx, std::vector<GenericParamInfo>& generics,
                                 const std::vector<ast::GenericParam>& params) {
  generics.clear();
  for (const ast::GenericParam& param : params) {
    if (param.name.empty() || param.constraint == ast::GenericKind::Unknown) continue;
    check_not_prelude(param.name.text, param.name.span);
    const bool is_shape = param.constraint == ast::GenericKind::Shape;
    if (is_shape != param.is_pack) {
      error("E2111",
            is_shape ? "a `Shape` parameter is a pack: write `*" + param.name.text + ": Shape`"
                     : "only a `Shape` parameter can be a pack",
            param.span);
      continue;
    }
    const bool duplicate =
        std::any_of(generics.begin(), generics.end(), [&](const GenericParamInfo& g) { return g.name == param.name.text; }) ||
        cx.generics.count(param.name.text) > 0;
    if (duplicate) {
      error("E1205", "generic parameter " + quoted(param.name.text) + " is defined more than once",
            param.name.span);
      continue;
    }
    GenericParamInfo info;
    info.name = param.name.text;
    info.kind = param.constraint;
    info.span = param.span;
    info.default_arg = param.default_value.get();
    info.has_default = false;
    generics.push_back(std::move(info));
  }
  for (const GenericParamInfo& g : generics) cx.generics[g.name] = &g;
}

void Checker::Impl::resolve_generic_defaults(Context& cx, std::vector<GenericParamInfo>& generics) {
  for (GenericParamInfo& g : generics) {
    if (!g.default_arg) continue;
    std::optional<GenericValue> value = resolve_generic_arg(*g.default_arg, g, cx);
    if (!value) continue;
    if (g.is_dtype() && !satisfies(value->dtype, g.kind)) {
      error("E2112",
            "the default " + value->dtype.to_string() + " of " + quoted(g.name) + " is not " +
                ast::generic_kind_spelling(g.kind),
            g.default_arg->span);
      continue;
    }
    g.default_value = std::move(*value);
    g.has_default = true;
  }
}

void Checker::Impl::add_where(Context& cx, const ast::WhereClause& where, std::vector<WhereFact>* record,
                              const std::string& origin) {
  for (const ast::ExprPtr& constraint : where.constraints) {
    if (!constraint) continue;
    const auto* comparison = constraint->as<ast::BinaryExpr>();
    const std::optional<RelOp> op = comparison ? relation_of(comparison->op) : std::nullopt;
    if (!op) {
      error("E2101", "a `where` constraint must compare two dimensions", constraint->span);
      continue;
    }
    std::optional<DimExpr> lhs = resolve_dim(*comparison->lhs, cx);
    std::optional<DimExpr> rhs = resolve_dim(*comparison->rhs, cx);
    if (!lhs || !rhs) continue;
    WhereFact fact{Relation{*lhs, *op, *rhs}, constraint->span, origin};
    cx.facts.push_back(fact);
    if (record) record->push_back(std::move(fact));
  }
}

void Checker::Impl::build_solver(Context& cx) {
  Facts facts;
  for (const WhereFact& fact : cx.facts) facts.add(fact.relation, fact.origin);
  cx.solver = std::make_shared<Solver>(std::move(facts));
}

Context Checker::Impl::make_context(ModuleScope* module, BlockDecl* block, FunctionDecl* function) {
  Context cx;
  cx.module = module;
  cx.block = block;
  cx.function = function;
  if (block) {
    resolve_block(*block);
    for (const GenericParamInfo& g : block->generics) cx.generics[g.name] = &g;
    cx.facts = block->where;
  }
  if (function) {
    resolve_function(*function);
    for (const GenericParamInfo& g : function->generics) cx.generics[g.name] = &g;
    cx.facts.insert(cx.facts.end(), function->where.begin(), function->where.end());
  }
  build_solver(cx);
  cx.scopes.emplace_back();
  return cx;
}

// ---------------------------------------------------------------- signatures

void Checker::Impl::resolve_function(FunctionDecl& function) {
  if (function.state != ResolveState::Unresolved) return;
  function.state = ResolveState::Resolving;
  Context cx = make_context(function.module, function.block, nullptr);
  cx.solver.reset();
  const std::vector<ast::GenericParam>& generics =
      function.kernel ? function.kernel->generics : function.function->generics;
  const ast::WhereClause& where = function.kernel ? function.kernel->where : function.function->where;
  add_generics(cx, function.generics, generics);
  add_where(cx, where, &function.where, "where clause of " + quoted(function.qualified_name()));
  build_solver(cx);
  for (const WhereFact& fact : function.where) {
    check_divisors(fact.relation.lhs, fact.span, cx);
    check_divisors(fact.relation.rhs, fact.span, cx);
  }
  resolve_generic_defaults(cx, function.generics);

  const std::vector<ast::Param>& params = function.kernel ? function.kernel->params : function.function->params;
  for (const ast::Param& param : params) {
    if (param.name.empty()) continue;
    check_not_prelude(param.name.text, param.name.span);
    const bool duplicate = std::any_of(function.params.begin(), function.params.end(),
                                       [&](const ParamInfo& p) { return p.name == param.name.text; });
    if (duplicate) {
      error("E1205", "parameter " + quoted(param.name.text) + " is defined more than once", param.name.span);
      function.signature_ok = false;
      continue;
    }
    ParamInfo info;
    info.name = param.name.text;
    info.type = param.type ? resolve_type(*param.type, cx) : error_type();
    info.has_default = param.default_value != nullptr;
    info.span = param.span;
    if (info.type->is_error()) function.signature_ok = false;
    function.params.push_back(std::move(info));
  }
  if (function.kernel) {
    std::vector<TypePtr> results;
    for (const ast::KernelResult& result : function.kernel->results) {
      ParamInfo info;
      info.name = result.name.text;
      info.type = result.type ? resolve_type(*result.type, cx) : error_type();
      info.span = result.span;
      check_not_prelude(info.name, result.name.span);
      results.push_back(info.type);
      function.kernel_results.push_back(std::move(info));
    }
    function.result = results.size() == 1 ? results.front() : tuple_type(std::move(results));
  } else {
    function.result = function.function->result ? resolve_type(*function.function->result, cx) : unit_type();
  }
  function.state = ResolveState::Resolved;
}

void Checker::Impl::resolve_block(BlockDecl& block) {
  if (block.state != ResolveState::Unresolved) return;
  block.state = ResolveState::Resolving;
  Context cx = make_context(block.module, nullptr, nullptr);
  cx.solver.reset();
  add_generics(cx, block.generics, block.item->generics);
  add_where(cx, block.item->where, &block.where, "where clause of " + quoted(block.name));
  build_solver(cx);
  for (const WhereFact& fact : block.where) {
    check_divisors(fact.relation.lhs, fact.span, cx);
    check_divisors(fact.relation.rhs, fact.span, cx);
  }
  resolve_generic_defaults(cx, block.generics);
  block.state = ResolveState::Resolved;
}

void Checker::Impl::resolve_block_members(BlockDecl& block) {
  if (block.members_resolved) return;
  block.members_resolved = true;
  Context cx = make_context(block.module, &block, nullptr);
  for (MemberDecl& member : block.members) {
    const ast::MemberItem& item = *member.item;
    member.type = item.type ? resolve_type(*item.type, cx) : error_type();
    const TypePtr& type = member.type;
    const Span type_span = item.type ? item.type->span : item.name.span;
    const char* kind = ast::member_kind_spelling(member.kind);
    const bool optional = type->kind == TypeKind::Optional;
    const TypePtr inner = optional ? type->elements.front() : type;
    if (member.kind == ast::MemberKind::Sub) {
      const bool is_array = inner->kind == TypeKind::BlockArray;
      const TypePtr element = is_array ? inner->elements.front() : inner;
      if (!type->is_error() && !element->is_error() && element->kind != TypeKind::Block) {
        error("E4101", "a `sub` must be a block or an array of blocks, not " + quoted(type_to_string(type)),
              type_span);
      } else if (optional && is_array) {
        error("E4101", "an array of blocks cannot be optional", type_span)
            .note("a `sub` array is present as a whole; make the block inside it hold optional parameters instead");
      }
      if (item.default_value) {
        if (item.default_value->kind != ast::ExprKind::None) {
          error("E4101", "a `sub` cannot have a value in source", item.default_value->span)
              .note("a child block is built from its parameters; the only default is `none`, for an optional one");
        } else if (!optional && !type->is_error()) {
          error("E4101", "only an optional `sub` can default to `none`", item.default_value->span)
              .with_help("declare the type as " + quoted(type_to_string(type) + "?"));
        }
      }
      continue;
    }
    if (member.kind == ast::MemberKind::State) {
      if (optional) {
        error("E4101", "a `state` member cannot be optional", type_span)
            .note("the runtime supplies every state's initial value, so a state is always present");
      } else if (!type->is_error() && type->kind != TypeKind::Tensor) {
        error("E4101", "a `state` member must be a tensor, not " + quoted(type_to_string(type)), type_span);
      }
      if (item.default_value) {
        error("E4101", "a `state` member cannot have a value in source", item.default_value->span)
            .note("the runtime supplies the initial value (zeros by default)");
      }
      continue;
    }
    // param and buffer
    if (!type->is_error() && !inner->is_error() && inner->kind != TypeKind::Tensor) {
      error("E4101", std::string("a `") + kind + "` must be a tensor, not " + quoted(type_to_string(type)),
            type_span);
    }
    if (item.default_value) {
      if (item.default_value->kind != ast::ExprKind::None) {
        error("E4102", std::string("a `") + kind + "` cannot have a value in source", item.default_value->span)
            .note(
                "parameter data is bound externally; the only default is `none`, which marks an optional "
                "parameter as possibly absent");
      } else if (!optional && !type->is_error()) {
        error("E4101", std::string("only an optional `") + kind + "` can default to `none`",
              item.default_value->span)
            .with_help("declare the type as " + quoted(type_to_string(type) + "?"));
      }
    }
  }
}

void Checker::Impl::resolve_struct(StructDecl& decl) {
  if (decl.state == ResolveState::Resolved) return;
  if (decl.state == ResolveState::Resolving) {
    error("E2122", quoted(decl.name) + " is defined in terms of itself", decl.item->name.span);
    return;
  }
  decl.state = ResolveState::Resolving;
  Context cx = make_context(decl.module, nullptr, nullptr);
  add_generics(cx, decl.generics, decl.item->generics);
  resolve_generic_defaults(cx, decl.generics);
  for (const ast::Field& field : decl.item->fields) {
    const bool duplicate = std::any_of(decl.fields.begin(), decl.fields.end(),
                                       [&](const ParamInfo& f) { return f.name == field.name.text; });
    if (duplicate) {
      error("E1205", "field " + quoted(field.name.text) + " is defined more than once", field.name.span);
      continue;
    }
    ParamInfo info;
    info.name = field.name.text;
    info.span = field.span;
    info.type = field.type ? resolve_type(*field.type, cx) : error_type();
    decl.fields.push_back(std::move(info));
  }
  decl.state = ResolveState::Resolved;
}

void Checker::Impl::resolve_alias(AliasDecl& decl) {
  if (decl.state == ResolveState::Resolved) return;
  if (decl.state == ResolveState::Resolving) {
    error("E2122", quoted(decl.item->name.text) + " is defined in terms of itself", decl.item->name.span);
    decl.aliased = error_type();
    return;
  }
  decl.state = ResolveState::Resolving;
  Context cx = make_context(decl.module, nullptr, nullptr);
  add_generics(cx, decl.generics, decl.item->generics);
  resolve_generic_defaults(cx, decl.generics);
  decl.aliased = decl.item->type ? resolve_type(*decl.item->type, cx) : error_type();
  decl.state = ResolveState::Resolved;
}

void Checker::Impl::resolve_const(ConstDecl& decl) {
  if (decl.state == ResolveState::Resolved) return;
  if (decl.state == ResolveState::Resolving) {
    error("E2122", quoted(decl.item->name.text) + " is defined in terms of itself", decl.item->name.span);
    decl.type = error_type();
    return;
  }
  decl.state = ResolveState::Resolving;
  Context cx = make_context(decl.module, nullptr, nullptr);
  TypePtr type = error_type();
  if (decl.item->type) {
    const TypePtr declared = resolve_type(*decl.item->type, cx);
    if (!declared->is_error() && declared->kind != TypeKind::Scalar && declared->kind != TypeKind::Enum) {
      error("E2101", "a constant has a scalar or enum type, not " + quoted(type_to_string(declared)),
            decl.item->type->span);
    } else if (decl.item->value) {
      const TypePtr value = check_expr(*decl.item->value, cx, declared);
      coerce(value, declared, decl.item->value->span, "the constant's value", cx);
      type = declared;
    }
  } else if (decl.item->value) {
    const TypePtr value = check_expr(*decl.item->value, cx);
    // An unannotated constant stays contextual (spec 4.2): an integer is a
    // compile-time integer usable in shapes, a float adopts a float dtype.
    if (value->is_error() || value->is_contextual() || value->kind == TypeKind::Enum ||
        value->kind == TypeKind::Scalar) {
      type = value;
    } else {
      error("E2123", "a constant must be evaluable at compile time", decl.item->value->span)
          .note("constants are scalars or enum variants");
    }
  }
  if (decl.state == ResolveState::Resolving) decl.type = type;
  decl.state = ResolveState::Resolved;
}

// ---------------------------------------------------------------- bodies

void Checker::Impl::check_function_body(FunctionDecl& function) {
  resolve_function(function);
  Context cx = make_context(function.module, function.block, &function);
  cx.result = function.result;
  cx.in_kernel = function.is_kernel();
  ++functions_checked;
  for (const ParamInfo& param : function.params) {
    ast::Ident name{param.name, param.span};
    Local& local = declare_local(name, param.type, Local::Kind::Param, cx);
    local.used = true;  // parameters are not linted
    local.memory = function.is_kernel() && param.type->is_tensor();
  }
  if (function.kernel) {
    for (const ParamInfo& result : function.kernel_results) {
      ast::Ident name{result.name, result.span};
      Local& local = declare_local(name, result.type, Local::Kind::Param, cx);
      local.used = true;
      local.memory = true;
    }
    check_kernel_declaration(function, cx);
    check_body(function.kernel->body, cx, true);
    lint_locals(cx);
    return;
  }
  const ast::FunctionItem& item = *function.function;
  for (std::size_t i = 0; i < item.params.size() && i < function.params.size(); ++i) {
    const ast::Param& param = item.params[i];
    if (param.default_value) {
      const TypePtr value = check_expr(*param.default_value, cx, function.params[i].type);
      coerce(value, function.params[i].type, param.default_value->span, "the default value", cx);
    }
  }
  check_body(item.body, cx, true);
  lint_locals(cx);
  if (item.kernel) {
    if (!function.is_op()) {
      error("E2126", std::string("only an `op` can name a kernel, not a `") +
                         ast::function_kind_spelling(item.function) + "`",
            item.kernel->span);
    } else {
      check_kernel_binding(function);
    }
  }
  if (item.grad) check_grad(function);
}

void Checker::Impl::check_all() {
  for (ConstDecl& decl : consts) resolve_const(decl);
  for (AliasDecl& decl : aliases) resolve_alias(decl);
  for (StructDecl& decl : structs) resolve_struct(decl);
  for (BlockDecl& block : blocks) {
    resolve_block(block);
    resolve_block_members(block);
  }
  for (FunctionDecl& function : functions) resolve_function(function);
  for (FunctionDecl& function : functions) check_function_body(function);
  check_recursion();
}

void Checker::Impl::check_recursion() {
  std::map<const FunctionDecl*, std::vector<const CallEdge*>> graph;
  for (const CallEdge& edge : calls) graph[edge.caller].push_back(&edge);
  enum class Mark { Unseen, Active, Done };
  std::map<const FunctionDecl*, Mark> marks;
  // A depth-first search with a stack of its own, not the C++ one: a chain of
  // tens of thousands of calls (f0 calls f1 calls f2 ...) must not overflow it.
  struct Frame {
    const FunctionDecl* node;
    std::size_t next_edge;
  };
  std::vector<Frame> stack;
  auto enter = [&](const FunctionDecl* node) {
    marks[node] = Mark::Active;
    stack.push_back({node, 0});
  };
  for (const FunctionDecl& function : functions) {
    if (marks[&function] != Mark::Unseen) continue;
    enter(&function);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const std::vector<const CallEdge*>& edges = graph[frame.node];
      if (frame.next_edge == edges.size()) {
        marks[frame.node] = Mark::Done;
        stack.pop_back();
        continue;
      }
      const CallEdge* edge = edges[frame.next_edge++];
      const Mark mark = marks[edge->callee];
      if (mark == Mark::Active) {
        const bool direct = edge->callee == edge->caller;
        error("E2119",
              direct ? quoted(edge->callee->name) + " calls itself"
                     : "this call makes " + quoted(edge->callee->name) + " indirectly recursive",
              edge->span)
            .note("recursion is not supported; every call graph must be acyclic");
      } else if (mark == Mark::Unseen) {
        enter(edge->callee);  // (invalidates `frame`)
      }
    }
  }
}

}  // namespace linnet::check
