// Index notation: comprehensions and reductions over whole tensors, with
// expected values worked out by hand.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("transpose, outer product, diagonal and trace", "[index]") {
  auto program = load_source(R"(
pub fn transpose<M: Dim, N: Dim>(x: Tensor[M, N; f32]) -> Tensor[N, M; f32] {
    let y[j, i] = x[i, j]
    return y
}
pub fn outer<M: Dim, N: Dim>(a: Tensor[M; i32], b: Tensor[N; i32]) -> Tensor[M, N; i32] {
    let c[i, j] = a[i] * b[j]
    return c
}
pub fn diagonal<N: Dim>(a: Tensor[N, N; f32]) -> Tensor[N; f32] {
    let d[i] = a[i, i]
    return d
}
pub fn trace<N: Dim>(a: Tensor[N, N; f32]) -> f32 {
    return sum[i] a[i, i]
}
pub fn broadcast_rows<M: Dim, N: Dim>(a: Tensor[M; f32], b: Tensor[N; f32]) -> Tensor[M, N; f32] {
    let c[i, j] = a[i] + 0.0 * b[j]
    return c
}
)");
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = call_tensor(program, "transpose", {v(x)});
  CHECK(t.shape() == Shape{3, 2});
  CHECK(values(t) == std::vector<double>{1, 4, 2, 5, 3, 6});
  Tensor o = call_tensor(program, "outer", {v(i32({1, 2}, {2})), v(i32({3, 4, 5}, {3}))});
  CHECK(values(o) == std::vector<double>{3, 4, 5, 6, 8, 10});
  Tensor square = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  CHECK(values(call_tensor(program, "diagonal", {v(square)})) == std::vector<double>{1, 5, 9});
  CHECK(call_tensor(program, "trace", {v(square)}).item().to<double>() == 15.0);
  CHECK(values(call_tensor(program, "broadcast_rows", {v(f32({1, 2}, {2})), v(f32({7, 8, 9}, {3}))})) ==
        std::vector<double>{1, 1, 1, 2, 2, 2});
}

TEST_CASE("reductions: sum, prod, max, min, any, all, with accumulators", "[index]") {
  auto program = load_source(R"(
pub fn rows(x: Tensor[2, 3; f32]) -> (Tensor[2; f32], Tensor[2; f32], Tensor[2; f32], Tensor[2; f32]) {
    let s[r] = sum[c] x[r, c]
    let p[r] = prod[c] x[r, c]
    let hi[r] = max[c] x[r, c]
    let lo[r] = min[c] x[r, c]
    return (s, p, hi, lo)
}
pub fn logic(m: Tensor[2, 2; bool]) -> (Tensor[2; bool], Tensor[2; bool]) {
    let some_true[r] = any[c] m[r, c]
    let every[r] = all[c] m[r, c]
    return (some_true, every)
}
pub fn count(m: Tensor[2, 3; bool]) -> Tensor[2; i32] {
    let n[r] = sum<i32>[c] cast<i32>(m[r, c])
    return n
}
pub fn both_axes(x: Tensor[2, 3; f32]) -> f32 {
    return sum<f32>[r, c] x[r, c] * x[r, c]
}
pub fn wrong_accumulator(x: Tensor[3; bf16]) -> f32 {
    return sum<f32>[i] x[i]
}
)");
  Value r = call(program, "rows", {v(f32({1, -2, 3, 4, 0.5f, -1}, {2, 3}))});
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{2, 3.5});
  CHECK(values(r.elements()[1].tensor()) == std::vector<double>{-6, -2});
  CHECK(values(r.elements()[2].tensor()) == std::vector<double>{3, 4});
  CHECK(values(r.elements()[3].tensor()) == std::vector<double>{-2, -1});
  Value l = call(program, "logic", {v(boolean({true, false, true, true}, {2, 2}))});
  CHECK(values(l.elements()[0].tensor()) == std::vector<double>{1, 1});
  CHECK(values(l.elements()[1].tensor()) == std::vector<double>{0, 1});
  Tensor n = call_tensor(program, "count", {v(boolean({true, false, true, false, false, false}, {2, 3}))});
  CHECK(n.dtype() == DType::I32);
  CHECK(values(n) == std::vector<double>{2, 0});
  // 1 + 4 + 9 + 16 + 25 + 36.
  CHECK(call_tensor(program, "both_axes", {v(f32({1, 2, 3, 4, 5, 6}, {2, 3}))}).item().to<double>() == 91.0);
  expect_error([&] { call(program, "wrong_accumulator", {v(bf16({1, 2, 3}, {3}))}); }, "E2103");
}

