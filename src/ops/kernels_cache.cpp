// Kernels for the std.nn.cache writes: write_at, write_span, write_rows,
// write_slot, write_slots and write_tokens.
//
// Each returns a new cache value, as the bodies do: a copy of the cache with
// the written positions replaced by rows of `value`, copied as stored (bit
// for bit the body). Which value row lands where is decided exactly as the
// bodies decide it -- the same i32 arithmetic (wrapping where the body's
// would), the same "a position outside the cache is never matched", and
// the same "when a place repeats, the later value row wins".
//
// In place: when the interpreter hands the kernel the cache as the only
// reference to its storage (`cache = write_at(cache, ...)`, the state's own
// slot having let go of it, see eval's DeadAfterCall), nothing else can see
// the old value, so the written rows are stored into it and it is returned
// as the result. A cache referenced anywhere else (another variable, a
// view) is copied first, as the bodies' result is a new value. Either way
// only the written rows are touched, so a step costs what it writes, not
// the cache's size.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

// Where cache row (b, s) takes its value from: value[row, h, position, :].
struct Source {
  int64_t row = -1;  // -1: nothing is written there
  int64_t position = 0;
};

// Cache [B, H, S, D] with each (b, h, s, :) for which sources[b * S + s]
// names a value row replaced by value[row, h, position, :]: the cache itself,
// updated, when this call holds it alone, else a copy.
Tensor write_cache(const Tensor& cache, const Tensor& value_in, const std::vector<Source>& sources) {
  Tensor result = held_by_call_alone(cache) && cache.is_contiguous() ? cache : cache.clone();
  const Tensor value = value_in.contiguous();
  const int64_t B = cache.extent(0), H = cache.extent(1), S = cache.extent(2), D = cache.extent(3);
  const int64_t value_positions = value.extent(2);
  const size_t row_bytes = static_cast<size_t>(D) * cache.element_size();
  const auto* from = static_cast<const std::byte*>(value.raw_data());
  auto* to = static_cast<std::byte*>(result.raw_mutable_data());
  const int64_t places = B * S;
#pragma omp parallel for schedule(static) if (tensor::worth_threads(places * static_cast<int64_t>(row_bytes)))
  for (int64_t place = 0; place < places; ++place) {
    const Source& source = sources[static_cast<size_t>(place)];
    if (source.row < 0) continue;
    const int64_t b = place / S, s = place % S;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t target = (b * H + h) * S + s;
      const int64_t origin = (source.row * H + h) * value_positions + source.position;
      std::memcpy(to + static_cast<size_t>(target) * row_bytes, from + static_cast<size_t>(origin) * row_bytes,
                  row_bytes);
    }
  }
  return result;
}

// The span bodies' `inside[s]` and `source[s]`: cache position s takes value
// position s - at when that lies in 0..N (i32 arithmetic, as written).
struct SpanPosition {
  bool inside = false;
  int64_t source = 0;
};

SpanPosition span_position(int64_t s, int32_t at, int64_t n) {
  const int32_t position = static_cast<int32_t>(s);
  const int32_t last = wrapping_sub_i32(static_cast<int32_t>(n), 1);
  const int32_t offset = wrapping_sub_i32(position, at);
  SpanPosition result;
  result.inside = position >= at && offset <= last;
  result.source = std::min(std::max(offset, int32_t{0}), last);
  return result;
}

std::vector<int32_t> i32_values(const Tensor& x) {
  const Tensor values = x.to(DType::I32).contiguous();
  return std::vector<int32_t>(values.data<int32_t>(), values.data<int32_t>() + values.numel());
}

struct CacheShape {
  int64_t batch, positions;  // B, S
};

CacheShape cache_shape(const eval::NativeCall& call) { return {dim_generic(call, "B"), dim_generic(call, "S")}; }

eval::Value written(const eval::NativeCall& call, const std::vector<Source>& sources) {
  return eval::Value::from_tensor(
      write_cache(tensor_argument(call, "cache"), tensor_argument(call, "value"), sources));
}

std::optional<eval::Value> run_write_at(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int64_t at = integer_argument(call, "at");
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  for (int64_t b = 0; b < shape.batch; ++b) {
    if (at >= 0 && at < shape.positions) sources[static_cast<size_t>(b * shape.positions + at)] = {b, 0};
  }
  return written(call, sources);
}

