// Kernels, run by iterating their launch grid: the body executes once per
// program, in row-major order of the program ids, on one thread (so the
// atomic writes need no synchronisation). `load` gathers a tile from a tensor
// parameter, `store` and the atomics write a result where their mask holds.
// This is a reference for testing kernels against the ops that name them,
// not a fast path.
#include <algorithm>
#include <cstring>
#include <limits>

#include "evaluator.hpp"

namespace linnet::eval {

struct KernelState {
  std::map<std::string, Tensor> inputs;   // tensor parameters, read by `load`
  std::map<std::string, Tensor> outputs;  // results, written by `store` and the atomics
  std::vector<int64_t> program;           // this program's id along each grid axis
};

namespace {

// How the body writes each result (a result takes one kind of write).
void collect_writes(const std::vector<ast::StmtPtr>& statements, std::map<std::string, ast::StoreKind>& writes) {
  for (const ast::StmtPtr& statement : statements) {
    switch (statement->kind) {
      case ast::StmtKind::Store: {
        const auto& store = statement->cast<ast::StoreStmt>();
        if (const auto* target = store.target->as<ast::IndexExpr>()) {
          if (const auto* name = target->object->as<ast::NameExpr>()) writes[name->name.text] = store.store;
        }
        break;
      }
      case ast::StmtKind::StaticFor: collect_writes(statement->cast<ast::StaticForStmt>().body.statements, writes); break;
      case ast::StmtKind::While: collect_writes(statement->cast<ast::WhileStmt>().body.statements, writes); break;
      case ast::StmtKind::For: collect_writes(statement->cast<ast::ForStmt>().loop.body.statements, writes); break;
      default: break;
    }
  }
}

template <class T>
Tensor filled_extreme(DType dtype, const Shape& shape, bool lowest) {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    const double value = lowest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return tensor::fill(shape, dtype, tensor::Scalar(value));
  } else {
    return tensor::fill(shape, dtype, tensor::Scalar(lowest ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max()));
  }
}

// A result's starting value: the identity of the atomic that writes it.
Tensor initial_result(DType dtype, const Shape& shape, ast::StoreKind kind) {
  if (kind != ast::StoreKind::AtomicMax && kind != ast::StoreKind::AtomicMin) return Tensor::zeros(dtype, shape);
  const bool lowest = kind == ast::StoreKind::AtomicMax;
  switch (dtype) {
    case DType::I8: return filled_extreme<int8_t>(dtype, shape, lowest);
    case DType::I16: return filled_extreme<int16_t>(dtype, shape, lowest);
    case DType::I32: return filled_extreme<int32_t>(dtype, shape, lowest);
    case DType::I64: return filled_extreme<int64_t>(dtype, shape, lowest);
    case DType::U8: return filled_extreme<uint8_t>(dtype, shape, lowest);
    case DType::U16: return filled_extreme<uint16_t>(dtype, shape, lowest);
    case DType::U32: return filled_extreme<uint32_t>(dtype, shape, lowest);
    case DType::U64: return filled_extreme<uint64_t>(dtype, shape, lowest);
    default: return filled_extreme<double>(dtype, shape, lowest);
  }
}

template <class T>
void combine(void* slot, const void* value, ast::StoreKind kind) {
  T current;
  T incoming;
  std::memcpy(&current, slot, sizeof(T));
  std::memcpy(&incoming, value, sizeof(T));
  T result = current;
  if (kind == ast::StoreKind::AtomicAdd) result = static_cast<T>(current + incoming);
  if (kind == ast::StoreKind::AtomicMax) result = incoming > current ? incoming : current;
  if (kind == ast::StoreKind::AtomicMin) result = incoming < current ? incoming : current;
  std::memcpy(slot, &result, sizeof(T));
}

void combine_f16(void* slot, const void* value, ast::StoreKind kind) {
  tensor::f16_t current;
  tensor::f16_t incoming;
  std::memcpy(&current, slot, sizeof current);
  std::memcpy(&incoming, value, sizeof incoming);
  float result = current.to_float();
  if (kind == ast::StoreKind::AtomicAdd) result += incoming.to_float();
  if (kind == ast::StoreKind::AtomicMax) result = std::max(result, incoming.to_float());
  if (kind == ast::StoreKind::AtomicMin) result = std::min(result, incoming.to_float());
  const tensor::f16_t rounded = tensor::f16_t::from_float(result);
  std::memcpy(slot, &rounded, sizeof rounded);
}

}  // namespace

