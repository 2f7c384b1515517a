// The root block of a card and the values bound to its generics.
#include "linnet/nest/generics.hpp"

#include <charconv>
#include <set>

#include "linnet/eval/error.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::nest {

namespace ast = syntax::ast;

namespace {

bool is_dtype_kind(ast::GenericKind kind) {
  return kind == ast::GenericKind::DType || kind == ast::GenericKind::Numeric ||
         kind == ast::GenericKind::Integer || kind == ast::GenericKind::Float;
}

bool wants_shape(const ast::GenericParam& declared) {
  return declared.is_pack || declared.constraint == ast::GenericKind::Shape;
}

bool satisfies(ast::GenericKind constraint, tensor::DType dtype) {
  switch (constraint) {
    case ast::GenericKind::Float: return tensor::is_float(dtype);
    case ast::GenericKind::Integer: return tensor::is_integer(dtype);
    case ast::GenericKind::Numeric: return dtype != tensor::DType::Bool;
    default: return true;
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<int64_t> parse_dimension(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// "2,3", "[2, 3]", "" or "[]".
std::optional<tensor::Shape> parse_shape(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '[') {
    if (text.back() != ']') return std::nullopt;
    text = trim(text.substr(1, text.size() - 2));
  }
  tensor::Shape dims;
  if (text.empty()) return dims;
  while (true) {
    const size_t comma = text.find(',');
    const std::optional<int64_t> dim = parse_dimension(text.substr(0, comma));
    if (!dim) return std::nullopt;
    dims.push_back(*dim);
    if (comma == std::string_view::npos) return dims;
    text = text.substr(comma + 1);
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// "Vocab, H, ..., T = bf16" for messages.
std::string describe_generics(const std::vector<ast::GenericParam>& generics) {
  std::vector<std::string> names;
  for (const ast::GenericParam& generic : generics) names.push_back((generic.is_pack ? "*" : "") + generic.name.text);
  return join(names);
}

}  // namespace

const ast::FunctionItem* RootBlock::entry(std::string_view name) const {
  for (const ast::FunctionItem* item : entries) {
    if (item->name.text == name) return item;
  }
  return nullptr;
}

std::vector<std::string> RootBlock::entry_names() const {
  std::vector<std::string> names;
  for (const ast::FunctionItem* item : entries) names.push_back(item->name.text);
  return names;
}

const ast::GenericParam* RootBlock::generic(std::string_view name) const {
  if (block == nullptr) return nullptr;
  for (const ast::GenericParam& generic : block->generics) {
    if (generic.name.text == name) return &generic;
  }
  return nullptr;
}

std::optional<RootBlock> find_root_block(const syntax::Program& program, const std::string& name, std::string& why) {
  std::string module_name;
  std::string block_name = name;
  if (const size_t separator = name.rfind("::"); separator != std::string::npos) {
    module_name = name.substr(0, separator);
    block_name = name.substr(separator + 2);
  }
  // The requested modules first (the card's own), then every module.
  for (const bool requested_only : {true, false}) {
    std::vector<RootBlock> matches;
    for (const auto& module : program.modules()) {
      if (requested_only && !module->requested) continue;
      if (!module_name.empty() && module->name != module_name) continue;
      auto found = module->items.find(block_name);
      if (found == module->items.end()) continue;
      const auto* block = found->second->as<ast::BlockItem>();
      if (block == nullptr) continue;
      RootBlock root;
      root.module = module.get();
      root.block = block;
      root.qualified_name = module->name.empty() ? block_name : module->name + "::" + block_name;
      for (const ast::ItemPtr& member : block->members) {
        const auto* function = member->as<ast::FunctionItem>();
        if (function != nullptr && function->function == ast::FunctionKind::Entry) root.entries.push_back(function);
      }
      matches.push_back(std::move(root));
    }
    if (matches.size() == 1) return matches.front();
    if (matches.size() > 1) {
      std::vector<std::string> names;
      for (const RootBlock& match : matches) names.push_back("`" + match.qualified_name + "`");
      why = "the block name `" + name + "` is ambiguous: " + join(names) + "; name it as module::" + block_name;
      return std::nullopt;
    }
  }
  // A misspelled root: the nearest block name among the program's modules.
  std::vector<std::string> block_names;
  for (const auto& module : program.modules()) {
    if (!module_name.empty() && module->name != module_name) continue;
    for (const auto& [item_name, item] : module->items) {
      if (item != nullptr && item->as<ast::BlockItem>() != nullptr) block_names.push_back(item_name);
    }
  }
  why = "the program declares no block `" + name + "`" + syntax::did_you_mean(block_name, block_names);
  return std::nullopt;
}

std::optional<RootBlock> find_module_entries(const syntax::Program& program, std::string& why) {
  RootBlock root;
  std::vector<std::string> module_names;
  std::vector<std::string> blocks_with_entries;
  for (const auto& module : program.modules()) {
    if (!module->requested) continue;
    module_names.push_back(module->name);
    if (root.module == nullptr) root.module = module.get();
    for (const ast::ItemPtr& item : module->ast->items) {
      if (const auto* function = item->as<ast::FunctionItem>()) {
        if (function->function != ast::FunctionKind::Entry) continue;
        root.entries.push_back(function);
        root.entry_functions.push_back(module->name.empty() ? function->name.text
                                                             : module->name + "::" + function->name.text);
      } else if (const auto* block = item->as<ast::BlockItem>()) {
        std::vector<std::string> entries;
        for (const ast::ItemPtr& member : block->members) {
          const auto* function = member->as<ast::FunctionItem>();
          if (function != nullptr && function->function == ast::FunctionKind::Entry) {
            entries.push_back(function->name.text);
          }
        }
        if (!entries.empty()) blocks_with_entries.push_back(block->name.text + " (" + join(entries) + ")");
      }
    }
  }
  root.qualified_name = join(module_names);
  if (!root.entries.empty()) return root;
  why = "the program has no module-level entries";
  if (!blocks_with_entries.empty()) {
    why += blocks_with_entries.size() == 1
               ? "; its block with entries is " + blocks_with_entries.front() + ": name it with --root BLOCK"
               : "; its blocks with entries are " + join(blocks_with_entries) + ": name one with --root BLOCK";
  }
  return std::nullopt;
}

std::string BindArgument::origin() const {
  if (from.empty()) return "`--bind " + name + "=" + value + "`";
  return "`" + name + "=" + value + "` from " + from;
}

std::optional<BindArgument> parse_bind_argument(std::string_view text) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  const std::string_view name = trim(text.substr(0, equals));
  if (name.empty()) return std::nullopt;
  return BindArgument{std::string(name), std::string(trim(text.substr(equals + 1))), ""};
}

const char* generic_value_kind(const ast::GenericParam& declared) {
  if (wants_shape(declared)) return "shape";
  if (is_dtype_kind(declared.constraint)) return "dtype";
  return "dimension";
}

std::optional<eval::GenericValue> parse_generic_value(std::string_view text, const ast::GenericParam& declared,
                                                      std::string& why) {
  if (wants_shape(declared)) {
    if (std::optional<tensor::Shape> shape = parse_shape(text)) return eval::GenericValue::of_shape(*shape);
    why = "a shape is a list of non-negative integers: `2,3`, `[2, 3]`, or nothing for none";
    return std::nullopt;
  }
  const std::optional<tensor::DType> dtype = tensor::dtype_from_name(trim(text));
  if (is_dtype_kind(declared.constraint)) {
    if (!dtype) {
      why = "a dtype is one of bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64";
      return std::nullopt;
    }
    if (!satisfies(declared.constraint, *dtype)) {
      why = "`" + std::string(trim(text)) + "` does not satisfy the constraint `" + declared.constraint_name.text + "`";
      return std::nullopt;
    }
    return eval::GenericValue::of_dtype(*dtype);
  }
  if (std::optional<int64_t> dim = parse_dimension(text)) return eval::GenericValue::of_dim(*dim);
  // An unconstrained generic takes whatever the text spells.
  if (declared.constraint == ast::GenericKind::Unknown && dtype) return eval::GenericValue::of_dtype(*dtype);
  why = "a dimension is a non-negative integer";
  return std::nullopt;
}

std::optional<BoundGenerics> bind_generics(const RootBlock& root, const Card& card,
                                           const std::vector<BindArgument>& binds, syntax::Diagnostics& diagnostics) {
  const size_t errors_before = diagnostics.error_count();
  BoundGenerics bound;
  const std::string& block_name = root.qualified_name;

  // A value must be of the kind the generic is declared as.
  auto kind_matches = [](const ast::GenericParam& declared, const eval::GenericValue& value) {
    if (wants_shape(declared)) return value.kind == eval::GenericValue::Kind::Shape;
    if (is_dtype_kind(declared.constraint)) {
      return value.kind == eval::GenericValue::Kind::DType && satisfies(declared.constraint, value.dtype);
    }
    if (declared.constraint == ast::GenericKind::Dim) return value.kind == eval::GenericValue::Kind::Dim;
    return value.kind != eval::GenericValue::Kind::Shape;
  };

  // Every generic name a binding may use, for "did you mean".
  std::vector<std::string> known_names;
  if (root.block != nullptr) {
    for (const ast::GenericParam& generic : root.block->generics) known_names.push_back(generic.name.text);
  }
  std::vector<std::string> bindable_names = known_names;
  for (const ast::FunctionItem* entry : root.entries) {
    for (const ast::GenericParam& generic : entry->generics) bindable_names.push_back(generic.name.text);
  }

  for (const CardSetting& setting : card.generics) {
    const ast::GenericParam* declared = root.generic(setting.name);
    if (declared == nullptr) {
      syntax::Diagnostic& error = diagnostics.error(
          eval::codes::bad_generic_arguments,
          "nest.toml binds `" + setting.name + "`, which is not a generic of `" + block_name + "`" +
              syntax::did_you_mean(setting.name, known_names),
          setting.span);
      if (root.block != nullptr) {
        error.note("`" + block_name + "` has generics " + describe_generics(root.block->generics));
      }
      continue;
    }
    if (!kind_matches(*declared, setting.value)) {
      diagnostics.error(eval::codes::bad_generic_arguments,
                        "nest.toml gives `" + setting.name + "` the value " + setting.value.to_string() +
                            ", which is not a " + generic_value_kind(*declared),
                        setting.span);
      continue;
    }
    bound.model[setting.name] = setting.value;
  }

  for (const BindArgument& bind : binds) {
    const ast::GenericParam* declared = root.generic(bind.name);
    bool for_entry = false;
    if (declared == nullptr) {
      // A generic of some entry (the same name in two entries must be of one kind).
      for (const ast::FunctionItem* entry : root.entries) {
        for (const ast::GenericParam& generic : entry->generics) {
          if (generic.name.text == bind.name && declared == nullptr) declared = &generic;
        }
      }
      for_entry = declared != nullptr;
    }
    if (declared == nullptr) {
      syntax::Diagnostic& error = diagnostics.error(
          eval::codes::bad_generic_arguments,
          bind.origin() + ": `" + block_name + "` has no generic `" + bind.name + "`" +
              syntax::did_you_mean(bind.name, bindable_names),
          syntax::Span{});
      if (root.block != nullptr) {
        error.note("`" + block_name + "` has generics " + describe_generics(root.block->generics));
      }
      std::set<std::string> entry_generics;
      for (const ast::FunctionItem* entry : root.entries) {
        for (const ast::GenericParam& generic : entry->generics) entry_generics.insert(generic.name.text);
      }
      if (!entry_generics.empty()) {
        error.note(std::string(entry_generics.size() == 1 ? "its entries have the generic " : "its entries have generics ") +
                   join({entry_generics.begin(), entry_generics.end()}));
      }
      continue;
    }
    std::string why;
    std::optional<eval::GenericValue> value = parse_generic_value(bind.value, *declared, why);
    if (!value) {
      diagnostics
          .error(eval::codes::bad_generic_arguments,
                 bind.origin() + ": `" + bind.value + "` is not a " +
                     generic_value_kind(*declared) + " for `" + bind.name + "`",
                 syntax::Span{})
          .note(why);
      continue;
    }
    (for_entry ? bound.entry : bound.model)[bind.name] = *value;
  }

  std::vector<std::string> missing;
  const std::vector<ast::GenericParam> no_generics;
  for (const ast::GenericParam& generic : root.block != nullptr ? root.block->generics : no_generics) {
    if (!generic.default_value && bound.model.count(generic.name.text) == 0) missing.push_back(generic.name.text);
  }
  if (!missing.empty()) {
    std::string binds_hint;
    for (const std::string& name : missing) binds_hint += " --bind " + name + "=...";
    diagnostics
        .error(eval::codes::bad_generic_arguments,
               "`" + block_name + "` needs a value for " + (missing.size() == 1 ? "generic `" : "generics `") +
                   join(missing) + "`",
               syntax::Span{})
        .note(card.manifest_file != 0
                  ? "neither nest.toml's [generics] nor --bind gives one, and the block declares no default"
                  : "no --bind gives one, and the block declares no default")
        .with_help("pass" + binds_hint);
  }
  if (diagnostics.error_count() > errors_before) return std::nullopt;
  return bound;
}

}  // namespace linnet::nest
