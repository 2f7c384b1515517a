// The MXFP4 expert products against a naive reference: dequantize every
// expert whole, gather the chosen one, multiply. Random data, fixed seeds.
#include <catch2/catch.hpp>
#include <immintrin.h>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "linnet/ops/mxfp4.hpp"
#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"

using linnet::ops::ExpertChoice;
using linnet::ops::Mxfp4Experts;

namespace {

// How the slots choose experts.
enum class Routing {
  Uniform,  // uniformly among all experts but the last
  OneExpert,  // every slot expert 0
  Skewed,   // half the slots expert 0, the rest uniformly
};

struct Shape {
  int64_t experts, rows, groups;  // E, Out, G
  int64_t batch, slots;           // R, K
  uint32_t seed;
  Routing routing = Routing::Uniform;
};

// Random packed experts; the last expert is never chosen and holds bytes
// that dequantize to NaN (scale 255, code 0), so a product that read it
// would show.
struct Problem {
  Shape shape;
  std::vector<uint8_t> blocks, scales;
  std::vector<int64_t> experts;     // [R, K]
  std::vector<float> shared_x;      // [R, In]
  std::vector<float> per_slot_x;    // [R, K, In]
  std::vector<float> mixing;        // [R, K]
  std::vector<float> dequantized;   // [E, Out, In], the reference's weights

  int64_t length() const { return shape.groups * 32; }
  Mxfp4Experts weights() const {
    return Mxfp4Experts{blocks, scales, shape.experts, shape.rows, shape.groups};
  }
  ExpertChoice choice() const { return ExpertChoice{experts, shape.batch, shape.slots}; }
};

Problem make_problem(Shape shape) {
  Problem p{shape, {}, {}, {}, {}, {}, {}, {}};
  std::mt19937 random(shape.seed);
  std::uniform_int_distribution<int> any_byte(0, 255), normal_scale(118, 136);
  std::uniform_int_distribution<int64_t> chosen(0, shape.experts - 2);
  std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f), unit(0.0f, 1.0f);
  const int64_t block_count = shape.experts * shape.rows * shape.groups;
  const int64_t unused_from = (shape.experts - 1) * shape.rows * shape.groups;
  for (int64_t b = 0; b < block_count; ++b) {
    const bool unused = b >= unused_from;
    p.scales.push_back(static_cast<uint8_t>(unused ? 255 : normal_scale(random)));
    for (int j = 0; j < 16; ++j) p.blocks.push_back(static_cast<uint8_t>(unused ? 0 : any_byte(random)));
  }
  for (int64_t i = 0; i < shape.batch * shape.slots; ++i) {
    const bool first = shape.routing == Routing::OneExpert || (shape.routing == Routing::Skewed && i % 2 == 0);
    p.experts.push_back(first ? 0 : chosen(random));
  }
  if (shape.slots >= 2) p.experts[1] = p.experts[0];  // a row may choose one expert twice
  for (int64_t i = 0; i < shape.batch * p.length(); ++i) p.shared_x.push_back(signed_unit(random));
  for (int64_t i = 0; i < shape.batch * shape.slots * p.length(); ++i) p.per_slot_x.push_back(signed_unit(random));
  for (int64_t i = 0; i < shape.batch * shape.slots; ++i) p.mixing.push_back(unit(random));
  p.dequantized.resize(static_cast<size_t>(shape.experts * shape.rows * p.length()));
  linnet::ops::dequantize_mxfp4_f32(p.weights(), p.dequantized);
  return p;
}

// The accumulation order mxfp4.hpp documents, written out independently.
float documented_dot(const float* a, const float* b, int64_t length) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < length; ++i) lanes[i % 8] += a[i] * b[i];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// The naive products y[r, k, o] from whole dequantized experts, in the
// documented f32 order, and (for a sanity bound) in f64.
struct Reference {
  std::vector<float> y;
  std::vector<double> exact;
  std::vector<double> magnitude;  // sum of |x * w|, the scale of rounding error
  // Whether the slot's expert was chosen often enough for the grouped
  // product, whose order is the matrix product's (checked against `exact`
  // within the bound of any f32 summation order) rather than the lanes'.
  std::vector<bool> grouped;
  double gamma = 0;  // n u / (1 - n u) for n = G * 32, u = 2^-24
};

