// The span kernels of every elementwise path this CPU supports (baseline,
// AVX2, AVX-512: linnet/tensor/elementwise_path.hpp) against the
// per-element loop, bit for bit: every float dtype, every operator, casts
// between the dtypes with span kernels, on random bit patterns mixed with
// NaNs (quiet, signalling, negative, with payloads), infinities, signed
// zeros, subnormals and bf16 rounding ties, in dense, scalar-broadcast,
// strided, interleaved, transposed and broadcast layouts, sizes from 1
// across the vector widths and the gather block, with 1 and 2 threads.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "linnet/tensor/elementwise_path.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/threading.hpp"
#include "tensor_test_util.hpp"

using namespace tensor_test;

namespace {

const std::vector<DType> kFloatTypes = {DType::BF16, DType::F16, DType::F32, DType::F64};
const std::vector<DType> kCastTypes = {DType::Bool, DType::I8,  DType::I32, DType::I64, DType::U8,
                                       DType::BF16, DType::F16, DType::F32, DType::F64};
const std::vector<BinaryOp> kBinaryOps = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem,
                                          BinaryOp::Min, BinaryOp::Max, BinaryOp::Pow, BinaryOp::Eq,  BinaryOp::Ne,
                                          BinaryOp::Lt,  BinaryOp::Le,  BinaryOp::Gt,  BinaryOp::Ge};
const std::vector<UnaryOp> kUnaryOps = {
    UnaryOp::Neg, UnaryOp::Abs,  UnaryOp::Sign,  UnaryOp::Exp,        UnaryOp::Log, UnaryOp::Log1p,
    UnaryOp::Expm1, UnaryOp::Sqrt, UnaryOp::Rsqrt, UnaryOp::Reciprocal, UnaryOp::Sin, UnaryOp::Cos,
    UnaryOp::Tan, UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Erf,      UnaryOp::Floor, UnaryOp::Ceil,
    UnaryOp::Round, UnaryOp::Trunc, UnaryOp::IsNan};

// Forces an elementwise path while in scope.
class PathScope {
 public:
  explicit PathScope(ElementwisePath path) { override_elementwise_path(path); }
  ~PathScope() { override_elementwise_path(std::nullopt); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;
};

std::vector<ElementwisePath> span_paths() {
  std::vector<ElementwisePath> paths;
  for (ElementwisePath path : {ElementwisePath::Baseline, ElementwisePath::Avx2, ElementwisePath::Avx512}) {
    if (elementwise_path_supported(path)) paths.push_back(path);
  }
  return paths;
}

// Bit patterns that every kernel must carry through exactly.
std::vector<uint64_t> special_bits(DType dtype) {
  switch (dtype) {
    case DType::BF16:
      return {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FC1, 0x7F81, 0xFFA5, 0x0001, 0x8001, 0x007F,
              0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x4000, 0x3F81, 0x3FFF, 0x4049};
    case DType::F16:
      return {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7E55, 0x0001, 0x8001, 0x03FF,
              0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3C01, 0x4000, 0x5BFF};
    case DType::F32:
      return {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001,
              0xFFA00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
              0xBF800000, 0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF, 0x477FF000, 0x38800000, 0x33800000,
              0x42B17218, 0xC2CFF1B5};
    case DType::F64:
      return {0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
              0xFFF8000000000000, 0x7FF0000000000001, 0x7FF8000012345678, 0x0000000000000001, 0x800FFFFFFFFFFFFF,
              0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF0000010000000, 0x3FF0000018000000,
              0x3FF0000008000000, 0x3FF0000000000001};
    case DType::Bool: return {0, 1, 2, 0x80, 0xFF};  // a borrowed buffer may hold any nonzero byte for true
    default: return {0, 1, static_cast<uint64_t>(-1), static_cast<uint64_t>(-2), 0x7F, 0x80, 0x7FFFFFFF, 0x80000000};
  }
}

// An ordinary value of the dtype near [-4, 4] (bit patterns alone would be
// mostly huge or tiny, where every operator saturates).
uint64_t moderate_bits(DType dtype, std::mt19937_64& random) {
  const float value = std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
  switch (dtype) {
    case DType::BF16: return float_to_bf16_bits(value);
    case DType::F16: return float_to_f16_bits(value);
    case DType::F32: return std::bit_cast<uint32_t>(value);
    case DType::F64: return std::bit_cast<uint64_t>(static_cast<double>(value) * (1.0 + 1e-12));
    case DType::Bool: return random() & 1;
    default: return static_cast<uint64_t>(static_cast<int64_t>(value * 40.0f));
  }
}

// A contiguous tensor of `shape`: a third special patterns, a third random
// bits, a third moderate values.
Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(dtype, shape);
  const size_t width = dtype_size(dtype);
  auto* bytes = static_cast<unsigned char*>(t.raw_mutable_data());
  std::mt19937_64 random(seed);
  const std::vector<uint64_t> specials = special_bits(dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t bits = 0;
    switch (random() % 3) {
      case 0: bits = specials[random() % specials.size()]; break;
      case 1: bits = random(); break;
      default: bits = moderate_bits(dtype, random); break;
    }
    if (dtype == DType::Bool) bits = specials[bits % specials.size()];
    std::memcpy(bytes + i * width, &bits, width);  // little-endian: the low bytes
  }
  return t;
}

