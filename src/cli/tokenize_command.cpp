// `linnet tokenize DIR|CARD TEXT`: the ids and pieces of TEXT under the
// tokenizer.json of a folder or of a card's checkpoint; `--json` prints
// {"ids": [...], "pieces": [...]}; `--decode 1,2,3` prints the text of ids.
//
// Exit status: 0 success; 1 no usable tokenizer, or text/ids it refuses;
// 2 a bad command line.
#include <charconv>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "option_checks.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "text_support.hpp"

namespace linnet::cli {

namespace {

struct TokenizeOptions {
  std::string target;
  std::string text;
  std::string decode;
  std::string weights;  // one checkpoint folder
  bool json = false;
  bool no_special = false;
  bool skip_special = false;
};

// "1,2,3", "1 2 3" or "[1, 2, 3]": the token-list rules of every command
// (option_checks.hpp: no empty item such as `1,,2`, no sign), inside at most
// one pair of brackets, and at least one id.
std::optional<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::string inner = text;
  const size_t first = inner.find_first_not_of(' ');
  const size_t last = inner.find_last_not_of(' ');
  if (first != std::string::npos && inner[first] == '[') {
    if (inner[last] != ']') return std::nullopt;
    inner = inner.substr(first + 1, last - first - 1);
  }
  std::optional<std::vector<int32_t>> ids = parse_token_list(inner);
  if (!ids || ids->empty()) return std::nullopt;
  return ids;
}

int run_tokenize(const TokenizeOptions& options) {
  const bool decoding = !options.decode.empty();
  if (decoding == !options.text.empty() && !(decoding && options.text.empty())) {
    std::cerr << "error: give either TEXT or --decode IDS\n";
    return 2;
  }
  std::optional<std::vector<int32_t>> ids;
  if (decoding) {
    ids = parse_ids(options.decode);
    if (!ids) {
      std::cerr << "error: --decode `" << options.decode << "` is not a list of token ids such as 1,2,3\n";
      return 2;
    }
  }
  // A path that does not exist is a command-line mistake (exit 2), as in
  // every other command; a file or folder without a usable tokenizer is 1.
  if (const syntax::PathProblem problem = syntax::path_problem(options.target, syntax::PathUse::FileOrDirectory)) {
    std::cerr << "error: `" << options.target << "` " << syntax::path_problem_text(problem) << "\n";
    return 2;
  }
  std::string why;
  const std::optional<std::string> directory = find_tokenizer_directory(
      options.target, options.weights.empty() ? std::vector<std::string>{} : std::vector<std::string>{options.weights}, why);
  if (!directory) {
    std::cerr << "error: " << why << '\n';
    return 1;
  }
  const std::optional<TextModel> model = load_text_model(*directory, why);
  if (!model) {
    std::cerr << "error: " << why << '\n';
    return 1;
  }
  try {
    if (decoding) {
      const std::string text = model->tokenizer.decode(*ids, options.skip_special);
      if (options.json) {
        std::cout << "{\"text\": " << syntax::json_quote(text) << "}\n";
      } else {
        std::cout << text << '\n';
      }
      return 0;
    }
    ids = model->tokenizer.encode(options.text, !options.no_special);
  } catch (const text::TokenizerError& failure) {
    std::cerr << "error: " << syntax::printable(failure.what()) << '\n';
    return 1;
  }
  if (options.json) {
    std::string line = "{\"ids\": [";
    for (size_t i = 0; i < ids->size(); ++i) line += (i ? ", " : "") + std::to_string((*ids)[i]);
    line += "], \"pieces\": [";
    for (size_t i = 0; i < ids->size(); ++i) {
      line += (i ? ", " : "") + syntax::json_quote(model->tokenizer.piece((*ids)[i]).value_or(""));
    }
    std::cout << line << "]}\n";
    return 0;
  }
  for (int32_t id : *ids) std::cout << id << '\t' << model->tokenizer.piece(id).value_or("") << '\n';
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand(
      "tokenize", "text to token ids and pieces with a model's tokenizer.json (or ids back to text with --decode)");
  command->add_option("target", options->target, "a folder holding tokenizer.json, the file itself, or a card")
      ->required();
  command->add_option("text", options->text, "the text to encode");
  command->add_option("--decode", options->decode, "decode these ids (e.g. 1,2,3) instead of encoding text");
  command->add_option("--weights", options->weights, "for a card: the checkpoint folder (default: the HF cache)");
  command->add_flag("--json", options->json, "print {\"ids\": [...], \"pieces\": [...]} (or {\"text\": ...})");
  command->add_flag("--no-special", options->no_special, "do not add the post-processor's special tokens (BOS)");
  command->add_flag("--skip-special", options->skip_special, "with --decode: leave special tokens out of the text");
  command->callback([options, &context] { context.exit_code = run_tokenize(*options); });
}

}  // namespace linnet::cli
