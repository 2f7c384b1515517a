// The elementwise span kernels compiled for any x86-64 (SSE2): no target attribute.
#include <cstdint>
#include <type_traits>

#include "dispatch.hpp"
#include "elementwise_spans.hpp"

#define LINNET_SPAN_TARGET 

namespace linnet::tensor::detail::spans_baseline {

#include "elementwise_spans.inc"

}  // namespace linnet::tensor::detail::spans_baseline
