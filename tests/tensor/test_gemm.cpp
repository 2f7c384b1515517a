// The matrix-product kernels (linnet/tensor/gemm.hpp), every path this CPU
// supports forced in turn (oneDNN off): against a double-precision
// reference, at sizes that are not multiples of any tile or vector width
// (and 1), with row strides wider than the rows; bf16 operands widened on
// load give the same bits as operands widened first; results do not depend
// on the thread count or on which other rows share the product. Then the
// products as the interpreter runs them (oneDNN for many rows when the build
// has it): the same reference at and around the row threshold and the
// block grid, the same bits with 1, 2 and 3 threads, widened operands.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"

namespace gemm = linnet::tensor::gemm;
using gemm::Isa;

namespace {

std::vector<Isa> supported_paths() {
  std::vector<Isa> paths;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16}) {
    if (gemm::isa_supported(isa)) paths.push_back(isa);
  }
  return paths;
}

// Our kernels on one path, oneDNN off; restores the defaults when a test
// ends, even by an exception.
struct ForcedPath {
  explicit ForcedPath(Isa isa) {
    gemm::override_isa(isa);
    gemm::set_library_enabled(false);
  }
  ~ForcedPath() {
    gemm::override_isa(std::nullopt);
    gemm::set_library_enabled(true);
  }
};

// A matrix of `rows` x `cols` with rows `stride` apart, values that are
// exact in bf16 (so f32 and bf16 copies hold the same numbers). Padding
// between rows holds NaN: a kernel that reads past a row poisons its result.
struct Matrix {
  int64_t rows, cols, stride;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  gemm::Operand operand(bool as_bf16) const {
    return as_bf16 ? gemm::Operand{bf16.data(), true, stride} : gemm::Operand{f32.data(), false, stride};
  }
  double at(int64_t r, int64_t c) const { return f32[static_cast<size_t>(r * stride + c)]; }
};

Matrix random_matrix(std::mt19937& rng, int64_t rows, int64_t cols, int64_t padding) {
  Matrix m{rows, cols, cols + padding, {}, {}};
  const size_t size = static_cast<size_t>(std::max<int64_t>(rows * m.stride, 1));
  m.f32.assign(size, std::nanf(""));
  m.bf16.assign(size, linnet::tensor::float_to_bf16_bits(std::nanf("")));
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const uint16_t bits = linnet::tensor::float_to_bf16_bits(values(rng));
      m.bf16[static_cast<size_t>(r * m.stride + c)] = bits;
      m.f32[static_cast<size_t>(r * m.stride + c)] = linnet::tensor::bf16_bits_to_float(bits);
    }
  }
  return m;
}

std::vector<float> product(const Matrix& x, bool x_bf16, const Matrix& w, bool w_bf16, int64_t y_stride) {
  std::vector<float> y(static_cast<size_t>(std::max<int64_t>(x.rows * y_stride, 1)), -7.0f);
  gemm::gemm_bt(x.rows, w.rows, x.cols, x.operand(x_bf16), w.operand(w_bf16), y.data(), y_stride);
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Size {
  int64_t rows, outputs, inner;
};

// Sizes around every tile (2x2, 3x4, 4x6), vector width (1, 8, 16, 32),
// block (48 or 64 rows and outputs) and part of the inner dimension (512
// or 1024 elements, a single part below 1.5 of it; a single part too when
// the rows' x fits in 256 KiB: {13, 37, 1601} and {9, 50, 4100} go through
// several row tiles in one part, {66, 49, 1537} in f32 and {40, 20, 4100}
// in parts).
const std::vector<Size> kSizes = {{1, 1, 1},    {1, 1, 31},   {1, 7, 33},    {2, 5, 16},    {3, 4, 8},
                                  {4, 6, 32},   {5, 13, 17},  {7, 11, 47},   {9, 25, 100},  {13, 37, 257},
                                  {1, 50, 65},  {6, 1, 3},    {17, 19, 0},   {3, 5, 1601},  {1, 3, 2048},
                                  {70, 53, 801}, {66, 49, 1537}, {13, 37, 1601}, {9, 50, 4100}, {40, 20, 4100}};

}  // namespace

