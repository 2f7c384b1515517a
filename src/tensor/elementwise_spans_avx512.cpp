// The elementwise span kernels compiled for AVX-512F/BW/VL; entered only when the CPU has them (elementwise_path.cpp).
#include <cstdint>
#include <type_traits>

#include "dispatch.hpp"
#include "elementwise_spans.hpp"

#define LINNET_SPAN_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

namespace linnet::tensor::detail::spans_avx512 {

#include "elementwise_spans.inc"

}  // namespace linnet::tensor::detail::spans_avx512
