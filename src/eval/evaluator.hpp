// The interpreter's internals: one Evaluator walks the syntax tree. Its
// methods are split by subject over several files:
//   evaluator.cpp       errors, the call stack, names, constants
//   types.cpp           dimensions, dtypes, type checks and generic inference
//   expressions.cpp     expressions (names, members, operators, if, match)
//   operators.cpp       arithmetic with contextual literals and broadcasting
//   indexing.cpp        `x[...]`: slices, selections, index-notation accesses
//   index_notation.cpp  comprehensions and reductions (contractions)
//   prelude.cpp         the built-in functions
//   calls.cpp           function, op and method calls
//   statements.cpp      statements and control flow
//   blocks.cpp          block instantiation and parameter binding
//   kernels.cpp         kernels, by iterating their launch grid
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "linnet/eval/interpreter.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/tensor/kernels.hpp"
#include "scalar_elements.hpp"

namespace linnet::eval {

namespace ast = syntax::ast;
using syntax::Module;
using syntax::Span;

// A value inside index notation: its tensor's axes are labelled with the
// index variables they range over (axis i is `axes[i]`). Outside index
// notation, and for values that use no index variable, `axes` is empty.
struct Indexed {
  Value value;
  std::vector<std::string> axes;
  bool has_axes() const { return !axes.empty(); }
};

// The index variables of the comprehension or reduction being evaluated.
// A variable's extent is fixed by the first tensor axis it indexes; every
// later use must agree. A pack `*s` stands for several variables named
// "s#0", "s#1", ...; its length is fixed by its first use.
struct IndexScope {
  std::map<std::string, std::optional<int64_t>> extents;
  std::map<std::string, std::optional<int>> packs;
  std::map<std::string, Span> fixed_at;  // where each extent was fixed, for messages

  bool is_index(const std::string& name) const { return extents.count(name) != 0; }
  bool is_pack(const std::string& name) const { return packs.count(name) != 0; }
};

struct Local {
  Value value;
  bool is_var = false;
};

struct KernelState;

// One activation: the locals, generics and block of the function running.
struct Frame {
  const Module* module = nullptr;  // resolves module-level names
  BlockInstance* self = nullptr;   // the block whose method runs, if any
  GenericBindings generics;        // the function's and its block's
  std::vector<std::map<std::string, Local>> scopes;
  IndexScope* index = nullptr;     // inside index notation
  std::vector<Value>* yields = nullptr;  // inside a `for` scan
  bool returned = false;
  Value result;
  Span return_site;  // the `return` that set `result`
  // A call made from inside index notation on element values: scalar
  // parameter types accept tensors of their dtype (the body then computes
  // elementwise over them).
  bool lifted = false;
  KernelState* kernel = nullptr;
};

// What a name refers to at module level.
struct ResolvedItem {
  const Module* module = nullptr;  // the declaring module, or the imported module itself
  const ast::Item* item = nullptr; // null for a whole-module import (`use std.random`)
};

// A call's arguments, evaluated.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<Span> positional_spans;
  std::vector<std::pair<std::string, Value>> named;
  std::vector<Span> named_spans;
};

// What a checked value is, for a message ("argument `x` of `llama::f`"):
// its parts, joined only when a message is made (every call checks each
// argument, and almost every check passes).
struct Subject {
  std::array<std::string_view, 5> parts{};
  std::string text() const {
    std::string joined;
    for (std::string_view part : parts) joined += part;
    return joined;
  }
};

class Evaluator {
 public:
  Evaluator(const syntax::Program& program, const syntax::SourceManager& sources, Options options);

  // ---- the public API (interpreter.cpp) --------------------------------
  std::shared_ptr<BlockInstance> instantiate(std::string_view block, const GenericBindings& generics,
                                             ParameterSource& source);
  std::vector<ParameterInfo> parameters(std::string_view block, const GenericBindings& generics);
  Value call_entry(BlockInstance& instance, std::string_view entry, const EntryInputs& inputs);
  Value call_function(std::string_view function, const EntryInputs& inputs);
  // Runs `call`, an entry call taking `params`: tells Options::progress it
  // started, and notes on its failure which input it was about (EntryInputs::origins).
  Value call_with_origins(const std::vector<ast::Param>& params, const EntryInputs& inputs, std::string_view name,
                          const std::function<Value()>& call);

  Options options;
  ExecutionStats stats;
  const syntax::Program& program;
  const syntax::SourceManager& sources;

