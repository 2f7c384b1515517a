// The kernels compute every output in a fixed order, so their results must
// not depend on the number of threads: the same call with one thread and
// with several must agree bit for bit.
#include "linnet/tensor/threading.hpp"
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

Tensor native_with_threads(const OpCall& call, int threads) {
  const int before = linnet::tensor::num_threads();
  linnet::tensor::set_num_threads(threads);
  const Value result = run_native(call);
  linnet::tensor::set_num_threads(before);
  return result.tensor();
}

}  // namespace

TEST_CASE("kernel results do not depend on the number of threads", "[differential][threads]") {
  std::mt19937 rng(601);
  // Products large enough to start threads (tensor::gemm: 2M multiply-adds).
  const Tensor x = random_tensor(rng, {300, 64}, DType::BF16);
  const Tensor weight = random_tensor(rng, {130, 64}, DType::BF16);
  const Tensor query = random_tensor(rng, {2, 8, 6, 16}, DType::F32);
  const Tensor key = random_tensor(rng, {2, 2, 9, 16}, DType::F32);
  const Tensor value = random_tensor(rng, {2, 2, 9, 16}, DType::F32);
  const Tensor a = random_tensor(rng, {70, 300}, DType::F32);
  const Tensor b = random_tensor(rng, {300, 120}, DType::F32);
  const Tensor experts_weight = random_tensor(rng, {4, 100, 24}, DType::F32);
  const Tensor experts_input = random_tensor(rng, {20, 24}, DType::F32);
  std::vector<int64_t> chosen;
  for (int i = 0; i < 40; ++i) chosen.push_back(i % 4);
  const std::vector<OpCall> calls{
      {"std.nn.linear::linear",
       {v(x), v(weight), Value::none()},
       {{"S", shape({300})}, {"In", dim(64)}, {"Out", dim(130)}, {"T", dtype(DType::BF16)}}},
      {"std.linalg::matmul", {v(a), v(b)}, {{"M", dim(70)}, {"K", dim(300)}, {"N", dim(120)}, {"T", dtype(DType::F32)}}},
      {"std.nn.attention::grouped_attention",
       {v(query), v(key), v(value), f32_scalar(0.25f), Value::none()},
       {{"B", dim(2)}, {"H", dim(8)}, {"Hk", dim(2)}, {"Q", dim(6)}, {"K", dim(9)}, {"D", dim(16)},
        {"T", dtype(DType::F32)}}},
      {"std.nn.moe::linear_experts_shared",
       {v(experts_input), v(experts_weight), v(i64_tensor(chosen, {20, 2}))},
       {{"R", dim(20)}, {"K", dim(2)}, {"E", dim(4)}, {"In", dim(24)}, {"Out", dim(100)}, {"T", dtype(DType::F32)}}},
  };
  for (const OpCall& call : calls) {
    INFO(call.op);
    const Tensor one = native_with_threads(call, 1);
    const Tensor several = native_with_threads(call, 4);
    require_identical(call.op + " with 1 and 4 threads", several, one);
  }
}
