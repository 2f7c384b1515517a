// Source files and spans: every diagnostic points into a SourceFile by byte offsets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::syntax {

// A half-open byte range [begin, end) in one source file.
struct Span {
  uint32_t file = 0;   // index into the SourceManager; 0 is "no file"
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != 0; }
  static Span merge(Span a, Span b);  // the smallest span covering both (same file)
};

// A 1-based line and column; columns count Unicode code points.
struct LineColumn {
  uint32_t line = 1;
  uint32_t column = 1;
};

class SourceFile {
 public:
  SourceFile(std::string path, std::string text);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  LineColumn line_column(uint32_t offset) const;
  // The inverse: the byte offset of a 1-based line and code-point column,
  // clamped to the file (for positions reported by other parsers, e.g. toml++).
  uint32_t offset_of(LineColumn position) const;
  // The text of a 1-based line, without its line terminator.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

// Owns every file read during one command; spans refer to files by index.
class SourceManager {
 public:
  SourceManager();
  uint32_t add(std::string path, std::string text);
  // Reads a file from disk; returns 0 (and sets `error`) if it cannot be read.
  uint32_t load(const std::string& path, std::string& error);
  const SourceFile& file(uint32_t id) const { return *files_.at(id); }
  size_t size() const { return files_.size(); }

 private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

// Counts code points in a byte range of UTF-8 (invalid bytes count one each).
uint32_t count_code_points(std::string_view bytes);

}  // namespace linnet::syntax
