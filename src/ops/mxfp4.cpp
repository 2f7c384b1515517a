// MXFP4 dequantization (see mxfp4.hpp for the value rules it keeps).
//
// Every value is one of 16 codes times one of 256 scales, so each output
// dtype gets a 256 x 16 table, built once, and dequantizing is table lookups.
#include "linnet/ops/mxfp4.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "linnet/tensor/gemm.hpp"
#include "linnet/tensor/half.hpp"
#include "mxfp4_rows.hpp"
#include "linnet/tensor/threading.hpp"

namespace linnet::ops {

namespace {

// E2M1 codes: sign bit 8, then magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
constexpr float kE2M1Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// The value of (code, scale byte) in each dtype dequantization can produce.
// On cache-line boundaries: a scale's 16 f32 values are then one line, which
// the row kernels load whole (a 64-byte load that straddles two lines costs
// two).
struct alignas(64) ValueTables {
  float f32[256][16];
  uint16_t bf16[256][16];
  uint16_t f16[256][16];
  double f64[256][16];
};

ValueTables build_value_tables() {
  ValueTables tables{};
  for (int scale = 0; scale < 256; ++scale) {
    const float power = mxfp4_scale_f32(static_cast<uint8_t>(scale));
    for (int code = 0; code < 16; ++code) {
      const float value = mxfp4_value_f32(static_cast<uint8_t>(code), static_cast<uint8_t>(scale));
      tables.f32[scale][code] = value;
      // The f32 product rounded to the narrower type, as PyTorch rounds the
      // f32 result of a mixed-dtype multiplication into its bf16/f16 output.
      tables.bf16[scale][code] = std::isnan(value) ? uint16_t{0x7FC0} : tensor::float_to_bf16_bits(value);
      tables.f16[scale][code] = std::isnan(value) ? uint16_t{0x7E00} : tensor::float_to_f16_bits(value);
      // An f64 output makes the multiplication f64: exact, and finite past f32's range.
      const double wide = static_cast<double>(kE2M1Values[code]) * static_cast<double>(power);
      tables.f64[scale][code] = std::isnan(wide) ? std::numeric_limits<double>::quiet_NaN() : wide;
    }
  }
  return tables;
}

const ValueTables& value_tables() {
  static const ValueTables tables = build_value_tables();
  return tables;
}

std::string dims_text(const Mxfp4Experts& weights) {
  return "[" + std::to_string(weights.experts) + ", " + std::to_string(weights.rows) + ", " +
         std::to_string(weights.groups) + "]";
}

// Writes row (expert, row) through `table`: element j of group g is the low
// (even j) or high (odd j) nibble of byte j / 2.
template <class Element>
void dequantize_row_with(const Mxfp4Experts& weights, int64_t expert, int64_t row, const Element (&table)[256][16],
                         std::byte* out) {
  const int64_t first_group = (expert * weights.rows + row) * weights.groups;
  const uint8_t* bytes = weights.blocks.data() + first_group * kMxfp4BlockBytes;
  const uint8_t* scales = weights.scales.data() + first_group;
  for (int64_t group = 0; group < weights.groups; ++group) {
    const Element* values = table[scales[group]];
    const uint8_t* group_bytes = bytes + group * kMxfp4BlockBytes;
    std::byte* group_out = out + group * kMxfp4BlockValues * sizeof(Element);
    for (int64_t j = 0; j < kMxfp4BlockBytes; ++j) {
      const uint8_t byte = group_bytes[j];
      std::memcpy(group_out + (2 * j) * sizeof(Element), &values[byte & 0x0F], sizeof(Element));
      std::memcpy(group_out + (2 * j + 1) * sizeof(Element), &values[byte >> 4], sizeof(Element));
    }
  }
}

// The vector decoder for this CPU (f32 and bf16 outputs), if it has one.
using VectorDecode = void (*)(const uint8_t*, const uint8_t*, int64_t, const float*, bool, void*);
VectorDecode vector_decode() {
  const tensor::gemm::Isa isa = tensor::gemm::active_isa();
  if (isa == tensor::gemm::Isa::Avx512 || isa == tensor::gemm::Isa::Avx512Bf16) return &detail::mxfp4_decode_avx512;
  if (isa == tensor::gemm::Isa::Avx2) return &detail::mxfp4_decode_avx2;
  return nullptr;
}

template <class Element>
void dequantize_all_with(const Mxfp4Experts& weights, const Element (&table)[256][16], std::span<std::byte> out,
                         VectorDecode vector = nullptr) {
  const int64_t all_rows = weights.experts * weights.rows;
  const int64_t row_bytes = weights.row_length() * static_cast<int64_t>(sizeof(Element));
  if (static_cast<int64_t>(out.size()) != all_rows * row_bytes)
    throw std::invalid_argument("dequantize_mxfp4: the output holds " + std::to_string(out.size()) +
                                " bytes; experts " + dims_text(weights) + " need " +
                                std::to_string(all_rows * row_bytes));
  // `vector` (f32 and bf16 only) decodes with vector table lookups
  // (mxfp4_rows.inc, `decode_rows`): the same values as the tables.
  const bool bf16 = std::is_same_v<Element, uint16_t>;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(all_rows * row_bytes * 2))
  for (int64_t index = 0; index < all_rows; ++index) {
    if (vector) {
      const int64_t group = index * weights.groups;
      vector(weights.blocks.data() + group * kMxfp4BlockBytes, weights.scales.data() + group, weights.row_length(),
             &value_tables().f32[0][0], bf16, out.data() + index * row_bytes);
    } else {
      dequantize_row_with(weights, index / weights.rows, index % weights.rows, table, out.data() + index * row_bytes);
    }
  }
}

}  // namespace

