// The CUDA kernels of the row ops (norms, softmax, argmax), embedding, rope
// and the bias of `linear`. One file, so that nvcc runs once.
//
// Rounding: products and sums whose rounding the CPU kernels repeat bit for
// bit (rope, the norms' final scalings, the bias) use the _rn intrinsics so
// that nvcc cannot contract them into fused multiply-adds. Row sums run in a
// fixed order (each thread a strided slice, then a fixed tree), so results
// do not vary between runs; they may differ from the CPU's sum order in the
// last bits of f32, which `equivalent` allows.
#include <cuda_bf16.h>

#include <cstdint>

#include "context.hpp"
#include "launch.hpp"

namespace linnet::cuda::detail {

namespace {

constexpr int kRowThreads = 256;

__device__ __forceinline__ float widen(float value) { return value; }
__device__ __forceinline__ float widen(__nv_bfloat16 value) { return __bfloat162float(value); }

template <class T>
__device__ __forceinline__ T narrow(float value);
template <>
__device__ __forceinline__ float narrow<float>(float value) {
  return value;
}
template <>
__device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float value) {
  return __float2bfloat16_rn(value);
}
// Rounds to T and back: the value the body holds after a cast<T>.
template <class T>
__device__ __forceinline__ float round_to(float value) {
  return widen(narrow<T>(value));
}

// Combines every thread's `value` in the block with `combine` (a
// commutative operation whose identity is `identity`), in a fixed order:
// a shuffle tree in each warp, then one over the warps' results. Every
// thread gets the result. `scratch` holds one float per warp.
template <class Combine>
__device__ float block_reduce(float value, float* scratch, float identity, Combine combine) {
  for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_down_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < blockDim.x / 32 ? scratch[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_down_sync(0xffffffffu, value, offset));
    if (lane == 0) scratch[0] = value;
  }
  __syncthreads();
  const float result = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

struct AddRounded {
  __device__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
};
struct Maximum {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ float block_sum(float value, float* scratch) { return block_reduce(value, scratch, 0.0f, AddRounded{}); }
__device__ float block_max(float value, float* scratch) { return block_reduce(value, scratch, -INFINITY, Maximum{}); }

template <class T>
__global__ void rms_norm_kernel(const T* x, const T* weight, T* y, int64_t width, float eps) {
  __shared__ float scratch[32];
  const T* row = x + blockIdx.x * width;
  T* out = y + blockIdx.x * width;
  float squares = 0.0f;
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) {
    const float wide = widen(row[h]);
    squares = __fadd_rn(squares, __fmul_rn(wide, wide));
  }
  const float mean_square = __fdiv_rn(block_sum(squares, scratch), static_cast<float>(width));
  const float inverse_rms = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean_square, eps)));
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) {
    const float scaled = round_to<T>(__fmul_rn(widen(row[h]), inverse_rms));
    out[h] = narrow<T>(__fmul_rn(scaled, widen(weight[h])));
  }
}

template <class T>
__global__ void layer_norm_kernel(const T* x, const T* weight, const T* bias, T* y, int64_t width, float eps) {
  __shared__ float scratch[32];
  const T* row = x + blockIdx.x * width;
  T* out = y + blockIdx.x * width;
  float total = 0.0f;
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) total = __fadd_rn(total, widen(row[h]));
  const float mean = __fdiv_rn(block_sum(total, scratch), static_cast<float>(width));
  float squares = 0.0f;
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) {
    const float centered = __fsub_rn(widen(row[h]), mean);
    squares = __fadd_rn(squares, __fmul_rn(centered, centered));
  }
  const float variance = __fdiv_rn(block_sum(squares, scratch), static_cast<float>(width));
  const float inverse_std = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(variance, eps)));
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) {
    const float normalized = round_to<T>(__fmul_rn(__fsub_rn(widen(row[h]), mean), inverse_std));
    float scaled = round_to<T>(__fmul_rn(normalized, widen(weight[h])));
    if (bias != nullptr) scaled = __fadd_rn(scaled, widen(bias[h]));
    out[h] = narrow<T>(scaled);
  }
}

template <class T>
__global__ void softmax_kernel(const T* x, T* y, int64_t width) {
  __shared__ float scratch[32];
  const T* row = x + blockIdx.x * width;
  T* out = y + blockIdx.x * width;
  float largest = -INFINITY;
  for (int64_t n = threadIdx.x; n < width; n += blockDim.x) largest = fmaxf(largest, widen(row[n]));
  largest = block_max(largest, scratch);
  float total = 0.0f;
  for (int64_t n = threadIdx.x; n < width; n += blockDim.x) total = __fadd_rn(total, expf(__fsub_rn(widen(row[n]), largest)));
  total = block_sum(total, scratch);
  for (int64_t n = threadIdx.x; n < width; n += blockDim.x) {
    out[n] = narrow<T>(__fdiv_rn(expf(__fsub_rn(widen(row[n]), largest)), total));
  }
}

