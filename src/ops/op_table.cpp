// The op table's lookup rules, the CPU table, and the dispatcher that
// offers the table's kernels to the interpreter.
#include "linnet/ops/op_table.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "kernel_support.hpp"

namespace linnet::ops {

namespace {

std::string dtype_text(tensor::DType dtype) { return std::string(tensor::dtype_name(dtype)); }

// Policies ordered by how much they allow.
int permissiveness(eval::NumericsPolicy policy) {
  switch (policy) {
    case eval::NumericsPolicy::Exact: return 0;
    case eval::NumericsPolicy::Equivalent: return 1;
    case eval::NumericsPolicy::Fast: return 2;
  }
  return 0;
}

}  // namespace

RegistryOpTable::RegistryOpTable(std::string name) : name_(std::move(name)) {}

void RegistryOpTable::register_kernel(KernelRegistration registration) {
  if (registration.policy == eval::NumericsPolicy::Exact) {
    throw std::invalid_argument("kernel for " + registration.op +
                                ": exact runs the bodies, so a kernel names equivalent or fast");
  }
  if (registration.run == nullptr) throw std::invalid_argument("kernel for " + registration.op + " has no function");
  auto& list = by_op_[registration.op];
  for (const auto& existing : list) {
    if (existing->dtype == registration.dtype && existing->policy == registration.policy) {
      throw std::invalid_argument("a second " + dtype_text(registration.dtype) + " kernel for " + registration.op +
                                  " under " + eval::numerics_policy_name(registration.policy));
    }
  }
  list.push_back(std::make_unique<KernelRegistration>(std::move(registration)));
}

const KernelRegistration* RegistryOpTable::kernel(std::string_view op, tensor::DType dtype,
                                                  eval::NumericsPolicy policy) const {
  if (policy == eval::NumericsPolicy::Exact) return nullptr;
  const auto found = by_op_.find(op);
  if (found == by_op_.end()) return nullptr;
  // The most permissive registration the policy allows: under fast a
  // fast-only kernel wins over an equivalent one.
  const KernelRegistration* best = nullptr;
  for (const auto& registration : found->second) {
    if (registration->dtype != dtype || permissiveness(registration->policy) > permissiveness(policy)) continue;
    if (best == nullptr || permissiveness(registration->policy) > permissiveness(best->policy)) {
      best = registration.get();
    }
  }
  return best;
}

KernelChoice RegistryOpTable::find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const {
  if (policy == eval::NumericsPolicy::Exact) return {nullptr, "body: exact runs op bodies as written"};
  const auto found = by_op_.find(op);
  if (found == by_op_.end()) return {nullptr, "body: no native kernel for this op"};
  if (const KernelRegistration* best = kernel(op, dtype, policy)) {
    return {best, "native: " + dtype_text(dtype) + " kernel, valid under " +
                      eval::numerics_policy_name(best->policy) + " (" + best->summary + ")"};
  }
  // Why none: a kernel of this dtype valid only under a looser policy, or
  // none of this dtype at all.
  std::vector<std::string> dtypes;
  const KernelRegistration* too_loose = nullptr;
  for (const auto& registration : found->second) {
    const std::string name = dtype_text(registration->dtype);
    if (std::find(dtypes.begin(), dtypes.end(), name) == dtypes.end()) dtypes.push_back(name);
    if (registration->dtype == dtype) too_loose = registration.get();
  }
  if (too_loose != nullptr) {
    return {nullptr, "body: the " + dtype_text(dtype) + " kernel is valid only under " +
                         eval::numerics_policy_name(too_loose->policy)};
  }
  std::string registered;
  for (const std::string& name : dtypes) registered += (registered.empty() ? "" : ", ") + name;
  return {nullptr, "body: no " + dtype_text(dtype) + " kernel registered (kernels: " + registered + ")"};
}

bool RegistryOpTable::has_op(std::string_view op) const { return by_op_.find(op) != by_op_.end(); }

std::vector<const KernelRegistration*> RegistryOpTable::registrations() const {
  std::vector<const KernelRegistration*> all;
  for (const auto& [op, list] : by_op_) {
    for (const auto& registration : list) all.push_back(registration.get());
  }
  std::stable_sort(all.begin(), all.end(), [](const KernelRegistration* a, const KernelRegistration* b) {
    if (a->op != b->op) return a->op < b->op;
    if (a->dtype != b->dtype) return a->dtype < b->dtype;
    return permissiveness(a->policy) < permissiveness(b->policy);
  });
  return all;
}

CpuOpTable::CpuOpTable() : RegistryOpTable("cpu") {
  detail::register_linear_kernels(*this);
  detail::register_attention_kernels(*this);
  detail::register_softmax_kernels(*this);
  detail::register_activation_kernels(*this);
  detail::register_norm_kernels(*this);
  detail::register_rope_kernels(*this);
  detail::register_embedding_kernels(*this);
  detail::register_cache_kernels(*this);
  detail::register_decoding_kernels(*this);
  detail::register_loss_kernels(*this);
  detail::register_moe_kernels(*this);
  detail::register_mxfp4_kernels(*this);
}

std::shared_ptr<const OpTable> cpu_op_table() {
  static const std::shared_ptr<const OpTable> table = std::make_shared<CpuOpTable>();
  return table;
}

std::optional<tensor::DType> call_dtype(const eval::NativeCall& call) {
  const auto generic = call.generics.find("T");
  if (generic != call.generics.end() && generic->second.kind == eval::GenericValue::Kind::DType) {
    return generic->second.dtype;
  }
  for (const eval::Value& value : call.arguments) {
    if (value.is_tensor()) return value.tensor().dtype();
  }
  return std::nullopt;
}

TableDispatcher::TableDispatcher(std::shared_ptr<const OpTable> table) : table_(std::move(table)) {
  if (!table_) throw std::invalid_argument("TableDispatcher needs a table");
}

namespace {

// Ops whose native kernels take a bf16 weight in an f32 call (widening it a
// tile at a time, exactly), with the parameter that holds the weight. A
// weight the checkpoint stores as bf16 reaches an f32 instance as an f32
// tensor that is only made on first access (Tensor::widen_on_access); these
// kernels get its stored bf16 form instead, so that it is never made.
const std::map<std::string, std::string, std::less<>>& bf16_weight_parameters() {
  static const std::map<std::string, std::string, std::less<>> parameters = {
      {"std.nn.linear::linear", "weight"},
      {"std.nn.moe::linear_experts", "weight"},
      {"std.nn.moe::linear_experts_shared", "weight"},
      {"std.nn.moe::combine_experts", "weight"},
  };
  return parameters;
}

// The call's arguments with the weight replaced by its stored bf16 form,
// when the op takes one and the weight has one; else nothing.
std::optional<std::vector<eval::Value>> with_stored_weight(const eval::NativeCall& call, tensor::DType dtype) {
  if (dtype != tensor::DType::F32) return std::nullopt;
  const auto found = bf16_weight_parameters().find(call.qualified_name);
  if (found == bf16_weight_parameters().end()) return std::nullopt;
  const auto& params = call.op.params;
  for (size_t i = 0; i < params.size() && i < call.arguments.size(); ++i) {
    if (params[i].name.text != found->second || !call.arguments[i].is_tensor()) continue;
    std::optional<tensor::Tensor> stored = call.arguments[i].tensor().stored_bf16();
    if (!stored) return std::nullopt;
    std::vector<eval::Value> arguments = call.arguments;
    arguments[i] = eval::Value::from_tensor(std::move(*stored));
    return arguments;
  }
  return std::nullopt;
}

}  // namespace

std::optional<eval::Value> TableDispatcher::try_native(const eval::NativeCall& call) {
  if (call.policy == eval::NumericsPolicy::Exact) return std::nullopt;
  const std::optional<tensor::DType> dtype = call_dtype(call);
  if (!dtype) return std::nullopt;
  const KernelRegistration* kernel = table_->kernel(call.qualified_name, *dtype, call.policy);
  if (kernel == nullptr) return std::nullopt;
  if (std::optional<std::vector<eval::Value>> arguments = with_stored_weight(call, *dtype)) {
    const eval::NativeCall stored{call.op, call.qualified_name, call.generics, *arguments, call.policy};
    return kernel->run(stored);
  }
  return kernel->run(call);
}

std::shared_ptr<eval::OpDispatcher> make_cpu_dispatcher() { return std::make_shared<TableDispatcher>(cpu_op_table()); }

}  // namespace linnet::ops