// The positions an access `x[c0, c1, ...]` of a kernel reads or writes: one
// index tensor per axis of x over the tile shape (each integer tile adds its
// axis, in order; a scalar adds none).
struct TileAccess {
  std::string tensor;
  Shape shape;
  std::vector<Tensor> positions;  // broadcast to `shape`, i64
};

static TileAccess tile_access(Evaluator& evaluator, const ast::Expr& target, Frame& frame,
                              const std::map<std::string, Tensor>& tensors, const char* what) {
  const auto* access = target.as<ast::IndexExpr>();
  const auto* name = access != nullptr ? access->object->as<ast::NameExpr>() : nullptr;
  if (name == nullptr || !tensors.count(name->name.text)) {
    evaluator.fail(codes::invalid_kernel, std::string(what) + " takes an access of a kernel's tensor, such as `x[i, j]`",
                   target.span);
  }
  const Tensor& x = tensors.at(name->name.text);
  if (static_cast<int>(access->components.size()) != x.rank()) {
    evaluator.fail(codes::rank_mismatch, "`" + name->name.text + "` has rank " + std::to_string(x.rank()) + ", indexed with " +
                                             std::to_string(access->components.size()) + " positions",
                   access->span);
  }
  std::vector<Tensor> indices;
  std::vector<bool> is_tile;
  TileAccess result;
  result.tensor = name->name.text;
  for (const ast::IndexComponent& component : access->components) {
    if (component.kind != ast::IndexComponentKind::Value) {
      evaluator.fail(codes::invalid_kernel, "a kernel access takes integer scalars or tiles", component.span);
    }
    const Value index = evaluator.eval_value(*component.value, frame);
    Tensor position;
    if (index.kind() == Value::Kind::Int) {
      position = Tensor::scalar(DType::I64, tensor::Scalar(index.int_value()));
    } else if (index.is_tensor() && tensor::is_integer(index.tensor().dtype()) && index.tensor().rank() <= 1) {
      position = index.tensor().to(DType::I64);
    } else {
      evaluator.fail(codes::invalid_kernel, "a kernel position is an integer scalar or a 1-D integer tile, found " +
                                                index.describe(), component.span);
    }
    if (position.rank() == 1) result.shape.push_back(position.shape()[0]);
    indices.push_back(position);
  }
  // Each tile along its own axis of the result.
  int tile_axis = 0;
  const int rank = static_cast<int>(result.shape.size());
  for (Tensor& position : indices) {
    if (position.rank() == 1) {
      Shape placed(static_cast<size_t>(rank), 1);
      placed[static_cast<size_t>(tile_axis++)] = position.shape()[0];
      position = position.reshape(placed);
    }
    result.positions.push_back(position.broadcast_to(result.shape).contiguous());
  }
  return result;
}

Indexed Evaluator::call_kernel_builtin(const std::string& name, const ast::CallExpr& call, Frame& frame) {
  KernelState& state = *frame.kernel;
  if (name == "program_id") {
    if (call.arguments.size() != 1) fail(codes::bad_arguments, "`program_id` takes one axis", call.span);
    const int64_t axis = eval_int(*call.arguments.front().value, frame, "a grid axis");
    if (axis < 0 || axis >= static_cast<int64_t>(state.program.size())) {
      fail(codes::invalid_axis, "the grid has " + std::to_string(state.program.size()) + " axes, not axis " +
                                    std::to_string(axis), call.span);
    }
    return {Value::scalar(DType::I32, tensor::Scalar(state.program[static_cast<size_t>(axis)])), {}};
  }
  // load(x[...], mask, other)
  if (call.arguments.empty() || call.arguments.size() > 3) {
    fail(codes::bad_arguments, "`load` takes an access, an optional mask and an optional fill value", call.span);
  }
  const TileAccess access = tile_access(*this, *call.arguments[0].value, frame, state.inputs, "`load`");
  const Tensor& x = state.inputs.at(access.tensor);
  std::optional<Tensor> mask;
  if (call.arguments.size() >= 2) {
    const Value value = eval_value(*call.arguments[1].value, frame);
    if (!value.is_tensor() || value.tensor().dtype() != DType::Bool) {
      fail(codes::condition_not_bool, "the mask of `load` must be `bool`", call.arguments[1].value->span);
    }
    mask = value.tensor().broadcast_to(access.shape);
  }
  Tensor other = Tensor::zeros(x.dtype(), {});
  if (call.arguments.size() == 3) {
    const Value value = eval_value(*call.arguments[2].value, frame);
    other = value.is_contextual() ? literal_as(value, x.dtype(), call.arguments[2].value->span)
                                  : as_tensor(value, call.arguments[2].value->span, "the fill value of `load`");
    if (other.dtype() != x.dtype()) fail(codes::dtype_mismatch, "the fill value of `load` has another dtype", call.span);
  }
  std::vector<Tensor> positions = access.positions;
  if (mask) {
    // Masked-off positions are never read: they point at element 0.
    const Tensor zero = Tensor::zeros(DType::I64, {});
    for (Tensor& position : positions) position = tensor::select(*mask, position, zero);
  }
  Tensor loaded;
  try {
    loaded = tensor::gather(x, positions);
  } catch (const tensor::TensorError& error) {
    if (error.kind() != tensor::ErrorKind::IndexOutOfRange) throw;
    fail(codes::runtime_index, "`load` reads outside `" + access.tensor + "`", call.span,
         {"axis " + std::to_string(error.axis().value_or(0)), "value " + std::to_string(error.value().value_or(0)),
          "extent " + std::to_string(error.extent().value_or(0))});
  }
  if (mask) loaded = tensor::select(*mask, loaded, other);
  return {Value::from_tensor(loaded), {}};
}