// First index of the row maximum; a row holding NaN gives `width`, as the
// body's (max, then the least index equal to it) does.
template <class T>
__global__ void argmax_kernel(const T* x, int32_t* indices, int64_t width) {
  __shared__ float best_values[kRowThreads];
  __shared__ int64_t best_indices[kRowThreads];
  __shared__ int any_nan;
  if (threadIdx.x == 0) any_nan = 0;
  __syncthreads();
  const T* row = x + blockIdx.x * width;
  float best = -INFINITY;
  int64_t best_index = width;
  bool saw_nan = false;
  for (int64_t n = threadIdx.x; n < width; n += blockDim.x) {
    const float value = widen(row[n]);
    if (value != value) {
      saw_nan = true;
    } else if (best_index == width || value > best) {
      best = value;
      best_index = n;
    }
  }
  if (saw_nan) atomicOr(&any_nan, 1);
  best_values[threadIdx.x] = best;
  best_indices[threadIdx.x] = best_index;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = best_values[threadIdx.x + stride];
      const int64_t other_index = best_indices[threadIdx.x + stride];
      const int64_t mine = best_indices[threadIdx.x];
      const bool take = other_index != width &&
                        (mine == width || other > best_values[threadIdx.x] ||
                         (other == best_values[threadIdx.x] && other_index < mine));
      if (take) {
        best_values[threadIdx.x] = other;
        best_indices[threadIdx.x] = other_index;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) indices[blockIdx.x] = static_cast<int32_t>(any_nan ? width : best_indices[0]);
}

template <class E>
__global__ void embedding_kernel(const int32_t* ids, const E* table, E* out, int64_t width) {
  const E* from = table + static_cast<int64_t>(ids[blockIdx.x]) * width;
  E* to = out + blockIdx.x * width;
  for (int64_t h = threadIdx.x; h < width; h += blockDim.x) to[h] = from[h];
}

template <class T>
__global__ void rope_kernel(const T* x, const T* cos_table, const T* sin_table, T* y, int64_t total, int64_t positions,
                            int64_t width) {
  const int64_t half = width / 2;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % width;
    const int64_t table_index = ((i / width) % positions) * width + d;
    const float turned = d < half ? -widen(x[i + half]) : widen(x[i - half]);
    const float straight = round_to<T>(__fmul_rn(widen(x[i]), widen(cos_table[table_index])));
    const float rotated = round_to<T>(__fmul_rn(turned, widen(sin_table[table_index])));
    y[i] = narrow<T>(__fadd_rn(straight, rotated));
  }
}

template <class T>
__global__ void add_bias_kernel(T* y, const T* bias, int64_t total, int64_t width) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = narrow<T>(__fadd_rn(widen(y[i]), widen(bias[i % width])));
  }
}

// The NaN-propagating maximum of the bodies' `max` (the CPU kernels' max_propagating_nan).
__device__ __forceinline__ float max_nan(float a, float b) {
  if (a != a) return a;
  if (b != b || b > a) return b;
  return a;
}

struct MaximumNan {
  __device__ float operator()(float a, float b) const { return max_nan(a, b); }
};
__device__ float block_max_nan(float value, float* scratch) {
  return block_reduce(value, scratch, -INFINITY, MaximumNan{});
}

constexpr float kMasked = -1e30f;  // std.nn.attention's MASKED

