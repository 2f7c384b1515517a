// Differential tests of the product kernels (linear, matmul, batched_matmul)
// against their bodies.
//
// For bf16 the body under `exact` accumulates in bf16 (every product and
// partial sum rounded), which the kernel by design does not. So a bf16
// kernel result is held to two references:
// - the body evaluated in f32 on the same (widened) inputs and rounded to
//   bf16: the `equivalent` contract, within the bf16 rule of
//   test_differential_support.hpp (2 roundings for linear with a bias: the
//   product and the sum; 1 otherwise);
// - the body in bf16 itself, within the classic bound for a recursively
//   summed, rounded dot product of n terms: gamma_n * sum |x_i w_i| with
//   gamma_n = n u / (1 - n u), u = 2^-8 (bf16's unit roundoff), plus the
//   kernel's own final roundings (2 ulps).
#include <cstring>
#include <optional>
#include <vector>

#include "linnet/tensor/gemm.hpp"
#include "test_differential_support.hpp"

using namespace ops_test;

namespace {

namespace gemm = linnet::tensor::gemm;

// Every matrix-product path this CPU supports (tensor::gemm), forced in
// turn, with the default restored afterwards.
std::vector<gemm::Isa> product_paths() {
  std::vector<gemm::Isa> paths;
  for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx2, gemm::Isa::Avx512, gemm::Isa::Avx512Bf16}) {
    if (gemm::isa_supported(isa)) paths.push_back(isa);
  }
  return paths;
}

struct ForcedProductPath {
  explicit ForcedProductPath(gemm::Isa isa) { gemm::override_isa(isa); }
  ~ForcedProductPath() { gemm::override_isa(std::nullopt); }
};

// sum_i |a[r, i]| * |b[o, i]| for every (r, o): the scale of a dot product's
// rounding error. a is [R, n], b is [O, n] (row-major doubles).
std::vector<double> absolute_dot_sums(const std::vector<double>& a, const std::vector<double>& b, int64_t rows,
                                      int64_t outputs, int64_t n) {
  std::vector<double> sums(static_cast<size_t>(rows * outputs), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outputs; ++o)
      for (int64_t i = 0; i < n; ++i)
        sums[static_cast<size_t>(r * outputs + o)] += std::fabs(a[static_cast<size_t>(r * n + i)] * b[static_cast<size_t>(o * n + i)]);
  return sums;
}

double gamma_bf16(int64_t n) {
  const double u = std::ldexp(1.0, -8);
  return n * u / (1.0 - n * u);
}

// Holds a bf16 kernel result to the bf16-accumulating body (see the top).
void require_within_bf16_accumulation(const std::string& what, const Tensor& native, const Tensor& body,
                                      const std::vector<double>& dot_sums, int64_t n) {
  // The bound holds only while n u < 1 (256 terms in bf16); longer sums are
  // held to the f32 body alone.
  if ((n + 1) * std::ldexp(1.0, -8) >= 1.0) return;
  const std::vector<double> a = as_doubles(native), b = as_doubles(body);
  compare(what + " vs bf16-accumulating body", native, body, [&](size_t i, double) {
    return gamma_bf16(n + 1) * dot_sums[i] + 2 * bf16_ulp(std::max(std::fabs(a[i]), std::fabs(b[i])));
  });
}

Tensor widened(const Tensor& x) { return x.to(DType::F32); }

// Holds a bf16 kernel result to the bits of the f32 product (plus the bias)
// cast to bf16 afterwards, as the product rounds each sum once when it
// stores it: `batches` stacked products x[b] w[b]^T of bf16 operands, x
// [batches, rows, in] and w [batches, out, in] (any shape with those
// elements in that order).
void require_f32_product_rounded(const std::string& what, const Tensor& native, const Tensor& x, const Tensor& w,
                                 int64_t batches, int64_t rows, int64_t out, int64_t in,
                                 const std::optional<Tensor>& bias) {
  const int64_t count = batches * rows * out;
  std::vector<float> y(static_cast<size_t>(std::max<int64_t>(count, 1)));
  const Tensor x_rows = x.contiguous(), w_rows = w.contiguous();
  const auto* x_bits = static_cast<const uint16_t*>(x_rows.raw_data());
  const auto* w_bits = static_cast<const uint16_t*>(w_rows.raw_data());
  for (int64_t b = 0; b < batches; ++b) {
    gemm::gemm_bt(rows, out, in, gemm::Operand{x_bits + b * rows * in, true, in},
                  gemm::Operand{w_bits + b * out * in, true, in}, y.data() + b * rows * out, out);
  }
  if (bias) {
    const std::vector<float> offsets = bias->to(DType::F32).to_vector<float>();
    for (size_t i = 0; i < static_cast<size_t>(count); ++i) y[i] += offsets[i % static_cast<size_t>(out)];
  }
  const Tensor cast = Tensor::from_vector(y, {count}).to(DType::BF16);
  INFO(what << ": the bits of the f32 product rounded afterwards");
  REQUIRE(native.dtype() == DType::BF16);
  REQUIRE(native.numel() == count);
  REQUIRE(std::memcmp(native.contiguous().raw_data(), cast.raw_data(), static_cast<size_t>(count) * 2) == 0);
}

