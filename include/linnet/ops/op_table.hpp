// The native op table: kernels that stand in for standard-library `op`
// bodies, registered per op and per dtype, and the dispatcher that offers
// them to the interpreter.
//
// An op's body (stdlib/*.linnet) is its meaning; a kernel is an
// implementation of the same function that may round differently, within
// what a numerics policy allows:
//
//   exact       no kernel ever runs: the bodies as written.
//   equivalent  a kernel that computes the body's function with f32
//               accumulation and the body's roundings to T (the order of
//               the f32 sums may differ from the body's).
//   fast        also kernels that round where bf16 reference models round,
//               e.g. attention scores and probabilities held in bf16.
//
// A registration names the weakest policy it is valid under: a kernel
// valid under `equivalent` is valid under `fast` too, and under `fast` a
// fast-only kernel for the same op and dtype is preferred. docs/ops.md lists
// every kernel.
//
// OpTable is backend-neutral (a CUDA table implements the same interface);
// CpuOpTable holds the CPU kernels (src/ops/kernels_*.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/eval/dispatch.hpp"
#include "linnet/eval/value.hpp"
#include "linnet/tensor/dtype.hpp"

namespace linnet::ops {

// A kernel: the op's result for a call, or nothing to let the body run
// (the kernels decline inputs the body rejects, such as an index out of
// range, so that the body reports the error at its source span).
using KernelFunction = std::optional<eval::Value> (*)(const eval::NativeCall& call);

struct KernelRegistration {
  std::string op;                 // qualified name, "std.nn.softmax::softmax"
  tensor::DType dtype;            // the op's `T`
  eval::NumericsPolicy policy;    // the weakest policy it is valid under: Equivalent or Fast
  std::string summary;            // how it computes: "f32 accumulation, rounded to bf16 once"
  KernelFunction run = nullptr;
};

// What a table decided for one op, dtype and policy.
struct KernelChoice {
  const KernelRegistration* kernel = nullptr;  // null: the body runs
  // Why, for `linnet explain`: "native: bf16 kernel (...), valid under
  // equivalent", "body: exact runs op bodies as written", "body: no f16
  // kernel registered".
  std::string reason;
};

class OpTable {
 public:
  virtual ~OpTable() = default;
  // "cpu".
  virtual std::string_view name() const = 0;
  // The kernel to run for `op` (qualified) with dtype `dtype` under `policy`.
  virtual KernelChoice find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const = 0;
  // find's kernel without its reason (the dispatchers ask on every call,
  // and the reason's text is for `linnet explain`).
  virtual const KernelRegistration* kernel(std::string_view op, tensor::DType dtype,
                                           eval::NumericsPolicy policy) const {
    return find(op, dtype, policy).kernel;
  }
  // Whether any kernel is registered for `op`, whatever its dtype.
  virtual bool has_op(std::string_view op) const = 0;
  // Every registration, ordered by op, dtype and policy.
  virtual std::vector<const KernelRegistration*> registrations() const = 0;
};

// A table filled by register_kernel; the lookup rules above are its.
class RegistryOpTable : public OpTable {
 public:
  explicit RegistryOpTable(std::string name);

  // Adds a kernel. Throws std::invalid_argument for a policy other than
  // Equivalent or Fast, a null function, or a second kernel for the same op,
  // dtype and policy.
  void register_kernel(KernelRegistration registration);

  std::string_view name() const override { return name_; }
  KernelChoice find(std::string_view op, tensor::DType dtype, eval::NumericsPolicy policy) const override;
  const KernelRegistration* kernel(std::string_view op, tensor::DType dtype,
                                   eval::NumericsPolicy policy) const override;
  bool has_op(std::string_view op) const override;
  std::vector<const KernelRegistration*> registrations() const override;

 private:
  std::string name_;
  // op -> its registrations (few per op).
  std::map<std::string, std::vector<std::unique_ptr<KernelRegistration>>, std::less<>> by_op_;
};

// The CPU kernels (Eigen and OpenMP), f32 and bf16.
class CpuOpTable : public RegistryOpTable {
 public:
  CpuOpTable();
};

// The one CPU table (immutable once built; shared by every dispatcher).
std::shared_ptr<const OpTable> cpu_op_table();

// The dtype a table is consulted with for a call: the op's generic `T` when
// it is bound to a dtype, else the dtype of its first tensor argument;
// nothing when neither exists.
std::optional<tensor::DType> call_dtype(const eval::NativeCall& call);

// eval's OpDispatcher over an OpTable: the commands install one as
// `eval::Options::dispatcher` (under `exact` it declines every call).
class TableDispatcher : public eval::OpDispatcher {
 public:
  explicit TableDispatcher(std::shared_ptr<const OpTable> table);
  std::optional<eval::Value> try_native(const eval::NativeCall& call) override;
  const OpTable& table() const { return *table_; }

 private:
  std::shared_ptr<const OpTable> table_;
};

// A TableDispatcher over cpu_op_table().
std::shared_ptr<eval::OpDispatcher> make_cpu_dispatcher();

}  // namespace linnet::ops
