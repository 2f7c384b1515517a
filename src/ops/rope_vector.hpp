// One row of rope sixteen lanes at a time (rope_avx512.cpp), with the bits
// of the scalar loop in kernels_rope.cpp. Call only on CPUs with AVX-512F,
// BW and VL (the masked 256-bit loads and stores of bf16 rows). `length`
// is the row's D; `out` must not overlap `in`.
#pragma once

#include <cstdint>

namespace linnet::ops::detail {

void rope_row_f32_avx512(const float* in, const float* cos_row, const float* sin_row, float* out, int64_t length);
// bf16 rows as their bits; the tables are f32.
void rope_row_bf16_avx512(const uint16_t* in, const float* cos_row, const float* sin_row, uint16_t* out,
                          int64_t length);

}  // namespace linnet::ops::detail
