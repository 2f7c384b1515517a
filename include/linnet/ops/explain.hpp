// `linnet explain`: which op call sites an entry reaches, and whether each
// runs a native kernel or its body under a numerics policy, and why.
//
// The analysis is static. It walks the entry's syntax tree with the bound
// generics: through calls of functions and of sub-blocks' methods (a sub's
// generic arguments evaluated in the caller's bindings), `static for` over
// sub arrays and ranges (their trip counts multiply how often a site is
// reached), and into an op's body wherever that body runs (an op inside a
// body that a kernel replaces never runs). Callee names resolve through the
// program's modules and imports. An op's dtype is its generic `T` when the
// call binds it or it can be inferred from the argument types the walk
// tracks (declared parameter, member and result types; casts; the dtype-
// preserving builtins); otherwise it is reported unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linnet/eval/dispatch.hpp"
#include "linnet/eval/value.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::ops {

struct ExplainRequest {
  const syntax::Program* program = nullptr;
  const syntax::SourceManager* sources = nullptr;
  // The entry: a method of `block` (declared in `module`), or a module-level
  // function of `module` when `block` is null.
  const syntax::Module* module = nullptr;
  const syntax::ast::BlockItem* block = nullptr;
  const syntax::ast::FunctionItem* entry = nullptr;
  // The block's generics and the entry's own ones, as far as they are known
  // (defaults not given here are applied by explain_entry).
  eval::GenericBindings generics;
  eval::NumericsPolicy policy = eval::NumericsPolicy::Exact;
  const OpTable* table = nullptr;
};

// How an op call site runs.
enum class SiteDecision { Native, Body, Unknown };

const char* site_decision_name(SiteDecision decision);  // "native", "body", "unknown"

struct ExplainedSite {
  syntax::Span span;                   // the call expression
  std::string location;                // "path:line:col"
  std::string op;                      // qualified: "std.nn.linear::linear"
  std::optional<tensor::DType> dtype;  // the op's T, when known
  SiteDecision decision = SiteDecision::Unknown;
  std::string reason;                  // "native: bf16 kernel, valid under equivalent (...)"
  std::string within;                  // the function the call is written in: "gpt_oss::Model.forward"
  // How often one entry call reaches the site; nothing when a runtime loop
  // or an array of unknown length is on the way.
  std::optional<int64_t> reached;
};

struct Explanation {
  std::string entry;          // "gpt_oss::Model.forward"
  std::string bindings;       // "<Vocab = 201088, ..., T = bf16>"
  eval::NumericsPolicy policy = eval::NumericsPolicy::Exact;
  std::string table;          // "cpu"
  std::vector<ExplainedSite> sites;  // in the order the walk meets them
  std::vector<std::string> notes;    // calls the walk could not follow
};

// Walks the entry. Throws std::invalid_argument for an incomplete request.
Explanation explain_entry(const ExplainRequest& request);

// The report `linnet explain` prints: a header, one line per site, a summary.
std::string render_explanation(const Explanation& explanation);

}  // namespace linnet::ops
