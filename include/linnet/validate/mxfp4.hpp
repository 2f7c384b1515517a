// `linnet validate --mxfp4 GOLDEN_DIR`: `std.quant::dequantize_mxfp4` on a
// case's stored blocks and scales, compared bit for bit with what
// `transformers`' convert_moe_packed_tensors produced from them
// (golden/mxfp4-dequant).
//
// The op runs through the interpreter twice per dtype: once as its body
// (numerics `exact`, which never runs a kernel) and once with the CPU op
// table's dispatcher (numerics `equivalent`, where the native kernel stands
// in). Both must match the stored bits exactly.
//
// The stored arrays are in transformers' layout, transposed from ours:
// `f32` and `bf16_bits` are [E, G * 32, Out] where the op returns
// [E, Out, G * 32].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linnet/tensor/dtype.hpp"

namespace linnet::validate {

struct Mxfp4Comparison {
  std::string implementation;  // "body" or "native"
  tensor::DType dtype = tensor::DType::F32;
  // What actually ran, from the interpreter's op counts: "body" or
  // "native". A "native" row whose kernel declined says "body" here.
  std::string ran;
  int64_t elements = 0;
  int64_t differing = 0;  // elements whose bits differ from the reference
  bool pass() const { return differing == 0 && ran == implementation; }
};

struct Mxfp4Report {
  std::string case_name;
  std::vector<Mxfp4Comparison> comparisons;
  bool pass() const;
};

// Throws GoldenError when the case cannot be read, an array is missing or
// has the wrong dtype or shape, or the standard library does not load.
Mxfp4Report validate_mxfp4(const std::string& golden_dir, const std::string& std_dir);

}  // namespace linnet::validate