std::optional<eval::Value> run_write_span(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int32_t at = static_cast<int32_t>(integer_argument(call, "at"));
  const int64_t n = dim_generic(call, "N");
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  for (int64_t s = 0; s < shape.positions; ++s) {
    const SpanPosition span = span_position(s, at, n);
    if (!span.inside) continue;
    for (int64_t b = 0; b < shape.batch; ++b) sources[static_cast<size_t>(b * shape.positions + s)] = {b, span.source};
  }
  return written(call, sources);
}

std::optional<eval::Value> run_write_rows(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const std::vector<int32_t> at = i32_values(tensor_argument(call, "at"));
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t position = at[static_cast<size_t>(b)];
    if (position >= 0 && position < shape.positions) {
      sources[static_cast<size_t>(b * shape.positions + position)] = {b, 0};
    }
  }
  return written(call, sources);
}

std::optional<eval::Value> run_write_slot(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int64_t slot = integer_argument(call, "slot");
  const int32_t at = static_cast<int32_t>(integer_argument(call, "at"));
  const int64_t n = dim_generic(call, "N");
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  if (slot >= 0 && slot < shape.batch) {
    for (int64_t s = 0; s < shape.positions; ++s) {
      const SpanPosition span = span_position(s, at, n);
      if (span.inside) sources[static_cast<size_t>(slot * shape.positions + s)] = {0, span.source};
    }
  }
  return written(call, sources);
}

std::optional<eval::Value> run_write_slots(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const std::vector<int32_t> slots = i32_values(tensor_argument(call, "slots"));
  const int32_t at = static_cast<int32_t>(integer_argument(call, "at"));
  const int64_t n = dim_generic(call, "N");
  // The value row written to each cache row: the last one naming it.
  std::vector<int64_t> member(static_cast<size_t>(shape.batch), -1);
  for (size_t m = 0; m < slots.size(); ++m) {
    if (slots[m] >= 0 && slots[m] < shape.batch) member[static_cast<size_t>(slots[m])] = static_cast<int64_t>(m);
  }
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  for (int64_t s = 0; s < shape.positions; ++s) {
    const SpanPosition span = span_position(s, at, n);
    if (!span.inside) continue;
    for (int64_t b = 0; b < shape.batch; ++b) {
      const int64_t row = member[static_cast<size_t>(b)];
      if (row >= 0) sources[static_cast<size_t>(b * shape.positions + s)] = {row, span.source};
    }
  }
  return written(call, sources);
}

std::optional<eval::Value> run_write_tokens(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const std::vector<int32_t> rows = i32_values(tensor_argument(call, "rows"));
  const std::vector<int32_t> positions = i32_values(tensor_argument(call, "positions"));
  std::vector<Source> sources(static_cast<size_t>(shape.batch * shape.positions));
  // Later tokens overwrite earlier ones at the same place.
  for (size_t p = 0; p < rows.size(); ++p) {
    if (rows[p] < 0 || rows[p] >= shape.batch || positions[p] < 0 || positions[p] >= shape.positions) continue;
    sources[static_cast<size_t>(rows[p] * shape.positions + positions[p])] = {0, static_cast<int64_t>(p)};
  }
  return written(call, sources);
}

}  // namespace

void register_cache_kernels(RegistryOpTable& table) {
  const auto equivalent = eval::NumericsPolicy::Equivalent;
  const std::string summary =
      "the written rows stored into the cache in place when the call holds it alone, else into a copy; bit for bit "
      "the body";
  const std::string module = "std.nn.cache::";
  register_f32_bf16(table, module + "write_at", equivalent, summary, summary, &run_write_at);
  register_f32_bf16(table, module + "write_span", equivalent, summary, summary, &run_write_span);
  register_f32_bf16(table, module + "write_rows", equivalent, summary, summary, &run_write_rows);
  register_f32_bf16(table, module + "write_slot", equivalent, summary, summary, &run_write_slot);
  register_f32_bf16(table, module + "write_slots", equivalent, summary, summary, &run_write_slots);
  register_f32_bf16(table, module + "write_tokens", equivalent, summary, summary, &run_write_tokens);
}

}  // namespace linnet::ops::detail