  // ---- errors and the call stack (evaluator.cpp) ----------------------
  struct CallRecord {
    std::string name;
    Span call_site;
  };
  std::vector<CallRecord> calls;
  // Loops running now, for LoopProgress's depth.
  int loop_depth = 0;

  // A diagnostic with the current call stack attached as notes.
  syntax::Diagnostic diagnostic(const char* code, std::string message, Span span,
                                std::vector<std::string> notes = {}) const;
  [[noreturn]] void fail(const char* code, std::string message, Span span,
                         std::vector<std::string> notes = {}) const;
  // E6001 for an index out of range, remembering the index (EvalError::index_value).
  [[noreturn]] void fail_index(std::string message, Span span, std::vector<std::string> notes,
                               std::optional<int64_t> index) const;
  // A scalar tensor index on `axis` of `name`, checked against `extent`
  // (E6001 at `span` when it is out of range) (indexing.cpp).
  int64_t scalar_index_in_range(const tensor::Scalar& scalar, int64_t extent, int64_t axis, const std::string& name,
                                Span span) const;
  // A tensor runtime error raised while evaluating the expression at `span`.
  [[noreturn]] void fail_tensor(const tensor::TensorError& error, Span span) const;
  std::string location(Span span) const;     // "file:line:col"
  std::string source_text(Span span) const;  // the spelling of a span

  // ---- names (evaluator.cpp) ------------------------------------------
  const Module* module_at(int index) const;
  std::optional<ResolvedItem> find_item(const Module* module, const std::string& name) const;
  // A dotted type path (`Linear`, `layers.Decoder`) to the item it names.
  ResolvedItem resolve_path(const Module* module, const std::vector<ast::Ident>& path, Span span) const;
  // "std.nn.linear::linear".
  std::string qualified_name(const Module* module, const std::string& item) const;
  // A named item: "Model", "llama::Model", of one of `kinds`.
  ResolvedItem find_named(std::string_view name, std::initializer_list<ast::ItemKind> kinds) const;
  Value const_value(const Module* module, const ast::ConstItem& item);

  Local* find_local(Frame& frame, const std::string& name) const;
  void declare(Frame& frame, const std::string& name, Value value, bool is_var);

  // ---- types (types.cpp) ----------------------------------------------
  // A compile-time integer: a dimension expression evaluated in `frame`.
  int64_t eval_int(const ast::Expr& expr, Frame& frame, const char* what);
  // A dtype written as a type (`f32`, `T`).
  DType eval_dtype(const ast::Type& type, Frame& frame);
  std::optional<DType> scalar_type_name(const std::string& name) const;
  // A tensor type's shape with every generic bound.
  Shape eval_shape(const std::vector<ast::ShapeElement>& shape, Frame& frame);
  // A generic argument for parameter `param` of a callee, evaluated in the caller.
  GenericValue eval_generic_arg(const ast::GenericArg& arg, const ast::GenericParam& param, Frame& caller);
  // Explicit generic arguments bound in declaration order.
  GenericBindings bind_explicit_generics(const std::vector<ast::GenericParam>& params,
                                         const std::vector<ast::GenericArg>& args, Frame& caller, Span span,
                                         const std::string& callee);
  // Fills generics not yet bound with their defaults (evaluated in `frame`,
  // whose generics are the ones bound so far); fails on one still unbound.
  void apply_generic_defaults(const std::vector<ast::GenericParam>& params, Frame& frame, Span span,
                              const std::string& callee);
  // Checks a `where` clause with every generic bound.
  void check_where(const ast::WhereClause& where, Frame& frame, Span span, const std::string& callee);
  // Binds generics of `frame` that appear in `type` from the value it must
  // describe (`unbound` lists those not yet bound and is updated).
  // Returns false when the value cannot have the type.
  struct Inference {
    std::set<std::string> unbound;
    std::string failure;  // why unification failed
    // Dimensions that mentioned generics not bound yet (or could not be
    // solved for one): retried once more generics are known.
    struct Deferred {
      const ast::Expr* expr = nullptr;
      int64_t actual = 0;
    };
    std::vector<Deferred> deferred;
  };
  // Retries the deferred dimensions until no more generics can be bound.
  void resolve_deferred(Frame& frame, Inference& inference);
  bool unify(const ast::Type& type, const Value& value, Frame& frame, Inference& inference);
  // `unify` for a named type with generic arguments: through a type alias
  // (`Hidden<B, S, H>`) or from a struct value's generics (`Pair<T>`), the
  // caller's generics written as arguments are inferred.
  bool unify_named(const ast::NamedType& type, const Value& value, Frame& frame, Inference& inference);
  // Checks `value` against `type` (all generics bound) and converts a
  // contextual literal to the scalar type it meets. `what` names the value
  // in messages ("argument `x` of `linear`").
  Value coerce(const ast::Type& type, Value value, Frame& frame, Span span, const Subject& what);
  // Whether `value` fits `type`; `why` says what differs when it does not.
  enum class Mismatch { None, DType, Shape, Other };
  Mismatch fits(const ast::Type& type, const Value& value, Frame& frame, std::string& why);
  // "Tensor[2, 3; f32]" for a type with its generics substituted.
  std::string describe_type(const ast::Type& type, Frame& frame);
  // A contextual number as a rank-0 tensor of `dtype` (fails when the
  // literal cannot take that dtype).
  Tensor literal_as(const Value& value, DType dtype, Span span);
  // The same as a typed scalar held inline (scalar_elements.hpp).
  Value literal_value(const Value& value, DType dtype, Span span);
  // A contextual number's element at `dtype`; nullopt where literal_as fails.
  std::optional<scalar_elements::Element> literal_element(const Value& value, DType dtype) const;