// Every operand pair of x (rows x inner) by w (outputs x inner) against a
// double reference; the padding between output rows is left alone.
void check_against_reference(std::mt19937& rng, const Size& size, const std::string& context) {
  const Matrix x = random_matrix(rng, size.rows, size.inner, 3);
  const Matrix w = random_matrix(rng, size.outputs, size.inner, 5);
  const int64_t y_stride = size.outputs + 2;
  for (const bool x_bf16 : {false, true}) {
    for (const bool w_bf16 : {false, true}) {
      INFO(context << ", " << size.rows << " x " << size.outputs << " x " << size.inner << ", x "
                   << (x_bf16 ? "bf16" : "f32") << ", w " << (w_bf16 ? "bf16" : "f32"));
      const std::vector<float> y = product(x, x_bf16, w, w_bf16, y_stride);
      for (int64_t r = 0; r < size.rows; ++r) {
        for (int64_t o = 0; o < size.outputs; ++o) {
          double exact = 0, scale = 0;
          for (int64_t i = 0; i < size.inner; ++i) {
            exact += x.at(r, i) * w.at(o, i);
            scale += std::fabs(x.at(r, i) * w.at(o, i));
          }
          // f32 sums of `inner` exact-ish terms: a few units of f32 roundoff per term.
          const double bound = (static_cast<double>(size.inner) + 2) * std::ldexp(1.0, -23) * scale;
          const float got = y[static_cast<size_t>(r * y_stride + o)];
          INFO("output " << r << ", " << o << ": " << got << " vs " << exact);
          REQUIRE(std::fabs(got - exact) <= bound);
        }
        for (int64_t o = size.outputs; o < y_stride && r + 1 < size.rows; ++o) {
          REQUIRE(y[static_cast<size_t>(r * y_stride + o)] == -7.0f);
        }
      }
    }
  }
}

TEST_CASE("every product path agrees with a double reference", "[gemm]") {
  std::mt19937 rng(5);
  for (Isa isa : supported_paths()) {
    ForcedPath forced(isa);
    for (const Size& size : kSizes) check_against_reference(rng, size, "path " + gemm::isa_name(isa));
  }
}

TEST_CASE("bf16 operands widened on load give the bits of operands widened first", "[gemm]") {
  std::mt19937 rng(6);
  for (Isa isa : supported_paths()) {
    ForcedPath forced(isa);
    for (const Size& size : kSizes) {
      INFO("path " << gemm::isa_name(isa) << ", " << size.rows << " x " << size.outputs << " x " << size.inner);
      const Matrix x = random_matrix(rng, size.rows, size.inner, 1);
      const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
      const std::vector<float> widened_first = product(x, false, w, false, size.outputs);
      // T=f32 with a bf16 checkpoint weight: exactly as if the weight were widened at load.
      REQUIRE(same_bits(product(x, false, w, true, size.outputs), widened_first));
      REQUIRE(same_bits(product(x, true, w, false, size.outputs), widened_first));
      // bf16 x bf16 uses vdpbf16ps on the avx512bf16 path (its own rounding);
      // every other path widens both.
      if (isa != Isa::Avx512Bf16) REQUIRE(same_bits(product(x, true, w, true, size.outputs), widened_first));
    }
  }
}

