// The diagnostics engine shared by every command: a Diagnostic carries a stable
// code (the upstream specification's table), a message, a primary span with an
// optional label, secondary labelled spans, notes and help lines. It renders as
// upstream's text format or as the JSON document of upstream's tooling docs.
#pragma once

#include <string>
#include <vector>

#include "linnet/syntax/source.hpp"

namespace linnet::syntax {

enum class Severity { Error, Warning, Note };

struct Label {
  Span span;
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;     // "E2207", "W1001"; empty for a finding with no code
  std::string message;  // one line, lower case, no final period
  Span span;            // primary location; invalid for findings with no position
  std::string label;    // printed after the primary carets
  std::vector<Label> related;
  std::vector<std::string> notes;
  std::vector<std::string> help;

  Diagnostic& note(std::string text) { notes.push_back(std::move(text)); return *this; }
  Diagnostic& with_help(std::string text) { help.push_back(std::move(text)); return *this; }
  Diagnostic& with_label(std::string text) { label = std::move(text); return *this; }
  Diagnostic& also(Span where, std::string text) { related.push_back({where, std::move(text)}); return *this; }
};

Diagnostic error(std::string code, std::string message, Span span);
Diagnostic warning(std::string code, std::string message, Span span);

// Collects diagnostics for one command. Adding is cheap; rendering happens once at the end.
class Diagnostics {
 public:
  Diagnostic& add(Diagnostic diagnostic);
  Diagnostic& error(std::string code, std::string message, Span span) {
    return add(syntax::error(std::move(code), std::move(message), span));
  }
  const std::vector<Diagnostic>& all() const { return items_; }
  size_t error_count() const;
  size_t warning_count() const;
  bool has_errors() const { return error_count() > 0; }
  // Keeps at most `limit` errors; further ones are counted, not stored
  // (so hostile input cannot produce unbounded output).
  void set_error_limit(size_t limit) { error_limit_ = limit; }
  size_t suppressed() const { return suppressed_; }
  void clear() {
    items_.clear();
    suppressed_ = errors_ = warnings_ = 0;
  }
  void append(const Diagnostics& other);

 private:
  std::vector<Diagnostic> items_;
  size_t error_limit_ = 200;
  size_t suppressed_ = 0;
  // Counts of the stored items by severity, kept as they are added so that
  // adding stays O(1) however many diagnostics hostile input produces.
  size_t errors_ = 0;
  size_t warnings_ = 0;
  Diagnostic overflow_;
};

// Upstream's text format: "error E2207: message", a blank line, "  --> file:line:col",
// the source line with carets and labels, then "= note:" and "= help:" lines.
std::string render_text(const Diagnostic& diagnostic, const SourceManager& sources);
std::string render_text(const Diagnostics& diagnostics, const SourceManager& sources);

// The JSON document {"version": 1, "diagnostics": [...], "summary": {...}}.
std::string render_json(const Diagnostics& diagnostics, const SourceManager& sources);

// `text` safe to print on a terminal: control characters (but line breaks
// and tabs), bidirectional overrides and bytes that are not UTF-8 written as
// `\u{1b}` and `\xff`, as render_text writes snippets and messages. For
// messages printed on their own that quote a file's contents.
std::string printable(std::string_view text);

// JSON string escaping, shared by every JSON writer in the project:
// json_escape gives the inside of a string literal, json_quote the literal.
std::string json_escape(std::string_view text);
std::string json_quote(std::string_view text);

}  // namespace linnet::syntax
