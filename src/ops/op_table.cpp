// The op table's lookup rules, the CPU table, and the dispatcher that
// offers the table's kernels to the interpreter.
#include "linnet/ops/op_table.hpp"

#include <algorithm>
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

KernelChoice RegistryOpTable::find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const {
  if (policy == eval::NumericsPolicy::Exact) return {nullptr, "body: exact runs op bodies as written"};
  const auto found = by_op_.find(op);
  if (found == by_op_.end()) return {nullptr, "body: no native kernel for this op"};

  // The most permissive registration the policy allows: under fast a
  // fast-only kernel wins over an equivalent one.
  const KernelRegistration* best = nullptr;
  const KernelRegistration* too_loose = nullptr;
  std::vector<std::string> dtypes;
  for (const auto& registration : found->second) {
    const std::string name = dtype_text(registration->dtype);
    if (std::find(dtypes.begin(), dtypes.end(), name) == dtypes.end()) dtypes.push_back(name);
    if (registration->dtype != dtype) continue;
    if (permissiveness(registration->policy) > permissiveness(policy)) {
      too_loose = registration.get();
      continue;
    }
    if (best == nullptr || permissiveness(registration->policy) > permissiveness(best->policy)) {
      best = registration.get();
    }
  }
  if (best != nullptr) {
    return {best, "native: " + dtype_text(dtype) + " kernel, valid under " +
                      eval::numerics_policy_name(best->policy) + " (" + best->summary + ")"};
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

std::optional<eval::Value> TableDispatcher::try_native(const eval::NativeCall& call) {
  if (call.policy == eval::NumericsPolicy::Exact) return std::nullopt;
  const std::optional<tensor::DType> dtype = call_dtype(call);
  if (!dtype) return std::nullopt;
  const KernelChoice choice = table_->find(call.qualified_name, *dtype, call.policy);
  if (choice.kernel == nullptr) return std::nullopt;
  return choice.kernel->run(call);
}

std::shared_ptr<eval::OpDispatcher> make_cpu_dispatcher() { return std::make_shared<TableDispatcher>(cpu_op_table()); }

}  // namespace linnet::ops