TEST_CASE("product results do not depend on threads or on the other rows", "[gemm][threads]") {
  std::mt19937 rng(7);
  // Above the threshold where products start threads (2M multiply-adds).
  const Size size{45, 301, 1703};
  const int threads_before = linnet::tensor::num_threads();
  for (Isa isa : supported_paths()) {
    ForcedPath forced(isa);
    const Matrix x = random_matrix(rng, size.rows, size.inner, 0);
    const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
    for (const bool bf16 : {false, true}) {
      INFO("path " << gemm::isa_name(isa) << (bf16 ? ", bf16" : ", f32"));
      linnet::tensor::set_num_threads(1);
      const std::vector<float> one = product(x, bf16, w, bf16, size.outputs);
      linnet::tensor::set_num_threads(2);
      const std::vector<float> two = product(x, bf16, w, bf16, size.outputs);
      linnet::tensor::set_num_threads(3);
      const std::vector<float> three = product(x, bf16, w, bf16, size.outputs);
      REQUIRE(same_bits(one, two));
      REQUIRE(same_bits(one, three));
      // One row alone (a decode step) gets the bits it gets inside the whole product.
      for (const int64_t row : {int64_t{0}, int64_t{22}, size.rows - 1}) {
        std::vector<float> alone(static_cast<size_t>(size.outputs));
        const gemm::Operand x_row =
            bf16 ? gemm::Operand{x.bf16.data() + row * x.stride, true, x.stride}
                 : gemm::Operand{x.f32.data() + row * x.stride, false, x.stride};
        gemm::gemm_bt(1, size.outputs, size.inner, x_row, w.operand(bf16), alone.data(), size.outputs);
        REQUIRE(std::memcmp(alone.data(), one.data() + row * size.outputs, alone.size() * sizeof(float)) == 0);
      }
    }
  }
  linnet::tensor::set_num_threads(threads_before);
}

// Many-row sizes: at and around the row threshold (64), and across the
// oneDNN block grid (512 rows by 128 outputs): one output, outputs and rows
// off every block, inner sizes off every vector width.
const std::vector<Size> kManyRowSizes = {{gemm::kLibraryMinRows - 1, 9, 33}, {gemm::kLibraryMinRows, 1, 1},
                                         {gemm::kLibraryMinRows, 7, 31},     {gemm::kLibraryMinRows + 1, 129, 257},
                                         {130, 300, 65},                     {70, 53, 801},
                                         {513, 131, 40},                     {100, 127, 1601}};

TEST_CASE("many-row products as the interpreter runs them agree with a double reference", "[gemm][library]") {
  INFO("oneDNN " << (gemm::library_enabled() ? "on" : "absent") << ", bf16 "
                 << (gemm::library_available_bf16() ? "on" : "absent"));
  std::mt19937 rng(8);
  for (const Size& size : kManyRowSizes) check_against_reference(rng, size, "default engine");
}

TEST_CASE("many-row products do not depend on the thread count", "[gemm][library][threads]") {
  std::mt19937 rng(9);
  // Above the work that starts threads, several blocks of the grid each way.
  const Size size{530, 301, 1703};
  const Matrix x = random_matrix(rng, size.rows, size.inner, 2);
  const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
  const int threads_before = linnet::tensor::num_threads();
  for (const bool x_bf16 : {false, true}) {
    for (const bool w_bf16 : {false, true}) {
      INFO("x " << (x_bf16 ? "bf16" : "f32") << ", w " << (w_bf16 ? "bf16" : "f32"));
      linnet::tensor::set_num_threads(1);
      const std::vector<float> one = product(x, x_bf16, w, w_bf16, size.outputs);
      linnet::tensor::set_num_threads(2);
      const std::vector<float> two = product(x, x_bf16, w, w_bf16, size.outputs);
      linnet::tensor::set_num_threads(3);
      const std::vector<float> three = product(x, x_bf16, w, w_bf16, size.outputs);
      REQUIRE(same_bits(one, two));
      REQUIRE(same_bits(one, three));
      // The serial form over all the outputs gives the same bits.
      std::vector<float> serial(one.size(), -7.0f);
      gemm::gemm_bt_serial(size.rows, 0, size.outputs, size.inner, x.operand(x_bf16), w.operand(w_bf16),
                           serial.data(), size.outputs);
      REQUIRE(same_bits(one, serial));
    }
  }
  linnet::tensor::set_num_threads(threads_before);
}

