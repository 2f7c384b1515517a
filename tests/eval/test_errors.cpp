// Runtime errors: each is one diagnostic that names the source span, the
// tensor, the axis, the value and the extent, and the chain of calls that
// led there.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("an error carries the call stack, innermost call first", "[errors]") {
  auto program = load_source(R"(
fn inner<N: Dim>(x: Tensor[N; f32], at: Tensor[2; i64]) -> Tensor[2; f32] {
    let picked[j] = x[at[j]]
    return picked
}
fn middle<N: Dim>(x: Tensor[N; f32], at: Tensor[2; i64]) -> Tensor[2; f32] {
    return inner(x, at) * 2.0
}
pub fn outer(x: Tensor[3; f32], at: Tensor[2; i64]) -> Tensor[2; f32] {
    let y = middle(x, at)
    return y
}
)");
  CHECK(values(call_tensor(program, "outer", {v(f32({1, 2, 3}, {3})), v(i64({2, 0}, {2}))})) ==
        std::vector<double>{6, 2});
  auto error = expect_error([&] { call(program, "outer", {v(f32({1, 2, 3}, {3})), v(i64({2, 5}, {2}))}); }, "E6001");
  const auto& notes = error.diagnostic().notes;
  std::vector<std::string> frames;
  for (const std::string& note : notes) {
    if (note.rfind("in `", 0) == 0) frames.push_back(note.substr(0, note.find(',')));
  }
  CHECK(frames == std::vector<std::string>{"in `test::inner`", "in `test::middle`", "in `test::outer`"});
  const std::string text = notes_of(error);
  CHECK(text.find("tensor `x`") != std::string::npos);
  CHECK(text.find("value 5") != std::string::npos);
  CHECK(text.find("extent 3") != std::string::npos);
  // The call sites are located: `middle` is called on line 11 of the file
  // (line 1 is the `module` line the test adds).
  bool located = false;
  for (const std::string& note : notes) {
    located = located || (note.rfind("in `test::middle`", 0) == 0 && note.find("test.linnet:11:") != std::string::npos);
  }
  CHECK(located);
  // The rendered diagnostic points at the failing index.
  CHECK(program->render(error).find("at[j]") != std::string::npos);
}

TEST_CASE("a token id past the embedding table", "[errors]") {
  auto program = load_source(R"(
use std.nn.embedding::{embedding}
pub fn lookup(ids: Tensor[1, 3; i32], table: Tensor[4, 2; f32]) -> Tensor[1, 3, 2; f32] {
    return embedding(ids, table)
}
)");
  Tensor table = f32({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
  CHECK(values(call_tensor(program, "lookup", {v(i32({3, 0, 1}, {1, 3})), v(table)})) ==
        std::vector<double>{6, 7, 0, 1, 2, 3});
  auto error = expect_error([&] { call(program, "lookup", {v(i32({3, 9, 1}, {1, 3})), v(table)}); }, "E6001");
  const std::string text = notes_of(error);
  CHECK(text.find("tensor `table`") != std::string::npos);
  CHECK(text.find("axis 0") != std::string::npos);
  CHECK(text.find("value 9") != std::string::npos);
  CHECK(text.find("extent 4") != std::string::npos);
  CHECK(text.find("std.nn.embedding::embedding") != std::string::npos);
  CHECK(program->render(error).find("embedding.linnet") != std::string::npos);
}

TEST_CASE("runtime and compile-time positions outside their axis", "[errors]") {
  auto program = load_source(R"(
pub fn row(x: Tensor[3, 2; f32], pos: i32) -> Tensor[2; f32] {
    return x[pos, :]
}
pub fn fixed(x: Tensor[3, 2; f32]) -> Tensor[2; f32] {
    return x[3, :]
}
pub fn negative(x: Tensor[3, 2; f32], pos: i32) -> Tensor[2; f32] {
    let r[d] = x[cast<i64>(pos), d]
    return r
}
)");
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(values(call_tensor(program, "row", {v(x), scalar_i32(2)})) == std::vector<double>{5, 6});
  auto runtime = expect_error([&] { call(program, "row", {v(x), scalar_i32(3)}); }, "E6001");
  CHECK(notes_of(runtime).find("extent 3") != std::string::npos);
  expect_error([&] { call(program, "fixed", {v(x)}); }, "E2209");
  auto below = expect_error([&] { call(program, "negative", {v(x), scalar_i32(-1)}); }, "E6001");
  CHECK(notes_of(below).find("value -1") != std::string::npos);
}

TEST_CASE("names that do not resolve and values that cannot be called", "[errors]") {
  auto program = load_source(R"(
pub fn unknown(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x + missing
}
pub fn not_a_function(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return nowhere(x)
}
pub fn dtype_as_value<T: Float>(x: Tensor[2; T]) -> Tensor[2; T] {
    return x + T
}
)");
  Tensor x = f32({1, 2}, {2});
  expect_error([&] { call(program, "unknown", {v(x)}); }, "E1201");
  expect_error([&] { call(program, "not_a_function", {v(x)}); }, "E1201");
  expect_error([&] { call(program, "dtype_as_value", {v(x)}); }, "E1208");
}
