// Launchers of the CUDA kernels in kernels.cu, callable from host C++ that
// g++ compiles (no CUDA types in the signatures). Pointers are device
// pointers to contiguous row-major data; every launcher runs on the default
// stream and throws std::runtime_error when the launch fails.
#pragma once

#include <cstddef>
#include <cstdint>

namespace linnet::cuda::detail {

// The element type of a kernel's `T`.
enum class Element { F32, BF16 };

// The bodies' arithmetic, in f32 with T's roundings where the bodies round
// (src/ops's CPU kernels make the same roundings).
void launch_rms_norm(Element t, const void* x, const void* weight, void* y, int64_t rows, int64_t width, float eps);
void launch_layer_norm(Element t, const void* x, const void* weight, const void* bias, void* y, int64_t rows,
                       int64_t width, float eps);
void launch_softmax(Element t, const void* x, void* y, int64_t rows, int64_t width);
void launch_argmax(Element t, const void* x, int32_t* indices, int64_t rows, int64_t width);
// out[r, :] = table[ids[r], :] (ids already checked to lie in the table).
void launch_embedding(size_t element_bytes, const int32_t* ids, const void* table, void* out, int64_t rows,
                      int64_t width);
// x[..., S, D] rotated by cos/sin[S, D] ("rotate half"): bit for bit the body's three roundings.
void launch_rope(Element t, const void* x, const void* cos_table, const void* sin_table, void* y, int64_t total,
                 int64_t positions, int64_t width);
// y[r, c] = T(y[r, c] + bias[c]), in place.
void launch_add_bias(Element t, void* y, const void* bias, int64_t rows, int64_t width);

}  // namespace linnet::cuda::detail
