// Differential tests of the row-wise kernels against their bodies: softmax,
// rms_norm, layer_norm, log_softmax, token_log_probs, cross_entropy and
// argmax.
#include "linnet/tensor/gemm.hpp"
#include "test_differential_support.hpp"

using namespace ops_test;

TEST_CASE("softmax agrees with its body", "[differential][rows]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(201);
    SECTION(std::string("two leading axes ") + std::string(linnet::tensor::dtype_name(type))) {
      // Wide logits: the row maximum must be subtracted for these not to overflow.
      const Tensor x = random_tensor(rng, {3, 4, 33}, type, -90.0, 90.0);
      OpCall call{"std.nn.softmax::softmax", {v(x)}, {{"S", shape({3, 4})}, {"N", dim(33)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_agreement(label(call, type, "logits in [-90, 90)"), results.native, results.body, 1);
    }
    SECTION(std::string("one row, no leading axes ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor x = random_tensor(rng, {17}, type);
      OpCall call{"std.nn.softmax::softmax", {v(x)}, {{"S", shape({})}, {"N", dim(17)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_agreement(label(call, type, "one row"), results.native, results.body, 1);
    }
  }
}

TEST_CASE("softmax keeps the body's NaN and infinity behaviour", "[differential][rows]") {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::from_vector(std::vector<float>{1.0f, std::nanf(""), 2.0f, 0.5f, inf, 3.0f, -inf, 0.0f, 1.0f},
                                       {3, 3});
  OpCall call{"std.nn.softmax::softmax", {v(x)}, {{"S", shape({3})}, {"N", dim(3)}, {"T", dtype(DType::F32)}}};
  const Results results = run_both(call);
  require_identical("softmax with NaN and infinities", results.native, results.body);
}

TEST_CASE("rms_norm agrees with its body", "[differential][rows]") {
  // 10 rows: a block of 8 whose sums run side by side, and 2 more; rows of
  // 48 (whole vectors of 16) and of 45 (a partial last vector).
  for (const int64_t h : {48, 45})
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(211);
    const Tensor x = random_tensor(rng, {2, 5, h}, type, -3.0, 3.0);
    const Tensor weight = random_tensor(rng, {h}, type, 0.5, 1.5);
    for (const Value& eps : {Value(), f32_scalar(1e-3f)}) {
      OpCall call{"std.nn.norm::rms_norm", {v(x), v(weight)},
                  {{"S", shape({2, 5})}, {"H", dim(h)}, {"T", dtype(type)}}};
      if (!eps.is_unit()) call.positional.push_back(eps);
      const Results results = run_both(call);
      // bf16: the normalized row is rounded, then the product with the weight.
      require_agreement(label(call, type, eps.is_unit() ? "default eps" : "eps 1e-3"), results.native, results.body,
                        3);
    }
  }
}

TEST_CASE("rms_norm's vector and scalar rows give the same bits", "[differential][rows]") {
  namespace gemm = linnet::tensor::gemm;
  if (!gemm::isa_supported(gemm::Isa::Avx512)) {
    SUCCEED("no AVX-512 on this CPU: the scalar rows are the only ones");
    return;
  }
  // 19 rows (two blocks of 8 and 3 more) of 2880 and of 37 values.
  for (const int64_t h : {2880, 37}) {
    std::mt19937 rng(307);
    const Tensor x = random_tensor(rng, {19, h}, DType::BF16, -4.0, 4.0);
    const Tensor weight = random_tensor(rng, {h}, DType::BF16, 0.25, 2.0);
    OpCall call{"std.nn.norm::rms_norm", {v(x), v(weight)},
                {{"S", shape({19})}, {"H", dim(h)}, {"T", dtype(DType::BF16)}}};
    gemm::override_isa(gemm::Isa::Avx512);
    const Tensor vector = run_native(call).tensor();
    gemm::override_isa(gemm::Isa::Scalar);
    const Tensor scalar = run_native(call).tensor();
    gemm::override_isa(std::nullopt);
    require_identical("rms_norm rows of " + std::to_string(h), vector, scalar);
  }
}

TEST_CASE("layer_norm agrees with its body", "[differential][rows]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(221);
    const Tensor x = random_tensor(rng, {4, 40}, type, 2.0, 6.0);  // an offset mean to subtract
    const Tensor weight = random_tensor(rng, {40}, type, 0.5, 1.5);
    const Tensor bias = random_tensor(rng, {40}, type);
    SECTION(std::string("with a bias ") + std::string(linnet::tensor::dtype_name(type))) {
      OpCall call{"std.nn.norm::layer_norm", {v(x), v(weight), Value::some(v(bias)), f32_scalar(1e-4f)},
                  {{"S", shape({4})}, {"H", dim(40)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      // bf16: rounded three times (normalized, times the weight, plus the
      // bias); the intermediate before the bias is about |out - bias|.
      std::vector<double> before_bias;
      const std::vector<double> out = as_doubles(results.body), shift = as_doubles(bias);
      for (size_t i = 0; i < out.size(); ++i) before_bias.push_back(std::fabs(out[i] - shift[i % 40]));
      require_agreement(label(call, type, "bias"), results.native, results.body, 4, before_bias);
    }
    SECTION(std::string("without a bias ") + std::string(linnet::tensor::dtype_name(type))) {
      OpCall call{"std.nn.norm::layer_norm", {v(x), v(weight)}, {{"S", shape({4})}, {"H", dim(40)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_agreement(label(call, type, "no bias"), results.native, results.body, 3);
    }
  }
}

TEST_CASE("log_softmax, token_log_probs and cross_entropy agree with their bodies", "[differential][rows]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(231);
    const int64_t tokens = 6, vocab = 50;
    const Tensor logits = random_tensor(rng, {tokens, vocab}, type, -20.0, 20.0);
    const Tensor targets = i64_tensor({0, 49, 7, 7, 23, 11}, {tokens});
    const Tensor weights = Tensor::from_vector(std::vector<float>{1.0f, 0.0f, 0.5f, 2.0f, 1.0f, 0.25f}, {tokens});
    const std::string name(linnet::tensor::dtype_name(type));
    // Results are f32 whatever T is: the f32 rule applies to both.
    SECTION("log_softmax " + name) {
      OpCall call{"std.nn.loss::log_softmax", {v(logits)}, {{"S", shape({tokens})}, {"V", dim(vocab)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_f32_agreement(label(call, type), results.native, results.body);
    }
    SECTION("token_log_probs " + name) {
      OpCall call{"std.nn.loss::token_log_probs", {v(logits), v(targets)},
                  {{"N", dim(tokens)}, {"V", dim(vocab)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_f32_agreement(label(call, type), results.native, results.body);
    }
    SECTION("cross_entropy " + name) {
      OpCall call{"std.nn.loss::cross_entropy", {v(logits), v(targets), v(weights)},
                  {{"N", dim(tokens)}, {"V", dim(vocab)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      REQUIRE(results.native.rank() == 0);
      require_f32_agreement(label(call, type), results.native, results.body);
    }
  }
}

TEST_CASE("token_log_probs leaves a target outside the vocabulary to the body", "[differential][rows]") {
  const Tensor logits = Tensor::from_vector(std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f}, {2, 2});
  linnet::eval::Options options;
  options.numerics = NumericsPolicy::Equivalent;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = {v(logits), v(i64_tensor({1, 2}, {2}))};
  REQUIRE_THROWS_AS(interpreter.call_function("std.nn.loss::token_log_probs", inputs), linnet::eval::EvalError);
  CHECK(interpreter.stats().at("std.nn.loss::token_log_probs").native == 0);
}

TEST_CASE("argmax agrees with its body bit for bit", "[differential][rows]") {
  for (DType type : {DType::F32, DType::BF16}) {
    // Ties (the first wins), signed zeros, and a row holding NaN (the body
    // finds no element equal to the NaN maximum and returns N).
    const Tensor x = Tensor::from_vector(
        std::vector<float>{1.0f, 3.0f, 3.0f, -2.0f, -0.0f, 0.0f, -1.0f, -5.0f, 2.0f, std::nanf(""), 7.0f, 1.0f,
                           -4.0f, -3.0f, -3.0f, -9.0f},
        {4, 4}, type);
    OpCall call{"std.nn.decoding::argmax", {v(x)}, {{"S", shape({4})}, {"N", dim(4)}, {"T", dtype(type)}}};
    const Results results = run_both(call);
    require_identical(label(call, type, "ties, zeros, NaN"), results.native, results.body);
    CHECK(results.native.to_vector<int32_t>() == std::vector<int32_t>{1, 0, 4, 1});

    std::mt19937 rng(241);
    const Tensor random = random_tensor(rng, {2, 3, 101}, type);
    OpCall wide{"std.nn.decoding::argmax", {v(random)}, {{"S", shape({2, 3})}, {"N", dim(101)}, {"T", dtype(type)}}};
    const Results random_results = run_both(wide);
    require_identical(label(wide, type, "random rows"), random_results.native, random_results.body);
  }
}
