// The elementwise span kernels compiled for AVX2; entered only when the CPU has it (elementwise_path.cpp).
#include <cstdint>
#include <type_traits>

#include "dispatch.hpp"
#include "elementwise_spans.hpp"

#define LINNET_SPAN_TARGET __attribute__((target("avx2")))

namespace linnet::tensor::detail::spans_avx2 {

#include "elementwise_spans.inc"

}  // namespace linnet::tensor::detail::spans_avx2