Reference reference_products(const Problem& p, bool shared) {
  const auto& s = p.shape;
  const int64_t length = p.length();
  std::vector<int64_t> chosen_by(static_cast<size_t>(s.experts), 0);
  for (int64_t expert : p.experts) ++chosen_by[static_cast<size_t>(expert)];
  Reference ref;
  const double unit = std::ldexp(1.0, -24);
  ref.gamma = static_cast<double>(length) * unit / (1 - static_cast<double>(length) * unit);
  for (int64_t r = 0; r < s.batch; ++r)
    for (int64_t k = 0; k < s.slots; ++k) {
      const int64_t expert = p.experts[static_cast<size_t>(r * s.slots + k)];
      const float* x = shared ? &p.shared_x[static_cast<size_t>(r * length)]
                              : &p.per_slot_x[static_cast<size_t>((r * s.slots + k) * length)];
      for (int64_t o = 0; o < s.rows; ++o) {
        const float* w = &p.dequantized[static_cast<size_t>((expert * s.rows + o) * length)];
        ref.y.push_back(documented_dot(x, w, length));
        double exact = 0, magnitude = 0;
        for (int64_t i = 0; i < length; ++i) {
          exact += static_cast<double>(x[i]) * w[i];
          magnitude += std::fabs(static_cast<double>(x[i]) * w[i]);
        }
        ref.exact.push_back(exact);
        ref.magnitude.push_back(magnitude);
        ref.grouped.push_back(chosen_by[static_cast<size_t>(expert)] >= linnet::ops::kMxfp4GroupedSlots);
      }
    }
  return ref;
}

// One bf16 ulp at the magnitude of `value`.
double bf16_ulp(double value) {
  return std::ldexp(1.0, std::max(-126, std::ilogb(std::max(std::fabs(value), 1e-30))) - 7);
}

// f32 products: the lanes' bits for an expert chosen by few slots, within
// gamma * sum |x w| of the exact value for a grouped one.
bool products_agree(const std::vector<float>& y, const Reference& ref) {
  if (y.size() != ref.y.size()) return false;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!ref.grouped[i]) {
      if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(ref.y[i])) return false;
    } else if (!(std::fabs(y[i] - ref.exact[i]) <= ref.gamma * ref.magnitude[i])) {
      return false;
    }
  }
  return true;
}

// The same for results rounded to bf16 once: a grouped one may also move by
// the rounding (at most half an ulp; one is allowed).
bool bf16_products_agree(const std::vector<uint16_t>& y, const Reference& ref) {
  if (y.size() != ref.y.size()) return false;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!ref.grouped[i]) {
      if (y[i] != linnet::tensor::float_to_bf16_bits(ref.y[i])) return false;
    } else {
      const double bound = ref.gamma * ref.magnitude[i];
      const double value = linnet::tensor::bf16_bits_to_float(y[i]);
      if (!(std::fabs(value - ref.exact[i]) <= bound + bf16_ulp(std::fabs(ref.exact[i]) + bound))) return false;
    }
  }
  return true;
}

// How many results came from grouped experts (so a case shows what it covers).
size_t grouped_count(const Reference& ref) {
  return static_cast<size_t>(std::count(ref.grouped.begin(), ref.grouped.end(), true));
}

std::vector<uint16_t> rounded_to_bf16(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float value : values) bits.push_back(linnet::tensor::float_to_bf16_bits(value));
  return bits;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  return true;
}

void check_close_to_exact(const std::vector<float>& y, const Reference& ref) {
  for (size_t i = 0; i < y.size(); ++i) {
    REQUIRE(std::isfinite(y[i]));
    REQUIRE(std::fabs(y[i] - ref.exact[i]) <= 1e-5 * ref.magnitude[i] + 1e-30);
  }
}

}  // namespace