std::vector<unsigned char> bytes_of(const Tensor& t) {
  const Tensor dense = t.contiguous();
  const auto* bytes = static_cast<const unsigned char*>(dense.raw_data());
  return std::vector<unsigned char>(bytes, bytes + dense.numel() * dense.element_size());
}

bool is_nan(DType dtype, uint64_t bits) {
  switch (dtype) {
    case DType::BF16: return (bits & 0x7FFF) > 0x7F80;
    case DType::F16: return (bits & 0x7FFF) > 0x7C00;
    case DType::F32: return (bits & 0x7FFFFFFF) > 0x7F800000;
    case DType::F64: return (bits & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000;
    default: return false;
  }
}

// "" when the two results hold the same bits, else where they first differ.
// Where both are NaN, their sign and payload may differ: a NaN result's are
// not fixed by either loop (the compiler may swap the operands of an
// addition, and floor(sNaN) is sNaN through libm but quiet through the
// vector rounding instruction), as for the other kernels
// (docs/performance.md). Everything else, NaN or not included, must match.
std::string difference(const Tensor& got, const Tensor& expected) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    return "got " + got.describe() + ", expected " + expected.describe();
  }
  const std::vector<unsigned char> left = bytes_of(got);
  const std::vector<unsigned char> right = bytes_of(expected);
  const size_t width = got.element_size();
  for (size_t i = 0; i < left.size(); i += width) {
    if (std::memcmp(&left[i], &right[i], width) != 0) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, &left[i], width);
      std::memcpy(&b, &right[i], width);
      if (is_nan(got.dtype(), a) && is_nan(got.dtype(), b)) continue;
      char text[96];
      std::snprintf(text, sizeof text, "element %zu: got 0x%llx, expected 0x%llx", i / width,
                    static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
      return text;
    }
  }
  return "";
}

// A pair of operands of one layout, and a name for failure messages.
struct Operands {
  std::string layout;
  Tensor a, b;
};

// The layouts the kernels must treat alike, for elements of `dtype` and a
// run length around `n`.
std::vector<Operands> layouts(DType dtype, int64_t n, uint64_t seed) {
  std::vector<Operands> out;
  auto make = [&](const Shape& shape) { return random_tensor(dtype, shape, seed + out.size() * 7919 + shape.size()); };
  out.push_back({"dense", make({n}), make({n})});
  out.push_back({"scalar right", make({n}), make({})});
  out.push_back({"scalar left", make({}), make({n})});
  out.push_back({"both repeated", make({3, 1}).broadcast_to({3, n}), make({3, 1}).broadcast_to({3, n})});
  out.push_back({"step 2 and dense", make({2 * n}).slice(0, 0, 2 * n, 2), make({n})});
  out.push_back({"dense and step 3", make({n}), make({3 * n}).slice(0, 1, 3 * n, 3)});
  // GPT-OSS's gate and up halves: the even and odd columns of one tensor.
  const Tensor interleaved = make({3, 2 * n});
  out.push_back({"interleaved halves", interleaved.slice(1, 0, 2 * n, 2), interleaved.slice(1, 1, 2 * n, 2)});
  out.push_back({"interleaved and scalar", interleaved.slice(1, 1, 2 * n, 2), make({})});
  out.push_back({"transposed", make({n, 3}).permute({1, 0}), make({3, n})});
  out.push_back({"both transposed", make({n, 2}).permute({1, 0}), make({n, 2}).permute({1, 0})});
  out.push_back({"broadcast middle axis", make({2, 1, n}), make({2, 3, n})});
  out.push_back({"broadcast inner axis", make({2, 3, 1}), make({2, 3, n})});
  return out;
}

const std::vector<int64_t> kSizes = {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 65, 255, 256, 257, 600};

std::string label(const std::string& what, DType dtype, const std::string& layout, int64_t n, ElementwisePath path) {
  return what + " " + std::string(dtype_name(dtype)) + " " + layout + " n=" + std::to_string(n) + " on " +
         elementwise_path_name(path);
}

}  // namespace

