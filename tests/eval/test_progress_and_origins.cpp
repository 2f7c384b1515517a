// What the interpreter tells a progress observer (each entry call, each
// loop iteration with its nesting), and the notes it adds when a call fails
// on an input's value: naming where the input came from
// (EntryInputs::origins), not only the entry's declaration.
#include "eval_test_util.hpp"

#include "linnet/eval/progress.hpp"

using namespace eval_test;

namespace {

// Every report, as one line each.
class RecordingObserver : public linnet::eval::ProgressObserver {
 public:
  std::vector<std::string> events;
  void stage(const linnet::eval::ProgressStage& stage) override { events.push_back("stage " + std::string(stage.what)); }
  void call_started(std::string_view name) override { events.push_back("call " + std::string(name)); }
  void loop_step(const linnet::eval::LoopStep& step) override {
    events.push_back("step " + std::string(step.label) + " " + std::to_string(step.index) + "/" +
                     std::to_string(step.count) + " depth " + std::to_string(step.depth));
  }
  void loop_finished(int depth) override { events.push_back("end depth " + std::to_string(depth)); }
};

}  // namespace

TEST_CASE("the interpreter reports entry calls and loop iterations to its observer", "[progress]") {
  auto observer = std::make_shared<RecordingObserver>();
  linnet::eval::Options options;
  options.progress = observer;
  auto program = load_source(R"(
pub fn loops(x: Tensor[2; f32]) -> Tensor[2; f32] {
    var y = x
    static for i in 0..2 {
        for j in 0..3 {
            y = y + 1.0
        }
    }
    var n: i32 = 0
    while n < 2 {
        n = n + 1
    }
    return y
}
)",
                             options);
  CHECK(values(call_tensor(program, "loops", {v(f32({0, 1}, {2}))})) == std::vector<double>{6, 7});
  const std::vector<std::string> expected{
      "call loops",
      "step i 0/2 depth 0",
      "step j 0/3 depth 1", "step j 1/3 depth 1", "step j 2/3 depth 1", "end depth 1",
      "step i 1/2 depth 0",
      "step j 0/3 depth 1", "step j 1/3 depth 1", "step j 2/3 depth 1", "end depth 1",
      "end depth 0",
      "step while 0/-1 depth 0", "step while 1/-1 depth 0", "end depth 0"};
  CHECK(observer->events == expected);
}

TEST_CASE("a loop left by an error still ends for the observer", "[progress]") {
  auto observer = std::make_shared<RecordingObserver>();
  linnet::eval::Options options;
  options.progress = observer;
  auto program = load_source(R"(
pub fn fails(x: Tensor[2; f32], at: Tensor[1; i64]) -> Tensor[1; f32] {
    var out = fill<f32>([1], 0.0)
    static for i in 0..2 {
        let picked[j] = x[at[j]]
        out = picked
    }
    return out
}
)",
                             options);
  expect_error([&] { call(program, "fails", {v(f32({0, 1}, {2})), v(i64({7}, {1}))}); }, "E6001");
  REQUIRE(!observer->events.empty());
  CHECK(observer->events.back() == "end depth 0");
}

TEST_CASE("an index out of range that an input holds is traced to the input", "[errors][origins]") {
  auto program = load_source(R"(
pub fn pick(table: Tensor[4; f32], ids: Tensor[1, 3; i32]) -> Tensor[1, 3; f32] {
    let rows[b, s] = table[cast<i64>(ids[b, s])]
    return rows
}
)");
  linnet::eval::EntryInputs inputs;
  inputs.positional = {v(f32({1, 2, 3, 4}, {4})), v(i32({0, 9, 1}, {1, 3}))};
  SECTION("with the caller's words for where it came from") {
    inputs.origins["ids"] = "--input ids=0,9,1";
    const auto error = expect_error([&] { program->call_function("pick", inputs); }, "E6001");
    const auto& notes = error.diagnostic().notes;
    const std::string note = "the value 9 is in the input `ids` at [0, 1], given by `--input ids=0,9,1`";
    const auto found = std::find(notes.begin(), notes.end(), note);
    REQUIRE(found != notes.end());
    // Before the call stack, after the values.
    CHECK(found + 1 != notes.end());
    CHECK((found + 1)->rfind("in `test::pick`", 0) == 0);
  }
  SECTION("without them, the input by name") {
    const auto error = expect_error([&] { program->call_function("pick", inputs); }, "E6001");
    CHECK(notes_of(error).find("the value 9 is in the input `ids` at [0, 1]") != std::string::npos);
  }
  SECTION("an index no input holds gets no such note") {
    auto computed = load_source(R"(
pub fn shifted(table: Tensor[4; f32], ids: Tensor[1, 3; i32]) -> Tensor[1, 3; f32] {
    let rows[b, s] = table[cast<i64>(ids[b, s]) + 100]
    return rows
}
)");
    inputs.origins["ids"] = "--input ids=0,9,1";
    const auto error = expect_error([&] { computed->call_function("shifted", inputs); }, "E6001");
    CHECK(notes_of(error).find("--input") == std::string::npos);
  }
}

TEST_CASE("a scalar input used as an index, and an argument that does not fit, name the input", "[errors][origins]") {
  auto program = load_source(R"(
pub fn at(table: Tensor[4; f32], pos: i32) -> f32 {
    return table[pos]
}
)");
  linnet::eval::EntryInputs inputs;
  inputs.positional = {v(f32({1, 2, 3, 4}, {4})), scalar_i32(12)};
  inputs.origins["pos"] = "--input pos=12";
  auto error = expect_error([&] { program->call_function("at", inputs); }, "E6001");
  CHECK(notes_of(error).find("the value 12 is the input `pos`, given by `--input pos=12`") != std::string::npos);

  inputs.positional[0] = v(f32({1, 2, 3}, {3}));
  inputs.positional[1] = scalar_i32(1);
  inputs.origins["table"] = "--input table=1,2,3";
  error = expect_error([&] { program->call_function("at", inputs); }, "E2202");
  CHECK(notes_of(error).find("`table` was given by `--input table=1,2,3`") != std::string::npos);
}
