// `linnet validate`: a card run on a golden case, compared with the
// reference outputs of Hugging Face `transformers` (golden/README.md).
//
//   validate::ValidateOptions options;
//   options.card = "nest/qwen3-8b";
//   options.golden_dir = "golden/qwen3-a";
//   options.std_dir = "stdlib";
//   options.dtype = tensor::DType::BF16;
//   validate::Report report = validate::validate_card(options);
//   std::cout << validate::render_text(report);  // report.pass() decides the exit status
//
// The checks, in order:
//   forward   `forward` on `tokens`, against `logits_f32` (T = f32) or
//             `logits_bf16` (T = bf16), every position;
//   decode    `prefill` of the prompt, then one `decode` step per further
//             reference token through the KV caches, each step's logits
//             against `generated_logits_f32` and its argmax (the token
//             chosen greedily) against `generated`. Each step is fed the
//             reference's token, so one early disagreement does not hide
//             how far the later steps agree;
//   generate  the card's own `generate<Steps>` entry after `prefill`, its
//             tokens against `generated` (where the card declares it). When
//             the tolerances let tokens differ (bf16), only the steps
//             before `decode` first chose another token than the f32
//             reference are compared: greedy decoding in bf16 may part
//             from f32's at a near tie, and every later token then
//             continues another text. `tokens_equal` still reports the
//             whole sequence.
// A card without `prefill`/`decode` or `generate` skips those checks, with
// a note saying so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/dispatch.hpp"
#include "linnet/nest/device.hpp"
#include "linnet/tensor/dtype.hpp"

namespace linnet::validate {

// When a check passes. A limit left empty is not applied.
struct Tolerances {
  std::optional<double> max_abs_diff;
  std::optional<double> mean_abs_diff;
  double min_argmax_agreement = 1.0;  // a fraction of the positions compared
  bool tokens_must_match = true;      // every greedily chosen token equal to the reference's
};

// The defaults issue 7 sets: f32, max abs difference at most 1e-4 with
// every argmax and every generated token equal; bf16, argmax agreement at
// least 0.9 and mean abs difference at most 0.01.
Tolerances default_tolerances(tensor::DType dtype);

struct CheckResult {
  std::string name;         // "forward", "decode", "generate"
  std::string description;  // what ran, for the text report
  // Empty where the check has no logits to compare (`generate`).
  std::optional<double> max_abs_diff;
  std::optional<double> mean_abs_diff;
  int64_t positions = 0;       // argmax (or token) comparisons made
  int64_t argmax_matches = 0;  // of which agreed
  // Empty where no tokens are produced (`forward`).
  std::optional<bool> tokens_equal;
  bool pass = false;
  std::vector<std::string> failures;  // each tolerance missed, in words

  double argmax_agreement() const;  // argmax_matches / positions (1 when nothing was compared)
};

struct Report {
  std::string case_name;  // the golden case
  std::string card;       // the card's [model] name
  tensor::DType dtype = tensor::DType::F32;
  eval::NumericsPolicy numerics = eval::NumericsPolicy::Exact;
  Tolerances tolerances;
  std::vector<CheckResult> checks;
  std::vector<std::string> notes;  // checks skipped, and why

  bool pass() const;  // every check passed (and at least one ran)
  std::vector<std::string> failed_checks() const;
};

struct ValidateOptions {
  std::string card;        // the card directory
  std::string golden_dir;  // the golden case (its checkpoint is the weights)
  std::string std_dir;     // the standard library
  tensor::DType dtype = tensor::DType::F32;  // bound as T: F32 or BF16
  eval::NumericsPolicy numerics = eval::NumericsPolicy::Exact;
  nest::Device device = nest::Device::Cpu;  // where native ops run
  std::optional<Tolerances> tolerances;  // default_tolerances(dtype) when empty
};

// Runs the checks above. Throws GoldenError when the case cannot be read,
// the card does not load on it (the message holds the rendered
// diagnostics), an entry fails, or a result's shape is not the
// reference's; a tolerance missed is a failed check in the report instead.
Report validate_card(const ValidateOptions& options);

}  // namespace linnet::validate
