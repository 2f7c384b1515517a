// The progress line: the renderer on a string stream with a fake clock
// (when it appears, how often it is redrawn, what it says, how it is
// erased), and the commands: silent when stderr is not a terminal, drawn on
// a terminal (a pseudo-terminal made by util-linux `script`), and never
// with --no-progress.
#include <sstream>

#include "cli_test_util.hpp"
#include "progress_line.hpp"

using cli_test::contains;
using cli_test::run_linnet;
using linnet::cli::ProgressLine;

namespace {

struct FakeClock {
  double now = 100;  // any start: the line counts from its construction
};

ProgressLine::Settings settings(int width = 80) {
  ProgressLine::Settings result;
  result.delay = 1.5;
  result.interval = 0.1;
  result.width = width;
  return result;
}

}  // namespace

TEST_CASE("the progress line appears after the delay and says what runs", "[cli][progress]") {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine line(out, [&clock] { return clock.now; }, settings());

  line.stage({"loading weights", 0, 21, {}});
  clock.now += 1.0;
  line.stage({"loading weights", 1, 21, {}});
  CHECK(out.str().empty());  // a quick command shows nothing
  CHECK_FALSE(line.shown());

  clock.now += 1.0;  // 2 s in
  line.stage({"loading weights", 2, 21, {}});
  CHECK(out.str() == "\rloading weights 3/21 \u00b7 2 s");
  CHECK(line.shown());

  // A call and its loops, innermost last.
  line.stage({"running", 0, 0, {}});
  line.call_started("forward");
  CHECK(line.text() == "running \u00b7 forward");
  line.loop_step({"layers", 1, 4, 0});
  line.loop_step({"i", 0, 3, 1});
  CHECK(line.text() == "running \u00b7 forward \u00b7 layers 2/4 \u00b7 i 1/3");
  line.loop_finished(1);
  CHECK(line.text() == "running \u00b7 forward \u00b7 layers 2/4");
  line.loop_step({"while", 41, -1, 1});
  CHECK(line.text() == "running \u00b7 forward \u00b7 layers 2/4 \u00b7 while 42");
  line.loop_finished(0);
  CHECK(line.text() == "running \u00b7 forward");
}

TEST_CASE("the progress line is redrawn at most every interval, and a new stage at once", "[cli][progress]") {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine line(out, [&clock] { return clock.now; }, settings());
  clock.now += 2;
  line.stage({"validate decode", 0, 12, {}});
  const std::string first = out.str();
  CHECK(first == "\rvalidate decode 1/12 \u00b7 2 s");

  line.stage({"validate decode", 1, 12, {}});  // the same stage within the interval: not drawn
  line.loop_step({"layers", 0, 2, 0});
  CHECK(out.str() == first);

  clock.now += 0.2;
  line.loop_step({"layers", 1, 2, 0});
  CHECK(out.str() == first + "\rvalidate decode 2/12 \u00b7 layers 2/2 \u00b7 2 s");

  const std::string second = out.str();
  line.stage({"validate generate", 0, 0, {}});  // a new stage: drawn at once, shorter, so the rest is blanked
  const std::string drawn = out.str().substr(second.size());
  CHECK(drawn.rfind("\rvalidate generate \u00b7 2 s   ", 0) == 0);
  CHECK(drawn.ends_with("\rvalidate generate \u00b7 2 s"));
}

TEST_CASE("the progress line is erased before other output, cut to the width, and stops", "[cli][progress]") {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine line(out, [&clock] { return clock.now; }, settings(20));
  clock.now += 5;
  line.stage({"spec-test", 6, 40, "valid/a_rather_long_case_name.linnet"});
  // 19 columns: a line as wide as the terminal would wrap.
  CHECK(out.str() == "\rspec-test 7/40: val");

  line.clear();
  CHECK(out.str() == "\rspec-test 7/40: val\r" + std::string(19, ' ') + "\r");
  CHECK_FALSE(line.shown());
  line.clear();  // nothing shown: nothing written
  CHECK(out.str() == "\rspec-test 7/40: val\r" + std::string(19, ' ') + "\r");

  clock.now += 1;
  line.stage({"spec-test", 7, 40, {}});  // drawn again after a clear
  CHECK(line.shown());
  line.stop();
  const std::string stopped = out.str();
  clock.now += 1;
  line.stage({"anything", 0, 0, {}});
  line.loop_step({"layers", 0, 2, 0});
  CHECK(out.str() == stopped);
  CHECK(stopped.ends_with("\r"));
}

namespace {

const std::vector<std::string> kRunGolden{"run",    "nest/mistral-7b-instruct-v0.3", "--bind-from",
                                          "golden/mistral-a/meta.json", "--weights", "golden/mistral-a",
                                          "--input", "tokens=1,2,3"};

// `command` (a shell command line) run from the repository root on a
// pseudo-terminal by util-linux `script`; `out` is what the terminal got.
cli_test::Outcome run_linnet_script(const std::string& command) {
  cli_test::ScratchDir scratch;
  const std::string line = "cd " + cli_test::quote(LINNET_SOURCE_DIR) + " && script -q -e -c " +
                           cli_test::quote(command) + " /dev/null >" + cli_test::quote(scratch.file("out")) +
                           " 2>&1 </dev/null";
  const int raw = std::system(line.c_str());
  cli_test::Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = cli_test::read_file(scratch.file("out"));
  return outcome;
}

// `linnet ARGS...` with stdin, stdout and stderr on a pseudo-terminal (util-linux
// `script`), stdout sent to /dev/null: what the terminal shows is stderr's.
cli_test::Outcome run_on_terminal(const std::vector<std::string>& arguments) {
  std::string command = "LINNET_PROGRESS_DELAY=0 " + cli_test::quote(LINNET_BINARY);
  for (const std::string& argument : arguments) command += " " + cli_test::quote(argument);
  command += " >/dev/null";
  return run_linnet_script(command);
}

}  // namespace

TEST_CASE("commands draw no progress line when stderr is not a terminal", "[cli][progress]") {
  // Even with no delay: stderr here is a file.
  const cli_test::Outcome outcome = run_linnet(kRunGolden, {"LINNET_PROGRESS_DELAY=0"});
  INFO(outcome.err);
  REQUIRE(outcome.status == 0);
  CHECK_FALSE(contains(outcome.err, "\r"));
  CHECK_FALSE(contains(outcome.err, "loading weights"));
}

TEST_CASE("on a terminal, run draws its progress line and erases it; --no-progress draws none", "[cli][progress]") {
  REQUIRE(std::system("command -v script >/dev/null 2>&1") == 0);  // util-linux, in every Debian
  const cli_test::Outcome shown = run_on_terminal(kRunGolden);
  INFO(shown.out);
  REQUIRE(shown.status == 0);
  CHECK(contains(shown.out, "\rloading weights "));
  CHECK(contains(shown.out, "running \u00b7 forward"));
  // Erased at the end: the last thing drawn is blanks and a carriage return.
  CHECK(shown.out.find_last_not_of(" \r\n") < shown.out.rfind("\r"));

  std::vector<std::string> quiet = kRunGolden;
  quiet.push_back("--no-progress");
  const cli_test::Outcome hidden = run_on_terminal(quiet);
  REQUIRE(hidden.status == 0);
  CHECK_FALSE(contains(hidden.out, "loading weights"));
  CHECK_FALSE(contains(hidden.out, "running"));
}
