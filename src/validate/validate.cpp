// The checks of `linnet validate` on a card and a golden case (see
// validate.hpp for what each one runs and compares).
#include "linnet/validate/validate.hpp"

#include <cstdio>
#include <map>
#include <optional>

#include "linnet/nest/session.hpp"
#include "linnet/validate/compare.hpp"
#include "linnet/validate/golden.hpp"

namespace linnet::validate {

namespace {

using tensor::DType;
using tensor::Tensor;

// The reference arrays of a model case, checked against each other's shapes.
struct References {
  Tensor tokens;                // [B, S] i32
  Tensor logits;                // [B, S, V] f32: logits_f32 or logits_bf16
  Tensor generated;             // [B, N] i32, the f32 model's greedy tokens
  Tensor decode_logits;         // [B, N, V] f32: generated_logits_f32, or decode_logits_bf16 at T = bf16
  std::string logits_member, decode_member;
  // The other dtype's run over the same positions, for the envelope: at
  // T = bf16, logits_f32 and generated_logits_f32 (empty when absent).
  std::optional<Tensor> other_logits, other_decode_logits;
  int64_t batch = 0, length = 0, steps = 0;
};

References read_references(const GoldenCase& golden, DType dtype) {
  References refs;
  const bool bf16 = dtype == DType::BF16;
  refs.logits_member = bf16 ? "logits_bf16" : "logits_f32";
  refs.decode_member = bf16 && golden.has("decode_logits_bf16") ? "decode_logits_bf16" : "generated_logits_f32";
  refs.tokens = golden.tensor("tokens", DType::I32, 2);
  refs.logits = golden.tensor(refs.logits_member, DType::F32, 3);
  refs.generated = golden.tensor("generated", DType::I32, 2);
  refs.decode_logits = golden.tensor(refs.decode_member, DType::F32, 3);
  if (bf16 && golden.has("logits_f32")) refs.other_logits = golden.tensor("logits_f32", DType::F32, 3);
  if (refs.decode_member == "decode_logits_bf16") {
    refs.other_decode_logits = golden.tensor("generated_logits_f32", DType::F32, 3);
  }
  refs.batch = refs.tokens.extent(0);
  refs.length = refs.tokens.extent(1);
  refs.steps = refs.generated.extent(1);
  const std::string npz = golden.path_of("expected.npz");
  if (refs.batch < 1 || refs.length < 1) throw GoldenFormatError(npz + ": `tokens` is empty");
  if (refs.logits.extent(0) != refs.batch || refs.logits.extent(1) != refs.length) {
    throw GoldenFormatError(npz + ": `" + refs.logits_member + "` does not have the [B, S] of `tokens` as its first axes");
  }
  const int64_t vocab = refs.logits.extent(2);
  if (refs.generated.extent(0) != refs.batch || refs.steps < 1) {
    throw GoldenFormatError(npz + ": `generated` is not [B, N] with the B of `tokens` and N > 0");
  }
  if (refs.decode_logits.extent(0) != refs.batch || refs.decode_logits.extent(1) != refs.steps ||
      refs.decode_logits.extent(2) != vocab) {
    throw GoldenFormatError(npz + ": `" + refs.decode_member + "` is not [B, N, V] with the B and N of `generated` and the V of `" +
                      refs.logits_member + "`");
  }
  if (refs.other_logits && refs.other_logits->shape() != refs.logits.shape()) {
    throw GoldenFormatError(npz + ": `logits_f32` and `" + refs.logits_member + "` differ in shape");
  }
  if (refs.other_decode_logits && refs.other_decode_logits->shape() != refs.decode_logits.shape()) {
    throw GoldenFormatError(npz + ": `generated_logits_f32` and `" + refs.decode_member + "` differ in shape");
  }
  return refs;
}

Tensor i32_scalar(int64_t value) { return Tensor::scalar(DType::I32, value); }

// Calls `entry`; any failure becomes a GoldenError naming the entry.
Tensor call_entry(nest::Session& session, const std::string& entry, const std::map<std::string, Tensor>& inputs,
                  const eval::GenericBindings& generics = {}) {
  eval::Value result;
  try {
    eval::EntryInputs call_inputs = session.inputs(entry, inputs);
    for (const auto& [name, value] : generics) call_inputs.generics[name] = value;
    result = session.call(entry, call_inputs);
  } catch (const nest::RunError& failure) {
    throw GoldenError("entry `" + entry + "` failed:\n" + failure.what());
  } catch (const nest::InputError& failure) {
    throw GoldenError("entry `" + entry + "`: " + failure.what());
  }
  if (!result.is_tensor()) throw GoldenError("entry `" + entry + "` did not return a tensor");
  return result.tensor();
}

bool declares(const nest::Session& session, const std::string& entry) { return session.root().entry(entry) != nullptr; }

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

// The limit on a difference: the envelope's times its factor where both
// are known (and the envelope is not zero, which would ask for equality),
// else the fixed limit (or none).
std::optional<double> limit(const std::optional<double>& fixed, const std::optional<double>& factor,
                            const std::optional<double>& envelope) {
  if (factor && envelope && *envelope > 0) return *factor * *envelope;
  return fixed;
}

// Applies the tolerances to a check's measurements.
void judge(CheckResult& check, const Tolerances& tolerances) {
  if (!check.compared) {
    check.pass = false;
    return;
  }
  const std::optional<double> max_limit =
      limit(tolerances.max_abs_diff, tolerances.envelope_max_factor, check.envelope_max_abs_diff);
  const std::optional<double> mean_limit =
      limit(tolerances.mean_abs_diff, tolerances.envelope_mean_factor, check.envelope_mean_abs_diff);
  auto relative = [&](const std::optional<double>& factor, const std::optional<double>& envelope) {
    return factor && envelope && *envelope > 0 ? " (" + number(*factor) + "x the envelope " + number(*envelope) + ")"
                                               : std::string();
  };
  // `!(a <= b)` so that an infinite or NaN difference fails too.
  if (check.max_abs_diff && max_limit && !(*check.max_abs_diff <= *max_limit)) {
    check.failures.push_back("max abs diff " + number(*check.max_abs_diff) + " > " + number(*max_limit) +
                             relative(tolerances.envelope_max_factor, check.envelope_max_abs_diff));
  }
  if (check.mean_abs_diff && mean_limit && !(*check.mean_abs_diff <= *mean_limit)) {
    check.failures.push_back("mean abs diff " + number(*check.mean_abs_diff) + " > " + number(*mean_limit) +
                             relative(tolerances.envelope_mean_factor, check.envelope_mean_abs_diff));
  }
  if (check.argmax_agreement() < tolerances.min_argmax_agreement) {
    check.failures.push_back("argmax agreement " + std::to_string(check.argmax_matches) + "/" +
                             std::to_string(check.positions) + " < " + number(tolerances.min_argmax_agreement));
  }
  if (check.tokens_equal && !*check.tokens_equal && tolerances.tokens_must_match) {
    check.failures.push_back("generated tokens differ from the reference");
  }
  check.pass = check.failures.empty();
}

void record(CheckResult& check, const LogitComparison& comparison) {
  check.max_abs_diff = comparison.max_abs_diff;
  check.mean_abs_diff = comparison.mean_abs_diff;
  check.positions = comparison.rows;
  check.argmax_matches = comparison.argmax_matches;
  if (comparison.elements > 0) {
    check.equal_share = static_cast<double>(comparison.equal_elements) / static_cast<double>(comparison.elements);
  }
}

// The envelope of a check: the reference against the other dtype's run.
void record_envelope(CheckResult& check, const Tensor& reference, const std::optional<Tensor>& other,
                     const std::string& what) {
  if (!other) return;
  const LogitComparison envelope = compare_logits(reference, *other, what);
  check.envelope_max_abs_diff = envelope.max_abs_diff;
  check.envelope_mean_abs_diff = envelope.mean_abs_diff;
}

// Tells the session's progress observer which check runs, and its step.
void report_check(const nest::Session& session, const std::string& check, int64_t index = 0, int64_t count = 0) {
  if (session.options().progress) session.options().progress->stage({"validate " + check, index, count, {}});
}

CheckResult check_forward(nest::Session& session, const References& refs) {
  report_check(session, "forward");
  CheckResult check;
  check.name = "forward";
  check.description = "`forward` on `tokens` against " + refs.logits_member;
  const Tensor logits = call_entry(session, "forward", {{"tokens", refs.tokens}});
  record(check, compare_logits(logits, refs.logits, "forward"));
  record_envelope(check, refs.logits, refs.other_logits, "the envelope of forward");
  return check;
}

// The argmax of each row of `logits` [B, N, V], as [B][N].
std::vector<std::vector<int64_t>> step_argmax(const Tensor& logits) {
  const std::vector<int64_t> flat = row_argmax(logits);
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(logits.extent(0)));
  for (size_t i = 0; i < flat.size(); ++i) rows[i / static_cast<size_t>(logits.extent(1))].push_back(flat[i]);
  return rows;
}

// How many steps, from the first, chose `generated`'s token in every row;
// `chosen` is [B][N].
int64_t leading_agreement(const std::vector<std::vector<int64_t>>& chosen, const Tensor& generated) {
  const std::vector<int32_t> tokens = generated.to_vector<int32_t>();  // [B, N]
  const int64_t steps = generated.extent(1);
  int64_t agreed = steps;
  for (size_t row = 0; row < chosen.size(); ++row)
    for (int64_t step = 0; step < agreed; ++step)
      if (chosen[row][static_cast<size_t>(step)] != tokens[row * static_cast<size_t>(steps) + static_cast<size_t>(step)])
        agreed = step;
  return agreed;
}

// `prefill` of the prompt, then `decode` for each further step, fed the
// f32 reference's tokens (see validate.hpp). `agreed` receives how many
// steps, from the first, chose `generated`'s token in every row.
CheckResult check_decode(nest::Session& session, const References& refs, int64_t& agreed) {
  CheckResult check;
  check.name = "decode";
  check.description = "`prefill` + " + std::to_string(refs.steps - 1) + " `decode` steps fed `generated`, against " +
                      refs.decode_member + (refs.decode_member == "generated_logits_f32" ? " and `generated`" : "");
  session.reset_state();
  std::vector<Tensor> steps;
  for (int64_t step = 0; step < refs.steps; ++step) {
    report_check(session, "decode", step, refs.steps);
    if (step == 0) {
      steps.push_back(call_entry(session, "prefill", {{"tokens", refs.tokens}, {"pos", i32_scalar(0)}}));
    } else {
      const Tensor token = refs.generated.slice(1, step - 1, step).contiguous();
      steps.push_back(
          call_entry(session, "decode", {{"token", token}, {"pos", i32_scalar(refs.length + step - 1)}}));
    }
  }
  // Each step's logits are [B, V] (or [B, 1, V]); compared as [B, N, V].
  LogitComparison total;
  for (int64_t step = 0; step < refs.steps; ++step) {
    const Tensor reference = refs.decode_logits.select(1, step).contiguous();
    accumulate(total, compare_logits(steps[static_cast<size_t>(step)], reference, "decode step " + std::to_string(step)));
  }
  record(check, total);
  record_envelope(check, refs.decode_logits, refs.other_decode_logits, "the envelope of decode");
  // ours_argmax is step-major ([N][B]).
  std::vector<std::vector<int64_t>> ours(static_cast<size_t>(refs.batch));
  for (int64_t step = 0; step < refs.steps; ++step)
    for (int64_t row = 0; row < refs.batch; ++row)
      ours[static_cast<size_t>(row)].push_back(total.ours_argmax[static_cast<size_t>(step * refs.batch + row)]);
  agreed = leading_agreement(ours, refs.generated);
  check.tokens_equal = agreed == refs.steps;
  return check;
}

// `prefill` of the prompt but its last token, then `generate<N>` from that
// token. Tokens are compared over the first `compared_steps` steps: all of
// them when every token must match; otherwise (bf16) only the steps before
// greedy bf16 decoding first legitimately departs from the f32 reference
// (`why_fewer` says whose decoding), since every later token continues
// another text.
CheckResult check_generate(nest::Session& session, const References& refs, int64_t compared_steps,
                           const std::string& why_fewer) {
  CheckResult check;
  check.name = "generate";
  check.description = "the card's `generate<" + std::to_string(refs.steps) + ">` after `prefill`, against `generated`";
  if (compared_steps < refs.steps) {
    check.description += ", over the " + std::to_string(compared_steps) + " steps before " + why_fewer;
  }
  check.compared = compared_steps > 0;
  if (refs.length < 2) throw GoldenError("the `generate` check needs a prompt of at least two tokens");
  session.reset_state();
  report_check(session, "generate");
  call_entry(session, "prefill",
             {{"tokens", refs.tokens.slice(1, 0, refs.length - 1).contiguous()}, {"pos", i32_scalar(0)}});
  const Tensor produced =
      call_entry(session, "generate",
                 {{"token", refs.tokens.slice(1, refs.length - 1, refs.length).contiguous()},
                  {"pos", i32_scalar(refs.length - 1)}},
                 {{"Steps", eval::GenericValue::of_dim(refs.steps)}});
  if (produced.shape() != refs.generated.shape()) {
    throw GoldenError("entry `generate` returned a tensor of another shape than `generated`");
  }
  const std::vector<int32_t> ours = produced.to_vector<int32_t>();
  const std::vector<int32_t> theirs = refs.generated.to_vector<int32_t>();  // both [B, N]
  for (int64_t row = 0; row < refs.batch; ++row) {
    for (int64_t step = 0; step < compared_steps; ++step) {
      const size_t at = static_cast<size_t>(row * refs.steps + step);
      ++check.positions;
      check.argmax_matches += ours[at] == theirs[at] ? 1 : 0;
    }
  }
  check.tokens_equal = ours == theirs;
  return check;
}

}  // namespace

