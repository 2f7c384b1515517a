// Properties on random shapes: index notation against the equivalent
// prelude calls, and against plain loops written here in C++.
#include <algorithm>
#include <cmath>

#include "eval_test_util.hpp"

using namespace eval_test;

namespace {

const char* kProgram = R"(
pub fn transpose<M: Dim, N: Dim>(x: Tensor[M, N; f32]) -> (Tensor[N, M; f32], Tensor[N, M; f32]) {
    let y[j, i] = x[i, j]
    return (y, permute(x, [1, 0]))
}
pub fn rotate<A: Dim, B: Dim, C: Dim>(x: Tensor[A, B, C; i32]) -> (Tensor[C, A, B; i32], Tensor[C, A, B; i32]) {
    let y[k, i, j] = x[i, j, k]
    return (y, permute(x, [2, 0, 1]))
}
pub fn matmul<M: Dim, K: Dim, N: Dim>(a: Tensor[M, K; i64], b: Tensor[K, N; i64]) -> Tensor[M, N; i64] {
    let c[m, n] = sum[k] a[m, k] * b[k, n]
    return c
}
pub fn scores<B: Dim, Q: Dim, K: Dim, D: Dim>(q: Tensor[B, Q, D; f32], k: Tensor[B, K, D; f32]) -> Tensor[Q, B, K; f32] {
    let s[i, b, j] = sum<f32>[d] q[b, i, d] * k[b, j, d]
    return s
}
pub fn reductions<M: Dim, N: Dim>(x: Tensor[M, N; f32]) -> (Tensor[M; f32], Tensor[N; f32], Tensor[M; f32], Tensor[N; f32]) {
    let rows[i] = sum[j] x[i, j]
    let columns[j] = max[i] x[i, j]
    let lows[i] = min[j] x[i, j]
    let products[j] = prod[i] x[i, j]
    return (rows, columns, lows, products)
}
pub fn gather<V: Dim, H: Dim, N: Dim>(table: Tensor[V, H; f32], ids: Tensor[N; i32]) -> Tensor[N, H; f32] {
    let r[n, h] = table[cast<i64>(ids[n]), h]
    return r
}
pub fn gather_both<A: Dim, B: Dim, N: Dim>(x: Tensor[A, B; f32], rows: Tensor[N; i64], cols: Tensor[N; i64]) -> Tensor[N; f32] {
    let r[n] = x[rows[n], cols[n]]
    return r
}
pub fn diagonals<N: Dim, M: Dim>(a: Tensor[N, M, N; f32]) -> Tensor[N, M; f32] {
    let d[i, j] = a[i, j, i]
    return d
}
pub fn linear<*S: Shape, In: Dim, Out: Dim>(x: Tensor[*S, In; f32], w: Tensor[Out, In; f32]) -> Tensor[*S, Out; f32] {
    let y[*s, o] = sum[i] x[*s, i] * w[o, i]
    return y
}
pub fn differences<M: Dim, N: Dim>(a: Tensor[M; f32], b: Tensor[N; f32]) -> Tensor[N, M; f32] {
    let c[j, i] = a[i] - b[j]
    return c
}
)";

int64_t extent(std::mt19937& rng) { return std::uniform_int_distribution<int64_t>(1, 5)(rng); }

void check_close(const Tensor& got, const std::vector<double>& expected, double tolerance = 1e-5) {
  const auto have = values(got);
  REQUIRE(have.size() == expected.size());
  for (size_t i = 0; i < have.size(); ++i) CHECK(have[i] == Approx(expected[i]).margin(tolerance));
}

}  // namespace