void Evaluator::exec_store(const ast::StoreStmt& stmt, Frame& frame) {
  if (frame.kernel == nullptr) {
    fail(codes::invalid_kernel, std::string("`") + ast::store_kind_spelling(stmt.store) + "` belongs in a kernel",
         stmt.keyword_span);
  }
  KernelState& state = *frame.kernel;
  const TileAccess access = tile_access(*this, *stmt.target, frame, state.outputs, "a store");
  Tensor& y = state.outputs.at(access.tensor);
  const Value value = eval_value(*stmt.value, frame);
  Tensor values = value.is_contextual() ? literal_as(value, y.dtype(), stmt.value->span)
                                        : as_tensor(value, stmt.value->span, "a stored value");
  if (values.dtype() != y.dtype()) {
    fail(codes::dtype_mismatch, "a `" + std::string(tensor::dtype_name(values.dtype())) + "` value stored into `" +
                                    access.tensor + "` of dtype " + std::string(tensor::dtype_name(y.dtype())),
         stmt.value->span);
  }
  values = values.broadcast_to(access.shape).contiguous();
  Tensor mask = Tensor::scalar(DType::Bool, tensor::Scalar(true)).broadcast_to(access.shape).contiguous();
  if (stmt.mask) {
    const Value given = eval_value(*stmt.mask, frame);
    if (!given.is_tensor() || given.tensor().dtype() != DType::Bool) {
      fail(codes::condition_not_bool, "the mask of a store must be `bool`", stmt.mask->span);
    }
    mask = given.tensor().broadcast_to(access.shape).contiguous();
  }
  const int64_t count = tensor::shape_numel(access.shape);
  const size_t width = y.element_size();
  auto* base = static_cast<std::byte*>(y.raw_mutable_data());
  const auto* incoming = static_cast<const std::byte*>(values.raw_data());
  const bool* enabled = mask.data<bool>();
  for (int64_t element = 0; element < count; ++element) {
    if (!enabled[element]) continue;
    int64_t offset = 0;
    for (int axis = 0; axis < y.rank(); ++axis) {
      const int64_t at = access.positions[static_cast<size_t>(axis)].data<int64_t>()[element];
      const int64_t extent = y.shape()[static_cast<size_t>(axis)];
      if (at < 0 || at >= extent) {
        fail(codes::runtime_index, "a store writes outside `" + access.tensor + "`", stmt.target->span,
             {"axis " + std::to_string(axis), "value " + std::to_string(at), "extent " + std::to_string(extent)});
      }
      offset += at * y.strides()[static_cast<size_t>(axis)];
    }
    std::byte* slot = base + offset * static_cast<int64_t>(width);
    const std::byte* source = incoming + element * static_cast<int64_t>(width);
    if (stmt.store == ast::StoreKind::Store) {
      std::memcpy(slot, source, width);
      continue;
    }
    switch (y.dtype()) {
      case DType::F32: combine<float>(slot, source, stmt.store); break;
      case DType::F64: combine<double>(slot, source, stmt.store); break;
      case DType::I32: combine<int32_t>(slot, source, stmt.store); break;
      case DType::U32: combine<uint32_t>(slot, source, stmt.store); break;
      case DType::I64: combine<int64_t>(slot, source, stmt.store); break;
      case DType::U64: combine<uint64_t>(slot, source, stmt.store); break;
      case DType::F16: combine_f16(slot, source, stmt.store); break;
      default:
        fail(codes::invalid_kernel, std::string("`") + ast::store_kind_spelling(stmt.store) + "` cannot write " +
                                        std::string(tensor::dtype_name(y.dtype())),
             stmt.keyword_span);
    }
  }
}

