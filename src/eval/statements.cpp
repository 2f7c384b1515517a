// Statements and control flow: bindings, assignment to `var` locals and to
// `state` members, `return`, `static for` (unrolled over a sub-block array
// or an integer range), `while`, and `for` loops and scans.
#include <cstdint>
#include <functional>

#include "evaluator.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::eval {

void Evaluator::exec_body(const ast::Body& body, Frame& frame) {
  ScopeGuard scope(frame);
  exec_statements(body.statements, frame);
}

void Evaluator::exec_statements(const std::vector<ast::StmtPtr>& statements, Frame& frame, const ast::Type* kept) {
  const ReleasePlan* plan = options.release_dead_locals ? &release_plan(statements, kept) : nullptr;
  for (size_t i = 0; i < statements.size(); ++i) {
    exec(*statements[i], frame);
    if (frame.returned) return;
    if (plan != nullptr && !(*plan)[i].empty()) release_dead_locals((*plan)[i], frame);
  }
}

void Evaluator::exec(const ast::Stmt& stmt, Frame& frame) {
  switch (stmt.kind) {
    case ast::StmtKind::Let: {
      const auto& let = stmt.cast<ast::LetStmt>();
      Value value = eval_value(*let.value, frame);
      if (let.type) {
        value = coerce(*let.type, std::move(value), frame, let.value->span, Subject{{"this `let` binding"}});
      }
      bind_pattern(*let.pattern, value, frame, false);
      return;
    }
    case ast::StmtKind::Comprehension: exec_comprehension(stmt.cast<ast::ComprehensionStmt>(), frame); return;
    case ast::StmtKind::Var: {
      const auto& var = stmt.cast<ast::VarStmt>();
      Value value = eval_value(*var.value, frame);
      if (var.type) {
        value = coerce(*var.type, std::move(value), frame, var.value->span, Subject{{"`var ", var.name.text, "`"}});
      } else if (value.kind() == Value::Kind::Int) {
        // An unannotated variable fixes its type now: a literal's default.
        value = Value::scalar(DType::I64, tensor::Scalar(value.int_value()));
      } else if (value.kind() == Value::Kind::Float) {
        value = Value::scalar(DType::F64, tensor::Scalar(value.float_value()));
      }
      declare(frame, var.name.text, std::move(value), true);
      return;
    }
    case ast::StmtKind::Assign: exec_assign(stmt.cast<ast::AssignStmt>(), frame); return;
    case ast::StmtKind::Return: {
      const auto& ret = stmt.cast<ast::ReturnStmt>();
      frame.result = ret.value ? eval_value(*ret.value, frame) : Value::unit();
      frame.return_site = ret.value ? ret.value->span : stmt.span;
      frame.returned = true;
      return;
    }
    case ast::StmtKind::StaticFor: exec_static_for(stmt.cast<ast::StaticForStmt>(), frame); return;
    case ast::StmtKind::While: exec_while(stmt.cast<ast::WhileStmt>(), frame); return;
    case ast::StmtKind::For: run_for(stmt.cast<ast::ForStmt>().loop, frame, stmt.span, false); return;
    case ast::StmtKind::Yield: {
      if (frame.yields == nullptr) {
        fail(codes::misplaced_yield, "`yield` belongs at the end of a `for` scan's body", stmt.span);
      }
      frame.yields->push_back(eval_value(*stmt.cast<ast::YieldStmt>().value, frame));
      return;
    }
    case ast::StmtKind::Store: exec_store(stmt.cast<ast::StoreStmt>(), frame); return;
    case ast::StmtKind::Error: break;
  }
  fail(codes::not_implemented, "this statement did not parse and cannot run", stmt.span);
}

void Evaluator::bind_pattern(const ast::Pattern& pattern, const Value& value, Frame& frame, bool is_var) {
  switch (pattern.kind) {
    case ast::PatternKind::Binding:
      declare(frame, pattern.cast<ast::BindingPattern>().name.text, value, is_var);
      return;
    case ast::PatternKind::Tuple: {
      const auto& elements = pattern.cast<ast::TuplePattern>().elements;
      if (value.kind() != Value::Kind::Tuple || value.elements().size() != elements.size()) {
        fail(codes::invalid_pattern,
             "a pattern of " + syntax::count_of(elements.size(), "element", "elements") + " cannot take " + value.describe(),
             pattern.span);
      }
      for (size_t i = 0; i < elements.size(); ++i) bind_pattern(*elements[i], value.elements()[i], frame, is_var);
      return;
    }
    case ast::PatternKind::Some:
      if (value.kind() != Value::Kind::Optional || !value.has_value()) {
        fail(codes::invalid_pattern, "pattern `some(...)` does not match " + value.describe(), pattern.span);
      }
      bind_pattern(*pattern.cast<ast::SomePattern>().inner, value.inner(), frame, is_var);
      return;
    case ast::PatternKind::None:
      if (value.kind() != Value::Kind::Optional || value.has_value()) {
        fail(codes::invalid_pattern, "pattern `none` does not match " + value.describe(), pattern.span);
      }
      return;
    case ast::PatternKind::Error: break;
  }
  fail(codes::invalid_pattern, "this pattern did not parse", pattern.span);
}