TEST_CASE("many-row products of bf16 operands widened on the fly give the bits of f32 operands",
          "[gemm][library]") {
  // T=f32 on a bf16 checkpoint must give the bytes of the f32 checkpoint.
  std::mt19937 rng(10);
  for (const Size& size : kManyRowSizes) {
    INFO(size.rows << " x " << size.outputs << " x " << size.inner);
    const Matrix x = random_matrix(rng, size.rows, size.inner, 1);
    const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
    const std::vector<float> widened_first = product(x, false, w, false, size.outputs);
    REQUIRE(same_bits(product(x, false, w, true, size.outputs), widened_first));
    REQUIRE(same_bits(product(x, true, w, false, size.outputs), widened_first));
  }
}

TEST_CASE("weights widened once per product are widened again for the next product", "[gemm][library][threads]") {
  // Three row blocks of oneDNN's grid share each widened weight block (one
  // block of outputs here) within a product. The next product over the same
  // weight buffer, rewritten in place, must see the new weights: with 1 and
  // 2 threads, and for serial products of part of the outputs.
  std::mt19937 rng(12);
  const Size size{1100, 101, 77};
  const Matrix x = random_matrix(rng, size.rows, size.inner, 1);
  Matrix w = random_matrix(rng, size.outputs, size.inner, 3);
  auto rewrite_weights = [&] {
    const Matrix other = random_matrix(rng, size.outputs, size.inner, 3);
    std::copy(other.f32.begin(), other.f32.end(), w.f32.begin());
    std::copy(other.bf16.begin(), other.bf16.end(), w.bf16.begin());
  };
  const int threads_before = linnet::tensor::num_threads();
  for (const int threads : {1, 2}) {
    linnet::tensor::set_num_threads(threads);
    std::vector<std::vector<float>> widened_first, widened_on_the_fly;
    for (int round = 0; round < 3; ++round) {
      rewrite_weights();
      widened_on_the_fly.push_back(product(x, false, w, true, size.outputs));
      widened_first.push_back(product(x, false, w, false, size.outputs));
    }
    for (size_t round = 0; round < widened_first.size(); ++round) {
      INFO(threads << " threads, round " << round);
      REQUIRE(same_bits(widened_on_the_fly[round], widened_first[round]));
    }
  }
  linnet::tensor::set_num_threads(threads_before);
  std::vector<std::vector<float>> part, part_first;
  for (int round = 0; round < 3; ++round) {
    rewrite_weights();
    part.emplace_back(static_cast<size_t>(size.rows * size.outputs), -7.0f);
    gemm::gemm_bt_serial(size.rows, 5, size.outputs, size.inner, x.operand(false), w.operand(true),
                         part.back().data(), size.outputs);
    part_first.emplace_back(static_cast<size_t>(size.rows * size.outputs), -7.0f);
    gemm::gemm_bt_serial(size.rows, 5, size.outputs, size.inner, x.operand(false), w.operand(false),
                         part_first.back().data(), size.outputs);
  }
  for (size_t round = 0; round < part.size(); ++round) {
    INFO("serial, outputs from 5, round " << round);
    REQUIRE(same_bits(part[round], part_first[round]));
  }
}

TEST_CASE("bf16 rows widened once per product are widened again for the next product", "[gemm][library][threads]") {
  // One row block shared by five blocks of outputs: x's bf16 rows are
  // widened once per product and thread. The next product over the same x
  // buffer, rewritten in place, must see the new rows, with 1 and 2 threads.
  std::mt19937 rng(13);
  const Size size{300, 611, 45};
  Matrix x = random_matrix(rng, size.rows, size.inner, 2);
  const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
  const int threads_before = linnet::tensor::num_threads();
  for (const int threads : {1, 2}) {
    linnet::tensor::set_num_threads(threads);
    std::vector<std::vector<float>> widened_first, widened_on_the_fly;
    for (int round = 0; round < 3; ++round) {
      const Matrix other = random_matrix(rng, size.rows, size.inner, 2);
      std::copy(other.f32.begin(), other.f32.end(), x.f32.begin());
      std::copy(other.bf16.begin(), other.bf16.end(), x.bf16.begin());
      widened_on_the_fly.push_back(product(x, true, w, false, size.outputs));
      widened_first.push_back(product(x, false, w, false, size.outputs));
    }
    for (size_t round = 0; round < widened_first.size(); ++round) {
      INFO(threads << " threads, round " << round);
      REQUIRE(same_bits(widened_on_the_fly[round], widened_first[round]));
    }
  }
  linnet::tensor::set_num_threads(threads_before);
}

