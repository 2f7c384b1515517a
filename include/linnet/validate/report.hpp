// How a validation report is shown: a text table per case (the default),
// one JSON object (--json), or a Markdown table like the cards' README
// validation tables (--markdown).
//
// The JSON object is the one issue 7 specifies:
//   {"case": "mistral-a", "card": "mistral-7b-instruct-v0.3", "dtype": "f32",
//    "checks": [{"name": "forward", "max_abs_diff": 2.4e-07, "mean_abs_diff": 3.1e-08,
//                "argmax_agreement": 1.0, "tokens_equal": null, "pass": true}, ...],
//    "pass": true}
// A measurement a check does not make (`tokens_equal` of `forward`, the
// differences of `generate`), or one that is not finite, is null.
#pragma once

#include <string>

#include "linnet/validate/mxfp4.hpp"
#include "linnet/validate/validate.hpp"

namespace linnet::validate {

std::string render_text(const Report& report);
std::string render_json(const Report& report);
std::string render_markdown(const Report& report);

// The MXFP4 comparison: a line per implementation and dtype.
std::string render_text(const Mxfp4Report& report);
// {"case", "checks": [{"name": "body bf16", "implementation", "dtype", "elements", "differing", "pass"}], "pass"}
std::string render_json(const Mxfp4Report& report);
std::string render_markdown(const Mxfp4Report& report);

}  // namespace linnet::validate
