// `linnet check` after loading: generic checking, then each card (or the
// `--root`/`--bind` request) instantiated concretely, then lints.
#include "gcc_workarounds.hpp"  // first: see the file

#include "linnet/check/driver.hpp"

#include <filesystem>
#include <iostream>
#include <sstream>

#include <toml++/toml.h>

#include "linnet/syntax/suggest.hpp"

namespace linnet::check {

namespace fs = std::filesystem;

namespace {

// A [generics] or [check] value as `--bind` would write it.
std::optional<std::string> binding_text(const toml::node& node) {
  if (const auto* integer = node.as_integer()) return std::to_string(integer->get());
  if (const auto* text = node.as_string()) return text->get();
  if (const auto* array = node.as_array()) {
    std::string out;
    for (const toml::node& element : *array) {
      const auto* integer = element.as_integer();
      if (!integer) return std::nullopt;
      out += (out.empty() ? "" : ",") + std::to_string(integer->get());
    }
    return out;
  }
  return std::nullopt;
}

bool read_table(const toml::table& root, std::string_view name, std::map<std::string, std::string, std::less<>>& out,
                std::string& error) {
  const toml::table* table = root[name].as_table();
  if (!table) return true;
  for (const auto& [key, value] : *table) {
    std::optional<std::string> text = binding_text(value);
    if (!text) {
      error = "[" + std::string(name) + "] `" + std::string(key.str()) +
              "` must be an integer, a dtype name, or an array of integers";
      return false;
    }
    out[std::string(key.str())] = *text;
  }
  return true;
}

std::string canonical_string(const fs::path& path) {
  std::error_code ec;
  const fs::path result = fs::weakly_canonical(path, ec);
  return (ec ? path.lexically_normal() : result).string();
}

}  // namespace

bool is_card_directory(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(fs::path(dir) / "nest.toml", ec);
}

std::optional<CardConfig> read_card(const std::string& dir, std::string& error) {
  const std::string manifest = (fs::path(dir) / "nest.toml").string();
  toml::table table;
  try {
    table = toml::parse_file(manifest);
  } catch (const toml::parse_error& e) {
    error = "`" + manifest + "` is not valid TOML: " + std::string(e.description());
    return std::nullopt;
  }
  CardConfig card;
  card.dir = dir;
  card.source = table["source"]["path"].value_or(std::string());
  card.root = table["source"]["root"].value_or(std::string());
  card.entry = table["source"]["entry"].value_or(std::string());
  if (card.source.empty()) {
    error = "`" + manifest + "` has no [source] `path`";
    return std::nullopt;
  }
  if (!read_table(table, "generics", card.generics, error) || !read_table(table, "check", card.check, error)) {
    error = "`" + manifest + "`: " + error;
    return std::nullopt;
  }
  return card;
}

namespace {

// "the card's nest.toml", then where the bindings came from: "the card's
// nest.toml and --bind", "the card's nest.toml, `--bind-from F` and --bind".
std::string bindings_origin(bool no_bindings, const std::vector<std::string>& origins) {
  std::vector<std::string> parts{"the card's nest.toml"};
  if (!no_bindings) {
    if (origins.empty()) parts.push_back("--bind");
    parts.insert(parts.end(), origins.begin(), origins.end());
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += i + 1 == parts.size() ? " and " : ", ";
    text += parts[i];
  }
  return text;
}

}  // namespace

DriverResult run_check(const syntax::Program& program, const syntax::SourceManager& sources,
                       syntax::Diagnostics& diagnostics, const std::vector<std::string>& inputs,
                       const DriverOptions& options) {
  DriverResult result;
  std::map<std::string, std::string, std::less<>> bound;
  for (const std::string& binding : options.bindings) {
    const std::size_t equals = binding.find('=');
    if (equals == std::string::npos || equals == 0) {
      std::cerr << "error: `--bind " << binding << "`: write `--bind NAME=VALUE`\n";
      result.bad_request = true;
      return result;
    }
    bound[binding.substr(0, equals)] = binding.substr(equals + 1);
  }

  Checker checker(program, sources, diagnostics);
  checker.set_verbose(options.verbose);
  checker.check();
  result.functions_checked = checker.functions_checked();
  if (diagnostics.has_errors()) return result;

  bool any_card = false;
  for (const std::string& input : inputs) {
    if (!is_card_directory(input)) continue;
    any_card = true;
    std::string error;
    std::optional<CardConfig> card = read_card(input, error);
    if (!card) {
      std::cerr << "error: " << error << '\n';
      result.bad_request = true;
      return result;
    }
    const syntax::Module* module = program.module_at(canonical_string(fs::path(input) / card->source));
    if (!module) continue;
    InstantiateRequest request;
    request.module = module;
    request.root = options.root.empty() ? card->root : options.root;
    request.entry = options.entry;
    request.bindings = card->generics;
    for (const auto& [name, value] : card->check) request.bindings[name] = value;
    for (const auto& [name, value] : bound) request.bindings[name] = value;
    request.origin = bindings_origin(bound.empty(), options.bindings_origins);
    request.card = true;
    if (std::optional<Instance> instance = checker.instantiate(request)) result.instances.push_back(std::move(*instance));
  }
  if (!any_card && (!options.root.empty() || !bound.empty() || !options.entry.empty())) {
    // The requested module: the first one asked for that declares the root
    // block (or, without --root, the first with entries).
    const syntax::Module* chosen = nullptr;
    auto is_entry = [](const syntax::ast::Item* item) {
      const auto* function = item ? item->as<syntax::ast::FunctionItem>() : nullptr;
      return function && function->function == syntax::ast::FunctionKind::Entry;
    };
    for (const auto& module : program.modules()) {
      if (chosen) break;
      if (!module->requested || !module->ast) continue;
      for (const auto& item : module->ast->items) {
        if (!item) continue;
        if (const auto* block = item->as<syntax::ast::BlockItem>()) {
          bool has_entry = false;
          for (const auto& member : block->members) has_entry = has_entry || is_entry(member.get());
          if (options.root.empty() ? has_entry : block->name.text == options.root) chosen = module.get();
        } else if (options.root.empty() && is_entry(item.get())) {
          chosen = module.get();
        }
      }
    }
    if (!chosen) {
      std::vector<std::string> block_names;
      for (const auto& module : program.modules()) {
        if (!module->requested || !module->ast) continue;
        for (const auto& item : module->ast->items) {
          if (item && item->as<syntax::ast::BlockItem>()) block_names.push_back(item->name.text);
        }
      }
      diagnostics.error("E1201",
                        options.root.empty() ? "no module given declares a block or an entry to instantiate"
                                             : "no module given declares a block `" + options.root + "`" +
                                                   syntax::did_you_mean(options.root, block_names),
                        syntax::Span{});
      return result;
    }
    InstantiateRequest request;
    request.module = chosen;
    request.root = options.root;
    request.entry = options.entry;
    request.bindings = bound;
    request.origin = "--bind";
    if (std::optional<Instance> instance = checker.instantiate(request)) result.instances.push_back(std::move(*instance));
  }
  if (options.lint && !diagnostics.has_errors()) checker.lint();
  return result;
}

std::string render_instances(const std::vector<Instance>& instances) {
  std::ostringstream out;
  for (const Instance& instance : instances) {
    out << instance.root << '\n';
    for (const EntrySignature& entry : instance.entries) out << "  " << entry.text << '\n';
  }
  return out.str();
}

}  // namespace linnet::check
