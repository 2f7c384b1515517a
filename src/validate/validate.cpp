// The checks of `linnet validate` on a card and a golden case (see
// validate.hpp for what each one runs and compares).
#include "linnet/validate/validate.hpp"

#include <cstdio>
#include <map>

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
  Tensor generated;             // [B, N] i32
  Tensor generated_logits;      // [B, N, V] f32
  int64_t batch = 0, length = 0, steps = 0;
};

References read_references(const GoldenCase& golden, DType dtype) {
  References refs;
  const std::string logits_member = dtype == DType::BF16 ? "logits_bf16" : "logits_f32";
  refs.tokens = golden.tensor("tokens", DType::I32, 2);
  refs.logits = golden.tensor(logits_member, DType::F32, 3);
  refs.generated = golden.tensor("generated", DType::I32, 2);
  refs.generated_logits = golden.tensor("generated_logits_f32", DType::F32, 3);
  refs.batch = refs.tokens.extent(0);
  refs.length = refs.tokens.extent(1);
  refs.steps = refs.generated.extent(1);
  const std::string npz = golden.path_of("expected.npz");
  if (refs.batch < 1 || refs.length < 1) throw GoldenError(npz + ": `tokens` is empty");
  if (refs.logits.extent(0) != refs.batch || refs.logits.extent(1) != refs.length) {
    throw GoldenError(npz + ": `" + logits_member + "` does not have the [B, S] of `tokens` as its first axes");
  }
  const int64_t vocab = refs.logits.extent(2);
  if (refs.generated.extent(0) != refs.batch || refs.steps < 1) {
    throw GoldenError(npz + ": `generated` is not [B, N] with the B of `tokens` and N > 0");
  }
  if (refs.generated_logits.extent(0) != refs.batch || refs.generated_logits.extent(1) != refs.steps ||
      refs.generated_logits.extent(2) != vocab) {
    throw GoldenError(npz + ": `generated_logits_f32` is not [B, N, V] with the B and N of `generated` and the V of `" +
                      logits_member + "`");
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

// Applies the tolerances to a check's measurements.
void judge(CheckResult& check, const Tolerances& tolerances) {
  // `!(a <= b)` so that an infinite or NaN difference fails too.
  if (check.max_abs_diff && tolerances.max_abs_diff && !(*check.max_abs_diff <= *tolerances.max_abs_diff)) {
    check.failures.push_back("max abs diff " + number(*check.max_abs_diff) + " > " + number(*tolerances.max_abs_diff));
  }
  if (check.mean_abs_diff && tolerances.mean_abs_diff && !(*check.mean_abs_diff <= *tolerances.mean_abs_diff)) {
    check.failures.push_back("mean abs diff " + number(*check.mean_abs_diff) + " > " +
                             number(*tolerances.mean_abs_diff));
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
}

CheckResult check_forward(nest::Session& session, const References& refs, DType dtype) {
  CheckResult check;
  check.name = "forward";
  check.description = std::string("`forward` on `tokens` against ") + (dtype == DType::BF16 ? "logits_bf16" : "logits_f32");
  const Tensor logits = call_entry(session, "forward", {{"tokens", refs.tokens}});
  record(check, compare_logits(logits, refs.logits, "forward"));
  return check;
}

// `prefill` of the prompt, then `decode` for each further step, fed the
// reference's tokens (see validate.hpp).
// `leading_agreement` receives how many steps, from the first, chose the
// reference's token in every row.
CheckResult check_decode(nest::Session& session, const References& refs, int64_t& leading_agreement) {
  CheckResult check;
  check.name = "decode";
  check.description = "`prefill` + " + std::to_string(refs.steps - 1) +
                      " `decode` steps against generated_logits_f32, each argmax against `generated`";
  session.reset_state();
  LogitComparison total;
  for (int64_t step = 0; step < refs.steps; ++step) {
    Tensor logits;
    if (step == 0) {
      logits = call_entry(session, "prefill", {{"tokens", refs.tokens}, {"pos", i32_scalar(0)}});
    } else {
      const Tensor token = refs.generated.slice(1, step - 1, step).contiguous();
      logits = call_entry(session, "decode", {{"token", token}, {"pos", i32_scalar(refs.length + step - 1)}});
    }
    const Tensor reference = refs.generated_logits.select(1, step).contiguous();
    accumulate(total, compare_logits(logits, reference, "decode step " + std::to_string(step)));
  }
  record(check, total);
  // ours_argmax is step-major ([N][B]); `generated` is [B, N].
  const std::vector<int32_t> generated = refs.generated.to_vector<int32_t>();
  leading_agreement = refs.steps;
  for (int64_t step = refs.steps - 1; step >= 0; --step)
    for (int64_t row = 0; row < refs.batch; ++row)
      if (total.ours_argmax[static_cast<size_t>(step * refs.batch + row)] !=
          generated[static_cast<size_t>(row * refs.steps + step)])
        leading_agreement = step;
  check.tokens_equal = leading_agreement == refs.steps;
  return check;
}

// `prefill` of the prompt but its last token, then `generate<N>` from that
// token. Tokens are compared over the first `compared_steps` steps: all of
// them when every token must match; otherwise (bf16) only the steps before
// the card's own greedy choice first legitimately departed from the f32
// reference (measured by the `decode` check), since every later token
// continues another text.
CheckResult check_generate(nest::Session& session, const References& refs, int64_t compared_steps) {
  CheckResult check;
  check.name = "generate";
  check.description = "the card's `generate<" + std::to_string(refs.steps) + ">` after `prefill`, against `generated`";
  if (compared_steps < refs.steps) {
    check.description += ", over the " + std::to_string(compared_steps) +
                         " steps before `decode` first chose another token than the reference";
  }
  if (refs.length < 2) throw GoldenError("the `generate` check needs a prompt of at least two tokens");
  session.reset_state();
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
    tolerances.mean_abs_diff = 0.01;
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

bool Report::pass() const { return !checks.empty() && failed_checks().empty(); }

std::vector<std::string> Report::failed_checks() const {
  std::vector<std::string> names;
  for (const CheckResult& check : checks)
    if (!check.pass) names.push_back(check.name);
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
  session_options.binds = golden.binds;
  session_options.binds.push_back("T=" + std::string(tensor::dtype_name(options.dtype)));  // the last bind wins
  session_options.weights = {options.golden_dir};
  session_options.std_dir = options.std_dir;
  session_options.numerics = options.numerics;
  session_options.device = options.device;
  nest::Session session(session_options);
  if (!session.load()) {
    throw GoldenError("the card `" + options.card + "` did not load on " + options.golden_dir + ":\n" +
                      session.render_diagnostics());
  }

  Report report;
  report.case_name = golden.name;
  report.card = session.card().name;
  report.dtype = options.dtype;
  report.numerics = options.numerics;
  report.tolerances = options.tolerances ? *options.tolerances : default_tolerances(options.dtype);

  report.checks.push_back(check_forward(session, refs, options.dtype));
  int64_t leading_agreement = refs.steps;  // decode steps that chose the reference's tokens
  if (declares(session, "prefill") && declares(session, "decode")) {
    report.checks.push_back(check_decode(session, refs, leading_agreement));
  } else {
    report.notes.push_back("decode: not run, the card declares no `prefill` and `decode` entries");
  }
  if (!declares(session, "prefill")) {
    report.notes.push_back("generate: not run, the card declares no `prefill` entry");
  } else if (declares(session, "generate")) {
    const int64_t compared = report.tolerances.tokens_must_match ? refs.steps : leading_agreement;
    report.checks.push_back(check_generate(session, refs, compared));
  } else {
    report.notes.push_back("generate: not run, the card declares no `generate` entry");
  }
  for (CheckResult& check : report.checks) judge(check, report.tolerances);
  return report;
}

}  // namespace linnet::validate
