#include "linnet/syntax/source.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "linnet/syntax/file_reading.hpp"

namespace linnet::syntax {

Span Span::merge(Span a, Span b) {
  if (!a.valid()) return b;
  if (!b.valid() || a.file != b.file) return a;
  return Span{a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

uint32_t count_code_points(std::string_view bytes) {
  uint32_t count = 0;
  for (unsigned char byte : bytes) {
    // Continuation bytes (10xxxxxx) do not start a code point.
    if ((byte & 0xC0) != 0x80) ++count;
  }
  return count;
}

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

LineColumn SourceFile::line_column(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line_index = static_cast<uint32_t>(next - line_starts_.begin()) - 1;
  uint32_t start = line_starts_[line_index];
  std::string_view prefix(text_.data() + start, offset - start);
  return LineColumn{line_index + 1, count_code_points(prefix) + 1};
}

uint32_t SourceFile::offset_of(LineColumn position) const {
  const uint32_t size = static_cast<uint32_t>(text_.size());
  if (position.line == 0) return 0;
  if (position.line > line_starts_.size()) return size;
  uint32_t offset = line_starts_[position.line - 1];
  // Columns count code points; step over continuation bytes.
  for (uint32_t column = 1; column < position.column && offset < size; ++column) {
    ++offset;
    while (offset < size && (static_cast<unsigned char>(text_[offset]) & 0xC0) == 0x80) ++offset;
  }
  return offset;
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  uint32_t start = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1 : static_cast<uint32_t>(text_.size());
  std::string_view text(text_.data() + start, end - start);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

SourceManager::SourceManager() {
  // Index 0 is reserved so that a default Span means "no location".
  files_.push_back(std::make_unique<SourceFile>("<none>", ""));
}

uint32_t SourceManager::add(std::string path, std::string text) {
  files_.push_back(std::make_unique<SourceFile>(std::move(path), std::move(text)));
  return static_cast<uint32_t>(files_.size() - 1);
}

uint32_t SourceManager::load(const std::string& path, std::string& error) {
  // Never blocks on a FIFO, and says what a path that is no file is.
  std::string text, problem;
  if (!read_whole_file(path, text, problem)) {
    error = "`" + path + "` " + problem;
    return 0;
  }
  return add(path, std::move(text));
}

}  // namespace linnet::syntax