TEST_CASE("MXFP4 expert products equal dequantize-then-multiply") {
  // Rows and slots that are not multiples of the vector kernel's runs (16
  // rows) or tiles (4 rows by 3 inputs), one slot, one group, one token;
  // prompts whose experts are grouped (kMxfp4GroupedSlots or more slots),
  // below and above oneDNN's 64 rows, with output rows not a multiple of
  // the 128-row tile, every slot on one expert, and an expert chosen by
  // none (the last, whose NaN weights would show).
  const Shape shape = GENERATE(Shape{5, 24, 3, 7, 3, 1u}, Shape{9, 64, 4, 33, 4, 2u}, Shape{3, 8, 1, 1, 1, 3u},
                               Shape{6, 37, 2, 5, 2, 4u}, Shape{33, 18, 5, 2, 4, 5u}, Shape{5, 24, 3, 1, 4, 6u},
                               Shape{4, 130, 3, 70, 2, 7u, Routing::OneExpert},
                               Shape{6, 133, 2, 45, 3, 8u, Routing::Skewed},
                               Shape{4, 9, 1, 21, 1, 9u, Routing::OneExpert});
  const Problem p = make_problem(shape);
  const size_t per_slot = static_cast<size_t>(shape.batch * shape.slots * shape.rows);
  CAPTURE(shape.experts, shape.rows, shape.groups, shape.batch, shape.slots);
  // The same inputs rounded to bf16, as a T = bf16 call's are: the _bf16
  // variants then multiply grouped experts in bf16.
  std::vector<float> shared_bf16_x, per_slot_bf16_x;
  for (float value : p.shared_x) shared_bf16_x.push_back(linnet::tensor::round_to_bf16(value));
  for (float value : p.per_slot_x) per_slot_bf16_x.push_back(linnet::tensor::round_to_bf16(value));
  Problem rounded = p;
  rounded.shared_x = shared_bf16_x;
  rounded.per_slot_x = per_slot_bf16_x;

  SECTION("mxfp4_experts_shared and mxfp4_linear_experts_shared") {
    const Reference ref = reference_products(p, true);
    CAPTURE(grouped_count(ref));
    std::vector<float> y(per_slot), linear_y(per_slot);
    linnet::ops::mxfp4_experts_shared_f32(p.weights(), p.shared_x, p.choice(), y);
    linnet::ops::mxfp4_linear_experts_shared_f32(p.weights(), p.shared_x, p.choice(), linear_y);
    CHECK(products_agree(y, ref));
    CHECK(same_bits(linear_y, y));
    check_close_to_exact(y, ref);

    std::vector<uint16_t> y_bf16(per_slot), linear_bf16(per_slot);
    linnet::ops::mxfp4_experts_shared_bf16(p.weights(), p.shared_x, p.choice(), y_bf16);
    linnet::ops::mxfp4_linear_experts_shared_bf16(p.weights(), p.shared_x, p.choice(), linear_bf16);
    CHECK(y_bf16 == rounded_to_bf16(y));  // inputs not bf16 values: the f32 products, rounded
    CHECK(linear_bf16 == y_bf16);

    const Reference rounded_ref = reference_products(rounded, true);
    linnet::ops::mxfp4_linear_experts_shared_bf16(p.weights(), rounded.shared_x, p.choice(), linear_bf16);
    CHECK(bf16_products_agree(linear_bf16, rounded_ref));
  }

  SECTION("mxfp4_experts") {
    const Reference ref = reference_products(p, false);
    std::vector<float> y(per_slot);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), y);
    CHECK(products_agree(y, ref));
    check_close_to_exact(y, ref);
    std::vector<uint16_t> y_bf16(per_slot);
    linnet::ops::mxfp4_experts_bf16(p.weights(), p.per_slot_x, p.choice(), y_bf16);
    CHECK(y_bf16 == rounded_to_bf16(y));
    const Reference rounded_ref = reference_products(rounded, false);
    linnet::ops::mxfp4_experts_bf16(p.weights(), rounded.per_slot_x, p.choice(), y_bf16);
    CHECK(bf16_products_agree(y_bf16, rounded_ref));
  }

  SECTION("mxfp4_combine_experts") {
    // The documented sum over slots of mixing * y, from the products the
    // kernel gives (checked above), and its distance from the exact value.
    for (const Problem* inputs : std::initializer_list<const Problem*>{&p, &rounded}) {
      const Reference ref = reference_products(*inputs, false);
      std::vector<float> y(per_slot);
      linnet::ops::mxfp4_experts_f32(p.weights(), inputs->per_slot_x, p.choice(), y);
      std::vector<float> expected;
      std::vector<double> exact, bound;
      for (int64_t r = 0; r < shape.batch; ++r)
        for (int64_t o = 0; o < shape.rows; ++o) {
          float total = 0.0f;
          double exact_total = 0, error = 0, magnitude = 0;
          for (int64_t k = 0; k < shape.slots; ++k) {
            const size_t flat = static_cast<size_t>(r * shape.slots + k);
            const size_t at = flat * static_cast<size_t>(shape.rows) + static_cast<size_t>(o);
            total += p.mixing[flat] * y[at];
            exact_total += p.mixing[flat] * ref.exact[at];
            error += p.mixing[flat] * ref.gamma * ref.magnitude[at];
            magnitude += std::fabs(p.mixing[flat] * ref.exact[at]) + p.mixing[flat] * ref.gamma * ref.magnitude[at];
          }
          expected.push_back(total);
          exact.push_back(exact_total);
          // The products' error, then the 2K roundings of the weighted sum.
          bound.push_back(error + 2.0 * static_cast<double>(shape.slots + 1) * std::ldexp(1.0, -24) * magnitude);
        }
      std::vector<float> out(static_cast<size_t>(shape.batch * shape.rows));
      linnet::ops::mxfp4_combine_experts_f32(p.weights(), inputs->per_slot_x, p.choice(), p.mixing, out);
      CHECK(same_bits(out, expected));
      std::vector<uint16_t> out_bf16(out.size());
      linnet::ops::mxfp4_combine_experts_bf16(p.weights(), inputs->per_slot_x, p.choice(), p.mixing, out_bf16);
      if (inputs == &p) {
        CHECK(out_bf16 == rounded_to_bf16(expected));
      } else {
        for (size_t i = 0; i < out_bf16.size(); ++i) {
          const double value = linnet::tensor::bf16_bits_to_float(out_bf16[i]);
          REQUIRE(std::fabs(value - exact[i]) <= bound[i] + bf16_ulp(std::fabs(exact[i]) + bound[i]));
        }
      }
    }
  }

  SECTION("every kernel path (AVX-512, AVX2, scalar) gives the same bits") {
    // Lanes and grouped alike: the grouped product's kernels differ by
    // path, so its results are held to the bound on every path, and the
    // lanes' to their bits.
    namespace gemm = linnet::tensor::gemm;
    const Reference shared_ref = reference_products(p, true), own_ref = reference_products(p, false);
    for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx2, gemm::Isa::Avx512}) {
      if (!gemm::isa_supported(isa)) continue;
      CAPTURE(gemm::isa_name(isa));
      gemm::override_isa(isa);
      std::vector<float> shared_y(per_slot), own_y(per_slot);
      linnet::ops::mxfp4_experts_shared_f32(p.weights(), p.shared_x, p.choice(), shared_y);
      linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), own_y);
      // The weighted sum over slots, in slot order, of this path's products
      // (the scalar path stores through the same out pointers as the
      // vector one): f32, and rounded to bf16.
      std::vector<float> combined(static_cast<size_t>(shape.batch * shape.rows));
      std::vector<uint16_t> combined_bf16(combined.size());
      linnet::ops::mxfp4_combine_experts_f32(p.weights(), p.per_slot_x, p.choice(), p.mixing, combined);
      linnet::ops::mxfp4_combine_experts_bf16(p.weights(), p.per_slot_x, p.choice(), p.mixing, combined_bf16);
      gemm::override_isa(std::nullopt);
      CHECK(products_agree(shared_y, shared_ref));
      CHECK(products_agree(own_y, own_ref));
      std::vector<float> expected;
      for (int64_t r = 0; r < shape.batch; ++r)
        for (int64_t o = 0; o < shape.rows; ++o) {
          float total = 0.0f;
          for (int64_t k = 0; k < shape.slots; ++k) {
            const size_t flat = static_cast<size_t>(r * shape.slots + k);
            total += p.mixing[flat] * own_y[flat * static_cast<size_t>(shape.rows) + static_cast<size_t>(o)];
          }
          expected.push_back(total);
        }
      CHECK(same_bits(combined, expected));
      CHECK(combined_bf16 == rounded_to_bf16(expected));
    }
  }

  SECTION("results do not depend on the number of threads") {
    std::vector<float> many_threads(per_slot), one_thread(per_slot), two_threads(per_slot);
    std::vector<uint16_t> many_bf16(per_slot), one_bf16(per_slot);
    std::vector<float> combined_many(static_cast<size_t>(shape.batch * shape.rows)), combined_one(combined_many.size());
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), many_threads);
    linnet::ops::mxfp4_linear_experts_shared_bf16(p.weights(), rounded.shared_x, p.choice(), many_bf16);
    linnet::ops::mxfp4_combine_experts_f32(p.weights(), p.per_slot_x, p.choice(), p.mixing, combined_many);
    const int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), two_threads);
    omp_set_num_threads(1);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), one_thread);
    linnet::ops::mxfp4_linear_experts_shared_bf16(p.weights(), rounded.shared_x, p.choice(), one_bf16);
    linnet::ops::mxfp4_combine_experts_f32(p.weights(), p.per_slot_x, p.choice(), p.mixing, combined_one);
    omp_set_num_threads(threads);
    CHECK(same_bits(many_threads, one_thread));
    CHECK(same_bits(two_threads, one_thread));
    CHECK(many_bf16 == one_bf16);
    CHECK(same_bits(combined_many, combined_one));
  }
}

