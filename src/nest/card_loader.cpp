// The shared card reader (card_loader.hpp).
#include "linnet/nest/card_loader.hpp"

#include <algorithm>
#include <filesystem>

#include "linnet/eval/error.hpp"
#include "linnet/nest/binding_audit.hpp"
#include "linnet/nest/bind_from.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::nest {

std::optional<CardFiles> read_card_files(const std::string& directory, syntax::SourceManager& sources,
                                         syntax::Diagnostics& diagnostics, bool strict) {
  std::optional<Card> card = read_card(directory, sources, diagnostics, strict);
  if (!card) return std::nullopt;
  CardFiles files{std::move(*card), Bindings()};
  if (files.card.weights && !files.card.weights->bindings.empty()) {
    std::optional<Bindings> bindings =
        read_bindings(files.card.path_of(files.card.weights->bindings), sources, diagnostics);
    if (!bindings) return std::nullopt;
    files.bindings = std::move(*bindings);
  }
  return files;
}

std::optional<ResolvedCard> resolve_card(const Card& card, const syntax::Program& program,
                                         const std::vector<std::string>& binds, syntax::Diagnostics& diagnostics,
                                         const std::string& root_override, const std::string& entry_override,
                                         const std::string& bind_from, const PresetBinds& preset, bool strict) {
  std::string root_name = root_override.empty() ? card.root : root_override;
  // An unqualified root names a block of the card's own source module
  // first: a program loaded from several cards (`check A B`) has a `Model`
  // in each.
  if (root_name.find("::") == std::string::npos && !card.source_path.empty()) {
    std::error_code ec;
    const std::filesystem::path source = std::filesystem::path(card.path_of(card.source_path));
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(source, ec);
    const syntax::Module* module = program.module_at((ec ? source.lexically_normal() : canonical).string());
    if (module != nullptr && !module->name.empty()) {
      auto found = module->items.find(root_name);
      if (found != module->items.end() && found->second->as<syntax::ast::BlockItem>() != nullptr) {
        root_name = module->name + "::" + root_name;
      }
    }
  }
  std::string why;
  std::optional<RootBlock> root = find_root_block(program, root_name, why);
  if (!root) {
    // Where the name came from: nest.toml's [source] root, or --root.
    // (`why` already suggests the nearest block name.)
    if (root_override.empty()) {
      diagnostics.error(codes::invalid_manifest, "[source] root: " + why, card.root_span);
    } else {
      diagnostics.error(codes::invalid_manifest, "--root: " + why, syntax::Span{});
    }
    return std::nullopt;
  }
  if (entry_override.empty() && !card.entry.empty() && root->entry(card.entry) == nullptr) {
    std::string names;
    for (const std::string& name : root->entry_names()) names += (names.empty() ? "" : ", ") + name;
    diagnostics
        .error(codes::invalid_manifest,
               "[source] entry: `" + root->qualified_name + "` has no entry `" + card.entry + "`" +
                   syntax::did_you_mean(card.entry, root->entry_names()),
               card.entry_span)
        .note("its entries are " + (names.empty() ? std::string("none") : names));
    return std::nullopt;
  }
  // [check] names entry generics (`B`, `S`): one that no entry of the root
  // (nor the block) declares is an unknown key, said as nest.toml's others.
  std::vector<std::string> entry_generics;
  for (const syntax::ast::FunctionItem* entry : root->entries) {
    for (const syntax::ast::GenericParam& generic : entry->generics) entry_generics.push_back(generic.name.text);
  }
  // (Only for the card's own root: another --root has other entries.)
  for (const CardSetting& setting : root_override.empty() ? card.check : std::vector<CardSetting>{}) {
    if (root->generic(setting.name) != nullptr ||
        std::find(entry_generics.begin(), entry_generics.end(), setting.name) != entry_generics.end()) {
      continue;
    }
    std::sort(entry_generics.begin(), entry_generics.end());
    entry_generics.erase(std::unique(entry_generics.begin(), entry_generics.end()), entry_generics.end());
    const std::string message = "[check] `" + setting.name + "` is a generic of no entry of `" + root->qualified_name +
                                "`" + syntax::did_you_mean(setting.name, entry_generics);
    if (strict) {
      diagnostics.error(codes::invalid_manifest, message, setting.span);
      return std::nullopt;
    }
    diagnostics.add(syntax::warning(codes::invalid_manifest, message, setting.span)).note("it is ignored");
  }
  // Each text with where it came from (empty: --bind): the preset's first,
  // then --bind-from's, then --bind's, so that the later win.
  std::vector<std::pair<std::string, std::string>> texts;
  for (const std::string& text : preset.texts) texts.emplace_back(text, preset.from);
  if (!bind_from.empty()) {
    std::optional<std::vector<std::string>> from_file = binds_from_file(bind_from, *root, why);
    if (!from_file) {
      diagnostics.error(eval::codes::bad_generic_arguments, "--bind-from: " + why, syntax::Span{});
      return std::nullopt;
    }
    for (const std::string& text : *from_file) texts.emplace_back(text, "`--bind-from " + bind_from + "`");
  }
  for (const std::string& text : binds) texts.emplace_back(text, "");
  std::vector<BindArgument> arguments;
  std::vector<std::string> bind_texts;
  bool malformed = false;
  for (const auto& [text, from] : texts) {
    std::optional<BindArgument> bind = parse_bind_argument(text);
    if (!bind) {
      diagnostics.error(eval::codes::bad_generic_arguments,
                        (from.empty() ? "`--bind " + text + "`" : from + " gives `" + text + "`, which") +
                            " is not of the form NAME=VALUE",
                        syntax::Span{});
      malformed = true;
      continue;
    }
    bind->from = from;
    arguments.push_back(*bind);
    bind_texts.push_back(text);
  }
  std::optional<BoundGenerics> bound = bind_generics(*root, card, arguments, diagnostics);
  if (!bound || malformed) return std::nullopt;
  std::vector<std::string> bind_origins;
  for (const auto& [text, from] : texts) {
    const std::string origin = from.empty() ? "--bind" : from;
    if (std::find(bind_origins.begin(), bind_origins.end(), origin) == bind_origins.end()) {
      bind_origins.push_back(origin);
    }
  }
  return ResolvedCard{std::move(*root), std::move(*bound), std::move(bind_texts), std::move(bind_origins)};
}

std::vector<syntax::Diagnostic> audit_card_binding_paths(const Card& card, const Bindings& bindings,
                                                         const RootBlock& root, const eval::GenericBindings& generics,
                                                         eval::Interpreter& interpreter,
                                                         const std::vector<eval::ParameterInfo>* manifest, bool strict) {
  if (bindings.size() == 0 || root.block == nullptr) return {};
  std::vector<eval::ParameterInfo> listed;
  std::optional<std::vector<eval::ParameterInfo>> published;
  try {
    if (manifest == nullptr) {
      listed = interpreter.parameters(root.qualified_name, generics);
      manifest = &listed;
    }
    // The card's own sizes list every layer bindings.json names, where a
    // run with `--bind Layers=2` lists two.
    syntax::Diagnostics unused;
    if (std::optional<BoundGenerics> own = bind_generics(root, card, {}, unused)) {
      published = own->model == generics ? *manifest : interpreter.parameters(root.qualified_name, own->model);
    }
  } catch (const std::exception&) {
    // A block that cannot be listed is the command's own error to report.
    if (manifest == nullptr) return {};
  }
  return audit_binding_paths(*manifest, published ? &*published : nullptr, bindings, root.qualified_name, strict);
}

}  // namespace linnet::nest
