// The text, JSON and Markdown forms of validation reports (report.hpp).
#include "linnet/validate/report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "linnet/syntax/diagnostic.hpp"

namespace linnet::validate {

namespace {

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// A difference for the tables: "2.384e-07", "inf", or "-" when not measured.
std::string difference_text(const std::optional<double>& value) {
  if (!value) return "-";
  if (std::isinf(*value)) return "inf";
  return format("%.3e", *value);
}

std::string agreement_text(const CheckResult& check, const char* separator) {
  return std::to_string(check.argmax_matches) + separator + std::to_string(check.positions);
}

std::string tokens_text(const std::optional<bool>& equal, const char* absent) {
  if (!equal) return absent;
  return *equal ? "yes" : "no";
}

// A JSON number, or null when absent or not finite (JSON has no infinity).
std::string json_number(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return "null";
  return format("%.9g", *value);
}


std::string tolerance_text(const Tolerances& tolerances) {
  std::vector<std::string> parts;
  auto limit_text = [](const char* what, const std::optional<double>& fixed, const std::optional<double>& factor) {
    std::string text = std::string(what) + " <= ";
    if (factor) {
      text += format("%g", *factor) + "x the envelope";
      return fixed ? text + " (else " + format("%g", *fixed) + ")" : text;
    }
    return text + format("%g", *fixed);
  };
  if (tolerances.max_abs_diff || tolerances.envelope_max_factor) {
    parts.push_back(limit_text("max abs diff", tolerances.max_abs_diff, tolerances.envelope_max_factor));
  }
  if (tolerances.mean_abs_diff || tolerances.envelope_mean_factor) {
    parts.push_back(limit_text("mean abs diff", tolerances.mean_abs_diff, tolerances.envelope_mean_factor));
  }
  if (tolerances.min_argmax_agreement >= 1.0) {
    parts.push_back("every argmax equal");
  } else {
    parts.push_back("argmax agreement >= " + format("%g", tolerances.min_argmax_agreement));
  }
  if (tolerances.tokens_must_match) parts.push_back("every generated token equal");
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text;
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string dtype_text(tensor::DType dtype) { return std::string(tensor::dtype_name(dtype)); }

std::string pass_text(const CheckResult& check, const char* yes, const char* no) {
  if (!check.compared) return "-";
  return check.pass ? yes : no;
}

// The fidelity line of a check with an envelope: how far from the
// reference compared with the reference's own distance from the other dtype.
std::optional<std::string> fidelity_text(const CheckResult& check) {
  if (!check.envelope_mean_abs_diff || !check.mean_abs_diff) return std::nullopt;
  std::string text = check.name + ": mean abs diff " + format("%.3e", *check.mean_abs_diff);
  if (const auto ratio = check.envelope_ratio()) text += " = " + format("%.2f", *ratio) + "x";
  text += " the envelope (reference bf16 vs f32: mean " + format("%.3e", *check.envelope_mean_abs_diff) + ", max " +
          difference_text(check.envelope_max_abs_diff) + ")";
  if (check.equal_share) text += "; " + format("%.1f", 100 * *check.equal_share) + "% of logits bit for bit equal";
  return text;
}

}  // namespace

std::string render_text(const Report& report) {
  std::ostringstream out;
  out << "validate " << report.card << " on " << report.case_name << ": T = " << dtype_text(report.dtype)
      << ", numerics " << eval::numerics_policy_name(report.numerics) << '\n';
  out << "tolerances: " << tolerance_text(report.tolerances) << "\n\n";
  const size_t widths[] = {10, 14, 15, 18, 14};
  out << pad("check", widths[0]) << pad("max abs diff", widths[1]) << pad("mean abs diff", widths[2])
      << pad("argmax agreement", widths[3]) << pad("tokens equal", widths[4]) << "pass\n";
  for (const CheckResult& check : report.checks) {
    out << pad(check.name, widths[0]) << pad(difference_text(check.max_abs_diff), widths[1])
        << pad(difference_text(check.mean_abs_diff), widths[2]) << pad(agreement_text(check, "/"), widths[3])
        << pad(tokens_text(check.tokens_equal, "-"), widths[4]) << pass_text(check, "yes", "NO") << '\n';
  }
  out << '\n';
  for (const CheckResult& check : report.checks) out << "  " << check.name << ": " << check.description << '\n';
  for (const std::string& note : report.notes) out << "  " << note << '\n';
  bool fidelity_heading = false;
  for (const CheckResult& check : report.checks) {
    if (const auto line = fidelity_text(check)) {
      if (!fidelity_heading) out << "\nfidelity (against transformers' " << dtype_text(report.dtype) << "):\n";
      fidelity_heading = true;
      out << "  " << *line << '\n';
    }
  }
  const size_t uncompared = report.uncompared_checks().size();
  if (report.pass()) {
    out << "PASS: " << report.checks.size() - uncompared << " of " << report.checks.size() << " checks";
    if (uncompared > 0) out << " (" << uncompared << " compared nothing)";
    out << '\n';
  } else {
    out << "FAIL:";
    const std::vector<std::string> failed = report.failed_checks();
    for (size_t i = 0; i < failed.size(); ++i) out << (i ? ", " : " ") << failed[i];
    if (report.checks.size() == uncompared) out << " no check compared anything";
    out << '\n';
    for (const CheckResult& check : report.checks)
      for (const std::string& failure : check.failures) out << "  " << check.name << ": " << failure << '\n';
  }
  return out.str();
}

std::string render_json(const Report& report) {
  std::ostringstream out;
  out << "{\"case\": " << syntax::json_quote(report.case_name) << ", \"card\": " << syntax::json_quote(report.card)
      << ", \"dtype\": " << syntax::json_quote(dtype_text(report.dtype)) << ", \"checks\": [";
  // Issue 7's members first; then the envelope and fidelity (null where
  // not measured) and whether the check compared anything.
  for (size_t i = 0; i < report.checks.size(); ++i) {
    const CheckResult& check = report.checks[i];
    out << (i ? ", " : "") << "{\"name\": " << syntax::json_quote(check.name)
        << ", \"max_abs_diff\": " << json_number(check.max_abs_diff)
        << ", \"mean_abs_diff\": " << json_number(check.mean_abs_diff)
        << ", \"argmax_agreement\": " << json_number(check.argmax_agreement())
        << ", \"tokens_equal\": " << (check.tokens_equal ? (*check.tokens_equal ? "true" : "false") : "null")
        << ", \"pass\": " << (check.pass ? "true" : "false")
        << ", \"envelope_max_abs_diff\": " << json_number(check.envelope_max_abs_diff)
        << ", \"envelope_mean_abs_diff\": " << json_number(check.envelope_mean_abs_diff)
        << ", \"envelope_ratio\": " << json_number(check.envelope_ratio())
        << ", \"equal_share\": " << json_number(check.equal_share)
        << ", \"compared\": " << (check.compared ? "true" : "false") << '}';
  }
  out << "], \"pass\": " << (report.pass() ? "true" : "false")
      << ", \"numerics\": " << syntax::json_quote(eval::numerics_policy_name(report.numerics)) << "}\n";
  return out.str();
}

std::string render_markdown(const Report& report) {
  std::ostringstream out;
  out << "`" << report.card << "` on `" << report.case_name << "`, T = " << dtype_text(report.dtype)
      << " (numerics `" << eval::numerics_policy_name(report.numerics) << "`):\n\n";
  out << "| check | max abs logit difference | mean abs logit difference | argmax agreement | generated tokens equal "
         "| pass |\n";
  out << "| --- | --- | --- | --- | --- | --- |\n";
  for (const CheckResult& check : report.checks) {
    const std::string unit = check.name == "forward" ? " positions" : " steps";
    out << "| `" << check.name << "` | " << difference_text(check.max_abs_diff) << " | "
        << difference_text(check.mean_abs_diff) << " | " << agreement_text(check, " / ") << unit << " | "
        << tokens_text(check.tokens_equal, "") << " | " << pass_text(check, "yes", "**no**") << " |\n";
  }
  std::vector<std::string> lines = report.notes;
  for (const CheckResult& check : report.checks)
    if (const auto line = fidelity_text(check)) lines.push_back("fidelity, " + *line);
  if (!lines.empty()) out << '\n';
  for (const std::string& line : lines) out << "- " << line << '\n';
  return out.str();
}

std::string render_text(const Mxfp4Report& report) {
  std::ostringstream out;
  out << "validate --mxfp4 on " << report.case_name
      << ": std.quant::dequantize_mxfp4 against convert_moe_packed_tensors, bit for bit\n\n";
  out << pad("implementation", 16) << pad("dtype", 7) << pad("ran", 8) << pad("elements", 10) << pad("differing", 11)
      << "pass\n";
  for (const Mxfp4Comparison& row : report.comparisons) {
    out << pad(row.implementation, 16) << pad(dtype_text(row.dtype), 7) << pad(row.ran, 8)
        << pad(std::to_string(row.elements), 10) << pad(std::to_string(row.differing), 11)
        << (row.pass() ? "yes" : "NO") << '\n';
  }
  out << '\n';
  out << "  body: the op's body as written (numerics exact); native: the CPU op table's kernel (numerics equivalent)\n";
  out << (report.pass() ? "PASS: every element bit-identical\n" : "FAIL: see the rows marked NO\n");
  return out.str();
}

std::string render_json(const Mxfp4Report& report) {
  std::ostringstream out;
  out << "{\"case\": " << syntax::json_quote(report.case_name) << ", \"checks\": [";
  for (size_t i = 0; i < report.comparisons.size(); ++i) {
    const Mxfp4Comparison& row = report.comparisons[i];
    out << (i ? ", " : "") << "{\"name\": " << syntax::json_quote(row.implementation + " " + dtype_text(row.dtype))
        << ", \"implementation\": " << syntax::json_quote(row.implementation) << ", \"ran\": " << syntax::json_quote(row.ran)
        << ", \"dtype\": " << syntax::json_quote(dtype_text(row.dtype)) << ", \"elements\": " << row.elements
        << ", \"differing\": " << row.differing << ", \"pass\": " << (row.pass() ? "true" : "false") << '}';
  }
  out << "], \"pass\": " << (report.pass() ? "true" : "false") << "}\n";
  return out.str();
}

std::string render_markdown(const Mxfp4Report& report) {
  std::ostringstream out;
  out << "`std.quant::dequantize_mxfp4` on `" << report.case_name << "` against `convert_moe_packed_tensors`:\n\n";
  out << "| implementation | dtype | elements | differing | pass |\n| --- | --- | --- | --- | --- |\n";
  for (const Mxfp4Comparison& row : report.comparisons) {
    out << "| " << row.implementation << " (ran: " << row.ran << ") | " << dtype_text(row.dtype) << " | "
        << row.elements << " | " << row.differing << " | " << (row.pass() ? "yes" : "**no**") << " |\n";
  }
  return out.str();
}

}  // namespace linnet::validate