TEST_CASE("comprehensions agree with prelude calls and plain loops on random shapes", "[properties]") {
  auto program = load_source(kProgram);
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 8; ++trial) {
    INFO("trial " << trial);
    const int64_t m = extent(rng), n = extent(rng), k = extent(rng), b = extent(rng);

    Value t = call(program, "transpose", {v(random_tensor(rng, {m, n}, DType::F32))});
    CHECK(values(t.elements()[0].tensor()) == values(t.elements()[1].tensor()));

    Value r = call(program, "rotate", {v(random_integers(rng, {m, n, k}, DType::I32, -50, 50))});
    CHECK(r.elements()[0].tensor().shape() == Shape{k, m, n});
    CHECK(values(r.elements()[0].tensor()) == values(r.elements()[1].tensor()));

    // Integer matmul: exact against the loop.
    Tensor a = random_integers(rng, {m, k}, DType::I64, -9, 9);
    Tensor c = random_integers(rng, {k, n}, DType::I64, -9, 9);
    std::vector<double> product;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t total = 0;
        for (int64_t l = 0; l < k; ++l) total += a.at<int64_t>({i, l}) * c.at<int64_t>({l, j});
        product.push_back(static_cast<double>(total));
      }
    }
    CHECK(values(call_tensor(program, "matmul", {v(a), v(c)})) == product);

    // Attention-style scores with the batch axis in the middle of the result.
    const int64_t d = extent(rng);
    Tensor q = random_tensor(rng, {b, m, d}, DType::F32);
    Tensor kk = random_tensor(rng, {b, n, d}, DType::F32);
    std::vector<double> scores;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t bb = 0; bb < b; ++bb) {
        for (int64_t j = 0; j < n; ++j) {
          double total = 0;
          for (int64_t l = 0; l < d; ++l) total += q.at<double>({bb, i, l}) * kk.at<double>({bb, j, l});
          scores.push_back(total);
        }
      }
    }
    check_close(call_tensor(program, "scores", {v(q), v(kk)}), scores);

    // Reductions along either axis.
    Tensor x = random_tensor(rng, {m, n}, DType::F32, -2, 2);
    Value red = call(program, "reductions", {v(x)});
    std::vector<double> rows(static_cast<size_t>(m), 0.0), lows(static_cast<size_t>(m), 1e9);
    std::vector<double> columns(static_cast<size_t>(n), -1e9), products(static_cast<size_t>(n), 1.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double value = x.at<double>({i, j});
        rows[static_cast<size_t>(i)] += value;
        lows[static_cast<size_t>(i)] = std::min(lows[static_cast<size_t>(i)], value);
        columns[static_cast<size_t>(j)] = std::max(columns[static_cast<size_t>(j)], value);
        products[static_cast<size_t>(j)] *= value;
      }
    }
    check_close(red.elements()[0].tensor(), rows);
    check_close(red.elements()[1].tensor(), columns);
    check_close(red.elements()[2].tensor(), lows);
    check_close(red.elements()[3].tensor(), products);

    // Gathers by runtime positions.
    Tensor table = random_tensor(rng, {k, n}, DType::F32);
    Tensor ids = random_integers(rng, {m}, DType::I32, 0, k - 1);
    std::vector<double> gathered;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) gathered.push_back(table.at<double>({ids.at<int64_t>({i}), j}));
    }
    CHECK(values(call_tensor(program, "gather", {v(table), v(ids)})) == gathered);
    Tensor row_ids = random_integers(rng, {b}, DType::I64, 0, k - 1);
    Tensor col_ids = random_integers(rng, {b}, DType::I64, 0, n - 1);
    std::vector<double> pairs;
    for (int64_t i = 0; i < b; ++i) {
      pairs.push_back(table.at<double>({row_ids.at<int64_t>({i}), col_ids.at<int64_t>({i})}));
    }
    CHECK(values(call_tensor(program, "gather_both", {v(table), v(row_ids), v(col_ids)})) == pairs);

    // Diagonals through a repeated index.
    Tensor cube = random_tensor(rng, {m, n, m}, DType::F32);
    std::vector<double> diagonal;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) diagonal.push_back(cube.at<double>({i, j, i}));
    }
    CHECK(values(call_tensor(program, "diagonals", {v(cube)})) == diagonal);

    // Pack indices standing for 0 to 3 leading axes.
    const int leading = std::uniform_int_distribution<int>(0, 3)(rng);
    Shape x_shape;
    for (int axis = 0; axis < leading; ++axis) x_shape.push_back(extent(rng));
    const int64_t in = extent(rng), out = extent(rng);
    x_shape.push_back(in);
    Tensor input = random_tensor(rng, x_shape, DType::F32);
    Tensor weight = random_tensor(rng, {out, in}, DType::F32);
    const int64_t count = linnet::tensor::shape_numel(x_shape) / in;
    const Tensor flat = input.reshape({count, in});
    std::vector<double> projected;
    for (int64_t row = 0; row < count; ++row) {
      for (int64_t o = 0; o < out; ++o) {
        double total = 0;
        for (int64_t i = 0; i < in; ++i) total += flat.at<double>({row, i}) * weight.at<double>({o, i});
        projected.push_back(total);
      }
    }
    Tensor linear = call_tensor(program, "linear", {v(input), v(weight)});
    Shape out_shape(x_shape.begin(), x_shape.end() - 1);
    out_shape.push_back(out);
    CHECK(linear.shape() == out_shape);
    check_close(linear, projected);

    // Broadcasting by index variable, output order different from use order.
    Tensor va = random_tensor(rng, {m}, DType::F32);
    Tensor vb = random_tensor(rng, {n}, DType::F32);
    std::vector<double> differences;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        differences.push_back(static_cast<double>(va.at<float>({i}) - vb.at<float>({j})));
      }
    }
    CHECK(values(call_tensor(program, "differences", {v(va), v(vb)})) == differences);
  }
}