namespace {

// gemm_bt into a bf16 destination with rows y_stride apart, plus `bias`
// when given; the padding between rows keeps its marker.
std::vector<uint16_t> rounded_product(const Matrix& x, bool x_bf16, const Matrix& w, bool w_bf16, int64_t y_stride,
                                      const float* bias = nullptr) {
  std::vector<uint16_t> y(static_cast<size_t>(std::max<int64_t>(x.rows * y_stride, 1)), 0xBEEF);
  gemm::gemm_bt(x.rows, w.rows, x.cols, x.operand(x_bf16), w.operand(w_bf16),
                gemm::Destination{y.data(), true, y_stride, bias});
  return y;
}

// Each output of an f32 product plus `bias` (when given) rounded to bf16;
// the padding as rounded_product leaves it.
std::vector<uint16_t> rounded_afterwards(const std::vector<float>& y, int64_t outputs, int64_t y_stride,
                                         const float* bias = nullptr) {
  std::vector<uint16_t> rounded(y.size(), 0xBEEF);
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t o = static_cast<int64_t>(i) % y_stride;
    if (o < outputs) rounded[i] = linnet::tensor::float_to_bf16_bits(bias ? y[i] + bias[o] : y[i]);
  }
  return rounded;
}

// Rounds a product of `size` to bf16 as it is stored, every operand pair,
// with and without a bias, and compares with the f32 product rounded
// afterwards; and the f32 product with a bias with the bias added after.
void check_rounded(std::mt19937& rng, const Size& size) {
  const Matrix x = random_matrix(rng, size.rows, size.inner, 1);
  const Matrix w = random_matrix(rng, size.outputs, size.inner, 2);
  const Matrix bias = random_matrix(rng, 1, size.outputs, 0);
  const int64_t y_stride = size.outputs + 3;
  for (const bool x_bf16 : {false, true}) {
    for (const bool w_bf16 : {false, true}) {
      INFO(size.rows << " x " << size.outputs << " x " << size.inner << ", x " << (x_bf16 ? "bf16" : "f32")
                     << ", w " << (w_bf16 ? "bf16" : "f32"));
      const std::vector<float> plain = product(x, x_bf16, w, w_bf16, y_stride);
      REQUIRE(rounded_product(x, x_bf16, w, w_bf16, y_stride) == rounded_afterwards(plain, size.outputs, y_stride));
      REQUIRE(rounded_product(x, x_bf16, w, w_bf16, y_stride, bias.f32.data()) ==
              rounded_afterwards(plain, size.outputs, y_stride, bias.f32.data()));
      std::vector<float> biased(plain.size(), -7.0f), added_after = plain;
      gemm::gemm_bt(x.rows, w.rows, x.cols, x.operand(x_bf16), w.operand(w_bf16),
                    gemm::Destination{biased.data(), false, y_stride, bias.f32.data()});
      for (size_t i = 0; i < plain.size(); ++i) {
        const int64_t o = static_cast<int64_t>(i) % y_stride;
        if (o < size.outputs) added_after[i] = plain[i] + bias.f32[static_cast<size_t>(o)];
      }
      REQUIRE(same_bits(biased, added_after));
    }
  }
}

}  // namespace