Value Evaluator::run_kernel(const Module* module, const ast::KernelItem& kernel, GenericBindings generics,
                            CallArgs args, Span call_site) {
  const std::string display = qualified_name(module, kernel.name.text);
  CallScope scope(*this, calls, display, call_site, options.max_call_depth);
  KernelState state;
  Frame frame;
  frame.module = module;
  frame.generics = generics;
  frame.kernel = &state;
  frame.scopes.emplace_back();
  std::vector<Value> values =
      bind_arguments(kernel.params, kernel.generics, generics, std::move(args), frame, call_site, display);
  check_where(kernel.where, frame, call_site, display);
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    if (values[i].is_tensor() && kernel.params[i].type->kind == ast::TypeKind::Tensor) {
      state.inputs[kernel.params[i].name.text] = values[i].tensor();
    } else {
      declare(frame, kernel.params[i].name.text, values[i], false);
    }
  }
  std::map<std::string, ast::StoreKind> writes;
  collect_writes(kernel.body.statements, writes);
  for (const ast::KernelResult& result : kernel.results) {
    const auto* type = result.type->as<ast::TensorType>();
    if (type == nullptr) fail(codes::invalid_kernel, "a kernel result is a tensor", result.type->span);
    const auto write = writes.find(result.name.text);
    state.outputs[result.name.text] =
        initial_result(eval_dtype(*type->dtype, frame), eval_shape(type->shape, frame),
                       write == writes.end() ? ast::StoreKind::Store : write->second);
  }
  std::vector<int64_t> grid;
  for (const auto& extent : kernel.grid) grid.push_back(eval_int(*extent, frame, "a grid extent"));
  if (grid.empty() || grid.size() > 3) fail(codes::invalid_kernel, "a grid has one to three axes", kernel.grid_span);
  int64_t programs = 1;
  for (int64_t extent : grid) {
    if (extent < 0 || __builtin_mul_overflow(programs, extent, &programs) || programs > (int64_t{1} << 31)) {
      fail(codes::resource_limit, "a launch grid of " + std::to_string(extent) + " along one axis is out of range",
           kernel.grid_span);
    }
  }
  state.program.assign(grid.size(), 0);
  for (int64_t program = 0; program < programs; ++program) {
    int64_t rest = program;
    for (size_t axis = grid.size(); axis-- > 0;) {
      state.program[axis] = rest % grid[axis];
      rest /= grid[axis];
    }
    ScopeGuard body_scope(frame);
    exec_statements(kernel.body.statements, frame);
    frame.returned = false;
  }
  if (kernel.results.size() == 1) return Value::from_tensor(state.outputs.at(kernel.results.front().name.text));
  std::vector<Value> results;
  for (const ast::KernelResult& result : kernel.results) {
    results.push_back(Value::from_tensor(state.outputs.at(result.name.text)));
  }
  return Value::tuple(std::move(results));
}

std::optional<Value> Evaluator::run_bound_kernel(const Module* module, const ast::FunctionItem& op, Frame& op_frame,
                                                 const std::vector<Value>& arguments, Span call_site) {
  const ast::KernelBinding& binding = *op.kernel;
  auto resolved = find_item(module, binding.kernel.text);
  const auto* kernel = resolved && resolved->item ? resolved->item->as<ast::KernelItem>() : nullptr;
  if (kernel == nullptr) {
    fail(codes::invalid_kernel, "`" + binding.kernel.text + "` is not a kernel", binding.kernel.span);
  }
  GenericBindings generics =
      bind_explicit_generics(kernel->generics, binding.generic_args, op_frame, binding.span, kernel->name.text);
  Frame check;
  check.module = resolved->module;
  check.generics = generics;
  apply_generic_defaults(kernel->generics, check, binding.span, kernel->name.text);
  for (const auto& constraint : kernel->where.constraints) {
    const Value holds = eval_value(*constraint, check);
    if (!scalar_condition(holds, constraint->span, "a `where` constraint")) return std::nullopt;
  }
  CallArgs args;
  args.positional = arguments;
  return run_kernel(resolved->module, *kernel, check.generics, std::move(args), call_site);
}

}  // namespace linnet::eval
