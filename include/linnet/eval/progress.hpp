// What a long run is doing, told as it happens to whoever shows it. The
// interpreter, a card session and `validate` report here; they draw
// nothing themselves (the command line draws a status line on a terminal,
// src/cli/progress_line.hpp). Every call comes from the thread that runs
// the interpreter, and an observer must be cheap: loop steps are reported
// once per iteration.
#pragma once

#include <cstdint>
#include <string_view>

namespace linnet::eval {

// A caller's coarse stage: "loading weights", tensor 12 of 291; "validate
// decode", step 3 of 12; "spec-test", case 7 of 40 with its file as `detail`.
struct ProgressStage {
  std::string_view what;
  int64_t index = 0;  // the item being worked on, from 0
  int64_t count = 0;  // 0: not counted
  std::string_view detail;
};

// One iteration of a loop starts: `static for`, `for`, or `while` (whose
// count is unknown). `depth` counts the loops around it in the running
// entry call, from 0; a deeper loop runs inside the one of `depth - 1`.
struct LoopStep {
  std::string_view label;  // the array iterated (`layers`) or the loop variable (`i`)
  int64_t index = 0;       // iterations begun before this one
  int64_t count = -1;      // -1: unknown (`while`)
  int depth = 0;
};

class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  // A new stage replaces the previous one, with its call and loops.
  virtual void stage(const ProgressStage& stage) = 0;
  // Interpreter::call / call_function starts the entry `name`; its loops follow.
  virtual void call_started(std::string_view name) = 0;
  virtual void loop_step(const LoopStep& step) = 0;
  // The loop at `depth` has ended (or was left by an error).
  virtual void loop_finished(int depth) = 0;
};

}  // namespace linnet::eval
