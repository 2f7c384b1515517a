#include "linnet/syntax/diagnostic.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "linnet/syntax/suggest.hpp"

namespace linnet::syntax {

Diagnostic error(std::string code, std::string message, Span span) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.code = std::move(code);
  d.message = std::move(message);
  d.span = span;
  return d;
}

Diagnostic warning(std::string code, std::string message, Span span) {
  Diagnostic d = error(std::move(code), std::move(message), span);
  d.severity = Severity::Warning;
  return d;
}

Diagnostic& Diagnostics::add(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::Error && error_count() >= error_limit_) {
    ++suppressed_;
    overflow_ = std::move(diagnostic);
    return overflow_;
  }
  if (diagnostic.severity == Severity::Error) ++errors_;
  if (diagnostic.severity == Severity::Warning) ++warnings_;
  items_.push_back(std::move(diagnostic));
  return items_.back();
}

size_t Diagnostics::error_count() const { return errors_; }

size_t Diagnostics::warning_count() const { return warnings_; }

void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.items_) add(d);
  suppressed_ += other.suppressed_;
}

namespace {

const char* severity_word(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// Text as a terminal can show it without being steered by it: control
// characters (a binary nest.toml's bytes, an ESC that would recolour the
// terminal, a CR that would overwrite the line), the bidirectional overrides
// that reorder what is shown, and bytes that are not UTF-8 are written as
// escapes (`\u{1b}`, `\xff`); everything else is kept. `starts[k]` is where
// column k + 1 of the original (columns as count_code_points counts them)
// begins in `text`, and its last entry is the end, so that carets stay under
// what they mark.
struct Displayed {
  std::string text;
  std::vector<uint32_t> starts;
};

// The length of the valid UTF-8 sequence at `at` and its code point, or 0.
size_t utf8_sequence(std::string_view bytes, size_t at, uint32_t& code) {
  const unsigned char lead = static_cast<unsigned char>(bytes[at]);
  size_t length = 0;
  uint32_t low = 0;  // the smallest code point of that length (no overlong forms)
  if (lead < 0x80) {
    code = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1F, low = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0F, low = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07, low = 0x10000;
  } else {
    return 0;
  }
  if (at + length > bytes.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char next = static_cast<unsigned char>(bytes[at + i]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  if (code < low || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

bool shown_escaped(uint32_t code, bool keep_line_breaks) {
  if (code == '\t') return false;
  if (code == '\n') return !keep_line_breaks;
  return code < 0x20 || (code >= 0x7F && code <= 0x9F) || (code >= 0x202A && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0xFEFF;
}

Displayed displayed(std::string_view bytes, bool keep_line_breaks) {
  Displayed out;
  char escape[16];
  size_t at = 0;
  while (at < bytes.size()) {
    const unsigned char byte = static_cast<unsigned char>(bytes[at]);
    const bool continuation = (byte & 0xC0) == 0x80;
    if (!continuation) out.starts.push_back(static_cast<uint32_t>(out.text.size()));
    uint32_t code = 0;
    const size_t length = continuation ? 0 : utf8_sequence(bytes, at, code);
    if (length == 0) {  // not UTF-8: the byte's value
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out.text += escape;
      ++at;
    } else if (shown_escaped(code, keep_line_breaks)) {
      std::snprintf(escape, sizeof escape, "\\u{%x}", code);
      out.text += escape;
      at += length;
    } else {
      out.text.append(bytes.substr(at, length));
      at += length;
    }
  }
  if (out.starts.empty()) out.starts.push_back(0);
  out.starts.push_back(static_cast<uint32_t>(out.text.size()));
  return out;
}

// Where 1-based `column` of a line begins in its displayed form (columns
// past the end continue one character each).
uint32_t displayed_column(const Displayed& line, uint32_t column) {
  const size_t columns = line.starts.size() - 1;
  if (column - 1 < columns) return line.starts[column - 1];
  return line.starts.back() + static_cast<uint32_t>(column - 1 - columns);
}

std::string shown(std::string_view text) { return displayed(text, /*keep_line_breaks=*/true).text; }

// One underline under a source line: a column range and its marker and label.
struct Underline {
  uint32_t start_column;  // 1-based, code points
  uint32_t width;         // code points, at least 1
  char marker;            // '^' primary, '-' secondary
  std::string text;
};

Underline underline_for(const SourceFile& file, Span span, char marker, const std::string& text, uint32_t& line) {
  LineColumn start = file.line_column(span.begin);
  LineColumn end = file.line_column(span.end);
  line = start.line;
  uint32_t width;
  if (end.line == start.line) {
    width = end.column > start.column ? end.column - start.column : 1;
  } else {
    // A span over several lines is underlined to the end of its first line.
    uint32_t line_length = count_code_points(file.line_text(start.line));
    width = line_length >= start.column ? line_length - start.column + 1 : 1;
  }
  return Underline{start.column, width, marker, text};
}

// Renders the span's lines of one file with their underlines. `gutter` is the
// width of the line-number column; every margin line is indented by it.
void render_snippet(std::ostringstream& out, const SourceFile& file, const std::map<uint32_t, std::vector<Underline>>& lines,
                    size_t gutter) {
  const std::string margin(gutter, ' ');
  out << margin << " |\n";
  uint32_t previous = 0;
  for (const auto& [line, underlines] : lines) {
    if (previous != 0 && line > previous + 1) out << margin << " ...\n";
    previous = line;
    std::string number = std::to_string(line);
    const Displayed text_shown = displayed(file.line_text(line), /*keep_line_breaks=*/false);
    out << std::string(gutter - number.size(), ' ') << number << " | " << text_shown.text << '\n';
    for (const Underline& u : underlines) {
      const uint32_t from = displayed_column(text_shown, u.start_column);
      const uint32_t to = std::max(from + 1, displayed_column(text_shown, u.start_column + u.width));
      std::string text = margin + " | " + std::string(from, ' ') + std::string(to - from, u.marker);
      if (!u.text.empty()) text += " " + shown(u.text);
      out << text << '\n';
    }
  }
}

// Upstream's margin: the line-number column is as wide as the largest line
// number shown, and never narrower than two characters.
size_t gutter_width(uint32_t largest_line) { return std::max<size_t>(2, std::to_string(largest_line).size()); }

}  // namespace

std::string render_text(const Diagnostic& d, const SourceManager& sources) {
  std::ostringstream out;
  out << severity_word(d.severity);
  if (!d.code.empty()) out << ' ' << d.code;
  out << ": " << shown(d.message) << '\n';

  const bool located = d.span.valid() && d.span.file < sources.size();
  size_t gutter = 2;
  if (located) {
    const SourceFile& file = sources.file(d.span.file);
    std::map<uint32_t, std::vector<Underline>> lines;
    uint32_t line = 0;
    Underline primary = underline_for(file, d.span, '^', d.label, line);
    lines[line].push_back(primary);
    std::vector<const Label*> elsewhere;
    for (const Label& label : d.related) {
      if (!label.span.valid() || label.span.file >= sources.size()) continue;
      if (label.span.file != d.span.file) {
        elsewhere.push_back(&label);
        continue;
      }
      uint32_t related_line = 0;
      Underline u = underline_for(file, label.span, '-', label.message, related_line);
      lines[related_line].push_back(u);
    }
    gutter = gutter_width(lines.rbegin()->first);
    LineColumn at = file.line_column(d.span.begin);
    out << '\n' << std::string(gutter, ' ') << "--> " << shown(file.path()) << ':' << at.line << ':' << at.column << '\n';
    render_snippet(out, file, lines, gutter);
    for (const Label* label : elsewhere) {
      const SourceFile& other = sources.file(label->span.file);
      std::map<uint32_t, std::vector<Underline>> other_lines;
      uint32_t other_line = 0;
      Underline u = underline_for(other, label->span, '-', label->message, other_line);
      other_lines[other_line].push_back(u);
      LineColumn other_at = other.line_column(label->span.begin);
      out << std::string(gutter, ' ') << "--> " << shown(other.path()) << ':' << other_at.line << ':' << other_at.column
          << '\n';
      render_snippet(out, other, other_lines, std::max(gutter, gutter_width(other_line)));
    }
  }
  if (!d.notes.empty() || !d.help.empty()) {
    const std::string margin(gutter, ' ');
    if (located) out << margin << " |\n";
    for (const auto& note : d.notes) out << margin << " = note: " << shown(note) << '\n';
    for (const auto& help : d.help) out << margin << " = help: " << shown(help) << '\n';
  }
  return out.str();
}

std::string printable(std::string_view text) { return shown(text); }

std::string render_text(const Diagnostics& diagnostics, const SourceManager& sources) {
  std::string text;
  for (const auto& d : diagnostics.all()) {
    if (!text.empty()) text += '\n';
    text += render_text(d, sources);
  }
  if (diagnostics.suppressed() > 0) {
    if (!text.empty()) text += '\n';
    text += "note: " + count_of(diagnostics.suppressed(), "further error was", "further errors were") + " not shown\n";
  }
  return text;
}

// The escapes of JavaScript's JSON.stringify: the short forms where JSON has
// them, \u00XX for the other control characters, everything else as is (so
// a chat template's `tojson` matches the reference renderer byte for byte).
std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string json_quote(std::string_view text) { return '"' + json_escape(text) + '"'; }

namespace {

// JSON text must be UTF-8: a byte that is not (a binary file's, echoed in
// a message) becomes U+FFFD.
std::string json_text(std::string_view text) {
  std::string valid;
  valid.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    uint32_t code = 0;
    const size_t length = utf8_sequence(text, at, code);
    if (length == 0) {
      valid += "\xEF\xBF\xBD";
      ++at;
    } else {
      valid.append(text.substr(at, length));
      at += length;
    }
  }
  return json_escape(valid);
}

void json_position(std::ostringstream& out, const SourceFile& file, uint32_t offset) {
  LineColumn lc = file.line_column(offset);
  out << "{\"line\": " << lc.line << ", \"column\": " << lc.column << ", \"offset\": " << offset << '}';
}

void json_location(std::ostringstream& out, Span span, const SourceManager& sources) {
  if (!span.valid() || span.file >= sources.size()) {
    out << "null";
    return;
  }
  const SourceFile& file = sources.file(span.file);
  out << "{\"file\": \"" << json_text(file.path()) << "\", \"start\": ";
  json_position(out, file, span.begin);
  out << ", \"end\": ";
  json_position(out, file, span.end);
  out << '}';
}

void json_strings(std::ostringstream& out, const std::vector<std::string>& items) {
  out << '[';
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << '"' << json_text(items[i]) << '"';
  out << ']';
}

}  // namespace

std::string render_json(const Diagnostics& diagnostics, const SourceManager& sources) {
  std::ostringstream out;
  out << "{\n  \"version\": 1,\n  \"diagnostics\": [";
  bool first = true;
  for (const auto& d : diagnostics.all()) {
    out << (first ? "\n" : ",\n") << "    {\"code\": \"" << json_text(d.code) << "\", \"severity\": \""
        << severity_word(d.severity) << "\", \"message\": \"" << json_text(d.message) << "\", \"label\": \""
        << json_text(d.label) << "\", \"location\": ";
    json_location(out, d.span, sources);
    out << ", \"related\": [";
    for (size_t i = 0; i < d.related.size(); ++i) {
      out << (i ? ", " : "") << "{\"message\": \"" << json_text(d.related[i].message) << "\", \"location\": ";
      json_location(out, d.related[i].span, sources);
      out << '}';
    }
    out << "], \"notes\": ";
    json_strings(out, d.notes);
    out << ", \"help\": ";
    json_strings(out, d.help);
    out << '}';
    first = false;
  }
  out << (first ? "]" : "\n  ]") << ",\n  \"summary\": {\"errors\": " << diagnostics.error_count() + diagnostics.suppressed()
      << ", \"warnings\": " << diagnostics.warning_count() << "}\n}\n";
  return out.str();
}

}  // namespace linnet::syntax
