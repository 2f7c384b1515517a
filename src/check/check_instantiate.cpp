// Concrete instantiation (`linnet check` on a card, or with `--bind`): the
// root block's generics bound to numbers and dtypes, every `where` clause of
// the block tree evaluated at those values, every member's shape evaluated,
// and each entry's signature printed with its own bindings applied.
//
// Generic checking already proved every body for all bindings that satisfy
// the `where` clauses; what is left to check here is that these bindings do.
#include "gcc_workarounds.hpp"  // first: see the file

#include <algorithm>
#include <charconv>
#include <functional>

#include "checker_internal.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::check {

namespace {

// Concrete values for one block instance's generics.
struct ConcreteArgs {
  Bindings dims;
  std::map<std::string, std::vector<std::int64_t>, std::less<>> packs;
  std::map<std::string, DTypeRef, std::less<>> dtypes;

  Substitution as_substitution() const {
    Substitution s;
    for (const auto& [name, value] : dims) s.dims[name] = DimExpr(value);
    for (const auto& [name, values] : packs) {
      Shape shape;
      for (std::int64_t v : values) shape.push_back(ShapeItem::of(DimExpr(v)));
      s.packs[name] = shape;
    }
    for (const auto& [name, dtype] : dtypes) s.dtypes[name] = dtype;
    return s;
  }
  std::string key() const {
    std::string out;
    for (const auto& [name, value] : dims) out += name + "=" + std::to_string(value) + ";";
    for (const auto& [name, values] : packs) {
      out += name + "=[";
      for (std::int64_t v : values) out += std::to_string(v) + ",";
      out += "];";
    }
    for (const auto& [name, dtype] : dtypes) out += name + "=" + dtype.to_string() + ";";
    return out;
  }
};

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// A shape with every dimension evaluated where it can be.
std::string concrete_shape(const Shape& shape, const Bindings& bindings, bool& concrete) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    if (shape[i].is_pack()) {
      out += "*" + shape[i].pack;
      concrete = false;
      continue;
    }
    const EvalResult value = shape[i].dim.evaluate(bindings);
    if (value.ok()) {
      out += std::to_string(value.value);
    } else {
      out += shape[i].dim.to_string();
      concrete = false;
    }
  }
  return out + "]";
}

std::string concrete_type(const TypePtr& type, const Bindings& bindings, bool& concrete) {
  switch (type->kind) {
    case TypeKind::Tensor: {
      std::string shape = concrete_shape(type->shape, bindings, concrete);
      if (type->dtype.kind != DTypeRef::Kind::Concrete) concrete = false;
      return "Tensor" + shape.substr(0, shape.size() - 1) + "; " + type->dtype.to_string() + "]";
    }
    case TypeKind::Scalar:
      if (type->dtype.kind != DTypeRef::Kind::Concrete) concrete = false;
      return type->dtype.to_string();
    case TypeKind::Tuple: {
      std::string out = "(";
      for (std::size_t i = 0; i < type->elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += concrete_type(type->elements[i], bindings, concrete);
      }
      return out + ")";
    }
    case TypeKind::Optional: return concrete_type(type->elements.front(), bindings, concrete) + "?";
    default: return type_to_string(type);
  }
}

}  // namespace