TEST_CASE("contractions: matmul, batched, linear with a pack, attention scores", "[index]") {
  auto program = load_source(R"(
pub fn matmul<M: Dim, K: Dim, N: Dim>(a: Tensor[M, K; f32], b: Tensor[K, N; f32]) -> Tensor[M, N; f32] {
    let c[m, n] = sum[k] a[m, k] * b[k, n]
    return c
}
pub fn batched<B: Dim, M: Dim, K: Dim, N: Dim>(a: Tensor[B, M, K; i64], b: Tensor[B, K, N; i64]) -> Tensor[B, M, N; i64] {
    let c[b, m, n] = sum[k] a[b, m, k] * b[b, k, n]
    return c
}
pub fn linear<*S: Shape, In: Dim, Out: Dim>(x: Tensor[*S, In; f32], w: Tensor[Out, In; f32]) -> Tensor[*S, Out; f32] {
    let y[*s, o] = sum[i] x[*s, i] * w[o, i]
    return y
}
pub fn scores(q: Tensor[2, 3; bf16], k: Tensor[4, 3; bf16]) -> Tensor[2, 4; f32] {
    let s[i, j] = sum<f32>[d] cast<f32>(q[i, d]) * cast<f32>(k[j, d])
    return s
}
)");
  Tensor c = call_tensor(program, "matmul", {v(f32({1, 2, 3, 4, 5, 6}, {2, 3})), v(f32({1, 0, 0, 1, 1, 1}, {3, 2}))});
  // Rows [1 2 3] and [4 5 6] against columns [1 0 1] and [0 1 1].
  CHECK(values(c) == std::vector<double>{4, 5, 10, 11});
  Tensor b = call_tensor(program, "batched",
                         {v(i64({1, 2, 3, 4, 1, 0, 0, 1}, {2, 2, 2})), v(i64({5, 6, 7, 8, 2, 3, 4, 5}, {2, 2, 2}))});
  // Batch 0: [[1,2],[3,4]] x [[5,6],[7,8]]; batch 1: identity x [[2,3],[4,5]].
  CHECK(values(b) == std::vector<double>{19, 22, 43, 50, 2, 3, 4, 5});
  Tensor y = call_tensor(program, "linear", {v(f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})), v(f32({1, 1, 1, -1, 0, 2}, {3, 2}))});
  CHECK(y.shape() == Shape{2, 2, 3});
  // Each pair (x0, x1) maps to (x0 + x1, x0 - x1, 2 x1).
  CHECK(values(y) == std::vector<double>{3, -1, 4, 7, -1, 8, 11, -1, 12, 15, -1, 16});
  Tensor s = call_tensor(program, "scores", {v(bf16({1, 0, 2, 0, 1, 0}, {2, 3})),
                                              v(bf16({1, 1, 1, 2, 0, 0, 0, 3, 0, 0, 0, 4}, {4, 3}))});
  CHECK(s.dtype() == DType::F32);
  CHECK(values(s) == std::vector<double>{3, 2, 0, 8, 1, 0, 3, 0});
}