  // ---- expressions (expressions.cpp) ------------------------------------
  Indexed eval(const ast::Expr& expr, Frame& frame);
  Value eval_value(const ast::Expr& expr, Frame& frame);
  Indexed eval_inner(const ast::Expr& expr, Frame& frame);
  Indexed eval_name(const ast::NameExpr& expr, Frame& frame);
  Value eval_member(const ast::MemberExpr& expr, Frame& frame);
  Value member_of(const Value& object, const ast::Ident& member, Span span);
  Indexed eval_if(const ast::IfExpr& expr, Frame& frame);
  Indexed eval_match(const ast::MatchExpr& expr, Frame& frame);
  // `Kind.Variant` when `expr` names an enum's variant.
  std::optional<Value> enum_variant(const ast::MemberExpr& expr, Frame& frame);
  bool scalar_condition(const Value& value, Span span, const char* what);

  // ---- operators (operators.cpp) --------------------------------------
  Indexed eval_unary(const ast::UnaryExpr& expr, Frame& frame);
  Indexed eval_binary(const ast::BinaryExpr& expr, Frame& frame);
  // The local a name operand holds when it is a typed scalar (not inside
  // index notation, where a name may be an index); else nullptr.
  const Value* local_scalar(const ast::Expr& expr, Frame& frame) const;
  // `a op b` on values with axes aligned to the union of theirs.
  Indexed binary(ast::BinaryOp op, const Indexed& a, const Indexed& b, Span span);
  Value binary_values(ast::BinaryOp op, const Value& a, const Value& b, Span span);
  Value contextual_binary(ast::BinaryOp op, const Value& a, const Value& b, Span span);
  // `a op b` on two typed scalars (or one and a contextual number) without
  // tensors (scalar_elements.hpp); nullopt where the general path must run.
  std::optional<Value> scalar_binary(ast::BinaryOp op, const Value& a, const Value& b);
  // Makes both operands typed tensors of one dtype (converting a contextual
  // literal to the other side's dtype); fails when the dtypes differ.
  std::pair<Tensor, Tensor> typed_pair(const Value& a, const Value& b, Span span, const char* what);
  Tensor as_tensor(const Value& value, Span span, const char* what);
  // The tensor of `x` with its axes arranged in `order` (a superset of its
  // axes), extent-1 axes where it has none: ready to broadcast.
  Tensor aligned(const Indexed& x, const std::vector<std::string>& order) const;
  std::vector<std::string> union_axes(const std::vector<const Indexed*>& values) const;
  // Applies `f` to the values of `args` aligned to their common axes.
  template <class F>
  Indexed elementwise(const std::vector<Indexed>& args, F&& f);

  // ---- indexing (indexing.cpp) ----------------------------------------
  Indexed eval_index(const ast::IndexExpr& expr, Frame& frame);
  Value index_value(const Value& object, const ast::IndexExpr& expr, Frame& frame);
  Indexed index_access(const Value& object, const ast::IndexExpr& expr, Frame& frame);
  bool mentions_index(const ast::Expr& expr, const IndexScope* scope) const;
  // Fixes (or checks) the extent of index variable `name` from a tensor axis.
  void fix_extent(IndexScope& scope, const std::string& name, int64_t extent, Span span,
                  const std::string& tensor_name, int axis);