// A product op without a bias (matmul, batched_matmul) against its body:
// in f32 by the f32 rule; in bf16 against the f32 body on the same
// (widened) operands, rounded: the `equivalent` contract, one rounding.
Results check_product_against_body(const OpCall& call, DType type) {
  const Results results = run_both(call);
  if (type == DType::F32) {
    require_f32_agreement(label(call, type), results.native, results.body);
    return results;
  }
  OpCall wide = call;
  for (Value& operand : wide.positional) operand = v(widened(operand.tensor()));
  wide.generics["T"] = dtype(DType::F32);
  require_bf16_agreement(label(call, type) + " vs f32 body", results.native, run_body(wide).tensor().to(DType::BF16),
                         1);
  return results;
}

void check_linear(const Shape& leading, int64_t in, int64_t out, bool with_bias, uint32_t seed) {
  for (gemm::Isa path : product_paths()) {
  const ForcedProductPath forced(path);
  INFO("product path " << gemm::isa_name(path));
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(seed);
    Shape x_shape = leading;
    x_shape.push_back(in);
    const Tensor x = random_tensor(rng, x_shape, type);
    const Tensor weight = random_tensor(rng, {out, in}, type, -0.5, 0.5);
    const Tensor bias = random_tensor(rng, {out}, type);
    OpCall call{"std.nn.linear::linear",
                {v(x), v(weight), with_bias ? Value::some(v(bias)) : Value::none()},
                {{"S", shape(leading)}, {"In", dim(in)}, {"Out", dim(out)}, {"T", dtype(type)}}};
    const std::string what = label(call, type, with_bias ? "bias" : "no bias");
    const Results results = run_both(call);
    if (type == DType::F32) {
      require_f32_agreement(what, results.native, results.body);
      continue;
    }
    // The equivalent contract: the f32 body on the same values, rounded.
    OpCall wide = call;
    wide.positional = {v(widened(x)), v(widened(weight)), with_bias ? Value::some(v(widened(bias))) : Value::none()};
    wide.generics["T"] = dtype(DType::F32);
    const Tensor reference = run_body(wide).tensor().to(DType::BF16);
    std::vector<double> before_bias;
    if (with_bias) {
      const std::vector<double> values = as_doubles(results.native), offsets = as_doubles(bias);
      for (size_t i = 0; i < values.size(); ++i) before_bias.push_back(std::fabs(values[i] - offsets[i % out]));
    }
    require_bf16_agreement(what + " vs f32 body", results.native, reference, with_bias ? 2 : 1, before_bias);
    const int64_t rows = x.numel() / in;
    require_within_bf16_accumulation(what, results.native, results.body,
                                     absolute_dot_sums(as_doubles(x), as_doubles(weight), rows, out, in), in);
    require_f32_product_rounded(what, results.native, x, weight, 1, rows, out, in,
                                with_bias ? std::optional<Tensor>(bias) : std::nullopt);
  }
  }
}

}  // namespace

TEST_CASE("linear agrees with its body", "[differential][linear]") {
  SECTION("with a bias, two leading axes, outputs across several panels") { check_linear({2, 3}, 48, 150, true, 11); }
  SECTION("without a bias") { check_linear({5}, 33, 64, false, 12); }
  SECTION("more rows than one tile") { check_linear({300}, 16, 70, true, 13); }
  // At and just below tensor::gemm's threshold for oneDNN (64 rows, when the
  // build has it), outputs across its blocks of 128.
  SECTION("rows at the product-engine threshold") { check_linear({2, 32}, 200, 130, true, 17); }
  SECTION("rows just below the product-engine threshold") { check_linear({63}, 200, 130, false, 18); }
  SECTION("many rows without a bias, outputs across blocks") { check_linear({100}, 200, 300, false, 19); }
  SECTION("many rows with a bias, outputs across blocks") { check_linear({100}, 200, 300, true, 20); }
  SECTION("no leading axes") { check_linear({}, 40, 9, true, 14); }
  SECTION("one row, a long inner dimension in several parts, odd sizes") { check_linear({1}, 1601, 13, true, 15); }
  SECTION("size 1") { check_linear({1}, 1, 1, false, 16); }
}