TEST_CASE("MXFP4 expert products refuse bad routing and sizes, writing nothing") {
  const Problem p = make_problem(Shape{4, 8, 2, 3, 2, 7u});
  const size_t per_slot = 3 * 2 * 8;
  std::vector<float> out(per_slot, 123.0f);

  std::vector<int64_t> past_end = p.experts;
  past_end[3] = 4;
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, ExpertChoice{past_end, 3, 2}, out),
                  std::out_of_range);
  std::vector<int64_t> negative = p.experts;
  negative[0] = -1;
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_shared_f32(p.weights(), p.shared_x, ExpertChoice{negative, 3, 2}, out),
                  std::out_of_range);
  CHECK(out == std::vector<float>(per_slot, 123.0f));

  try {
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, ExpertChoice{past_end, 3, 2}, out);
  } catch (const std::out_of_range& error) {
    CHECK(std::string(error.what()) == "mxfp4_experts: experts[1, 1] is 4, outside the 4 experts");
  }

  // x of the wrong layout, outputs and weights of the wrong size, a routing shape that disagrees.
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_f32(p.weights(), p.shared_x, p.choice(), out), std::invalid_argument);
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_shared_f32(p.weights(), p.per_slot_x, p.choice(), out),
                  std::invalid_argument);
  std::vector<float> short_out(per_slot - 1);
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), short_out),
                  std::invalid_argument);
  std::vector<float> combined(3 * 8);
  std::vector<float> short_mixing(5);
  CHECK_THROWS_AS(
      linnet::ops::mxfp4_combine_experts_f32(p.weights(), p.per_slot_x, p.choice(), short_mixing, combined),
      std::invalid_argument);
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, ExpertChoice{p.experts, 2, 2}, out),
                  std::invalid_argument);
  CHECK_THROWS_AS(linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, ExpertChoice{p.experts, -3, -2}, out),
                  std::invalid_argument);

  // No rows is no work.
  std::vector<float> nothing;
  CHECK_NOTHROW(linnet::ops::mxfp4_experts_f32(p.weights(), nothing, ExpertChoice{{}, 0, 2}, nothing));
}

