// rms_norm's per-element step sixteen lanes at a time (norm_avx512.cpp),
// with the bits of the scalar loop in kernels_norm.cpp. Call only on CPUs
// with AVX-512F and BW.
#pragma once

#include <cstdint>

namespace linnet::ops::detail {

// out[i] = bf16(bf16(in[i] * inverse_rms) * gain[i]) for i < count: bf16
// bits in and out, each product in f32 (a multiplication, no fused step),
// rounded to nearest even.
void rms_scale_row_bf16_avx512(const uint16_t* in, const float* gain, float inverse_rms, uint16_t* out,
                               int64_t count);

}  // namespace linnet::ops::detail