template <class T>
__global__ void attention_kernel(AttentionShape g, const T* query, const T* key, const T* value, const T* sinks,
                                 const uint8_t* mask, bool mask_per_sequence, float scale, float* scratch, T* out) {
  extern __shared__ float query_row[];  // head_dim floats
  __shared__ float reduce[32];
  const int64_t row = blockIdx.x;
  const int64_t b = row / (g.heads * g.queries);
  const int64_t h = (row / g.queries) % g.heads;
  const int64_t q = row % g.queries;
  const int64_t kv = h / (g.heads / g.kv_heads);
  const T* q_in = query + row * g.head_dim;
  for (int64_t d = threadIdx.x; d < g.head_dim; d += blockDim.x) query_row[d] = widen(q_in[d]);
  __syncthreads();

  const T* keys = key + (b * g.kv_heads + kv) * g.keys * g.head_dim;
  const T* values = value + (b * g.kv_heads + kv) * g.keys * g.head_dim;
  const uint8_t* shown = mask == nullptr ? nullptr : mask + ((mask_per_sequence ? b * g.queries : 0) + q) * g.keys;
  float* scores = scratch + row * g.keys;
  float peak = -INFINITY;
  bool first = true;
  for (int64_t k = threadIdx.x; k < g.keys; k += blockDim.x) {
    float score = kMasked;
    if (shown == nullptr || shown[k] != 0) {
      const T* key_row = keys + k * g.head_dim;
      float dot = 0.0f;
      for (int64_t d = 0; d < g.head_dim; ++d) dot = __fadd_rn(dot, __fmul_rn(query_row[d], widen(key_row[d])));
      score = __fmul_rn(dot, scale);
    }
    scores[k] = score;
    peak = first ? score : max_nan(peak, score);
    first = false;
  }
  peak = block_max_nan(peak, reduce);
  float sink = 0.0f;
  if (sinks != nullptr) {
    sink = widen(sinks[h]);
    peak = max_nan(peak, sink);
  }
  float total = 0.0f;
  for (int64_t k = threadIdx.x; k < g.keys; k += blockDim.x) {
    const float lifted = expf(__fsub_rn(scores[k], peak));
    scores[k] = lifted;
    total = __fadd_rn(total, lifted);
  }
  total = block_sum(total, reduce);  // its barriers also publish every thread's scores
  if (sinks != nullptr) total = __fadd_rn(expf(__fsub_rn(sink, peak)), total);

  T* out_row = out + row * g.head_dim;
  for (int64_t d = threadIdx.x; d < g.head_dim; d += blockDim.x) {
    float mixed = 0.0f;
    if constexpr (sizeof(T) == 2) {
      // bf16: each weight exp(s - m) enters the mix rounded to bf16 and the
      // sum divides once at the end, as the CPU kernel and the frameworks'
      // fused attention compute a bf16 attention (docs/ops.md).
      for (int64_t k = 0; k < g.keys; ++k) {
        mixed = __fadd_rn(mixed, __fmul_rn(round_to<T>(scores[k]), widen(values[k * g.head_dim + d])));
      }
      out_row[d] = narrow<T>(__fdiv_rn(mixed, total));
    } else {
      for (int64_t k = 0; k < g.keys; ++k) {
        mixed = __fadd_rn(mixed, __fmul_rn(__fdiv_rn(scores[k], total), widen(values[k * g.head_dim + d])));
      }
      out_row[d] = narrow<T>(mixed);
    }
  }
}

template <class E>
__global__ void write_span_kernel(const E* value, E* out, int64_t rows, int64_t positions, int64_t n, int64_t width,
                                  int64_t at) {
  const int64_t begin = at > 0 ? at : 0;
  const int64_t end = at + n < positions ? at + n : positions;
  if (end <= begin) return;
  const int64_t per_row = (end - begin) * width;
  const int64_t total = rows * per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row;
    const int64_t s = begin + (i % per_row) / width;
    const int64_t d = i % width;
    out[(r * positions + s) * width + d] = value[(r * n + (s - at)) * width + d];
  }
}

__constant__ float kE2m1Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                      -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

template <class T>
__device__ __forceinline__ T canonical_nan();
template <>
__device__ __forceinline__ float canonical_nan<float>() {
  return __int_as_float(0x7FC00000);
}
template <>
__device__ __forceinline__ __nv_bfloat16 canonical_nan<__nv_bfloat16>() {
  return __ushort_as_bfloat16(static_cast<unsigned short>(0x7FC0));
}

template <class T>
__global__ void dequantize_mxfp4_kernel(const uint8_t* blocks, const uint8_t* scales, T* out, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t group = i / 32, j = i % 32;
    const uint8_t byte = blocks[group * 16 + j / 2];
    const int code = (j % 2 == 0) ? (byte & 15) : (byte >> 4);
    const int scale = scales[group];
    // 2^(scale - 127) in f32: a subnormal for 0 (no flush to zero here), +inf for 255.
    const float factor = scale == 255 ? INFINITY : ldexpf(1.0f, scale - 127);
    const float value = __fmul_rn(kE2m1Values[code], factor);
    out[i] = value != value ? canonical_nan<T>() : narrow<T>(value);
  }
}

unsigned elementwise_blocks(int64_t total) {
  const int64_t wanted = (total + kRowThreads - 1) / kRowThreads;
  const int64_t cap = static_cast<int64_t>(context().multiprocessors) * 16;
  return static_cast<unsigned>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

template <class F>
void with_element(Element t, F&& launch) {
  if (t == Element::F32) {
    launch(float{});
  } else {
    launch(__nv_bfloat16{});
  }
}

}  // namespace

void launch_rms_norm(Element t, const void* x, const void* weight, void* y, int64_t rows, int64_t width, float eps) {
  if (rows == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    rms_norm_kernel<T><<<rows, kRowThreads>>>(static_cast<const T*>(x), static_cast<const T*>(weight),
                                               static_cast<T*>(y), width, eps);
  });
  check_launch("rms_norm");
}