  // ---- index notation (index_notation.cpp) ------------------------------
  void exec_comprehension(const ast::ComprehensionStmt& stmt, Frame& frame);
  Indexed eval_reduction(const ast::ReductionExpr& expr, Frame& frame);

  // ---- the prelude (prelude.cpp) --------------------------------------
  static bool is_prelude(const std::string& name);
  // "; did you mean `x`?" for a call of an unknown function: the nearest of
  // the prelude's functions and the names the frame can call.
  std::string function_did_you_mean(const std::string& name, const Frame& frame) const;
  Indexed call_prelude(const std::string& name, const ast::CallExpr& call, Frame& frame);

  // ---- calls (calls.cpp) ------------------------------------------------
  Indexed eval_call(const ast::CallExpr& call, Frame& frame);
  // `dead_slot`: the variable or state the calling statement overwrites
  // with this call's result (see DeadAfterCall); null otherwise.
  Value invoke(const Module* module, const ast::FunctionItem& function, BlockInstance* self,
               GenericBindings preset, CallArgs args, Span call_site, bool lifted, Value* dead_slot = nullptr);
  // Matches `args` to `params`, binds the generics of `generics` not preset
  // in `callee` (inferred from the arguments, or their defaults), fills in
  // parameter defaults and checks every argument against its type.
  std::vector<Value> bind_arguments(const std::vector<ast::Param>& params,
                                    const std::vector<ast::GenericParam>& generics, const GenericBindings& preset,
                                    CallArgs args, Frame& callee, Span call_site, const std::string& display);
  Value construct_struct(const Module* module, const ast::StructItem& item, const ast::CallExpr& call,
                         Frame& frame);
  // "llama::rms_norm", "llama::Attention.forward": made once per function
  // (and block) and kept, as every call names its callee in messages and
  // in the call stack.
  const std::string& function_display_name(const Module* module, const ast::FunctionItem& function,
                                           const BlockInstance* self);

  // ---- statements (statements.cpp) ------------------------------------
  void exec_body(const ast::Body& body, Frame& frame);
  // Runs `statements` in the frame's innermost scope, letting go of each of
  // that scope's locals after the last statement that mentions it (when
  // Options::release_dead_locals). `kept`: a type read after the list ends
  // (a function's result type), whose names stay.
  void exec_statements(const std::vector<ast::StmtPtr>& statements, Frame& frame, const ast::Type* kept = nullptr);
  // ---- letting go of dead locals (liveness.cpp) -----------------------
  // For each statement of a list, the names no later statement mentions.
  using ReleasePlan = std::vector<std::vector<std::string>>;
  const ReleasePlan& release_plan(const std::vector<ast::StmtPtr>& statements, const ast::Type* kept);
  void release_dead_locals(const std::vector<std::string>& names, Frame& frame);
  std::map<const void*, ReleasePlan> release_plans;  // by statement list, made on first run
  void exec(const ast::Stmt& stmt, Frame& frame);
  void bind_pattern(const ast::Pattern& pattern, const Value& value, Frame& frame, bool is_var);
  void exec_assign(const ast::AssignStmt& stmt, Frame& frame);
  void exec_static_for(const ast::StaticForStmt& stmt, Frame& frame);
  void exec_while(const ast::WhileStmt& stmt, Frame& frame);
  Value run_for(const ast::ForLoop& loop, Frame& frame, Span span, bool is_scan);
  // Checks that an assignment keeps the variable's type.
  void check_same_type(const Value& old_value, const Value& new_value, Span span, const std::string& target);

  // In-place updates. `state = op(state, ...)` (or the same with a `var`)
  // leaves nothing that needs the old value once the call has its
  // arguments: the statement overwrites it with the result. exec_assign
  // records the call and the slot here; when that call is an op with a
  // native kernel, the slot lets go of its reference before the kernel runs
  // and gets it back if the kernel declines or fails. A kernel that then
  // holds the only reference to a tensor's storage may write into it (a
  // cache write touches only the written rows). A value still referenced
  // anywhere else (another variable, a view) keeps its reference count above
  // one, and the kernel copies as before.
  struct DeadAfterCall {
    const ast::CallExpr* call = nullptr;
    Value* slot = nullptr;
  };
  DeadAfterCall dead_after_call;