void Evaluator::check_same_type(const Value& old_value, const Value& new_value, Span span,
                                const std::string& target) {
  bool same = old_value.kind() == new_value.kind();
  if (same && old_value.is_tensor()) {
    same = old_value.tensor_dtype() == new_value.tensor_dtype() &&
           (old_value.is_scalar_tensor() || new_value.is_scalar_tensor()
                ? old_value.tensor_rank() == new_value.tensor_rank()
                : old_value.tensor().shape() == new_value.tensor().shape());
  }
  if (!same) {
    fail(codes::assign_changes_type, "assignment would change the type of `" + target + "`", span,
         {"`" + target + "` is " + old_value.describe(), "the new value is " + new_value.describe()});
  }
}

void Evaluator::exec_assign(const ast::AssignStmt& stmt, Frame& frame) {
  const std::string& target = stmt.target.text;
  Local* local = find_local(frame, target);
  BlockInstance::Member* member = nullptr;
  if (local == nullptr && frame.self != nullptr) {
    auto found = frame.self->members.find(target);
    if (found != frame.self->members.end()) member = &found->second;
  }
  if (local != nullptr && !local->is_var) {
    fail(codes::assign_immutable, "`" + target + "` is not a `var`; only `var` locals and `state` members change",
         stmt.target.span);
  }
  if (member != nullptr && member->item->member != ast::MemberKind::State) {
    fail(codes::assign_immutable,
         "`" + target + "` is a " + ast::member_kind_spelling(member->item->member) +
             "; only `state` members and `var` locals are assigned",
         stmt.target.span);
  }
  if (local == nullptr && member == nullptr) {
    fail(codes::unknown_symbol, "cannot find `" + target + "` to assign", stmt.target.span);
  }
  Value* slot = local != nullptr ? &local->value : &member->value;

  // The type the new value must keep, taken now: the slot may lend its
  // tensor to the call that computes the new value (DeadAfterCall).
  const Value::Kind old_kind = slot->kind();
  const bool old_tensor = slot->is_tensor();
  const bool old_scalar = slot->is_scalar_tensor();
  const DType old_dtype = old_tensor ? slot->tensor_dtype() : DType::F32;
  const Shape old_shape = old_tensor && !old_scalar ? slot->tensor().shape() : Shape{};

  // `x = f(..., x, ...)`: the old value is dead once f has its arguments.
  const DeadAfterCall outer = dead_after_call;
  const auto* call = stmt.value->as<ast::CallExpr>();
  const bool lends = call != nullptr && old_tensor && !old_scalar;
  dead_after_call = lends ? DeadAfterCall{call, slot} : DeadAfterCall{};
  // Only a lent slot can change before a message needs its description.
  const std::string lent_description = lends ? slot->describe() : std::string();
  Value value;
  try {
    value = eval_value(*stmt.value, frame);
  } catch (...) {
    dead_after_call = outer;
    throw;
  }
  dead_after_call = outer;

  if (value.is_contextual() && old_scalar) value = literal_value(value, old_dtype, stmt.value->span);
  bool same = value.kind() == old_kind;
  if (same && old_tensor) {
    same = value.tensor_dtype() == old_dtype &&
           (old_scalar || value.is_scalar_tensor() ? old_scalar == value.is_scalar_tensor()
                                                   : value.tensor().shape() == old_shape);
  }
  if (!same) {
    fail(codes::assign_changes_type, "assignment would change the type of `" + target + "`", stmt.value->span,
         {"`" + target + "` is " + (lends ? lent_description : slot->describe()),
          "the new value is " + value.describe()});
  }
  if (local != nullptr) {
    *slot = std::move(value);
    return;
  }
  // A state keeps its own storage: a view of another tensor (a slice of
  // an input, a broadcast) is copied so later writes see plain values.
  *slot = Value::from_tensor(value.tensor().contiguous());
}

namespace {

// Iterations of `start..stop`, without overflow for any bounds.
int64_t loop_count(int64_t start, int64_t stop) {
  if (stop <= start) return 0;
  const uint64_t count = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
  return count > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(count);
}

}  // namespace