Tolerances default_tolerances(DType dtype) {
  Tolerances tolerances;
  if (dtype == DType::BF16) {
    tolerances.mean_abs_diff = 0.01;  // the fallback, for a golden with bf16 references only
    tolerances.envelope_mean_factor = 1.25;
    tolerances.envelope_max_factor = 1.5;
    tolerances.min_argmax_agreement = 0.9;
    tolerances.tokens_must_match = false;
  } else {
    tolerances.max_abs_diff = 1e-4;
    tolerances.min_argmax_agreement = 1.0;
    tolerances.tokens_must_match = true;
  }
  return tolerances;
}

double CheckResult::argmax_agreement() const {
  return positions == 0 ? 1.0 : static_cast<double>(argmax_matches) / static_cast<double>(positions);
}

std::optional<double> CheckResult::envelope_ratio() const {
  if (!mean_abs_diff || !envelope_mean_abs_diff || *envelope_mean_abs_diff <= 0) return std::nullopt;
  return *mean_abs_diff / *envelope_mean_abs_diff;
}

bool Report::pass() const { return checks.size() > uncompared_checks().size() && failed_checks().empty(); }

std::vector<std::string> Report::failed_checks() const {
  std::vector<std::string> names;
  for (const CheckResult& check : checks)
    if (check.compared && !check.pass) names.push_back(check.name);
  return names;
}

