// Kernels run by iterating their launch grid: `program_id`, masked `load`
// and `store`, the atomics, and an op that names a kernel running it in
// place of its body (when asked to, and when the kernel's `where` holds).
#include <cmath>

#include "eval_test_util.hpp"

using namespace eval_test;
using linnet::eval::NumericsPolicy;
using linnet::eval::Options;

namespace {

const char* kKernels = R"(
pub kernel row_softmax<R: Dim, C: Dim, B: Dim>(
    x: Tensor[R, C; f32],
) -> y: Tensor[R, C; f32] grid(R)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    let v = load(x[row, cols], mask, -1e30)
    let e = exp(v - max[c] v[c])
    store(y[row, cols], e / sum[c] e[c], mask)
}

pub op softmax_rows<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel row_softmax<R, C, 8> {
    let m[r] = max[c] x[r, c]
    let e[r, c] = exp(x[r, c] - m[r])
    let s[r] = sum[c] e[r, c]
    let y[r, c] = e[r, c] / s[r]
    return y
}

pub kernel column_stats<R: Dim, C: Dim>(
    x: Tensor[R, C; f32],
    codes: Tensor[R, C; i32],
) -> (total: Tensor[C; f32], largest: Tensor[C; i32], smallest: Tensor[C; i32]) grid(R) {
    let row = program_id(0)
    let cols = iota<i32>(C)
    atomic_add(total[cols], load(x[row, cols]))
    atomic_max(largest[cols], load(codes[row, cols]))
    atomic_min(smallest[cols], load(codes[row, cols]))
}

pub kernel out_of_bounds<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) {
    let cols = iota<i32>(N + 1)
    store(y[cols], 1.0)
}
)";

std::vector<double> softmax_rows(const std::vector<float>& x, int64_t rows, int64_t columns) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    double peak = -1e300;
    for (int64_t c = 0; c < columns; ++c) peak = std::max(peak, static_cast<double>(x[static_cast<size_t>(r * columns + c)]));
    double total = 0;
    for (int64_t c = 0; c < columns; ++c) total += std::exp(x[static_cast<size_t>(r * columns + c)] - peak);
    for (int64_t c = 0; c < columns; ++c) out.push_back(std::exp(x[static_cast<size_t>(r * columns + c)] - peak) / total);
  }
  return out;
}

}  // namespace

TEST_CASE("a kernel runs once per program of its grid", "[kernels]") {
  auto program = load_source(kKernels);
  const std::vector<float> x{1, 2, 3, 4, 5, -1, 0, 1, 0, -1, 9, 9, 9, 9, 9};
  Tensor y = call_tensor(program, "row_softmax", {v(f32(x, {3, 5}))}, {{"B", dim(8)}});
  const auto expected = softmax_rows(x, 3, 5);
  const auto got = values(y);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).epsilon(1e-6));
  // Agrees with the op's body.
  Tensor body = call_tensor(program, "softmax_rows", {v(f32(x, {3, 5}))});
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(values(body)[i]).epsilon(1e-6));
  // The kernel's `where` clause holds for the generics it is given.
  expect_error([&] { call(program, "row_softmax", {v(f32(x, {3, 5}))}, {{"B", dim(4)}}); }, "E2206");
}

TEST_CASE("atomics start at their identity and combine every program's writes", "[kernels]") {
  auto program = load_source(kKernels);
  Value r = call(program, "column_stats",
                 {v(f32({1, 2, 3, 10, 20, 30}, {2, 3})), v(i32({5, -7, 0, 2, 8, -1}, {2, 3}))});
  REQUIRE(r.kind() == Value::Kind::Tuple);
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{11, 22, 33});
  CHECK(values(r.elements()[1].tensor()) == std::vector<double>{5, 8, 0});
  CHECK(values(r.elements()[2].tensor()) == std::vector<double>{2, -7, -1});
}

TEST_CASE("a store outside its result is a runtime error", "[kernels][errors]") {
  auto program = load_source(kKernels);
  auto error = expect_error([&] { call(program, "out_of_bounds", {v(f32({1, 2, 3}, {3}))}); }, "E6001");
  CHECK(notes_of(error).find("value 3") != std::string::npos);
}

TEST_CASE("an op runs the kernel it names when asked to and where the kernel applies", "[kernels]") {
  Options options;
  options.numerics = NumericsPolicy::Equivalent;
  options.run_kernels = true;
  auto program = load_source(kKernels, options);
  const std::vector<float> narrow{0, 1, 2, 3, 4, 5};
  Tensor y = call_tensor(program, "softmax_rows", {v(f32(narrow, {2, 3}))});
  const auto expected = softmax_rows(narrow, 2, 3);
  for (size_t i = 0; i < expected.size(); ++i) CHECK(values(y)[i] == Approx(expected[i]).epsilon(1e-6));
  CHECK(program->stats().at("test::softmax_rows").native == 1);
  // Ten columns do not fit the kernel's eight lanes: the body runs.
  std::vector<float> wide(20);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<float>(i % 7);
  Tensor z = call_tensor(program, "softmax_rows", {v(f32(wide, {2, 10}))});
  CHECK(program->stats().at("test::softmax_rows").body == 1);
  const auto wide_expected = softmax_rows(wide, 2, 10);
  for (size_t i = 0; i < wide_expected.size(); ++i) CHECK(values(z)[i] == Approx(wide_expected[i]).epsilon(1e-6));
}