void launch_layer_norm(Element t, const void* x, const void* weight, const void* bias, void* y, int64_t rows,
                       int64_t width, float eps) {
  if (rows == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    layer_norm_kernel<T><<<rows, kRowThreads>>>(static_cast<const T*>(x), static_cast<const T*>(weight),
                                                 static_cast<const T*>(bias), static_cast<T*>(y), width, eps);
  });
  check_launch("layer_norm");
}

void launch_softmax(Element t, const void* x, void* y, int64_t rows, int64_t width) {
  if (rows == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    softmax_kernel<T><<<rows, kRowThreads>>>(static_cast<const T*>(x), static_cast<T*>(y), width);
  });
  check_launch("softmax");
}

void launch_argmax(Element t, const void* x, int32_t* indices, int64_t rows, int64_t width) {
  if (rows == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag); argmax_kernel<T><<<rows, kRowThreads>>>(static_cast<const T*>(x), indices, width); });
  check_launch("argmax");
}

void launch_embedding(size_t element_bytes, const int32_t* ids, const void* table, void* out, int64_t rows,
                      int64_t width) {
  if (rows == 0) return;
  if (element_bytes == 4) {
    embedding_kernel<uint32_t><<<rows, kRowThreads>>>(ids, static_cast<const uint32_t*>(table),
                                                      static_cast<uint32_t*>(out), width);
  } else {
    embedding_kernel<uint16_t><<<rows, kRowThreads>>>(ids, static_cast<const uint16_t*>(table),
                                                      static_cast<uint16_t*>(out), width);
  }
  check_launch("embedding");
}

void launch_rope(Element t, const void* x, const void* cos_table, const void* sin_table, void* y, int64_t total,
                 int64_t positions, int64_t width) {
  if (total == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<elementwise_blocks(total), kRowThreads>>>(static_cast<const T*>(x), static_cast<const T*>(cos_table),
                                                                static_cast<const T*>(sin_table), static_cast<T*>(y),
                                                                total, positions, width);
  });
  check_launch("rope");
}

void launch_attention(Element t, const AttentionShape& shape, const void* query, const void* key, const void* value,
                      const void* sinks, const uint8_t* mask, bool mask_per_sequence, float scale, float* scratch,
                      void* out) {
  const int64_t rows = shape.batch * shape.heads * shape.queries;
  if (rows == 0 || shape.head_dim == 0) return;
  const size_t shared = static_cast<size_t>(shape.head_dim) * sizeof(float);
  constexpr int kAttentionThreads = 128;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    if (shared > 48 * 1024) {
      check(cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
            "cudaFuncSetAttribute (attention)");
    }
    attention_kernel<T><<<rows, kAttentionThreads, shared>>>(
        shape, static_cast<const T*>(query), static_cast<const T*>(key), static_cast<const T*>(value),
        static_cast<const T*>(sinks), mask, mask_per_sequence, scale, scratch, static_cast<T*>(out));
  });
  check_launch("attention");
}

void launch_write_span(size_t element_bytes, const void* cache, const void* value, void* out, int64_t rows,
                       int64_t positions, int64_t n, int64_t width, int64_t at) {
  const size_t bytes = static_cast<size_t>(rows * positions * width) * element_bytes;
  if (bytes == 0) return;
  check(cudaMemcpyAsync(out, cache, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync (cache)");
  const int64_t total = rows * n * width;
  if (total == 0) return;
  if (element_bytes == 4) {
    write_span_kernel<uint32_t><<<elementwise_blocks(total), kRowThreads>>>(
        static_cast<const uint32_t*>(value), static_cast<uint32_t*>(out), rows, positions, n, width, at);
  } else {
    write_span_kernel<uint16_t><<<elementwise_blocks(total), kRowThreads>>>(
        static_cast<const uint16_t*>(value), static_cast<uint16_t*>(out), rows, positions, n, width, at);
  }
  check_launch("write_span");
}

void launch_dequantize_mxfp4(Element t, const uint8_t* blocks, const uint8_t* scales, void* out, int64_t groups) {
  const int64_t total = groups * 32;
  if (total == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    dequantize_mxfp4_kernel<T><<<elementwise_blocks(total), kRowThreads>>>(blocks, scales, static_cast<T*>(out), total);
  });
  check_launch("dequantize_mxfp4");
}

void launch_add_bias(Element t, void* y, const void* bias, int64_t rows, int64_t width) {
  const int64_t total = rows * width;
  if (total == 0) return;
  with_element(t, [&](auto tag) {
    using T = decltype(tag);
    add_bias_kernel<T><<<elementwise_blocks(total), kRowThreads>>>(static_cast<T*>(y), static_cast<const T*>(bias),
                                                                    total, width);
  });
  check_launch("add_bias");
}

}  // namespace linnet::cuda::detail