std::vector<std::string> Report::uncompared_checks() const {
  std::vector<std::string> names;
  for (const CheckResult& check : checks)
    if (!check.compared) names.push_back(check.name);
  return names;
}

Report validate_card(const ValidateOptions& options) {
  if (options.dtype != DType::F32 && options.dtype != DType::BF16) {
    throw GoldenError("validate compares at T = f32 or bf16, not " + std::string(tensor::dtype_name(options.dtype)));
  }
  const GoldenCase golden = read_golden_case(options.golden_dir);
  if (golden.binds.empty()) {
    throw GoldenError(golden.path_of("meta.json") +
                      " has no linnet_generics: not a model case (the MXFP4 case runs with --mxfp4)");
  }
  const References refs = read_references(golden, options.dtype);

  nest::SessionOptions session_options;
  session_options.card = options.card;
  // meta.json's generics are named as coming from it, not as a --bind.
  session_options.preset_binds = golden.binds;
  session_options.preset_binds_from = "`" + golden.path_of("meta.json") + "` (linnet_generics)";
  session_options.binds = options.binds;
  session_options.binds.push_back("T=" + std::string(tensor::dtype_name(options.dtype)));  // the last bind wins
  session_options.communicator = options.communicator;
  session_options.weights = {options.golden_dir};
  session_options.std_dir = options.std_dir;
  session_options.numerics = options.numerics;
  session_options.cast_weights = options.cast_weights;
  session_options.placement = options.placement;
  session_options.device = options.device;
  session_options.progress = options.progress;
  session_options.strict = options.strict;
  nest::Session session(session_options);
  if (!session.load()) {
    throw GoldenError("the card `" + options.card + "` did not load on " + options.golden_dir + ":\n" +
                      session.render_diagnostics());
  }

  Report report;
  if (!session.diagnostics().all().empty()) report.load_warnings = session.render_diagnostics();
  report.case_name = golden.name;
  report.card = session.card().name;
  report.dtype = options.dtype;
  report.numerics = options.numerics;
  report.tolerances = options.tolerances ? *options.tolerances : default_tolerances(options.dtype);

  report.checks.push_back(check_forward(session, refs));
  if (options.dtype == DType::BF16 && !refs.other_logits) {
    report.notes.push_back("forward: the golden has no logits_f32, so no envelope: the fixed bf16 limits apply");
  }
  int64_t card_agreed = refs.steps;  // decode steps that chose the f32 reference's tokens
  const bool has_decode = declares(session, "prefill") && declares(session, "decode");
  if (has_decode) {
    report.checks.push_back(check_decode(session, refs, card_agreed));
    if (options.dtype == DType::BF16 && refs.decode_member == "generated_logits_f32") {
      report.notes.push_back(
          "decode: the golden has no decode_logits_bf16, so the bf16 steps were compared with the f32 model's "
          "(generated_logits_f32): how close they are to transformers' own bf16 steps was not checked");
    }
  } else {
    report.notes.push_back("decode: not run, the card declares no `prefill` and `decode` entries");
  }
  if (!declares(session, "prefill")) {
    report.notes.push_back("generate: not run, the card declares no `prefill` entry");
  } else if (declares(session, "generate")) {
    int64_t compared = refs.steps;
    std::string why_fewer;
    if (!report.tolerances.tokens_must_match) {
      if (refs.decode_member == "decode_logits_bf16") {
        compared = leading_agreement(step_argmax(refs.decode_logits), refs.generated);
        why_fewer = "transformers' own bf16 decoding first chose another token than `generated`";
      } else if (has_decode) {
        compared = card_agreed;
        why_fewer = "`decode` first chose another token than `generated`";
      }
    }
    report.checks.push_back(check_generate(session, refs, compared, why_fewer));
    if (compared == 0) {
      report.notes.push_back("generate: compared no step (" + why_fewer +
                             " at the first step), so it is not counted as a pass");
    }
  } else {
    report.notes.push_back("generate: not run, the card declares no `generate` entry");
  }
  for (CheckResult& check : report.checks) judge(check, report.tolerances);
  return report;
}

}  // namespace linnet::validate