namespace {

// Experts chosen by the given numbers of slots (one slot per row, its own
// input), the expert after the last never chosen (NaN weights).
Problem counted_problem(const std::vector<int64_t>& counts, int64_t rows, int64_t groups, uint32_t seed) {
  int64_t total = 0;
  for (int64_t count : counts) total += count;
  Problem p = make_problem(Shape{static_cast<int64_t>(counts.size()) + 1, rows, groups, total, 1, seed});
  // Interleaved, so each expert's slots are spread over the rows.
  p.experts.clear();
  std::vector<int64_t> left = counts;
  while (static_cast<int64_t>(p.experts.size()) < total)
    for (size_t e = 0; e < left.size(); ++e)
      if (left[e] > 0) {
        --left[e];
        p.experts.push_back(static_cast<int64_t>(e));
      }
  return p;
}

// Slot s's products, each summed over i in increasing order from zero with
// one fused multiply-add per index: the packed f32 kernel's order.
std::vector<float> fma_chain_products(const Problem& p) {
  std::vector<float> y;
  const int64_t length = p.length();
  for (size_t slot = 0; slot < p.experts.size(); ++slot) {
    const float* x = &p.per_slot_x[slot * static_cast<size_t>(length)];
    for (int64_t o = 0; o < p.shape.rows; ++o) {
      const float* w = &p.dequantized[static_cast<size_t>((p.experts[slot] * p.shape.rows + o) * length)];
      float sum = 0.0f;
      for (int64_t i = 0; i < length; ++i) sum = std::fma(x[i], w[i], sum);
      y.push_back(sum);
    }
  }
  return y;
}

// Slot s's products as the packed bf16 kernel sums them: over the pairs of
// indices (2p, 2p + 1) in increasing order from zero, one vdpbf16ps per
// pair (the CPU's own instruction, on one lane), then rounded to bf16.
// Only on CPUs with AVX512-BF16.
__attribute__((target("avx512f,avx512vl,avx512bf16"))) std::vector<uint16_t> dpbf16_chain_products(
    const Problem& p) {
  std::vector<uint16_t> y;
  const int64_t length = p.length();
  auto bits = [](float value) { return static_cast<int>(linnet::tensor::float_to_bf16_bits(value)); };
  for (size_t slot = 0; slot < p.experts.size(); ++slot) {
    const float* x = &p.per_slot_x[slot * static_cast<size_t>(length)];
    for (int64_t o = 0; o < p.shape.rows; ++o) {
      const float* w = &p.dequantized[static_cast<size_t>((p.experts[slot] * p.shape.rows + o) * length)];
      __m128 sum = _mm_setzero_ps();
      for (int64_t i = 0; i < length; i += 2) {
        const __m128i weights = _mm_cvtsi32_si128(bits(w[i]) | (bits(w[i + 1]) << 16));
        const __m128i inputs = _mm_cvtsi32_si128(bits(x[i]) | (bits(x[i + 1]) << 16));
        sum = _mm_dpbf16_ps(sum, (__m128bh)weights, (__m128bh)inputs);
      }
      y.push_back(linnet::tensor::float_to_bf16_bits(_mm_cvtss_f32(sum)));
    }
  }
  return y;
}

}  // namespace

