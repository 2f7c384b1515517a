// The status line of long commands (progress_line.hpp).
#include "progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace linnet::cli {

namespace {

// "3/32": the item being worked on, counted from 1.
std::string counted(int64_t index, int64_t count) {
  if (count <= 0) return std::to_string(index + 1);
  return std::to_string(std::min(index + 1, count)) + "/" + std::to_string(count);
}

// Columns a UTF-8 string takes (each code point one column: the line
// holds names and `·`).
size_t columns(const std::string& text) {
  size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

// The longest prefix of `text` of at most `limit` columns, cut between code points.
std::string cut(const std::string& text, size_t limit) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (count == limit) return text.substr(0, i);
    ++count;
  }
  return text;
}

}  // namespace

ProgressLine::ProgressLine(std::ostream& out, Clock clock, Settings settings)
    : out_(out), clock_(std::move(clock)), settings_(settings), start_(clock_()) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::stage(const eval::ProgressStage& stage) {
  // A new stage is drawn at once; the next item of the same one may wait.
  const bool new_stage = stage.what != stage_what_;
  stage_what_ = std::string(stage.what);
  stage_ = stage_what_;
  if (stage.count > 0) stage_ += " " + counted(stage.index, stage.count);
  if (!stage.detail.empty()) stage_ += ": " + std::string(stage.detail);
  call_.clear();
  loops_.clear();
  changed(new_stage);
}

void ProgressLine::call_started(std::string_view name) {
  call_ = std::string(name);
  loops_.clear();
  changed(true);
}

void ProgressLine::loop_step(const eval::LoopStep& step) {
  if (step.depth < 0) return;
  const size_t depth = static_cast<size_t>(step.depth);
  if (loops_.size() > depth + 1) loops_.resize(depth + 1);
  while (loops_.size() <= depth) loops_.push_back({});
  loops_[depth] = {std::string(step.label), step.index, step.count};
  changed();
}

void ProgressLine::loop_finished(int depth) {
  if (depth >= 0 && loops_.size() > static_cast<size_t>(depth)) loops_.resize(static_cast<size_t>(depth));
  changed();
}

std::string ProgressLine::text() const {
  std::string line = stage_;
  auto add = [&line](const std::string& part) { line += (line.empty() ? "" : " \u00b7 ") + part; };
  if (!call_.empty()) add(call_);
  // The outer loops say where a long call is; three levels are enough.
  for (size_t i = 0; i < loops_.size() && i < 3; ++i) {
    add(loops_[i].label + " " + counted(loops_[i].index, loops_[i].count));
  }
  return line;
}

void ProgressLine::changed(bool urgent) {
  if (stopped_) return;
  const double now = clock_();
  if (now - start_ < settings_.delay) return;
  if (!urgent && drawn_width_ > 0 && now - last_draw_ < settings_.interval) return;
  last_draw_ = now;
  std::string line = text();
  const long elapsed = static_cast<long>(now - start_);
  line += (line.empty() ? "" : " \u00b7 ") + std::to_string(elapsed) + " s";
  // One column short of the width: a line that fills it would wrap on some terminals.
  const size_t limit = settings_.width > 1 ? static_cast<size_t>(settings_.width - 1) : 1;
  line = cut(line, limit);
  const size_t width = columns(line);
  // Spaces over what is left of a longer previous line.
  out_ << '\r' << line << std::string(drawn_width_ > width ? drawn_width_ - width : 0, ' ');
  if (drawn_width_ > width) out_ << '\r' << line;
  out_.flush();
  drawn_width_ = width;
}

void ProgressLine::clear() {
  if (drawn_width_ == 0) return;
  out_ << '\r' << std::string(drawn_width_, ' ') << '\r';
  out_.flush();
  drawn_width_ = 0;
}

void ProgressLine::stop() {
  clear();
  stopped_ = true;
}

std::shared_ptr<ProgressLine> make_progress_line(bool wanted, int rank) {
  if (!wanted || rank != 0 || ::isatty(STDERR_FILENO) != 1) return nullptr;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return nullptr;
  ProgressLine::Settings settings;
  // LINNET_PROGRESS_DELAY: seconds before the line appears (tests set 0).
  if (const char* delay = std::getenv("LINNET_PROGRESS_DELAY"); delay != nullptr && *delay != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(delay, &end);
    if (end != delay && *end == '\0' && seconds >= 0 && seconds < 1e6) settings.delay = seconds;
  }
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) settings.width = size.ws_col;
  auto clock = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  return std::make_shared<ProgressLine>(std::cerr, clock, settings);
}

}  // namespace linnet::cli