void Evaluator::exec_static_for(const ast::StaticForStmt& stmt, Frame& frame) {
  if (stmt.is_range()) {
    const int64_t start = eval_int(*stmt.iterable, frame, "a `static for` bound");
    const int64_t stop = eval_int(*stmt.range_stop, frame, "a `static for` bound");
    const auto* variable = stmt.pattern->as<ast::BindingPattern>();
    LoopProgress progress(*this, variable ? std::string_view(variable->name.text) : std::string_view("static for"),
                          loop_count(start, stop));
    for (int64_t i = start; i < stop && !frame.returned; ++i) {
      progress.step(i - start);
      ScopeGuard scope(frame);
      // The loop variable is an i64 value, not a compile-time integer.
      bind_pattern(*stmt.pattern, Value::scalar(DType::I64, tensor::Scalar(i)), frame, false);
      exec_statements(stmt.body.statements, frame);
    }
    return;
  }
  const Value iterable = eval_value(*stmt.iterable, frame);
  if (iterable.kind() != Value::Kind::BlockArray) {
    fail(codes::invalid_static_for, "`static for` iterates a sub-block array or a range `a..b`, found " +
                                        iterable.describe(), stmt.iterable->span);
  }
  // Named after the array (`layers`), which says more than its element's name.
  std::string_view label = "static for";
  if (const auto* name = stmt.iterable->as<ast::NameExpr>()) label = name->name.text;
  if (const auto* member = stmt.iterable->as<ast::MemberExpr>()) label = member->member.text;
  LoopProgress progress(*this, label, static_cast<int64_t>(iterable.blocks().size()));
  int64_t index = 0;
  for (const auto& block : iterable.blocks()) {
    if (frame.returned) break;
    progress.step(index++);
    ScopeGuard scope(frame);
    bind_pattern(*stmt.pattern, Value::block(block), frame, false);
    exec_statements(stmt.body.statements, frame);
  }
}

void Evaluator::exec_while(const ast::WhileStmt& stmt, Frame& frame) {
  int64_t iterations = 0;
  LoopProgress progress(*this, "while", -1);
  while (!frame.returned &&
         scalar_condition(eval_value(*stmt.condition, frame), stmt.condition->span, "the condition of `while`")) {
    progress.step(iterations);
    if (++iterations > options.max_loop_iterations) {
      fail(codes::resource_limit,
           "this `while` loop ran " + syntax::count_of(static_cast<std::size_t>(options.max_loop_iterations), "iteration", "iterations") + " without stopping",
           stmt.condition->span);
    }
    ScopeGuard scope(frame);
    exec_statements(stmt.body.statements, frame);
  }
}

Value Evaluator::run_for(const ast::ForLoop& loop, Frame& frame, Span span, bool is_scan) {
  const int64_t start = eval_int(*loop.start, frame, "a `for` bound");
  const int64_t stop = eval_int(*loop.stop, frame, "a `for` bound");
  if (stop < start) {
    fail(codes::invalid_static_for,
         "`for` runs from " + std::to_string(start) + " to " + std::to_string(stop) + ", which is backwards", span);
  }
  std::vector<Value> yields;
  std::vector<Value>* saved = frame.yields;
  frame.yields = is_scan ? &yields : nullptr;
  try {
    LoopProgress progress(*this, loop.variable.text, loop_count(start, stop));
    for (int64_t i = start; i < stop && !frame.returned; ++i) {
      progress.step(i - start);
      ScopeGuard scope(frame);
      declare(frame, loop.variable.text, Value::scalar(DType::I64, tensor::Scalar(i)), false);
      const size_t before = yields.size();
      exec_statements(loop.body.statements, frame);
      if (is_scan && yields.size() != before + 1) {
        fail(codes::misplaced_yield, "each iteration of a `for` scan yields exactly one value", span,
             {"this iteration yielded " + std::to_string(yields.size() - before)});
      }
    }
  } catch (...) {
    frame.yields = saved;
    throw;
  }
  frame.yields = saved;
  if (!is_scan) return Value::unit();
  if (yields.empty()) {
    fail(codes::not_implemented, "a `for` scan of no iterations has no element to take its type from", span);
  }

  // Stacks iteration values along a new leading axis (tuples element-wise).
  std::function<Value(const std::vector<Value>&)> stack = [&](const std::vector<Value>& values) -> Value {
    const Value& first = values.front();
    if (first.kind() == Value::Kind::Tuple) {
      std::vector<Value> stacked;
      for (size_t e = 0; e < first.elements().size(); ++e) {
        std::vector<Value> column;
        for (const Value& value : values) column.push_back(value.elements()[e]);
        stacked.push_back(stack(column));
      }
      return Value::tuple(std::move(stacked));
    }
    std::vector<Tensor> parts;
    for (const Value& value : values) {
      check_same_type(first, value, span, "the scanned value");
      parts.push_back(as_tensor(value, span, "a `for` scan").expand_dims(0));
    }
    return Value::from_tensor(tensor::concat(parts, 0));
  };
  return stack(yields);
}

}  // namespace linnet::eval
