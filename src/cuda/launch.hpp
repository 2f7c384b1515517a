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
// Dense attention, one block per output row (b, h, q), as src/ops's CPU
// kernel computes it: query head h reads key/value head h / (heads /
// kv_heads); a visible key's score is (q . k) * scale in f32, a hidden one's
// -1e30; softmax with the row maximum (and the sink, when `sinks` is given)
// subtracted; the values mixed in f32; one rounding to T. `mask` holds one
// byte per element (nonzero: visible): none (null), [Q, K] shared, or
// [B, Q, K] when `mask_per_sequence`. `scratch` holds rows * keys floats.
struct AttentionShape {
  int64_t batch, heads, kv_heads, queries, keys, head_dim;
};
void launch_attention(Element t, const AttentionShape& shape, const void* query, const void* key, const void* value,
                      const void* sinks, const uint8_t* mask, bool mask_per_sequence, float scale, float* scratch,
                      void* out);
// Cache rows: out[r, s, :] = value[r, s - at, :] for s in [at, at + n) within
// [0, positions), other positions copied from `cache`; `rows` = B * H.
void launch_write_span(size_t element_bytes, const void* cache, const void* value, void* out, int64_t rows,
                       int64_t positions, int64_t n, int64_t width, int64_t at);
// MXFP4 blocks [groups, 16] and scales [groups] (u8, as stored) into
// groups * 32 values of T: ops/mxfp4.hpp's decoding, bit for bit (a NaN is
// the canonical quiet NaN, as the CPU kernel writes it).
void launch_dequantize_mxfp4(Element t, const uint8_t* blocks, const uint8_t* scales, void* out, int64_t groups);
// y[r, c] = T(y[r, c] + bias[c]), in place.
void launch_add_bias(Element t, void* y, const void* bias, int64_t rows, int64_t width);

}  // namespace linnet::cuda::detail
