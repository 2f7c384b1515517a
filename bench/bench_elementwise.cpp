// The elementwise kernels on every path this CPU supports
// (linnet/tensor/elementwise_path.hpp: the per-element loop and the span
// loops) at a GPT-OSS prefill's width, [512, 4, 2880] (512 tokens, 4
// routed experts, 2880 wide), one thread. Each case is timed on each path in
// alternating rounds (thread CPU time, so other processes on a shared
// machine count less), and the best round is reported: ns per element, the
// bytes it reads and writes per second, and that time over a plain copy of
// as many bytes (memcpy, measured in the same rounds), i.e. how far from
// memory speed the operator runs.
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "linnet/tensor/elementwise_path.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/kernels.hpp"
#include "linnet/tensor/threading.hpp"

using namespace linnet::tensor;

namespace {

double thread_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

Tensor random_tensor(DType dtype, const Shape& shape, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-8.0f, 8.0f);
  Tensor t = Tensor::empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float value = distribution(generator);
    if (dtype == DType::BF16) static_cast<uint16_t*>(t.raw_mutable_data())[i] = float_to_bf16_bits(value);
    else static_cast<float*>(t.raw_mutable_data())[i] = value;
  }
  return t;
}

struct Case {
  std::string name;
  std::function<Tensor()> run;
  double elements;
  double bytes_per_element;  // read and written
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  set_num_threads(1);
  const int64_t rows = 512, experts = 4, width = 2880;
  const Shape shape = {rows, experts, width};
  const double n = static_cast<double>(rows * experts * width);

  const Tensor a16 = random_tensor(DType::BF16, shape, 1);
  const Tensor b16 = random_tensor(DType::BF16, shape, 2);
  const Tensor s16 = random_tensor(DType::BF16, {}, 3);
  // GPT-OSS's gate and up halves: the even and odd columns of one tensor.
  const Tensor gate_up = random_tensor(DType::BF16, {rows, experts, 2 * width}, 4);
  const Tensor gate = gate_up.slice(2, 0, 2 * width, 2);
  const Tensor a32 = random_tensor(DType::F32, shape, 5);
  const Tensor b32 = random_tensor(DType::F32, shape, 6);

  // GPT-OSS's router ranks: a comparison's bool result read transposed
  // (the last two axes swapped), cast to i32 to be counted.
  const Tensor ranks = cast(random_tensor(DType::F32, {rows, 1, 32, 32}, 7), DType::Bool).permute({0, 1, 3, 2});

  const std::vector<Case> cases = {
      {"bf16 add, dense + dense", [&] { return binary(BinaryOp::Add, a16, b16); }, n, 6},
      {"bf16 mul, dense * scalar", [&] { return binary(BinaryOp::Mul, a16, s16); }, n, 4},
      {"bf16 min, every other column and a scalar", [&] { return binary(BinaryOp::Min, gate, s16); }, n, 6},
      {"bf16 max, dense and dense", [&] { return binary(BinaryOp::Max, a16, b16); }, n, 6},
      {"bf16 sigmoid (libm exp per element)", [&] { return unary(UnaryOp::Sigmoid, a16); }, n, 4},
      {"bf16 neg", [&] { return unary(UnaryOp::Neg, a16); }, n, 4},
      {"cast bf16 -> f32", [&] { return cast(a16, DType::F32); }, n, 6},
      {"cast f32 -> bf16", [&] { return cast(a32, DType::BF16); }, n, 6},
      {"f32 add, dense + dense", [&] { return binary(BinaryOp::Add, a32, b32); }, n, 12},
      {"cast bool -> i32, [512, 1, 32, 32] transposed", [&] { return cast(ranks, DType::I32); }, static_cast<double>(ranks.numel()), 5},
      {"f32 exp (libm per element)", [&] { return unary(UnaryOp::Exp, a32); }, n, 8},
      {"f32 mul, dense * scalar", [&] { return binary(BinaryOp::Mul, a32, s16.to(DType::F32)); }, n, 8},
  };

  std::vector<ElementwisePath> paths = {ElementwisePath::PerElement};
  for (ElementwisePath path : {ElementwisePath::Baseline, ElementwisePath::Avx2, ElementwisePath::Avx512}) {
    if (elementwise_path_supported(path)) paths.push_back(path);
  }

  // A plain copy of 48 MB (the bytes of a dense bf16 add): the memory speed
  // reference, timed in the same rounds.
  const size_t copy_bytes = static_cast<size_t>(n * 6);
  std::vector<char> from(copy_bytes, 1), to(copy_bytes, 0);
  double copy_best = 1e30;

  std::vector<std::vector<double>> best(cases.size(), std::vector<double>(paths.size(), 1e30));
  for (int round = 0; round < rounds; ++round) {
    {
      const double start = thread_seconds();
      std::memcpy(to.data(), from.data(), copy_bytes);
      copy_best = std::min(copy_best, thread_seconds() - start);
    }
    for (size_t c = 0; c < cases.size(); ++c) {
      for (size_t p = 0; p < paths.size(); ++p) {
        override_elementwise_path(paths[p]);
        Tensor warm = cases[c].run();  // keeps the allocator's block for the timed call, as a model run sees
        warm = Tensor();
        const double start = thread_seconds();
        const Tensor out = cases[c].run();
        best[c][p] = std::min(best[c][p], thread_seconds() - start);
      }
    }
  }
  override_elementwise_path(std::nullopt);

  const double copy_rate = 2.0 * static_cast<double>(copy_bytes) / copy_best;  // read and written
  std::printf("elementwise kernels, [512, 4, 2880] (%.1fM elements), 1 thread, best of %d rounds (thread CPU time)\n",
              n / 1e6, rounds);
  std::printf("memcpy of %.0f MB: %.2f ms, %.1f GB/s read and written (the memory speed reference)\n",
              copy_bytes / 1e6, copy_best * 1e3, copy_rate / 1e9);
  for (size_t c = 0; c < cases.size(); ++c) {
    std::printf("%s\n", cases[c].name.c_str());
    for (size_t p = 0; p < paths.size(); ++p) {
      const double seconds = best[c][p];
      const double bytes = cases[c].elements * cases[c].bytes_per_element;
      std::printf("  %-12s %7.2f ms  %5.2f ns/element  %5.1f GB/s  %5.2fx memcpy time  %5.2fx faster than per-element\n",
                  elementwise_path_name(paths[p]).c_str(), seconds * 1e3, seconds / cases[c].elements * 1e9,
                  bytes / seconds / 1e9, seconds / (bytes / copy_rate), best[c][0] / seconds);
    }
  }
  return 0;
}
