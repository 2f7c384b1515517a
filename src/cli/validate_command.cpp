// `linnet validate CARD GOLDEN_DIR`: runs a card on a golden case and
// compares it with the stored `transformers` outputs; `linnet validate
// --mxfp4 GOLDEN_DIR` compares std.quant::dequantize_mxfp4 with stored
// dequantized bits. docs/commands.md describes the checks and options.
//
// Exit status: 0 every check passed; 1 a check failed (named on stderr), or
// the case, the card or a run had a problem; 2 a bad command line.
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "linnet/eval/error.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "linnet/validate/golden.hpp"
#include "linnet/validate/mxfp4.hpp"
#include "linnet/validate/report.hpp"
#include "linnet/validate/validate.hpp"
#include "device_option.hpp"
#include "run_support.hpp"
#include "option_checks.hpp"
#include "linnet/syntax/diagnostic.hpp"

namespace linnet::cli {

namespace {

struct ValidateCommandOptions {
  std::vector<std::string> paths;  // CARD GOLDEN_DIR
  std::string mxfp4;               // GOLDEN_DIR of an MXFP4 case
  std::optional<std::string> dtype;  // --dtype; f32 when neither it nor --bind T= is given
  std::string numerics = "equivalent";
  bool cast_weights = false;
  std::string load;  // --load; empty: the device's default
  std::string device = "cpu";
  bool json = false;
  bool markdown = false;
  std::optional<double> max_abs;
  std::optional<double> mean_abs;
  std::optional<double> min_argmax;
  bool any_tokens = false;  // --any-tokens: generated tokens need not all match
  std::vector<std::string> binds;  // --bind over the case's generics (Shards=2)
  bool no_progress = false;
  bool strict = false;
};

int check_golden_path(const std::string& golden) {
  const std::string problem =
      syntax::path_problem_text(syntax::path_problem(golden, syntax::PathUse::Directory));
  if (!problem.empty()) {
    std::cerr << "error: `" << golden << "` " << problem
              << "; a golden case is a directory holding meta.json and expected.npz\n";
    return 2;
  }
  return 0;
}

// The dtype the case runs at: `--dtype`, or `--bind T=...` (which picks the
// reference logits just as `--dtype` does, so it is taken out of the binds
// rather than overridden by the dtype's own bind). Both given must agree.
std::optional<std::string> case_dtype(const ValidateCommandOptions& options, std::vector<std::string>& binds) {
  std::optional<std::string> from_bind;
  std::erase_if(binds, [&](const std::string& bind) {
    if (!bind.starts_with("T=")) return false;
    from_bind = bind.substr(2);
    return true;
  });
  if (from_bind && *from_bind != "f32" && *from_bind != "bf16") {
    std::cerr << "error: --bind T=" << *from_bind << ": validate compares at T = f32 or bf16\n"
              << "help: use --dtype f32 or --dtype bf16\n";
    return std::nullopt;
  }
  if (from_bind && options.dtype && *from_bind != *options.dtype) {
    std::cerr << "error: --bind T=" << *from_bind << " disagrees with --dtype " << *options.dtype
              << "\nhelp: give one of them: T picks the reference logits the case is compared with\n";
    return std::nullopt;
  }
  return from_bind ? *from_bind : options.dtype.value_or("f32");
}

int run_mxfp4(const ValidateCommandOptions& options, const CommandContext& context) {
  if (!options.paths.empty()) {
    std::cerr << "error: --mxfp4 takes the golden case directory alone; drop the other arguments\n";
    return 2;
  }
  if (options.device != "cpu") {
    std::cerr << "error: --mxfp4 checks the dequantizer's body and its CPU kernel; --device does not apply\n";
    return 2;
  }
  if (int status = check_golden_path(options.mxfp4); status != 0) return status;
  const validate::Mxfp4Report report = validate::validate_mxfp4(options.mxfp4, context.std_dir);
  std::cout << (options.json       ? validate::render_json(report)
                : options.markdown ? validate::render_markdown(report)
                                   : validate::render_text(report));
  if (!report.pass()) {
    std::cerr << "error: std.quant::dequantize_mxfp4 differs from the reference bits\n";
    return 1;
  }
  return 0;
}

int run_card(const ValidateCommandOptions& options, const CommandContext& context) {
  if (options.paths.size() != 2) {
    std::cerr << "error: validate takes CARD GOLDEN_DIR (or --mxfp4 GOLDEN_DIR)\n";
    return 2;
  }
  if (int status = check_card_path(options.paths[0]); status != 0) return status;
  if (int status = check_golden_path(options.paths[1]); status != 0) return status;
  if (int status = check_tolerance("--max-abs", options.max_abs); status != 0) return status;
  if (int status = check_tolerance("--mean-abs", options.mean_abs); status != 0) return status;
  if (int status = check_tolerance("--min-argmax", options.min_argmax); status != 0) return status;
  if (options.min_argmax && *options.min_argmax > 1) {
    std::cerr << "error: --min-argmax is a fraction from 0 to 1; got " << *options.min_argmax << '\n';
    return 2;
  }

  const std::optional<nest::Device> device = usable_device(options.device);
  if (!device) return 1;
  validate::ValidateOptions validate_options;
  validate_options.device = *device;
  validate_options.card = options.paths[0];
  validate_options.golden_dir = options.paths[1];
  validate_options.std_dir = context.std_dir;
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  std::vector<std::string> binds = options.binds;
  const std::optional<std::string> dtype = case_dtype(options, binds);
  if (!dtype) return 2;
  validate_options.dtype = *dtype == "bf16" ? tensor::DType::BF16 : tensor::DType::F32;
  validate_options.binds = binds;
  validate_options.strict = options.strict;
  validate_options.communicator = context.communicator;
  // The same spelling-to-policy mapping `run` uses.
  validate_options.numerics = session_options("", {}, {}, options.numerics, context).numerics;
  validate_options.cast_weights = options.cast_weights;
  validate_options.placement = nest::weight_placement_from_name(options.load);  // empty: the device's default
  validate::Tolerances tolerances = validate::default_tolerances(validate_options.dtype);
  // A limit given on the command line replaces the one derived from the envelope.
  if (options.max_abs) {
    tolerances.max_abs_diff = *options.max_abs;
    tolerances.envelope_max_factor.reset();
  }
  if (options.mean_abs) {
    tolerances.mean_abs_diff = *options.mean_abs;
    tolerances.envelope_mean_factor.reset();
  }
  if (options.min_argmax) tolerances.min_argmax_agreement = *options.min_argmax;
  if (options.any_tokens) tolerances.tokens_must_match = false;
  validate_options.tolerances = tolerances;

  // The status line on a terminal (not under --json); erased when the report is ready.
  const std::shared_ptr<ProgressLine> progress =
      make_progress_line(!options.no_progress && !options.json, progress_rank(context));
  validate_options.progress = progress;
  const validate::Report report = validate::validate_card(validate_options);
  if (progress) progress->clear();
  std::cerr << report.load_warnings;
  std::cout << (options.json       ? validate::render_json(report)
                : options.markdown ? validate::render_markdown(report)
                                   : validate::render_text(report));
  if (!report.pass()) {
    std::cerr << "error: failed check";
    const std::vector<std::string> failed = report.failed_checks();
    std::cerr << (failed.size() == 1 ? "" : "s");
    for (size_t i = 0; i < failed.size(); ++i) std::cerr << (i ? ", " : ": ") << failed[i];
    for (const validate::CheckResult& check : report.checks)
      for (const std::string& failure : check.failures) std::cerr << "\n  " << check.name << ": " << failure;
    std::cerr << '\n';
    return 1;
  }
  return 0;
}

int run_validate(const ValidateCommandOptions& options, const CommandContext& context) {
  if (options.json && options.markdown) {
    std::cerr << "error: choose one of --json and --markdown\n";
    return 2;
  }
  try {
    return options.mxfp4.empty() ? run_card(options, context) : run_mxfp4(options, context);
  } catch (const validate::GoldenFormatError& failure) {
    std::cerr << "error " << eval::codes::malformed_file << ": " << syntax::printable(failure.what()) << '\n';
    return 1;
  } catch (const validate::GoldenError& failure) {
    std::cerr << "error: " << syntax::printable(failure.what()) << '\n';
    return 1;
  }
}

}  // namespace

void add_validate_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<ValidateCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "validate", "run a card on a golden case and compare with the reference logits and tokens of transformers");
  command->add_option("paths", options->paths, "CARD GOLDEN_DIR: the card directory and the golden case directory")
      ->expected(0, 2);
  command->add_option("--mxfp4", options->mxfp4,
                      "compare std.quant::dequantize_mxfp4 with the dequantized bits stored in GOLDEN_DIR instead");
  command->add_option("--dtype", options->dtype, "bind T to f32 (default, against logits_f32) or bf16 (logits_bf16); `--bind T=...` does the same")
      ->check(CLI::IsMember({"f32", "bf16"}));
  add_numerics_option(*command, options->numerics);
  add_cast_weights_option(*command, options->cast_weights);
  add_load_option(*command, options->load);
  command->add_option("--bind", options->binds,
                      "a generic's value over the case's own, NAME=VALUE (Shards=N under mpirun -np N); repeatable")
      ->allow_extra_args(false);
  add_device_option(*command, options->device);
  command->add_flag("--json", options->json, "print one JSON object");
  command->add_flag("--markdown", options->markdown, "print a Markdown table, as in the cards' READMEs");
  command->add_option("--max-abs", options->max_abs, "largest max abs logit difference allowed (f32 default 1e-4; bf16 default 1.5x the golden's "
                      "bf16-vs-f32 envelope)")
      ->check(number_value());
  command->add_option("--mean-abs", options->mean_abs, "largest mean abs logit difference allowed (bf16 default 1.25x the golden's bf16-vs-f32 "
                      "envelope, or 0.01 without one)")
      ->check(number_value());
  command->add_option("--min-argmax", options->min_argmax,
                      "smallest argmax agreement allowed, a fraction (f32 default 1, bf16 0.9)")
      ->check(number_value());
  command->add_flag("--any-tokens", options->any_tokens,
                    "do not require every generated token to match (f32 requires it by default)");
  add_progress_option(*command, options->no_progress);
  add_strict_option(*command, options->strict);
  command->callback([options, &context] { context.exit_code = run_validate(*options, context); });
}

}  // namespace linnet::cli
