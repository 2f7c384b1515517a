// `linnet explain CARD|FILE [--entry E] [--root R] [--bind K=V]... [--numerics P]`:
// every op call site the entry reaches, with the op, its dtype there, and
// whether the native kernel or the body runs under the numerics policy, and
// why (src/ops/explain.cpp does the walk; docs/ops.md describes the table).
//
// A CARD is a directory with nest.toml: its root block, entry, [generics]
// and [check] sizes are the defaults. A FILE is a .linnet file (or a package
// directory): --entry names a function, or a block's method as
// `Block.method`, and --bind gives the generics.
//
// The program is checked first, as `check` checks it: a program `check`
// rejects is rejected here with the same diagnostics. --strict makes the
// card's warnings errors and fails on the checker's lints, as everywhere.
//
// Exit status: 0 success; 1 a problem with the card or the program; 2 a bad
// command line.
#include <filesystem>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/nest/card_loader.hpp"
#include "linnet/syntax/suggest.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/nest/program_check.hpp"
#include "linnet/ops/explain.hpp"
#include "linnet/ops/op_table.hpp"
#include "device_option.hpp"
#include "option_checks.hpp"
#include "run_support.hpp"

namespace linnet::cli {

namespace {

namespace ast = syntax::ast;

struct ExplainOptions {
  std::string target;
  std::string entry;
  std::string root;
  std::vector<std::string> binds;
  std::string numerics = "exact";
  std::string device = "cpu";
  bool strict = false;  // --strict: the card's and the checker's warnings fail the command
  std::string bind_from;  // --bind-from FILE: a card's generics, before --bind
};

eval::NumericsPolicy policy_named(const std::string& name) {
  if (name == "fast") return eval::NumericsPolicy::Fast;
  if (name == "equivalent") return eval::NumericsPolicy::Equivalent;
  return eval::NumericsPolicy::Exact;
}

// A method of `block` by name (entries and fns alike), or nullptr.
const ast::FunctionItem* method_named(const ast::BlockItem& block, const std::string& name) {
  for (const auto& member : block.members) {
    if (const auto* function = member->as<ast::FunctionItem>(); function && function->name.text == name) return function;
  }
  return nullptr;
}

// The parsed --bind arguments; nothing (after printing why) on a malformed one.
std::optional<std::vector<nest::BindArgument>> parse_binds(const std::vector<std::string>& texts) {
  std::vector<nest::BindArgument> binds;
  for (const std::string& text : texts) {
    auto bind = nest::parse_bind_argument(text);
    if (!bind) {
      std::cerr << "error: `--bind " << text << "` is not of the form NAME=VALUE\n";
      return std::nullopt;
    }
    binds.push_back(*bind);
  }
  return binds;
}

// The program a target names, with the sources its spans point into.
struct LoadedSources {
  std::unique_ptr<syntax::SourceManager> sources;
  std::unique_ptr<syntax::Program> program;
};

// Loads `target` with the standard library; prints the diagnostics (and
// returns nothing) when that fails.
std::optional<LoadedSources> load(const std::string& target, const CommandContext& context,
                                  std::unique_ptr<syntax::SourceManager> sources = nullptr) {
  LoadedSources loaded;
  loaded.sources = sources ? std::move(sources) : std::make_unique<syntax::SourceManager>();
  syntax::Diagnostics diagnostics;
  syntax::LoadOptions load_options;
  load_options.inputs = {target};
  load_options.std_dir = context.std_dir;
  loaded.program = syntax::load_program(*loaded.sources, load_options, diagnostics);
  if (!diagnostics.all().empty()) std::cerr << syntax::render_text(diagnostics, *loaded.sources);
  if (!loaded.program || diagnostics.has_errors()) return std::nullopt;
  return loaded;
}

// The static checker as `check` runs it (nest/program_check.hpp, shared
// with run, generate, validate and inspect): explain lists only programs
// `check` accepts, and refuses the others with check's own diagnostics
// (code, message, position) and exit status 1. A card is checked at the
// generics explain uses (`binds`); a file generically, as `check FILE`.
int check_status(const LoadedSources& loaded, const ExplainOptions& options, const std::string& root,
                 const std::vector<std::string>& binds, const std::vector<std::string>& binds_origins) {
  syntax::Diagnostics diagnostics;
  nest::ProgramCheckRequest request;
  request.target = options.target;
  request.root = root;
  request.binds = binds;
  request.binds_origins = binds_origins;
  request.strict = options.strict;
  const nest::ProgramCheck checked = nest::check_program(*loaded.program, *loaded.sources, diagnostics, request);
  if (!diagnostics.all().empty()) std::cerr << syntax::render_text(diagnostics, *loaded.sources);
  switch (checked) {
    case nest::ProgramCheck::Passed:
      return 0;
    case nest::ProgramCheck::Failed:
      return 1;
    case nest::ProgramCheck::BadRequest:
      return 2;
  }
  return 1;
}

int print_explanation(ops::ExplainRequest request, const std::string& numerics, const std::string& device_name) {
  // The device's table answers from its registrations: no GPU is needed.
  const std::optional<nest::Device> device = usable_device(device_name, /*need_hardware=*/false);
  if (!device) return 1;
  const std::shared_ptr<const ops::OpTable> table = nest::op_table_for(*device);
  request.table = table.get();
  request.policy = policy_named(numerics);
  std::cout << ops::render_explanation(ops::explain_entry(request));
  return 0;
}

int explain_card(const ExplainOptions& options, const CommandContext& context) {
  if (!parse_binds(options.binds)) return 2;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  // The card reader every command shares (card_loader.hpp), before the
  // program: a nest.toml it cannot read is then E5001 at its position, as
  // in run and check, not the source loader's bare "cannot read".
  auto sources = std::make_unique<syntax::SourceManager>();
  syntax::Diagnostics card_diagnostics;
  const std::optional<nest::CardFiles> files =
      nest::read_card_files(options.target, *sources, card_diagnostics, options.strict);
  if (!files) {
    std::cerr << syntax::render_text(card_diagnostics, *sources);
    return 1;
  }
  const std::optional<LoadedSources> loaded = load(options.target, context, std::move(sources));
  if (!loaded) return 1;
  std::optional<nest::ResolvedCard> resolved =
      nest::resolve_card(files->card, *loaded->program, options.binds, card_diagnostics, options.root, options.entry,
                         options.bind_from, {}, options.strict);
  if (!resolved) {
    std::cerr << syntax::render_text(card_diagnostics, *loaded->sources);
    return 1;
  }
  {
    // Warnings of the card (an unknown nest.toml key, a bindings.json key
    // that names no parameter) are said here too, as by every command.
    eval::Interpreter lister(*loaded->program, *loaded->sources);
    for (syntax::Diagnostic& finding : nest::audit_card_binding_paths(
             files->card, files->bindings, resolved->root, resolved->generics.model, lister, nullptr, options.strict)) {
      card_diagnostics.add(std::move(finding));
    }
    if (!card_diagnostics.all().empty()) std::cerr << syntax::render_text(card_diagnostics, *loaded->sources);
    if (card_diagnostics.has_errors()) return 1;  // under --strict
  }
  if (int status = check_status(*loaded, options, options.root, resolved->bind_texts, resolved->bind_origins); status != 0) return status;
  const nest::Card* card = &files->card;
  const nest::RootBlock* root = &resolved->root;
  const nest::BoundGenerics* bound = &resolved->generics;
  const std::string entry_name = options.entry.empty() ? card->entry : options.entry;
  if (entry_name.empty()) {
    std::cerr << "error: nest.toml names no [source] entry; pass --entry NAME\n";
    return 2;
  }
  const ast::FunctionItem* entry = method_named(*root->block, entry_name);
  if (entry == nullptr) {
    std::cerr << "error: --entry `" << entry_name << "`: `" << root->qualified_name << "` has no entry or method `"
              << entry_name << "`" << syntax::did_you_mean(entry_name, root->entry_names()) << "\n";
    return 2;
  }

  ops::ExplainRequest request;
  request.program = loaded->program.get();
  request.sources = loaded->sources.get();
  request.module = root->module;
  request.block = root->block;
  request.entry = entry;
  request.generics = bound->model;
  // The entry's own generics: the card's [check] sizes, then --bind.
  for (const ast::GenericParam& generic : entry->generics) {
    for (const nest::CardSetting& check : card->check) {
      if (check.name == generic.name.text) request.generics[check.name] = check.value;
    }
    if (auto given = bound->entry.find(generic.name.text); given != bound->entry.end()) {
      request.generics[given->first] = given->second;
    }
  }
  return print_explanation(std::move(request), options.numerics, options.device);
}

int explain_file(const ExplainOptions& options, const CommandContext& context) {
  if (options.entry.empty()) {
    std::cerr << "error: explaining a file needs --entry FUNCTION or --entry Block.method\n";
    return 2;
  }
  const size_t dot = options.entry.find('.');
  if (dot != std::string::npos && (dot == 0 || dot + 1 == options.entry.size() ||
                                   options.entry.find('.', dot + 1) != std::string::npos)) {
    std::cerr << "error: --entry `" << options.entry << "` is neither FUNCTION nor Block.method\n";
    return 2;
  }
  if (!options.bind_from.empty()) {
    std::cerr << "error: --bind-from takes a card's generics; `" << options.target << "` is no card directory\n";
    return 2;
  }
  const std::optional<LoadedSources> loaded = load(options.target, context);
  if (!loaded) return 1;
  if (int status = check_status(*loaded, options, "", {}, {}); status != 0) return status;
  // `--entry Block.method`, or `--root Block --entry method`, as for a card.
  const std::string owner = dot == std::string::npos ? options.root : options.entry.substr(0, dot);
  const std::string name = dot == std::string::npos ? options.entry : options.entry.substr(dot + 1);

  ops::ExplainRequest request;
  request.program = loaded->program.get();
  request.sources = loaded->sources.get();
  for (const auto& module : loaded->program->modules()) {
    if (!module->requested) continue;
    const auto found = module->items.find(owner.empty() ? name : owner);
    if (found == module->items.end()) continue;
    if (owner.empty()) {
      request.entry = found->second->as<ast::FunctionItem>();
    } else if (const auto* block = found->second->as<ast::BlockItem>()) {
      request.block = block;
      request.entry = method_named(*block, name);
    }
    if (request.entry != nullptr) {
      request.module = module.get();
      break;
    }
  }
  if (request.entry == nullptr) {
    std::cerr << "error: no function or block method `" << options.entry << "` in `" << options.target << "`\n";
    return 2;
  }

  // --bind values are read by the kind each generic is declared as.
  std::vector<const ast::GenericParam*> declared;
  if (request.block) {
    for (const auto& generic : request.block->generics) declared.push_back(&generic);
  }
  for (const auto& generic : request.entry->generics) declared.push_back(&generic);
  const std::optional<std::vector<nest::BindArgument>> binds = parse_binds(options.binds);
  if (!binds) return 2;
  for (const nest::BindArgument& bind : *binds) {
    const ast::GenericParam* generic = nullptr;
    for (const ast::GenericParam* candidate : declared) {
      if (candidate->name.text == bind.name) generic = candidate;
    }
    if (generic == nullptr) {
      // As for a card (E2111, exit 1): a generic the program lacks is a problem with the input.
      std::vector<std::string> names;
      for (const ast::GenericParam* candidate : declared) names.push_back(candidate->name.text);
      std::cerr << "error E2111: `--bind " << bind.name << "=" << bind.value << "`: `" << options.entry
                << "` has no generic `" << bind.name << "`" << syntax::did_you_mean(bind.name, names) << "\n";
      return 1;
    }
    std::string why;
    const std::optional<eval::GenericValue> value = nest::parse_generic_value(bind.value, *generic, why);
    if (!value) {
      std::cerr << "error: --bind " << bind.name << "=" << bind.value << ": " << why << "\n";
      return 2;
    }
    request.generics[bind.name] = *value;
  }
  return print_explanation(std::move(request), options.numerics, options.device);
}

int run_explain(const ExplainOptions& options, const CommandContext& context) {
  std::error_code ec;
  const std::filesystem::path target(options.target);
  if (std::filesystem::is_directory(target, ec) && std::filesystem::exists(target / "nest.toml", ec)) {
    return explain_card(options, context);
  }
  const std::string problem =
      syntax::path_problem_text(syntax::path_problem(options.target, syntax::PathUse::FileOrDirectory));
  if (problem.empty()) return explain_file(options, context);
  std::cerr << "error: `" << options.target << "` " << problem << "\n";
  return 2;
}

}  // namespace

void add_explain_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* command = app.add_subcommand(
      "explain", "list the op call sites an entry reaches and whether each runs natively or as its body");
  command->add_option("target", options->target, "a card directory (with nest.toml) or a .linnet file")->required();
  command->add_option("--entry", options->entry, "the entry (a card's default: [source] entry); Block.method for a file")
      ->check(not_empty());
  command->add_option("--root", options->root, "the root block of a card (default: [source] root)")
      ->check(not_empty());
  command->add_option("--bind", options->binds, "a generic's value, NAME=VALUE (dtypes by name, packs S=2,3); repeatable")
      ->allow_extra_args(false);
  command->add_option("--numerics", options->numerics, "exact (default), equivalent or fast")
      ->check(CLI::IsMember({"exact", "equivalent", "fast"}));
  add_device_option(*command, options->device);
  add_strict_option(*command, options->strict);
  add_bind_from_option(*command, options->bind_from);
  command->callback([options, &context]() { context.exit_code = run_explain(*options, context); });
}

}  // namespace linnet::cli