std::optional<Instance> Checker::Impl::instantiate(const InstantiateRequest& request) {
  auto scope_it = scope_of_module.find(request.module);
  if (!request.module || scope_it == scope_of_module.end()) {
    error("E1202", "the module to instantiate was not loaded", Span{});
    return std::nullopt;
  }
  ModuleScope& scope = *scope_it->second;
  const std::string origin = request.origin.empty() ? std::string("the bindings") : request.origin;

  // Which block is the root.
  BlockDecl* root = nullptr;
  if (!request.root.empty()) {
    Symbol symbol = module_symbol(scope, request.root);
    if (symbol.kind != Symbol::Kind::Block) {
      std::vector<std::string> block_names;
      for (const BlockDecl& block : blocks) {
        if (block.module == &scope) block_names.push_back(block.name);
      }
      error("E1201",
            "module " + quoted(scope.name) + " declares no block " + quoted(request.root) +
                syntax::did_you_mean(request.root, block_names),
            Span{})
          .note("the root named by " + origin);
      return std::nullopt;
    }
    root = symbol.block;
  } else {
    std::vector<BlockDecl*> with_entries;
    for (BlockDecl& block : blocks) {
      if (block.module != &scope) continue;
      for (const auto& [name, method] : block.methods) {
        if (method->is_entry()) {
          with_entries.push_back(&block);
          break;
        }
      }
    }
    if (with_entries.size() > 1) {
      std::string names;
      for (const BlockDecl* block : with_entries) names += (names.empty() ? "" : ", ") + quoted(block->name);
      error("E1201", "several blocks have entries (" + names + "); name the root with `--root`", Span{});
      return std::nullopt;
    }
    if (!with_entries.empty()) root = with_entries.front();
  }

  // A `--bind` that names no generic of the root or of its entries is an
  // error with the code and wording a card's gets (a card's bindings were
  // already matched by nest::resolve_card, which reports them itself).
  bool bindings_known = true;
  if (!request.card) {
    const std::string owner_name = root ? scope.name + "::" + root->name : scope.name;
    std::vector<std::string> block_generics;
    if (root) {
      for (const ast::GenericParam& generic : root->item->generics) block_generics.push_back(generic.name.text);
    }
    std::set<std::string> entry_generics;
    for (const FunctionDecl& function : functions) {
      if (!function.is_entry()) continue;
      if (root ? function.block != root : (function.module != &scope || function.block != nullptr)) continue;
      for (const ast::GenericParam& generic : function.function->generics) entry_generics.insert(generic.name.text);
    }
    std::vector<std::string> bindable = block_generics;
    bindable.insert(bindable.end(), entry_generics.begin(), entry_generics.end());
    for (const auto& [name, value] : request.bindings) {
      if (std::find(bindable.begin(), bindable.end(), name) != bindable.end()) continue;
      Diagnostic& unknown = error("E2111",
                                  "`--bind " + name + "=" + value + "`: " + quoted(owner_name) + " has no generic " +
                                      quoted(name) + syntax::did_you_mean(name, bindable),
                                  Span{});
      if (root) {
        std::string names;
        for (const std::string& generic : block_generics) names += (names.empty() ? "" : ", ") + generic;
        unknown.note(quoted(owner_name) + (block_generics.empty() ? " has no generics" : " has generics " + names));
      }
      if (!entry_generics.empty()) {
        std::string names;
        for (const std::string& generic : entry_generics) names += (names.empty() ? "" : ", ") + generic;
        unknown.note(std::string(entry_generics.size() == 1 ? "its entries have the generic "
                                                            : "its entries have generics ") +
                     names);
      }
      bindings_known = false;
    }
  }
  // (With a root, its own missing generics are reported too, below.)
  if (!bindings_known && !root) return std::nullopt;

  // Binds one declaration's generics from the request (or their defaults).
  auto bind = [&](const std::vector<GenericParamInfo>& generics, ConcreteArgs& out, bool required,
                  const std::string& owner) -> bool {
    bool ok = true;
    for (const GenericParamInfo& g : generics) {
      auto given = request.bindings.find(g.name);
      if (given != request.bindings.end()) {
        const std::string& text = given->second;
        if (g.is_dim()) {
          std::optional<std::int64_t> value = parse_integer(text);
          if (!value || *value < 0) {
            error("E2101", "generic " + quoted(g.name) + " of " + owner + " is a dimension; " + origin + " binds it to " +
                               quoted(text),
                  g.span);
            ok = false;
          } else {
            out.dims[g.name] = *value;
          }
        } else if (g.is_pack()) {
          std::vector<std::int64_t> values;
          std::string_view rest = text;
          while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            std::optional<std::int64_t> value = parse_integer(rest.substr(0, comma));
            if (!value || *value < 0) {
              error("E2101", "shape pack " + quoted(g.name) + " of " + owner + " takes dimensions such as `2,3`; " +
                                 origin + " binds it to " + quoted(text),
                    g.span);
              ok = false;
              break;
            }
            values.push_back(*value);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
          }
          out.packs[g.name] = values;
        } else {
          std::optional<tensor::DType> dtype = tensor::dtype_from_name(text);
          if (!dtype) {
            error("E2101", "generic " + quoted(g.name) + " of " + owner + " is a dtype; " + origin + " binds it to " +
                               quoted(text),
                  g.span);
            ok = false;
          } else if (!satisfies(DTypeRef::of(*dtype), g.kind)) {
            error("E2112", quoted(text) + " is not " + ast::generic_kind_spelling(g.kind) + ", as " + quoted(g.name) +
                               " of " + owner + " requires",
                  g.span)
                .note("bound by " + origin);
            ok = false;
          } else {
            out.dtypes[g.name] = DTypeRef::of(*dtype);
          }
        }
        continue;
      }
      if (g.has_default) {
        const Substitution so_far = out.as_substitution();
        if (g.is_dim()) {
          const EvalResult value = g.default_value.dim.substitute(so_far.dims).evaluate(out.dims);
          if (value.ok()) out.dims[g.name] = value.value;
        } else if (g.is_dtype()) {
          const DTypeRef dtype = substitute(g.default_value.dtype, so_far);
          if (dtype.kind == DTypeRef::Kind::Concrete) out.dtypes[g.name] = dtype;
        } else {
          std::vector<std::int64_t> values;
          for (const ShapeItem& item : g.default_value.pack) {
            const EvalResult value = item.dim.evaluate(out.dims);
            if (value.ok()) values.push_back(value.value);
          }
          out.packs[g.name] = values;
        }
        continue;
      }
      if (required) {
        error("E2110", "generic " + quoted(g.name) + " of " + owner + " has no value", g.span)
            .with_help(request.card ? "bind it: `--bind " + g.name + "=...`, or in the card's [generics] table"
                                    : "bind it: `--bind " + g.name + "=...`");
        ok = false;
      }
    }
    return ok;
  };

  // A `where` clause at concrete values.
  auto check_where = [&](const std::vector<WhereFact>& where, const Bindings& values, const std::string& owner,
                         const std::string& how) -> bool {
    bool ok = true;
    for (const WhereFact& fact : where) {
      // Generics left unbound (an entry's) stay symbolic.
      bool all_bound = true;
      for (const DimExpr* side : {&fact.relation.lhs, &fact.relation.rhs}) {
        for (const std::string& symbol : side->symbols()) all_bound = all_bound && values.count(symbol) > 0;
      }
      if (!all_bound) continue;
      const ConcreteCheck result = fact.relation.check(values);
      if (result.truth == Truth::True) continue;
      if (result.truth == Truth::Undefined) {
        error("E2206", quoted(fact.relation.to_string()) + " of " + owner + " cannot be evaluated: " + result.detail,
              fact.span)
            .note(how);
        ok = false;
        continue;
      }
      error("E2206", "the bindings break " + quoted(fact.relation.to_string()) + ", which " + owner + " requires",
            fact.span)
          .note("at these values it reads `" + std::to_string(result.lhs) + " " +
                std::string(spelling(fact.relation.op)) + " " + std::to_string(result.rhs) + "`")
          .note(how);
      ok = false;
    }
    return ok;
  };

  Instance instance;
  bool ok = true;
  ConcreteArgs root_args;
  if (root) {
    resolve_block(*root);
    resolve_block_members(*root);
    ok = bind(root->generics, root_args, true, quoted(root->name)) && ok;
    if (!ok || !bindings_known) return std::nullopt;
    // Blocks inside restate the root's clause: a binding that breaks it is
    // reported once, at the root.
    if (!check_where(root->where, root_args.dims, quoted(root->name), "bound by " + origin)) return std::nullopt;

    // The block tree, each distinct instance once. Nesting stops where the
    // interpreter's does (it counts each instantiation as a call, at most
    // eval::Options::max_call_depth = 256 deep), so that a chain of
    // thousands of sub-blocks is a diagnostic here too, not a stack overflow.
    constexpr int kMaxBlockDepth = 256;
    std::set<std::string> visited;
    std::function<void(BlockDecl&, const ConcreteArgs&, const std::string&, int)> walk =
        [&](BlockDecl& block, const ConcreteArgs& args, const std::string& path, int depth) {
          if (!visited.insert(block.name + "<" + args.key() + ">").second) return;
          resolve_block_members(block);
          for (const MemberDecl& member : block.members) {
            if (!member.type || member.type->is_error()) continue;
            const std::string member_path = path.empty() ? member.name : path + "." + member.name;
            TypePtr type = member.type;
            if (type->kind == TypeKind::Optional) type = type->elements.front();
            bool is_array = false;
            if (type->kind == TypeKind::BlockArray) {
              const EvalResult length = type->length.evaluate(args.dims);
              if (!length.ok() || length.value < 0) {
                error("E2208", "the array " + quoted(member_path) + " has length " + quoted(type->length.to_string()) +
                                   (length.ok() ? " = " + std::to_string(length.value) : ": " + length.detail),
                      member.item->name.span)
                    .note("bound by " + origin);
                ok = false;
                continue;
              }
              is_array = true;
              type = type->elements.front();
            }
            if (type->kind == TypeKind::Tensor) {
              for (const ShapeItem& item : type->shape) {
                if (item.is_pack()) continue;
                const EvalResult value = item.dim.evaluate(args.dims);
                if (!value.ok() || value.value < 0) {
                  error("E2208", quoted(member_path) + " has dimension " + quoted(item.dim.to_string()) +
                                     (value.ok() ? " = " + std::to_string(value.value) : ": " + value.detail),
                        member.item->name.span)
                      .note("bound by " + origin);
                  ok = false;
                }
              }
              continue;
            }
            if (type->kind != TypeKind::Block) continue;
            BlockDecl& child = *const_cast<BlockDecl*>(type->block);
            ConcreteArgs child_args;
            for (const auto& [name, dim] : type->args.dims) {
              const EvalResult value = dim.evaluate(args.dims);
              if (!value.ok()) {
                error("E2208", "generic " + quoted(name) + " of " + quoted(member_path) + " is " +
                                   quoted(dim.to_string()) + ": " + value.detail,
                      member.item->name.span)
                    .note("bound by " + origin);
                ok = false;
                return;
              }
              child_args.dims[name] = value.value;
            }
            for (const auto& [name, dtype] : type->args.dtypes) {
              child_args.dtypes[name] = substitute(dtype, args.as_substitution());
            }
            for (const auto& [name, pack] : type->args.packs) {
              std::vector<std::int64_t> values;
              for (const ShapeItem& item : substitute(pack, args.as_substitution())) {
                const EvalResult value = item.dim.evaluate(args.dims);
                if (value.ok()) values.push_back(value.value);
              }
              child_args.packs[name] = values;
            }
            ok = check_where(child.where, child_args.dims, quoted(child.name) + " (" + member_path + ")",
                             "bound by " + origin) &&
                 ok;
            if (depth >= kMaxBlockDepth) {
              error("E2119", "blocks nest deeper than " + std::to_string(kMaxBlockDepth) + " levels",
                    member.item->name.span)
                  .note("this member of " + quoted(block.name) + " would be block " + std::to_string(depth + 1) +
                        " below the root; the interpreter instantiates at most " + std::to_string(kMaxBlockDepth));
              ok = false;
              return;
            }
            walk(child, child_args, member_path + (is_array ? "[*]" : ""), depth + 1);
          }
        };
    walk(*root, root_args, "", 1);

    std::string display = scope.name + "::" + root->name;
    if (!root->generics.empty()) {
      display += "<";
      for (std::size_t i = 0; i < root->generics.size(); ++i) {
        const GenericParamInfo& g = root->generics[i];
        if (i > 0) display += ", ";
        display += g.name + " = ";
        if (g.is_dim() && root_args.dims.count(g.name)) display += std::to_string(root_args.dims[g.name]);
        if (g.is_dtype() && root_args.dtypes.count(g.name)) display += root_args.dtypes[g.name].to_string();
        if (g.is_pack() && root_args.packs.count(g.name)) {
          display += "[";
          for (std::size_t k = 0; k < root_args.packs[g.name].size(); ++k) {
            display += (k ? ", " : "") + std::to_string(root_args.packs[g.name][k]);
          }
          display += "]";
        }
      }
      display += ">";
    }
    instance.root = display;
  } else {
    instance.root = scope.name;
  }

  // Entries: the root block's, or the module's own.
  std::vector<FunctionDecl*> entries;
  for (FunctionDecl& function : functions) {
    if (!function.is_entry()) continue;
    if (root ? function.block != root : (function.module != &scope || function.block != nullptr)) continue;
    if (!request.entry.empty() && function.name != request.entry) continue;
    entries.push_back(&function);
  }
  if (!request.entry.empty() && entries.empty()) {
    std::vector<std::string> entry_names;
    for (const FunctionDecl& function : functions) {
      if (!function.is_entry()) continue;
      if (root ? function.block != root : (function.module != &scope || function.block != nullptr)) continue;
      entry_names.push_back(function.name);
    }
    error("E1201", (root ? quoted(root->name) : "module " + quoted(scope.name)) + " has no entry " +
                       quoted(request.entry) + syntax::did_you_mean_or_list(request.entry, entry_names, "entry", "entries"),
          Span{});
    return std::nullopt;
  }
  for (FunctionDecl* entry : entries) {
    resolve_function(*entry);
    ConcreteArgs args = root_args;
    const std::string owner = quoted(entry->qualified_name());
    ok = bind(entry->generics, args, false, owner) && ok;
    ok = check_where(entry->where, args.dims, owner, "bound by " + origin) && ok;
    Substitution dtypes_and_packs = args.as_substitution();
    dtypes_and_packs.dims.clear();
    bool concrete = true;
    std::string text = "entry " + entry->name;
    std::vector<std::string> unbound;
    for (const GenericParamInfo& g : entry->generics) {
      const bool bound = g.is_dim() ? args.dims.count(g.name) > 0
                         : g.is_pack() ? args.packs.count(g.name) > 0
                                       : args.dtypes.count(g.name) > 0;
      if (!bound) unbound.push_back(g.is_pack() ? "*" + g.name : g.name);
    }
    if (!unbound.empty()) {
      text += "<";
      for (std::size_t i = 0; i < unbound.size(); ++i) text += (i ? ", " : "") + unbound[i];
      text += ">";
      concrete = false;
    }
    text += "(";
    for (std::size_t i = 0; i < entry->params.size(); ++i) {
      if (i > 0) text += ", ";
      text += entry->params[i].name + ": " +
              concrete_type(substitute(entry->params[i].type, dtypes_and_packs), args.dims, concrete);
    }
    text += ")";
    if (entry->result && entry->result->kind != TypeKind::Unit) {
      text += " -> " + concrete_type(substitute(entry->result, dtypes_and_packs), args.dims, concrete);
    }
    instance.entries.push_back({entry->name, text, concrete});
  }
  if (!ok) return std::nullopt;
  return instance;
}

}  // namespace linnet::check