  // Calls that are constants: a module-level function (no block, so no
  // state) whose arguments are all compile-time constants (literals,
  // `const`s, generics) computes the same value every time for the same
  // generics, so it runs once (rotary tables of `MaxSeq` rows, rebuilt by
  // every decode step otherwise). Keyed by the function, its bound generics
  // and its argument values.
  // The key of such a call, or "" when it is not one (an argument that is
  // not a constant expression, or a value that is not a scalar).
  std::string constant_call_key(const ast::CallExpr& call, const ast::FunctionItem& function,
                                const GenericBindings& preset, const CallArgs& args, Frame& frame) const;
  void remember_constant_call(const std::string& key, const Value& result);
  bool is_constant_expression(const ast::Expr& expr, Frame& frame) const;
  static constexpr size_t kConstantCallBudget = size_t{512} << 20;  // bytes of results kept

  // ---- blocks (blocks.cpp) ----------------------------------------------
  std::shared_ptr<BlockInstance> instantiate_block(const Module* module, const ast::BlockItem& item,
                                                   GenericBindings generics, const std::string& path,
                                                   ParameterSource* source, std::vector<ParameterInfo>* manifest,
                                                   bool inside_optional, Span use_site);
  // A root block's generics from the caller's bindings: defaults applied,
  // kinds checked, `where` clause checked.
  GenericBindings root_generics(const Module* module, const ast::BlockItem& item, const GenericBindings& given);

  // ---- kernels (kernels.cpp) ----------------------------------------------
  void exec_store(const ast::StoreStmt& stmt, Frame& frame);
  Indexed call_kernel_builtin(const std::string& name, const ast::CallExpr& call, Frame& frame);
  Value run_kernel(const Module* module, const ast::KernelItem& kernel, GenericBindings generics, CallArgs args,
                   Span call_site);
  // The kernel an op names, run on the op's arguments, when its `where`
  // clause holds for the generics the op binds; nothing otherwise.
  std::optional<Value> run_bound_kernel(const Module* module, const ast::FunctionItem& op, Frame& op_frame,
                                        const std::vector<Value>& arguments, Span call_site);

 private:
  std::map<const ast::ConstItem*, Value> const_cache_;
  std::map<std::string, Value> constant_calls_;  // constant_call's results
  // function_display_name's names, by (module, function, block item).
  std::map<std::tuple<const Module*, const ast::FunctionItem*, const ast::BlockItem*>, std::string> display_names_;
  size_t constant_call_bytes_ = 0;
  std::set<const ast::ConstItem*> consts_in_progress_;
};

// A block scope for locals, popped on every way out.
class ScopeGuard {
 public:
  explicit ScopeGuard(Frame& frame) : frame_(frame) { frame_.scopes.emplace_back(); }
  ~ScopeGuard() { frame_.scopes.pop_back(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  Frame& frame_;
};

// Reports a loop's iterations to Options::progress, and its end however it
// ends (loops nest: `depth` is how many enclose this one).
class LoopProgress {
 public:
  LoopProgress(Evaluator& evaluator, std::string_view label, int64_t count);
  ~LoopProgress();
  LoopProgress(const LoopProgress&) = delete;
  LoopProgress& operator=(const LoopProgress&) = delete;
  void step(int64_t index) {
    if (observer_ != nullptr) observer_->loop_step({label_, index, count_, depth_});
  }

 private:
  Evaluator& evaluator_;
  ProgressObserver* observer_;
  std::string_view label_;
  int64_t count_;
  int depth_ = 0;
};

// Guards an entry on Evaluator::calls.
class CallScope {
 public:
  CallScope(const Evaluator& evaluator, std::vector<Evaluator::CallRecord>& calls, std::string name, Span site,
            int max_depth);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  std::vector<Evaluator::CallRecord>& calls_;
};

template <class F>
Indexed Evaluator::elementwise(const std::vector<Indexed>& args, F&& f) {
  std::vector<const Indexed*> pointers;
  for (const Indexed& arg : args) pointers.push_back(&arg);
  std::vector<std::string> order = union_axes(pointers);
  // A value with axes is arranged over the common axes; a typed scalar or a
  // contextual number broadcasts over all of them as it is.
  std::vector<Value> values;
  for (const Indexed& arg : args) {
    values.push_back(arg.has_axes() ? Value::from_tensor(aligned(arg, order)) : arg.value);
  }
  Indexed result;
  result.value = f(values);
  result.axes = std::move(order);
  return result;
}

}  // namespace linnet::eval