const float* detail::mxfp4_value_table_f32() { return &value_tables().f32[0][0]; }
const uint16_t* detail::mxfp4_value_table_bf16() { return &value_tables().bf16[0][0]; }

bool detail::mxfp4_bf16_pairs_safe(const float* values, int64_t length) {
  for (int64_t i = 0; i < length; ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
    if ((bits & 0xFFFFu) != 0) return false;  // not a bf16 value
    const float magnitude = std::fabs(values[i]);
    // NaN fails both comparisons, infinity the second.
    if (magnitude != 0.0f && !(magnitude >= 0x1p-60f && magnitude <= 0x1p60f)) return false;
  }
  return true;
}

void detail::mxfp4_bf16_pairs(const float* values, int64_t length, uint16_t* pairs) {
  // Per 16 values (a half of a group), 32 words: word 2j + 1 holds value j
  // and word 2j value j + 8 (j < 8), so that vdpbf16ps's lane j adds value
  // j's product and then value j + 8's, the documented lane order; words
  // 16-31 repeat words 0-15, for the second row of a register.
  for (int64_t half = 0; half < length / 16; ++half) {
    const float* from = values + half * 16;
    uint16_t* to = pairs + half * 32;
    for (int j = 0; j < 8; ++j) {
      to[2 * j + 1] = to[16 + 2 * j + 1] = static_cast<uint16_t>(std::bit_cast<uint32_t>(from[j]) >> 16);
      to[2 * j] = to[16 + 2 * j] = static_cast<uint16_t>(std::bit_cast<uint32_t>(from[j + 8]) >> 16);
    }
  }
}

void Mxfp4Experts::validate() const {
  if (experts <= 0 || rows <= 0 || groups <= 0)
    throw std::invalid_argument("MXFP4 experts " + dims_text(*this) + ": every dimension must be positive");
  // Bound the product before forming it, so a huge dimension cannot overflow.
  constexpr int64_t kLimit = int64_t{1} << 48;
  if (experts > kLimit / rows || experts * rows > kLimit / groups)
    throw std::invalid_argument("MXFP4 experts " + dims_text(*this) + " are too large");
  const int64_t block_count = experts * rows * groups;
  if (static_cast<int64_t>(scales.size()) != block_count)
    throw std::invalid_argument("MXFP4 experts " + dims_text(*this) + ": scales hold " +
                                std::to_string(scales.size()) + " bytes, expected " + std::to_string(block_count));
  if (static_cast<int64_t>(blocks.size()) != block_count * kMxfp4BlockBytes)
    throw std::invalid_argument("MXFP4 experts " + dims_text(*this) + ": blocks hold " +
                                std::to_string(blocks.size()) + " bytes, expected " +
                                std::to_string(block_count * kMxfp4BlockBytes));
}

float mxfp4_scale_f32(uint8_t scale_byte) {
  // 2^(s - 127) has the biased f32 exponent s for s in 1..254; below and
  // above that range PyTorch's f32 pow gives the subnormal 2^-127 and +inf.
  if (scale_byte == 0) return std::bit_cast<float>(uint32_t{0x00400000});
  if (scale_byte == 255) return std::numeric_limits<float>::infinity();
  return std::bit_cast<float>(static_cast<uint32_t>(scale_byte) << 23);
}

float mxfp4_value_f32(uint8_t code, uint8_t scale_byte) {
  // One IEEE multiplication, exact unless it overflows to infinity.
  const float value = kE2M1Values[code & 0x0F] * mxfp4_scale_f32(scale_byte);
  return std::isnan(value) ? std::numeric_limits<float>::quiet_NaN() : value;
}

void dequantize_mxfp4(const Mxfp4Experts& weights, tensor::DType out_type, std::span<std::byte> out) {
  weights.validate();
  const ValueTables& tables = value_tables();
  switch (out_type) {
    case tensor::DType::F32: return dequantize_all_with(weights, tables.f32, out, vector_decode());
    case tensor::DType::BF16: return dequantize_all_with(weights, tables.bf16, out, vector_decode());
    case tensor::DType::F16: return dequantize_all_with(weights, tables.f16, out);
    case tensor::DType::F64: return dequantize_all_with(weights, tables.f64, out);
    default:
      throw std::invalid_argument("dequantize_mxfp4: cannot produce " + std::string(tensor::dtype_name(out_type)) +
                                  " values; T must be f16, bf16, f32 or f64");
  }
}

void dequantize_mxfp4_f32(const Mxfp4Experts& weights, std::span<float> out) {
  dequantize_mxfp4(weights, tensor::DType::F32, std::as_writable_bytes(out));
}

void dequantize_mxfp4_bf16(const Mxfp4Experts& weights, std::span<uint16_t> out) {
  dequantize_mxfp4(weights, tensor::DType::BF16, std::as_writable_bytes(out));
}

void dequantize_mxfp4_row_f32(const Mxfp4Experts& weights, int64_t expert, int64_t row, std::span<float> out) {
  weights.validate();
  if (expert < 0 || expert >= weights.experts || row < 0 || row >= weights.rows)
    throw std::out_of_range("dequantize_mxfp4_row_f32: row (" + std::to_string(expert) + ", " +
                            std::to_string(row) + ") is outside experts " + dims_text(weights));
  if (static_cast<int64_t>(out.size()) != weights.row_length())
    throw std::invalid_argument("dequantize_mxfp4_row_f32: the output holds " + std::to_string(out.size()) +
                                " values, a row has " + std::to_string(weights.row_length()));
  dequantize_row_with(weights, expert, row, value_tables().f32, reinterpret_cast<std::byte*>(out.data()));
}

}  // namespace linnet::ops