TEST_CASE("gathers by runtime positions", "[index]") {
  auto program = load_source(R"(
pub fn rows_at<N: Dim, V: Dim, H: Dim>(table: Tensor[V, H; f32], ids: Tensor[N; i32]) -> Tensor[N, H; f32] {
    let r[n, h] = table[cast<i64>(ids[n]), h]
    return r
}
pub fn last_of<B: Dim, S: Dim, H: Dim>(x: Tensor[B, S, H; f32], lengths: Tensor[B; i32]) -> Tensor[B, H; f32] {
    let last[b, h] = x[b, cast<i64>(lengths[b]) - 1, h]
    return last
}
pub fn picked<R: Dim, K: Dim, E: Dim, O: Dim>(bias: Tensor[E, O; f32], expert: Tensor[R, K; i64]) -> Tensor[R, K, O; f32] {
    let p[r, k, o] = bias[expert[r, k], o]
    return p
}
pub fn at_runtime<S: Dim, D: Dim>(table: Tensor[S, D; f32], pos: i32) -> Tensor[D; f32] {
    let row[d] = table[cast<i64>(pos), d]
    return row
}
pub fn two_gathers<A: Dim, B: Dim>(x: Tensor[A, B; i32], rows: Tensor[3; i64], cols: Tensor[2; i64]) -> Tensor[3, 2; i32] {
    let g[i, j] = x[rows[i], cols[j]]
    return g
}
)");
  Tensor table = f32({0, 1, 10, 11, 20, 21}, {3, 2});
  CHECK(values(call_tensor(program, "rows_at", {v(table), v(i32({2, 0, 2, 1}, {4}))})) ==
        std::vector<double>{20, 21, 0, 1, 20, 21, 10, 11});
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2});
  CHECK(values(call_tensor(program, "last_of", {v(x), v(i32({3, 1}, {2}))})) == std::vector<double>{5, 6, 7, 8});
  Tensor p = call_tensor(program, "picked", {v(f32({1, 2, 3, 4, 5, 6}, {3, 2})), v(i64({2, 0, 1, 1}, {2, 2}))});
  CHECK(p.shape() == Shape{2, 2, 2});
  CHECK(values(p) == std::vector<double>{5, 6, 1, 2, 3, 4, 3, 4});
  CHECK(values(call_tensor(program, "at_runtime", {v(table), scalar_i32(1)})) == std::vector<double>{10, 11});
  Tensor g = call_tensor(program, "two_gathers",
                         {v(i32({0, 1, 2, 10, 11, 12}, {2, 3})), v(i64({1, 0, 1}, {3})), v(i64({2, 0}, {2}))});
  CHECK(values(g) == std::vector<double>{12, 10, 2, 0, 12, 10});
}

TEST_CASE("elementwise functions, selects and logical operators between elements", "[index]") {
  auto program = load_source(R"(
pub fn own(segments: Tensor[4; i32], positions: Tensor[4; i32]) -> Tensor[4, 4; bool] {
    let own[i, j] = segments[i] == segments[j] && positions[j] <= positions[i]
    return own
}
pub fn either(a: Tensor[3; f32]) -> Tensor[3, 3; bool] {
    let m[i, j] = a[i] > a[j] || (a[i] == a[j] && iota<i32>(3)[i] < iota<i32>(3)[j])
    return m
}
pub fn clipped(x: Tensor[4; f32]) -> Tensor[4; f32] {
    let y[i] = select(x[i] > 0.0, min(x[i], 2.0), abs(x[i]) * 0.5)
    return y
}
pub fn scaled(x: Tensor[2, 2; f32], s: Tensor[2; f32]) -> Tensor[2, 2; f32] {
    let y[r, c] = exp(x[r, c] - max(s[r], 0.0))
    return y
}
)");
  // Two segments: tokens 0-1 are one prompt, 2-3 another.
  Tensor own = call_tensor(program, "own", {v(i32({0, 0, 1, 1}, {4})), v(i32({0, 1, 0, 1}, {4}))});
  CHECK(values(own) == std::vector<double>{1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1});
  Tensor m = call_tensor(program, "either", {v(f32({1, 3, 1}, {3}))});
  // a[i] outranks a[j]: bigger, or equal and earlier.
  CHECK(values(m) == std::vector<double>{0, 0, 1, 1, 0, 1, 0, 0, 0});
  CHECK(values(call_tensor(program, "clipped", {v(f32({1, 3, -4, 0}, {4}))})) == std::vector<double>{1, 2, 2, 0});
  Tensor e = call_tensor(program, "scaled", {v(f32({0, 1, 2, 3}, {2, 2})), v(f32({-1, 2}, {2}))});
  CHECK(values(e)[0] == Approx(1.0));
  CHECK(values(e)[1] == Approx(std::exp(1.0f)));
  CHECK(values(e)[2] == Approx(1.0));
  CHECK(values(e)[3] == Approx(std::exp(1.0f)));
}

