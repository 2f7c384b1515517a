// The progress display of the commands that can run long (`run`,
// `generate`, `validate`, `spec-test`): one status line on stderr, redrawn
// in place, such as
//
//   loading weights 12/291 · 3 s
//   validate decode 4/12 · decode · layers 2/32 · 9 s
//
// It appears only once the command has run for `delay` seconds (a quick
// command shows nothing), is redrawn at most every `interval` seconds, and
// is erased by clear() before anything else is written to the terminal
// and when the command ends. It is an eval::ProgressObserver: the
// interpreter, the session and `validate` report to it and know nothing of
// terminals. make_progress_line() decides whether a command gets one.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "linnet/eval/progress.hpp"

namespace linnet::cli {

class ProgressLine : public eval::ProgressObserver {
 public:
  // Seconds on a monotonic clock; tests give a fake one.
  using Clock = std::function<double()>;
  struct Settings {
    double delay = 1.5;      // seconds before the line first appears
    double interval = 0.1;   // seconds between redraws
    int width = 80;          // the terminal's columns: a longer line is cut (it would wrap)
  };

  ProgressLine(std::ostream& out, Clock clock, Settings settings);
  ~ProgressLine() override;
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void stage(const eval::ProgressStage& stage) override;
  void call_started(std::string_view name) override;
  void loop_step(const eval::LoopStep& step) override;
  void loop_finished(int depth) override;

  // Erases the line if it is shown; the next report draws it again.
  void clear();
  // Erases the line for good: later reports draw nothing (text streams to the terminal).
  void stop();
  // The line as it would be drawn now (without the elapsed time).
  std::string text() const;
  bool shown() const { return drawn_width_ > 0; }

 private:
  struct Loop {
    std::string label;
    int64_t index = 0;
    int64_t count = -1;
  };
  // Redraws, unless the line was drawn less than `interval` ago and `urgent` is false.
  void changed(bool urgent = false);

  std::ostream& out_;
  Clock clock_;
  Settings settings_;
  double start_ = 0;
  double last_draw_ = -1;
  size_t drawn_width_ = 0;
  bool stopped_ = false;  // columns of the line on the terminal; 0: none shown
  std::string stage_what_;
  std::string stage_;
  std::string call_;
  std::vector<Loop> loops_;
};

// A line on stderr for a command, or null when there should be none: when
// `wanted` is false (--no-progress, --json), stderr is not a terminal,
// TERM is `dumb`, or this is not the first of several processes.
std::shared_ptr<ProgressLine> make_progress_line(bool wanted, int rank = 0);

}  // namespace linnet::cli