TEST_CASE("elementwise paths: the default is the best the CPU supports, and each can be forced", "[elementwise_paths]") {
  CHECK(active_elementwise_path() == best_elementwise_path());
  CHECK(elementwise_path_supported(ElementwisePath::PerElement));
  CHECK(elementwise_path_supported(ElementwisePath::Baseline));
  {
    PathScope scope(ElementwisePath::PerElement);
    CHECK(active_elementwise_path() == ElementwisePath::PerElement);
  }
  CHECK(active_elementwise_path() == best_elementwise_path());
  if (!elementwise_path_supported(ElementwisePath::Avx512)) {
    CHECK_THROWS_AS(override_elementwise_path(ElementwisePath::Avx512), TensorError);
  }
}

TEST_CASE("elementwise paths: binary operators match the per-element loop bit for bit", "[elementwise_paths]") {
  for (DType dtype : kFloatTypes) {
    for (int64_t n : kSizes) {
      for (const Operands& operands : layouts(dtype, n, 1000 * static_cast<uint64_t>(n) + static_cast<int>(dtype))) {
        for (BinaryOp op : kBinaryOps) {
          Tensor expected;
          {
            PathScope scope(ElementwisePath::PerElement);
            expected = binary(op, operands.a, operands.b);
          }
          for (ElementwisePath path : span_paths()) {
            PathScope scope(path);
            const Tensor got = binary(op, operands.a, operands.b);
            INFO(label(binary_op_name(op), dtype, operands.layout, n, path));
            REQUIRE(difference(got, expected) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("elementwise paths: unary operators match the per-element loop bit for bit", "[elementwise_paths]") {
  for (DType dtype : kFloatTypes) {
    for (int64_t n : kSizes) {
      for (const Operands& operands : layouts(dtype, n, 77 * static_cast<uint64_t>(n) + static_cast<int>(dtype))) {
        for (UnaryOp op : kUnaryOps) {
          Tensor expected;
          {
            PathScope scope(ElementwisePath::PerElement);
            expected = unary(op, operands.a);
          }
          for (ElementwisePath path : span_paths()) {
            PathScope scope(path);
            const Tensor got = unary(op, operands.a);
            INFO(label(unary_op_name(op), dtype, operands.layout, n, path));
            REQUIRE(difference(got, expected) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("elementwise paths: casts match the per-element loop bit for bit", "[elementwise_paths]") {
  for (DType from : kCastTypes) {
    for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{16}, int64_t{33}, int64_t{257}, int64_t{600}}) {
      for (const Operands& operands : layouts(from, n, 31 * static_cast<uint64_t>(n) + static_cast<int>(from))) {
        for (DType to : kCastTypes) {
          Tensor expected;
          {
            PathScope scope(ElementwisePath::PerElement);
            expected = cast(operands.a, to);
          }
          for (ElementwisePath path : span_paths()) {
            PathScope scope(path);
            const Tensor got = cast(operands.a, to);
            INFO(label("cast to " + std::string(dtype_name(to)), from, operands.layout, n, path));
            REQUIRE(difference(got, expected) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("elementwise paths: 1 and 2 threads give the same bits", "[elementwise_paths]") {
  // Large enough to split over threads (strided_loop.hpp's kParallelGrain).
  const int64_t n = 70001;
  const int before = num_threads();
  for (DType dtype : {DType::BF16, DType::F32}) {
    const Tensor dense = random_tensor(dtype, {2, n}, 5);
    const Tensor interleaved = random_tensor(dtype, {2, 2 * n}, 6).slice(1, 1, 2 * n, 2);
    const Tensor transposed = random_tensor(dtype, {n, 2}, 7).permute({1, 0});
    const Tensor scalar = random_tensor(dtype, {}, 8);
    std::vector<Tensor> results[2];
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto& out = results[threads - 1];
      out.push_back(binary(BinaryOp::Add, dense, interleaved));
      out.push_back(binary(BinaryOp::Mul, transposed, scalar));
      out.push_back(binary(BinaryOp::Min, interleaved, scalar));
      out.push_back(unary(UnaryOp::Sigmoid, transposed));
      out.push_back(cast(dense, dtype == DType::BF16 ? DType::F32 : DType::BF16));
    }
    set_num_threads(before);
    PathScope scope(ElementwisePath::PerElement);
    const std::vector<Tensor> reference = {
        binary(BinaryOp::Add, dense, interleaved), binary(BinaryOp::Mul, transposed, scalar),
        binary(BinaryOp::Min, interleaved, scalar), unary(UnaryOp::Sigmoid, transposed),
        cast(dense, dtype == DType::BF16 ? DType::F32 : DType::BF16)};
    for (size_t i = 0; i < reference.size(); ++i) {
      INFO(std::string(dtype_name(dtype)) + " result " + std::to_string(i));
      CHECK(difference(results[0][i], reference[i]) == "");
      CHECK(difference(results[1][i], reference[i]) == "");
    }
  }
}