TEST_CASE("grouped MXFP4 products on the packed AVX-512 kernel") {
  namespace gemm = linnet::tensor::gemm;
  if (!gemm::isa_supported(gemm::Isa::Avx512)) {
    SUCCEED("no AVX-512 on this CPU: the packed kernel is never chosen");
    return;
  }
  // Slot counts of 8 to 100 tokens per expert, 0 to 7 past a multiple of
  // 8 (the kernel's token tiles: a last tile of every width); 131 output
  // rows (a tile of 128, decoded in blocks of 48, 48 and 32 rows, and a
  // tile of 3, one partly filled vector of 16); 1 group (one short part), 5 (160
  // values: an f32 part of 128 and a short one) and 9 (288: over one bf16
  // part of 256).
  const int64_t groups = GENERATE(1, 5, 9);
  const std::vector<int64_t> counts = {8, 17, 40, 53, 75, 90, 100, 31, 38};
  const Problem p = counted_problem(counts, 131, groups, 11u + static_cast<uint32_t>(groups));
  CAPTURE(groups);
  const size_t per_slot = p.experts.size() * static_cast<size_t>(p.shape.rows);
  Problem rounded = p;
  for (float& value : rounded.per_slot_x) value = linnet::tensor::round_to_bf16(value);

  // The same slots behind other ones: 30 more rows of expert 0 and 5 of
  // expert 3 first, so every slot of those experts sits at another place in
  // its panels (and expert 0 has 3 panels instead of 1).
  auto behind_others = [&](const Problem& base) {
    Problem q = base;
    const int64_t length = base.length();
    std::mt19937 random(5);
    std::uniform_real_distribution<float> signed_unit(-1.0f, 1.0f);
    std::vector<int64_t> experts(30, 0);
    experts.insert(experts.end(), 5, 3);
    std::vector<float> x;
    for (size_t i = 0; i < experts.size() * static_cast<size_t>(length); ++i)
      x.push_back(linnet::tensor::round_to_bf16(signed_unit(random)));
    q.experts.insert(q.experts.begin(), experts.begin(), experts.end());
    q.per_slot_x.insert(q.per_slot_x.begin(), x.begin(), x.end());
    q.shape.batch += static_cast<int64_t>(experts.size());
    return q;
  };
  const size_t extra = 35 * static_cast<size_t>(p.shape.rows);

  SECTION("f32: each output is the fused multiply-add chain over its row, with any neighbours and threads") {
    const std::vector<float> expected = fma_chain_products(p);
    std::vector<float> y(per_slot);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), y);
    CHECK(same_bits(y, expected));

    const Problem q = behind_others(p);
    std::vector<float> y_behind(per_slot + extra);
    linnet::ops::mxfp4_experts_f32(q.weights(), q.per_slot_x, q.choice(), y_behind);
    CHECK(same_bits(std::vector<float>(y_behind.begin() + static_cast<std::ptrdiff_t>(extra), y_behind.end()), y));

    const int threads = omp_get_max_threads();
    std::vector<float> one(per_slot), two(per_slot);
    omp_set_num_threads(1);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), one);
    omp_set_num_threads(2);
    linnet::ops::mxfp4_experts_f32(p.weights(), p.per_slot_x, p.choice(), two);
    omp_set_num_threads(threads);
    CHECK(same_bits(one, expected));
    CHECK(same_bits(two, expected));
  }

  SECTION("bf16: within the bound, the same bits with any neighbours and threads") {
    const Reference ref = reference_products(rounded, false);
    REQUIRE(grouped_count(ref) == per_slot);
    std::vector<uint16_t> y(per_slot);
    linnet::ops::mxfp4_experts_bf16(p.weights(), rounded.per_slot_x, p.choice(), y);
    CHECK(bf16_products_agree(y, ref));
    if (__builtin_cpu_supports("avx512bf16")) CHECK(y == dpbf16_chain_products(rounded));

    const Problem q = behind_others(rounded);
    std::vector<uint16_t> y_behind(per_slot + extra);
    linnet::ops::mxfp4_experts_bf16(q.weights(), q.per_slot_x, q.choice(), y_behind);
    CHECK(std::vector<uint16_t>(y_behind.begin() + static_cast<std::ptrdiff_t>(extra), y_behind.end()) == y);

    const int threads = omp_get_max_threads();
    std::vector<uint16_t> one(per_slot), two(per_slot);
    omp_set_num_threads(1);
    linnet::ops::mxfp4_experts_bf16(p.weights(), rounded.per_slot_x, p.choice(), one);
    omp_set_num_threads(2);
    linnet::ops::mxfp4_experts_bf16(p.weights(), rounded.per_slot_x, p.choice(), two);
    omp_set_num_threads(threads);
    CHECK(one == y);
    CHECK(two == y);

    // AVX-512 without BF16 (and AVX2, scalar) multiply bf16 inputs on
    // tensor::gemm instead: held to the same bound.
    for (gemm::Isa isa : {gemm::Isa::Scalar, gemm::Isa::Avx2, gemm::Isa::Avx512}) {
      if (!gemm::isa_supported(isa)) continue;
      CAPTURE(gemm::isa_name(isa));
      gemm::override_isa(isa);
      std::vector<uint16_t> other(per_slot);
      linnet::ops::mxfp4_experts_bf16(p.weights(), rounded.per_slot_x, p.choice(), other);
      gemm::override_isa(std::nullopt);
      CHECK(bf16_products_agree(other, ref));
    }
  }
}
