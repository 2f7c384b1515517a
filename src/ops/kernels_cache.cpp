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
#include <unordered_map>
#include <vector>

#include "kernel_support.hpp"

namespace linnet::ops::detail {

namespace {

// One written place: cache row (b, s) = place / S, place % S takes
// value[row, h, position, :] for every head h.
struct Write {
  int64_t place = 0;
  int64_t row = 0;
  int64_t position = 0;
};

// The writes in a form with each place once: where a place repeats, the
// later write wins, as in the bodies. Only written places are listed, so a
// write costs what it writes, not the cache's size.
std::vector<Write> last_write_wins(std::vector<Write> writes) {
  std::unordered_map<int64_t, size_t> latest;
  for (size_t i = 0; i < writes.size(); ++i) latest[writes[i].place] = i;
  if (latest.size() == writes.size()) return writes;
  std::vector<Write> unique;
  for (size_t i = 0; i < writes.size(); ++i) {
    if (latest[writes[i].place] == i) unique.push_back(writes[i]);
  }
  return unique;
}

// Cache [B, H, S, D] with each write's rows replaced: the cache itself,
// updated, when this call holds it alone (`held_alone`), else a copy.
Tensor write_cache(const Tensor& cache, bool held_alone, const Tensor& value_in, const std::vector<Write>& writes_in) {
  Tensor result = held_alone && cache.is_contiguous() ? cache : cache.clone();
  const std::vector<Write> writes = last_write_wins(writes_in);
  const Tensor value = value_in.contiguous();
  const int64_t H = cache.extent(1), S = cache.extent(2), D = cache.extent(3);
  const int64_t value_positions = value.extent(2);
  const size_t row_bytes = static_cast<size_t>(D) * cache.element_size();
  const auto* from = static_cast<const std::byte*>(value.raw_data());
  auto* to = static_cast<std::byte*>(result.raw_mutable_data());
  const int64_t count = static_cast<int64_t>(writes.size());
#pragma omp parallel for schedule(static) if (tensor::worth_threads(count * H * static_cast<int64_t>(row_bytes)))
  for (int64_t index = 0; index < count; ++index) {
    const Write& write = writes[static_cast<size_t>(index)];
    const int64_t b = write.place / S, s = write.place % S;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t target = (b * H + h) * S + s;
      const int64_t origin = (write.row * H + h) * value_positions + write.position;
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

eval::Value written(const eval::NativeCall& call, const std::vector<Write>& writes) {
  return eval::Value::from_tensor(
      write_cache(tensor_argument(call, "cache"), held_by_call_alone(call, "cache"), tensor_argument(call, "value"),
                  writes));
}

std::optional<eval::Value> run_write_at(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int64_t at = integer_argument(call, "at");
  std::vector<Write> writes;
  for (int64_t b = 0; b < shape.batch; ++b) {
    if (at >= 0 && at < shape.positions) writes.push_back({b * shape.positions + at, b, 0});
  }
  return written(call, writes);
}

// The writes of a span of n value positions starting at `at` into cache row
// `cache_row`, from value row `value_row`: every cache position the body's
// i32 arithmetic places inside the span.
void add_span_writes(std::vector<Write>& writes, const CacheShape& shape, int64_t cache_row, int64_t value_row,
                     int32_t at, int64_t n) {
  for (int64_t s = 0; s < shape.positions; ++s) {
    const SpanPosition span = span_position(s, at, n);
    if (span.inside) writes.push_back({cache_row * shape.positions + s, value_row, span.source});
  }
}

std::optional<eval::Value> run_write_span(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int32_t at = static_cast<int32_t>(integer_argument(call, "at"));
  const int64_t n = dim_generic(call, "N");
  std::vector<Write> writes;
  for (int64_t b = 0; b < shape.batch; ++b) add_span_writes(writes, shape, b, b, at, n);
  return written(call, writes);
}

std::optional<eval::Value> run_write_rows(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const std::vector<int32_t> at = i32_values(tensor_argument(call, "at"));
  std::vector<Write> writes;
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t position = at[static_cast<size_t>(b)];
    if (position >= 0 && position < shape.positions) writes.push_back({b * shape.positions + position, b, 0});
  }
  return written(call, writes);
}

std::optional<eval::Value> run_write_slot(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const int64_t slot = integer_argument(call, "slot");
  const int32_t at = static_cast<int32_t>(integer_argument(call, "at"));
  const int64_t n = dim_generic(call, "N");
  std::vector<Write> writes;
  if (slot >= 0 && slot < shape.batch) add_span_writes(writes, shape, slot, 0, at, n);
  return written(call, writes);
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
  std::vector<Write> writes;
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t row = member[static_cast<size_t>(b)];
    if (row >= 0) add_span_writes(writes, shape, b, row, at, n);
  }
  return written(call, writes);
}

std::optional<eval::Value> run_write_tokens(const eval::NativeCall& call) {
  const CacheShape shape = cache_shape(call);
  const std::vector<int32_t> rows = i32_values(tensor_argument(call, "rows"));
  const std::vector<int32_t> positions = i32_values(tensor_argument(call, "positions"));
  std::vector<Write> writes;
  // Later tokens overwrite earlier ones at the same place (last_write_wins).
  for (size_t p = 0; p < rows.size(); ++p) {
    if (rows[p] < 0 || rows[p] >= shape.batch || positions[p] < 0 || positions[p] >= shape.positions) continue;
    writes.push_back({rows[p] * shape.positions + positions[p], 0, static_cast<int64_t>(p)});
  }
  return written(call, writes);
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
