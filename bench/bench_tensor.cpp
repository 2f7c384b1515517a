// Measures the tensor runtime against hand-written baselines and prints the
// ratios (ours / baseline; 1.0 is parity, lower is better):
//   (a) a 1024 x 1024 x 1024 f32 contraction through linnet::tensor::contract
//       vs Eigen's own MatrixXf product (goal: within 1.2x);
//   (b) an elementwise add over 16M f32 elements through the kernels vs a
//       plain C++ loop (goal: within 3x).
// Each figure is the best of several runs after a warm-up.
#include <omp.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/threading.hpp"

using namespace linnet::tensor;

namespace {

double best_seconds(int runs, const std::function<void()>& body) {
  body();  // warm-up: first-touch page faults, Eigen's block buffers, thread start-up
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return best;
}

std::vector<float> random_values(size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(generator);
  return values;
}

}  // namespace

int main() {
  std::printf("threads: %d (OpenMP and Eigen)\n", num_threads());
  set_num_threads(num_threads());

  // (a) contraction c[m, n] = sum[k] a[m, k] * b[k, n] vs Eigen.
  constexpr int64_t kSize = 1024;
  const std::vector<float> a_values = random_values(kSize * kSize, 1);
  const std::vector<float> b_values = random_values(kSize * kSize, 2);
  const Tensor a = Tensor::from_vector(a_values, {kSize, kSize});
  const Tensor b = Tensor::from_vector(b_values, {kSize, kSize});
  const ContractionAxes matmul_axes{{}, {}, {1}, {0}};
  Tensor c;
  const double ours_gemm = best_seconds(5, [&] { c = contract(a, b, matmul_axes); });

  const Eigen::MatrixXf ea = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      a_values.data(), kSize, kSize);
  const Eigen::MatrixXf eb = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      b_values.data(), kSize, kSize);
  Eigen::MatrixXf ec(kSize, kSize);
  const double eigen_gemm = best_seconds(5, [&] { ec.noalias() = ea * eb; });
  // The two must agree, or the timing means nothing.
  double worst = 0;
  for (int64_t i = 0; i < kSize; i += 97)
    for (int64_t j = 0; j < kSize; j += 89) worst = std::max(worst, double(std::abs(c.at<float>({i, j}) - ec(i, j))));
  const double gflops = 2.0 * kSize * kSize * kSize / 1e9;
  std::printf("(a) contraction 1024^3 f32: ours %.1f ms (%.1f GFLOP/s), Eigen %.1f ms (%.1f GFLOP/s), max diff %.2g\n",
              ours_gemm * 1e3, gflops / ours_gemm, eigen_gemm * 1e3, gflops / eigen_gemm, worst);

  // (b) elementwise add over 16M f32 vs a plain loop.
  constexpr int64_t kCount = int64_t{1} << 24;
  const std::vector<float> x_values = random_values(kCount, 3);
  const std::vector<float> y_values = random_values(kCount, 4);
  const Tensor x = Tensor::from_vector(x_values, {kCount});
  const Tensor y = Tensor::from_vector(y_values, {kCount});
  Tensor sum;
  const double ours_add = best_seconds(5, [&] { sum = add(x, y); });
  std::vector<float> plain(kCount);
  const double plain_add = best_seconds(5, [&] {
    const float* xs = x_values.data();
    const float* ys = y_values.data();
    float* out = plain.data();
    for (int64_t i = 0; i < kCount; ++i) out[i] = xs[i] + ys[i];
  });
  const bool same = sum.to_vector<float>() == plain;
  std::printf("(b) add 16M f32: ours %.2f ms, plain loop %.2f ms, results %s\n", ours_add * 1e3, plain_add * 1e3,
              same ? "identical" : "DIFFER");

  std::printf("\nratio (a) contraction / Eigen : %.2fx  (goal <= 1.2x)\n", ours_gemm / eigen_gemm);
  std::printf("ratio (b) elementwise / loop  : %.2fx  (goal <= 3x)\n", ours_add / plain_add);
  return same && worst < 1e-3 ? 0 : 1;
}