TEST_CASE("comprehension errors name the index, the tensor and the extents", "[index][errors]") {
  auto program = load_source(R"(
pub fn conflict(a: Tensor[3; f32], b: Tensor[4; f32]) -> Tensor[3; f32] {
    let c[i] = a[i] + b[i]
    return c
}
pub fn unused(a: Tensor[3; f32]) -> Tensor[3; f32] {
    let c[i] = sum[k] a[i]
    return c
}
pub fn no_domain(a: Tensor[3; f32]) -> Tensor[3, 2; f32] {
    let c[i, j] = a[i]
    return c
}
pub fn partial(a: Tensor[3, 2; f32]) -> Tensor[3; f32] {
    let c[i] = a[i]
    return c
}
pub fn as_value(a: Tensor[3; i64]) -> Tensor[3; i64] {
    let c[i] = a[i] + i
    return c
}
pub fn out_of_range(table: Tensor[4, 2; f32], ids: Tensor[3; i32]) -> Tensor[3, 2; f32] {
    let rows[n, h] = table[cast<i64>(ids[n]), h]
    return rows
}
)");
  auto conflict = expect_error([&] { call(program, "conflict", {v(f32({1, 2, 3}, {3})), v(f32({1, 2, 3, 4}, {4}))}); },
                               "E2201");
  CHECK(conflict.diagnostic().message.find("`i`") != std::string::npos);
  CHECK(conflict.diagnostic().message.find("`b`") != std::string::npos);
  expect_error([&] { call(program, "unused", {v(f32({1, 2, 3}, {3}))}); }, "E3102");
  expect_error([&] { call(program, "no_domain", {v(f32({1, 2, 3}, {3}))}); }, "E3103");
  expect_error([&] { call(program, "partial", {v(f32({1, 2, 3, 4, 5, 6}, {3, 2}))}); }, "E2204");
  expect_error([&] { call(program, "as_value", {v(i64({1, 2, 3}, {3}))}); }, "E3104");
  auto range = expect_error(
      [&] { call(program, "out_of_range", {v(f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})), v(i32({0, 7, 1}, {3}))}); },
      "E6001");
  const std::string text = notes_of(range);
  CHECK(text.find("table") != std::string::npos);
  CHECK(text.find("axis 0") != std::string::npos);
  CHECK(text.find("value 7") != std::string::npos);
  CHECK(text.find("extent 4") != std::string::npos);
  CHECK(program->render(range).find("cast<i64>(ids[n])") != std::string::npos);
}

TEST_CASE("user functions applied to elements", "[index]") {
  auto program = load_source(R"(
fn smooth(x: f32, k: f32) -> f32 {
    return square(x) + k
}
fn square(x: f32) -> f32 {
    return x * x
}
pub fn apply(a: Tensor[3; f32], b: Tensor[2; f32]) -> Tensor[3, 2; f32] {
    let y[i, j] = smooth(a[i], b[j])
    return y
}
)");
  Tensor y = call_tensor(program, "apply", {v(f32({1, 2, 3}, {3})), v(f32({0, 10}, {2}))});
  CHECK(values(y) == std::vector<double>{1, 11, 4, 14, 9, 19});
}