TEST_CASE("a bf16 destination or a bias gives the bits of the f32 product rounded or added to afterwards",
          "[gemm][rounded]") {
  std::mt19937 rng(12);
  for (Isa isa : supported_paths()) {
    ForcedPath forced(isa);
    INFO("path " << gemm::isa_name(isa));
    for (const Size& size : kSizes) check_rounded(rng, size);
    // More outputs than one block of the serial split (512), and threads.
    check_rounded(rng, Size{3, 1100, 40});
    check_rounded(rng, Size{45, 301, 1703});
    // Decode-sized products over threads (at most four rows, taken in
    // guided units of 48 outputs), and five rows (the equal-task split).
    check_rounded(rng, Size{1, 1100, 1903});
    check_rounded(rng, Size{4, 1100, 500});
    check_rounded(rng, Size{5, 1100, 400});
  }
  INFO("default engine");
  for (const Size& size : kManyRowSizes) check_rounded(rng, size);
}

TEST_CASE("a bf16 destination does not depend on the thread count or the split", "[gemm][rounded][threads]") {
  std::mt19937 rng(13);
  const Size size{530, 301, 1703};
  const Matrix x = random_matrix(rng, size.rows, size.inner, 0);
  const Matrix w = random_matrix(rng, size.outputs, size.inner, 0);
  const int threads_before = linnet::tensor::num_threads();
  for (const bool bf16 : {false, true}) {
    INFO((bf16 ? "bf16" : "f32") << " operands");
    linnet::tensor::set_num_threads(1);
    const std::vector<uint16_t> one = rounded_product(x, bf16, w, bf16, size.outputs);
    REQUIRE(one == rounded_afterwards(product(x, bf16, w, bf16, size.outputs), size.outputs, size.outputs));
    linnet::tensor::set_num_threads(2);
    REQUIRE(rounded_product(x, bf16, w, bf16, size.outputs) == one);
    linnet::tensor::set_num_threads(3);
    REQUIRE(rounded_product(x, bf16, w, bf16, size.outputs) == one);
    // The serial form over two ranges split at an alignment boundary.
    const int64_t split = gemm::output_alignment(size.rows, bf16, bf16) * 2;
    std::vector<uint16_t> serial(one.size(), 0xBEEF);
    for (const auto& [first, last] : {std::pair<int64_t, int64_t>{0, split}, {split, size.outputs}}) {
      gemm::gemm_bt_serial(size.rows, first, last, size.inner, x.operand(bf16), w.operand(bf16),
                           gemm::Destination{serial.data(), true, size.outputs});
    }
    REQUIRE(serial == one);
  }
  linnet::tensor::set_num_threads(threads_before);
}

TEST_CASE("oneDNN can be turned off and on", "[gemm][library]") {
  const bool available = gemm::library_available();
  REQUIRE(gemm::library_enabled() == available);
  gemm::set_library_enabled(false);
  REQUIRE_FALSE(gemm::library_enabled());
  gemm::set_library_enabled(true);
  REQUIRE(gemm::library_enabled() == available);
  // Without f32 support there is no bf16 support either.
  if (!available) REQUIRE_FALSE(gemm::library_available_bf16());
  // Many-row products really change engine: oneDNN sums in another order
  // than our kernels, so a long product's bits differ somewhere (all equal
  // when the build has no oneDNN); a few rows stay on our kernels.
  std::mt19937 rng(11);
  for (const int64_t rows : {gemm::kLibraryMinRows - 1, gemm::kLibraryMinRows}) {
    const Matrix x = random_matrix(rng, rows, 1601, 0);
    const Matrix w = random_matrix(rng, 127, 1601, 0);
    for (const bool bf16 : {false, true}) {
      INFO(rows << " rows, " << (bf16 ? "bf16" : "f32"));
      const std::vector<float> as_run = product(x, bf16, w, bf16, w.rows);
      gemm::set_library_enabled(false);
      const std::vector<float> ours = product(x, bf16, w, bf16, w.rows);
      gemm::set_library_enabled(true);
      const bool library_runs = rows >= gemm::kLibraryMinRows &&
                                (bf16 ? gemm::library_available_bf16() : gemm::library_available());
      REQUIRE(same_bits(as_run, ours) == !library_runs);
    }
  }
}

