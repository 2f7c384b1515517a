// std.nn.parallel's collectives over a process group (collectives.hpp).
#include "linnet/dist/collectives.hpp"

#include <cstring>
#include <vector>

#include "linnet/eval/error.hpp"
#include "linnet/tensor/half.hpp"

namespace linnet::dist {

namespace {

using tensor::DType;
using tensor::Tensor;

[[noreturn]] void fail(const std::string& message) {
  throw eval::EvalError(syntax::error(eval::codes::collective, message, syntax::Span{}));
}

// Every process's bytes of `local` (contiguous), in rank order.
std::vector<std::byte> gather_bytes(const Tensor& local, Communicator& group) {
  const size_t bytes = static_cast<size_t>(local.numel()) * local.element_size();
  std::vector<std::byte> gathered(bytes * static_cast<size_t>(group.size()));
  group.all_gather(local.raw_data(), bytes, gathered.data());
  return gathered;
}

// Adds the `count_parts` partials of `count` elements each (laid one
// after the other) in rank order, in their own dtype.
template <class Element>
void add_in_order(const std::byte* parts, int count_parts, int64_t count, Element* out) {
  const auto* values = reinterpret_cast<const Element*>(parts);
  for (int64_t i = 0; i < count; ++i) {
    Element total = values[i];
    for (int p = 1; p < count_parts; ++p) total += values[static_cast<int64_t>(p) * count + i];
    out[i] = total;
  }
}

}  // namespace

Tensor all_reduce(const Tensor& partial, Communicator& group, eval::NumericsPolicy policy) {
  const DType dtype = partial.dtype();
  if (!tensor::is_float(dtype)) {
    fail("all_reduce sums floats; it was given " + std::string(tensor::dtype_name(dtype)));
  }
  const Tensor local = partial.contiguous();
  if (group.size() == 1) return local;
  const std::vector<std::byte> parts = gather_bytes(local, group);
  const int count_parts = group.size();
  const int64_t count = local.numel();
  Tensor total = Tensor::empty(dtype, local.shape());
  void* out = total.raw_mutable_data();
  switch (dtype) {
    case DType::F32:
      add_in_order(parts.data(), count_parts, count, static_cast<float*>(out));
      break;
    case DType::F64:
      add_in_order(parts.data(), count_parts, count, static_cast<double*>(out));
      break;
    case DType::BF16:
    case DType::F16: {
      const bool bf16 = dtype == DType::BF16;
      auto widen = [bf16](uint16_t bits) { return bf16 ? tensor::bf16_bits_to_float(bits) : tensor::f16_bits_to_float(bits); };
      auto narrow = [bf16](float value) { return bf16 ? tensor::float_to_bf16_bits(value) : tensor::float_to_f16_bits(value); };
      auto* result = static_cast<uint16_t*>(out);
      const auto* words = reinterpret_cast<const uint16_t*>(parts.data());
      // Under `exact` a `+` of two bf16 (f16) values rounds its result to
      // the dtype, and so does each sum here; otherwise f32 holds the
      // running sum and the total rounds once.
      const bool round_each_sum = policy == eval::NumericsPolicy::Exact;
      for (int64_t i = 0; i < count; ++i) {
        float total_value = widen(words[i]);
        for (int p = 1; p < count_parts; ++p) {
          total_value += widen(words[static_cast<int64_t>(p) * count + i]);
          if (round_each_sum) total_value = widen(narrow(total_value));
        }
        result[i] = narrow(total_value);
      }
      break;
    }
    default:
      fail("all_reduce sums f16, bf16, f32 or f64; it was given " + std::string(tensor::dtype_name(dtype)));
  }
  return total;
}

Tensor all_gather(const Tensor& part, Communicator& group) {
  if (part.rank() != 2) fail("all_gather joins [R, N] parts; it was given rank " + std::to_string(part.rank()));
  const Tensor local = part.contiguous();
  if (group.size() == 1) return local;
  const std::vector<std::byte> parts = gather_bytes(local, group);
  const int64_t rows = local.shape()[0];
  const int64_t columns = local.shape()[1];
  const int64_t processes = group.size();
  Tensor joined = Tensor::empty(local.dtype(), tensor::Shape{rows, processes * columns});
  // gathered: [process][row][column] -> joined: [row][process][column].
  const size_t row_bytes = static_cast<size_t>(columns) * local.element_size();
  auto* out = static_cast<std::byte*>(joined.raw_mutable_data());
  for (int64_t p = 0; p < processes; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out + static_cast<size_t>(r * processes + p) * row_bytes,
                  parts.data() + static_cast<size_t>(p * rows + r) * row_bytes, row_bytes);
    }
  }
  return joined;
}

CollectiveDispatcher::CollectiveDispatcher(std::shared_ptr<eval::OpDispatcher> inner,
                                           std::shared_ptr<Communicator> group)
    : inner_(std::move(inner)), group_(std::move(group)) {}

std::optional<eval::Value> CollectiveDispatcher::try_native(const eval::NativeCall& call) {
  if (call.qualified_name == kAllReduce && !call.arguments.empty() && call.arguments[0].is_tensor()) {
    return eval::Value::from_tensor(all_reduce(call.arguments[0].tensor(), *group_, call.policy));
  }
  auto shards = call.generics.find("Shards");
  const bool sized_by_shards = shards != call.generics.end() && shards->second.kind == eval::GenericValue::Kind::Dim;
  if (call.qualified_name == kAllGather && !call.arguments.empty() && call.arguments[0].is_tensor()) {
    if (!sized_by_shards || shards->second.dim != group_->size()) {
      fail("all_gather joins the parts of the " + std::to_string(group_->size()) +
           " processes of this run, but its `Shards` is " +
           (sized_by_shards ? std::to_string(shards->second.dim) : std::string("not a dimension")));
    }
    return eval::Value::from_tensor(all_gather(call.arguments[0].tensor(), *group_));
  }
  // An op sized by `Shards` (split_cross_entropy) calls the collectives in
  // its body; a kernel in its place would see only this process's part.
  if (sized_by_shards && shards->second.dim > 1 && group_->size() > 1) return std::nullopt;
  return inner_ ? inner_->try_native(call) : std::nullopt;
}

}  // namespace linnet::dist
