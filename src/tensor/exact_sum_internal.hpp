// What kernels_contract_exact.cpp shares with its AVX-512 file (compiled
// with -mavx512f; plain declarations only, as gemm_internal.hpp explains).
#pragma once

#include <cstdint>

namespace linnet::tensor::detail {

// The width of an output tile of the bf16 exact sums.
inline constexpr int64_t kExactTileOutputs = 64;

// For kExactTileOutputs outputs: acc[j] = round(acc[j] + round(a[k] * tile[k][j]))
// for k = 0..count-1 in order, rounding to bf16 (values kept as f32).
// `a` holds bf16 bits, `tile` is count x kExactTileOutputs f32 values.
void exact_steps_scalar(float* acc, const uint16_t* a, const float* tile, int64_t count);
void exact_steps_avx512(float* acc, const uint16_t* a, const float* tile, int64_t count);

}  // namespace linnet::tensor::detail