TEST_CASE("forcing a product path the CPU lacks is refused", "[gemm]") {
  if (gemm::best_supported_isa() != Isa::Avx512Bf16) {
    REQUIRE_THROWS(gemm::override_isa(Isa::Avx512Bf16));
  }
  REQUIRE_NOTHROW(gemm::override_isa(Isa::Scalar));
  REQUIRE(gemm::active_isa() == Isa::Scalar);
  gemm::override_isa(std::nullopt);
  REQUIRE(gemm::active_isa() == gemm::best_supported_isa());
}

namespace {

// The AVX-512F path's one-row sum, written out: lane l of 16 sums
// fma(x[i], w[i], sum) over i = l, l + 16, ... in order (zeros past the
// end), then the lanes are added in the fixed tree of sum_lanes
// (gemm_avx512_tiles.inc): halves, quarters, pairs within a quarter.
float avx512_one_row_sum(const float* x, const float* w, int64_t inner) {
  float lanes[16] = {};
  for (int64_t start = 0; start < inner; start += 16) {
    for (int64_t l = 0; l < 16; ++l) {
      const int64_t i = start + l;
      lanes[l] = std::fma(i < inner ? x[i] : 0.0f, i < inner ? w[i] : 0.0f, lanes[l]);
    }
  }
  for (const int apart : {8, 4, 2, 1}) {
    float next[16];
    for (int l = 0; l < 16; ++l) next[l] = lanes[l] + lanes[l ^ apart];
    std::copy(next, next + 16, lanes);
  }
  return lanes[0];
}

}  // namespace

// A decode step's products stream w one tile of rows after another and
// prefetch ahead of the tile (and into the next tile's rows); none of that
// may change a bit. On the AVX-512F path the order of every sum is known,
// so each output is held to that order exactly, across many tiles and
// blocks, with 1 and 2 threads, f32 and bf16 weights, for one x row and
// for two (the tiles of one and of two x rows both stream w): inner sizes
// of one element, one short of, at and one past the 16-lane step and a
// 64-byte line of bf16 (32), and long rows off every step and line.
TEST_CASE("one- and two-row products on the AVX-512F path sum in their documented order", "[gemm][threads]") {
  if (!gemm::isa_supported(Isa::Avx512)) return;
  ForcedPath forced(Isa::Avx512);
  std::mt19937 rng(14);
  const int threads_before = linnet::tensor::num_threads();
  for (const Size& size : {Size{1, 301, 1703}, Size{1, 1000, 4100}, Size{1, 97, 530}, Size{1, 13, 15}, Size{2, 29, 1},
                           Size{2, 7, 16}, Size{1, 7, 17}, Size{2, 13, 31}, Size{1, 6, 32}, Size{2, 11, 33},
                           Size{2, 301, 1703}, Size{2, 1000, 4100}}) {
    // Padding between rows (NaN): a kernel that reads past a row poisons its sum.
    const Matrix x = random_matrix(rng, size.rows, size.inner, 3);
    const Matrix w = random_matrix(rng, size.outputs, size.inner, 5);
    std::vector<float> expected(static_cast<size_t>(size.rows * size.outputs));
    for (int64_t r = 0; r < size.rows; ++r) {
      for (int64_t o = 0; o < size.outputs; ++o) {
        expected[static_cast<size_t>(r * size.outputs + o)] =
            avx512_one_row_sum(x.f32.data() + r * x.stride, w.f32.data() + o * w.stride, size.inner);
      }
    }
    for (const int threads : {1, 2}) {
      linnet::tensor::set_num_threads(threads);
      for (const bool w_bf16 : {false, true}) {
        INFO(size.rows << " x " << size.outputs << " x " << size.inner << ", " << threads << " threads, w "
                       << (w_bf16 ? "bf16" : "f32"));
        REQUIRE(same_bits(product(x, false, w, w_bf16, size.outputs), expected));
      }
    }
  }
  linnet::tensor::set_num_threads(threads_before);
}
