// `linnet inspect --tokens FILE` and `linnet inspect --ast FILE`: debugging
// views of the lexer's and the parser's output (no stable format). The view
// goes to stdout, diagnostics to stderr; the exit status is 1 when the file
// has lexical or syntax errors. `linnet inspect --parameters CARD` is in
// inspect_parameters.cpp.
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "inspect_parameters.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/lexer.hpp"
#include "linnet/syntax/parser.hpp"
#include "option_checks.hpp"

namespace linnet::cli {

namespace {

struct InspectOptions {
  bool tokens = false;
  bool ast = false;
  std::string file;
};

std::string position(const syntax::SourceFile& file, syntax::Span span) {
  const syntax::LineColumn a = file.line_column(span.begin);
  const syntax::LineColumn b = file.line_column(span.end);
  return std::to_string(a.line) + ":" + std::to_string(a.column) + "-" + std::to_string(b.line) + ":" +
         std::to_string(b.column);
}

// A token's spelling on one line: control characters and line breaks escaped.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int run_inspect(const InspectOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(options.file, ec)) {
    // (It read as an empty file: one `end of file` token and exit 0.)
    std::cerr << "error: `" << options.file << "` is a directory, not a .linnet file\n";
    return 2;
  }
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  std::string error;
  const uint32_t file_id = sources.load(options.file, error);
  if (file_id == 0) {
    std::cerr << "error: " << error << '\n';
    return 2;
  }
  const syntax::SourceFile& file = sources.file(file_id);
  std::ostringstream out;
  if (options.tokens) {
    for (const syntax::Token& token : syntax::tokenize(sources, file_id, diagnostics)) {
      out << std::left << std::setw(16) << position(file, token.span) << std::setw(20)
          << syntax::token_kind_name(token.kind) << printable(token.text) << '\n';
    }
  } else {
    const std::unique_ptr<syntax::ast::File> tree = syntax::parse_file(sources, file_id, diagnostics);
    out << syntax::dump_ast(*tree, sources);
  }
  std::cout << out.str();
  if (!diagnostics.all().empty()) std::cerr << syntax::render_text(diagnostics, sources);
  return diagnostics.has_errors() ? 1 : 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command = app.add_subcommand("inspect", "debugging views of a source file: its tokens or its syntax tree");
  CLI::Option* tokens = command->add_flag("--tokens", options->tokens, "print the tokens, one per line, with spans");
  CLI::Option* ast = command->add_flag("--ast", options->ast, "print the syntax tree, indented, with spans");
  tokens->excludes(ast);
  // --parameters CARD: the tensors a checkpoint must supply (inspect_parameters.cpp).
  auto parameters = std::make_shared<InspectParametersOptions>();
  auto list_parameters = std::make_shared<bool>(false);
  CLI::Option* parameters_flag =
      command->add_flag("--parameters", *list_parameters,
                        "list the tensors a card's checkpoint must supply at the bound generics (FILE is the card)");
  parameters_flag->excludes(tokens)->excludes(ast);
  command->add_option("--bind", parameters->binds, "with --parameters: a generic's value, NAME=VALUE; repeatable")
      ->allow_extra_args(false);
  command->add_option("--weights", parameters->weights,
                      "with --parameters: the checkpoint (a directory or .safetensors files), to list its tensors "
                      "that no parameter reads")
      ->allow_extra_args(false);
  command->add_option("--bind-from", parameters->bind_from,
                      "with --parameters: generics from a golden meta.json or a checkpoint's config.json")
      ->check(not_empty());
  command->add_flag("--json", parameters->json, "with --parameters: print JSON");
  command->add_flag("--strict", parameters->strict,
                    "with --parameters: fail on warnings too (a bindings.json key or a checkpoint tensor that no "
                    "parameter reads, an unknown nest.toml key, the static checker's lints)");
  command->add_option("file", options->file, "the .linnet file (with --parameters: the card directory)")->required();
  command->callback([options, parameters, list_parameters, &context, command] {
    if (*list_parameters) {
      parameters->card = options->file;
      context.exit_code = run_inspect_parameters(*parameters, context);
      return;
    }
    if (!options->tokens && !options->ast) {
      std::cerr << "error: `linnet inspect` needs a view: --tokens, --ast or --parameters\n" << command->help();
      context.exit_code = 2;
      return;
    }
    context.exit_code = run_inspect(*options);
  });
}

}  // namespace linnet::cli