TEST_CASE("matmul and batched_matmul agree with their bodies", "[differential][linear]") {
  for (gemm::Isa path : product_paths()) {
  const ForcedProductPath forced(path);
  INFO("product path " << gemm::isa_name(path));
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(21);
    const int64_t m = 7, k = 37, n = 19;
    SECTION(std::string("matmul ") + std::string(linnet::tensor::dtype_name(type)) + " " + gemm::isa_name(path)) {
      const Tensor a = random_tensor(rng, {m, k}, type), b = random_tensor(rng, {k, n}, type);
      OpCall call{"std.linalg::matmul", {v(a), v(b)}, {{"M", dim(m)}, {"K", dim(k)}, {"N", dim(n)}, {"T", dtype(type)}}};
      const Results results = check_product_against_body(call, type);
      if (type == DType::BF16) {
        // b transposed to [N, K] for the error scale.
        const Tensor b_rows = b.permute({1, 0}).contiguous();
        require_within_bf16_accumulation(label(call, type), results.native, results.body,
                                         absolute_dot_sums(as_doubles(a), as_doubles(b_rows), m, n, k), k);
      }
    }
    SECTION(std::string("batched_matmul ") + std::string(linnet::tensor::dtype_name(type)) + " " +
            gemm::isa_name(path)) {
      const Shape batch{2, 3};
      const Tensor a = random_tensor(rng, {2, 3, m, k}, type), b = random_tensor(rng, {2, 3, k, n}, type);
      OpCall call{"std.linalg::batched_matmul",
                  {v(a), v(b)},
                  {{"B", shape(batch)}, {"M", dim(m)}, {"K", dim(k)}, {"N", dim(n)}, {"T", dtype(type)}}};
      check_product_against_body(call, type);
    }
  }
}
}

// matmul and batched_matmul store T from the product: in bf16 each f32 sum
// rounded once as it is stored, never an f32 result cast afterwards; the
// bits are the same. Our kernels' rows and oneDNN's (64 rows on, outputs
// across its blocks of 128), on every path.
TEST_CASE("bf16 matmul and batched_matmul keep the bits of the f32 product rounded afterwards", "[differential][linear]") {
  for (gemm::Isa path : product_paths()) {
    const ForcedProductPath forced(path);
    INFO("product path " << gemm::isa_name(path));
    struct Sizes {
      int64_t m, k, n;
    };
    for (const Sizes sizes : {Sizes{7, 37, 19}, Sizes{70, 40, 150}}) {
      const int64_t m = sizes.m, k = sizes.k, n = sizes.n;
      std::mt19937 rng(static_cast<uint32_t>(23 + m));
      const Tensor a = random_tensor(rng, {m, k}, DType::BF16), b = random_tensor(rng, {k, n}, DType::BF16);
      OpCall matmul{"std.linalg::matmul",
                    {v(a), v(b)},
                    {{"M", dim(m)}, {"K", dim(k)}, {"N", dim(n)}, {"T", dtype(DType::BF16)}}};
      require_f32_product_rounded(label(matmul, DType::BF16), run_native(matmul).tensor(), a, b.permute({1, 0}), 1, m,
                                  n, k, std::nullopt);

      const Tensor as = random_tensor(rng, {2, m, k}, DType::BF16), bs = random_tensor(rng, {2, k, n}, DType::BF16);
      OpCall batched{"std.linalg::batched_matmul",
                     {v(as), v(bs)},
                     {{"B", shape({2})}, {"M", dim(m)}, {"K", dim(k)}, {"N", dim(n)}, {"T", dtype(DType::BF16)}}};
      require_f32_product_rounded(label(batched, DType::BF16), run_native(batched).tensor(), as,
                                  bs.permute({0, 2, 1}), 2, m, n, k, std::nullopt);
    }
  }
}
