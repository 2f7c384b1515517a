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
    out << std::string(gutter - number.size(), ' ') << number << " | " << file.line_text(line) << '\n';
    for (const Underline& u : underlines) {
      std::string text = margin + " | " + std::string(u.start_column - 1, ' ') + std::string(u.width, u.marker);
      if (!u.text.empty()) text += " " + u.text;
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
  out << ": " << d.message << '\n';

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
    out << '\n' << std::string(gutter, ' ') << "--> " << file.path() << ':' << at.line << ':' << at.column << '\n';
    render_snippet(out, file, lines, gutter);
    for (const Label* label : elsewhere) {
      const SourceFile& other = sources.file(label->span.file);
      std::map<uint32_t, std::vector<Underline>> other_lines;
      uint32_t other_line = 0;
      Underline u = underline_for(other, label->span, '-', label->message, other_line);
      other_lines[other_line].push_back(u);
      LineColumn other_at = other.line_column(label->span.begin);
      out << std::string(gutter, ' ') << "--> " << other.path() << ':' << other_at.line << ':' << other_at.column
          << '\n';
      render_snippet(out, other, other_lines, std::max(gutter, gutter_width(other_line)));
    }
  }
  if (!d.notes.empty() || !d.help.empty()) {
    const std::string margin(gutter, ' ');
    if (located) out << margin << " |\n";
    for (const auto& note : d.notes) out << margin << " = note: " << note << '\n';
    for (const auto& help : d.help) out << margin << " = help: " << help << '\n';
  }
  return out.str();
}

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
  out << "{\"file\": \"" << json_escape(file.path()) << "\", \"start\": ";
  json_position(out, file, span.begin);
  out << ", \"end\": ";
  json_position(out, file, span.end);
  out << '}';
}

void json_strings(std::ostringstream& out, const std::vector<std::string>& items) {
  out << '[';
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << '"' << json_escape(items[i]) << '"';
  out << ']';
}

}  // namespace

std::string render_json(const Diagnostics& diagnostics, const SourceManager& sources) {
  std::ostringstream out;
  out << "{\n  \"version\": 1,\n  \"diagnostics\": [";
  bool first = true;
  for (const auto& d : diagnostics.all()) {
    out << (first ? "\n" : ",\n") << "    {\"code\": \"" << json_escape(d.code) << "\", \"severity\": \""
        << severity_word(d.severity) << "\", \"message\": \"" << json_escape(d.message) << "\", \"label\": \""
        << json_escape(d.label) << "\", \"location\": ";
    json_location(out, d.span, sources);
    out << ", \"related\": [";
    for (size_t i = 0; i < d.related.size(); ++i) {
      out << (i ? ", " : "") << "{\"message\": \"" << json_escape(d.related[i].message) << "\", \"location\": ";
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
