// `linnet check [--json] [--strict] [--bind K=V]... [--bind-from FILE] PATH...`: loads every module the paths
// name and every module they import, lexes and parses them, and resolves the
// imports. Static semantics (types and shapes) join this command as the
// checker is written; they run on the same loaded Program.
//
// Diagnostics go to stderr as text, or to stdout as one JSON document with
// --json. Warnings (lints) fail the command only with --strict; lints are
// computed only for error-free programs (spec §12.3), so they never mix with
// errors. Exit status: 0 clean, 1 errors in the input,
// 2 a bad command line (such as a path that does not exist).
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "linnet/check/driver.hpp"
#include "linnet/nest/card_loader.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/suggest.hpp"
#include "run_support.hpp"
#include "option_checks.hpp"

namespace linnet::cli {

namespace {

struct CheckOptions {
  bool json = false;
  bool strict = false;
  std::vector<std::string> paths;
  // Concrete instantiation (the checker's part): --root, --entry, --bind.
  check::DriverOptions instantiate;
  std::string bind_from;  // --bind-from FILE: one card's generics, before --bind
};

// "checked 12 modules: 0 errors, 1 warning".
std::string summary_line(size_t modules, const syntax::Diagnostics& diagnostics) {
  auto count = [](size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); };
  return "checked " + count(modules, "module") + ": " +
         count(diagnostics.error_count() + diagnostics.suppressed(), "error") + ", " +
         count(diagnostics.warning_count(), "warning") + "\n";
}

// The JSON document with the entry signatures the text output shows, one
// string per line, as "signatures" before its closing brace.
std::string with_signatures(std::string json, const std::string& signatures) {
  std::string list = "[";
  size_t start = 0;
  while (start < signatures.size()) {
    size_t end = signatures.find('\n', start);
    if (end == std::string::npos) end = signatures.size();
    list += std::string(list.size() > 1 ? ", " : "") + "\"" + syntax::json_escape(signatures.substr(start, end - start)) +
            "\"";
    start = end + 1;
  }
  list += "]";
  const size_t brace = json.rfind('}');
  if (brace == std::string::npos) return json;
  const size_t last = json.find_last_not_of(" \n", brace - 1);
  return json.substr(0, last + 1) + ",\n  \"signatures\": " + list + "\n}\n";
}

int run_check(const CheckOptions& options, const CommandContext& context) {
  for (const std::string& path : options.paths) {
    // A path that is missing, or that exists but is no file or directory
    // to read (/dev/null, a FIFO, an unreadable file), is a command-line
    // mistake; a FIFO is never opened, so nothing waits on it.
    const std::string problem =
        syntax::path_problem_text(syntax::path_problem(path, syntax::PathUse::FileOrDirectory));
    if (!problem.empty()) {
      std::cerr << "error: `" << path << "` " << problem << "\n";
      return 2;
    }
  }
  if (int status = check_bind_arguments(options.instantiate.bindings); status != 0) return status;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  if (!options.bind_from.empty() && options.paths.size() != 1) {
    // A config.json maps to a root block's generics: one card's.
    std::cerr << "error: --bind-from takes the generics of one card; give one card directory\n";
    return 2;
  }
  // The bindings the checker instantiates at: --bind, or with --bind-from
  // the card's resolved texts (the file's values, then --bind's).
  check::DriverOptions instantiate = options.instantiate;
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  syntax::LoadOptions load;
  load.inputs = options.paths;
  load.std_dir = context.std_dir;
  // Cards are read by the loader every command shares, so that `check`
  // reports a card's defects as `run` does (same code, message, position).
  std::vector<std::pair<std::string, nest::CardFiles>> cards;
  load.inputs.clear();
  for (const std::string& path : options.paths) {
    std::error_code ec;
    // A nest.toml that exists but is no file (a FIFO) is the card reader's to report.
    if (!std::filesystem::exists(std::filesystem::path(path) / "nest.toml", ec)) {
      if (!options.bind_from.empty()) {
        std::cerr << "error: --bind-from takes a card's generics; `" << path << "` is no card directory\n";
        return 2;
      }
      load.inputs.push_back(path);
      continue;
    }
    // A card whose files are defective is reported once, by the card
    // reader, and not loaded again (the loader would repeat it without code).
    if (std::optional<nest::CardFiles> files = nest::read_card_files(path, sources, diagnostics, options.strict)) {
      cards.emplace_back(path, std::move(*files));
      load.inputs.push_back(path);
    }
  }
  const std::unique_ptr<syntax::Program> program =
      load.inputs.empty() ? nullptr : syntax::load_program(sources, load, diagnostics);
  if (program && !diagnostics.has_errors()) {
    for (const auto& [path, files] : cards) {
      std::optional<nest::ResolvedCard> resolved =
          nest::resolve_card(files.card, *program, options.instantiate.bindings, diagnostics, options.instantiate.root,
                             options.instantiate.entry, options.bind_from, {}, options.strict);
      if (resolved && !options.bind_from.empty()) {
        instantiate.bindings = resolved->bind_texts;
        instantiate.bindings_origins = resolved->bind_origins;
      }
      if (resolved) {
        // bindings.json keys that name no parameter, as every command reports them.
        eval::Interpreter lister(*program, sources);
        for (syntax::Diagnostic& finding :
             nest::audit_card_binding_paths(files.card, files.bindings, resolved->root, resolved->generics.model,
                                            lister, nullptr, options.strict)) {
          diagnostics.add(std::move(finding));
        }
      }
      if (resolved && !options.instantiate.entry.empty() && resolved->root.entry(options.instantiate.entry) == nullptr) {
        std::cerr << "error: --entry `" << options.instantiate.entry << "`: `" << resolved->root.qualified_name
                  << "` has no entry `" << options.instantiate.entry << "`"
                  << syntax::did_you_mean(options.instantiate.entry, resolved->root.entry_names()) << '\n';
        return 2;
      }
    }
  }

  // ---- static semantics (src/check): types, shapes, instantiation, lints.
  std::string signatures;
  if (program && !diagnostics.has_errors()) {
    const check::DriverResult checked =
        check::run_check(*program, sources, diagnostics, options.paths, instantiate);
    if (checked.bad_request) return 2;
    signatures = check::render_instances(checked.instances);
  }
  if (!options.json) std::cout << signatures;
  // ---- end of static semantics.

  if (options.json) {
    std::cout << with_signatures(syntax::render_json(diagnostics, sources), signatures);
  } else {
    if (!diagnostics.all().empty() || diagnostics.suppressed() > 0) std::cerr << syntax::render_text(diagnostics, sources);
    std::cerr << summary_line(program ? program->modules().size() : 0, diagnostics);
  }
  if (diagnostics.has_errors() || diagnostics.suppressed() > 0) return 1;
  if (options.strict && diagnostics.warning_count() > 0) return 1;
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check", "check .linnet files, package or card directories, or folders of .linnet files, with their imports");
  command->add_flag("--json", options->json, "print one JSON diagnostics document on stdout instead of text");
  command->add_flag("--strict", options->strict, "fail on warnings too");
  command->add_flag("--verbose", options->instantiate.verbose,
                    "list every fact searched when a shape relation cannot be proved (default: the first three)");
  command->add_option("--root", options->instantiate.root, "the root block to instantiate (default: the card's, or the only block with entries)")
      ->check(not_empty());
  command->add_option("--entry", options->instantiate.entry, "print only this entry's signature")
      ->check(not_empty());
  command->add_option("--bind", options->instantiate.bindings, "a generic's value, NAME=VALUE (packs: S=2,3); repeatable")
      ->allow_extra_args(false);
  add_bind_from_option(*command, options->bind_from);
  command->add_option("paths", options->paths, "files, package or card directories, or folders searched recursively")
      ->required();
  command->callback([options, &context] { context.exit_code = run_check(*options, context); });
}

}  // namespace linnet::cli
