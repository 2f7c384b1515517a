// Letting go of locals after their last use. A function's `let` values (and
// its parameters, and the locals of a loop body or a block) would otherwise
// stay alive until the body ends: in a card's layer that keeps every
// intermediate activation of the layer at once (about 1 GiB at 512 tokens
// in GPT-OSS's dense expert block). After each statement of a list, the
// locals of the innermost scope that no later statement of the list
// mentions are erased; a tensor whose last reference that was is freed.
//
// "Mentions" is read from the syntax tree: every name a statement writes
// where the evaluator could look a local up (a name expression, an
// assignment target, a name bound by a pattern, a loop variable, a
// dimension or a shape pack of a type, an index or a pack in index
// notation), in its nested bodies and expressions too. That
// over-approximates the locals a statement can read, never under: Linnet has
// no closures, and a callee cannot see its caller's locals, so a local is
// only ever read through its name written in the body that declared it.
// What is no name (a comment, a string, a member or a named argument's
// label) mentions nothing.
#include <set>
#include <string>

#include "evaluator.hpp"

namespace linnet::eval {

namespace {

// Ordered, so that locals are let go in the same order on every run.
using Names = std::set<std::string>;

// Collects the names written in a part of the tree into `names`. Recursion
// is as deep as the tree, which the parser bounds.
class NameCollector {
 public:
  explicit NameCollector(Names& names) : names_(names) {}

  void ident(const ast::Ident& name) {
    if (!name.empty()) names_.insert(name.text);
  }

  void statements(const std::vector<ast::StmtPtr>& list) {
    for (const ast::StmtPtr& statement : list) {
      if (statement) this->statement(*statement);
    }
  }

  void statement(const ast::Stmt& stmt) {
    switch (stmt.kind) {
      case ast::StmtKind::Let: {
        const auto& let = stmt.cast<ast::LetStmt>();
        pattern(let.pattern.get());
        type(let.type.get());
        expr(let.value.get());
        return;
      }
      case ast::StmtKind::Comprehension: {
        const auto& comprehension = stmt.cast<ast::ComprehensionStmt>();
        ident(comprehension.name);
        for (const ast::IndexOutput& output : comprehension.outputs) ident(output.name);
        expr(comprehension.value.get());
        return;
      }
      case ast::StmtKind::Var: {
        const auto& var = stmt.cast<ast::VarStmt>();
        ident(var.name);
        type(var.type.get());
        expr(var.value.get());
        return;
      }
      case ast::StmtKind::Assign: {
        const auto& assign = stmt.cast<ast::AssignStmt>();
        ident(assign.target);  // it must still exist to be assigned
        expr(assign.value.get());
        return;
      }
      case ast::StmtKind::Return: expr(stmt.cast<ast::ReturnStmt>().value.get()); return;
      case ast::StmtKind::StaticFor: {
        const auto& loop = stmt.cast<ast::StaticForStmt>();
        pattern(loop.pattern.get());
        expr(loop.iterable.get());
        expr(loop.range_stop.get());
        statements(loop.body.statements);
        return;
      }
      case ast::StmtKind::While: {
        const auto& loop = stmt.cast<ast::WhileStmt>();
        expr(loop.condition.get());
        statements(loop.body.statements);
        return;
      }
      case ast::StmtKind::For: for_loop(stmt.cast<ast::ForStmt>().loop); return;
      case ast::StmtKind::Yield: expr(stmt.cast<ast::YieldStmt>().value.get()); return;
      case ast::StmtKind::Store: {
        const auto& store = stmt.cast<ast::StoreStmt>();
        expr(store.target.get());
        expr(store.value.get());
        expr(store.mask.get());
        return;
      }
      case ast::StmtKind::Error: return;
    }
  }

  void for_loop(const ast::ForLoop& loop) {
    ident(loop.variable);
    expr(loop.start.get());
    expr(loop.stop.get());
    statements(loop.body.statements);
  }

  void expr(const ast::Expr* node) {
    if (node == nullptr) return;
    switch (node->kind) {
      case ast::ExprKind::Integer:
      case ast::ExprKind::Float:
      case ast::ExprKind::String:
      case ast::ExprKind::Bool:
      case ast::ExprKind::None:
      case ast::ExprKind::Error: return;
      case ast::ExprKind::Name: ident(node->cast<ast::NameExpr>().name); return;
      // The member's own name is looked up in the object, never among locals.
      case ast::ExprKind::Member: expr(node->cast<ast::MemberExpr>().object.get()); return;
      case ast::ExprKind::Call: {
        const auto& call = node->cast<ast::CallExpr>();
        expr(call.callee.get());
        generic_args(call.generic_args);
        // A named argument's label names a parameter or a field of the callee.
        for (const ast::Argument& argument : call.arguments) expr(argument.value.get());
        return;
      }
      case ast::ExprKind::Index: {
        const auto& index = node->cast<ast::IndexExpr>();
        expr(index.object.get());
        for (const ast::IndexComponent& component : index.components) {
          expr(component.value.get());
          ident(component.pack);
          expr(component.start.get());
          expr(component.stop.get());
          expr(component.step.get());
        }
        return;
      }
      case ast::ExprKind::Unary: expr(node->cast<ast::UnaryExpr>().operand.get()); return;
      case ast::ExprKind::Binary: {
        const auto& binary = node->cast<ast::BinaryExpr>();
        expr(binary.lhs.get());
        expr(binary.rhs.get());
        return;
      }
      case ast::ExprKind::Tuple:
        for (const ast::ExprPtr& element : node->cast<ast::TupleExpr>().elements) expr(element.get());
        return;
      case ast::ExprKind::Shape:
        for (const ast::ExprPtr& element : node->cast<ast::ShapeExpr>().elements) expr(element.get());
        return;
      case ast::ExprKind::Reduction: {
        const auto& reduction = node->cast<ast::ReductionExpr>();
        type(reduction.accumulator.get());
        for (const ast::Ident& index : reduction.indices) ident(index);
        expr(reduction.body.get());
        return;
      }
      case ast::ExprKind::Some: expr(node->cast<ast::SomeExpr>().value.get()); return;
      case ast::ExprKind::If: {
        const auto& branch = node->cast<ast::IfExpr>();
        expr(branch.condition.get());
        expr(branch.then_value.get());
        expr(branch.else_value.get());
        return;
      }
      case ast::ExprKind::Match: {
        const auto& match = node->cast<ast::MatchExpr>();
        expr(match.scrutinee.get());
        for (const ast::MatchArm& arm : match.arms) {
          pattern(arm.pattern.get());
          expr(arm.value.get());
        }
        return;
      }
      case ast::ExprKind::For: for_loop(node->cast<ast::ForExpr>().loop); return;
    }
  }

  void pattern(const ast::Pattern* node) {
    if (node == nullptr) return;
    switch (node->kind) {
      case ast::PatternKind::Binding: ident(node->cast<ast::BindingPattern>().name); return;
      case ast::PatternKind::Tuple:
        for (const ast::PatternPtr& element : node->cast<ast::TuplePattern>().elements) pattern(element.get());
        return;
      case ast::PatternKind::Some: pattern(node->cast<ast::SomePattern>().inner.get()); return;
      case ast::PatternKind::None:
      case ast::PatternKind::Error: return;
    }
  }

  // A type's dimensions are expressions, which may name locals; its names
  // (`T`, `Linear`) are counted too, which costs nothing.
  void type(const ast::Type* node) {
    if (node == nullptr) return;
    switch (node->kind) {
      case ast::TypeKind::Named: {
        const auto& named = node->cast<ast::NamedType>();
        for (const ast::Ident& segment : named.path) ident(segment);
        generic_args(named.generic_args);
        return;
      }
      case ast::TypeKind::Tensor: {
        const auto& tensor = node->cast<ast::TensorType>();
        for (const ast::ShapeElement& element : tensor.shape) {
          expr(element.dim.get());
          ident(element.pack);
        }
        type(tensor.dtype.get());
        return;
      }
      case ast::TypeKind::Tuple:
        for (const ast::TypePtr& element : node->cast<ast::TupleType>().elements) type(element.get());
        return;
      case ast::TypeKind::Array: {
        const auto& array = node->cast<ast::ArrayType>();
        type(array.element.get());
        expr(array.length.get());
        return;
      }
      case ast::TypeKind::Optional: type(node->cast<ast::OptionalType>().inner.get()); return;
      case ast::TypeKind::Error: return;
    }
  }

  void generic_args(const std::vector<ast::GenericArg>& args) {
    for (const ast::GenericArg& arg : args) {
      type(arg.type.get());
      expr(arg.expr.get());
    }
  }

 private:
  Names& names_;
};

}  // namespace

const Evaluator::ReleasePlan& Evaluator::release_plan(const std::vector<ast::StmtPtr>& statements,
                                                      const ast::Type* kept) {
  auto found = release_plans.find(&statements);
  if (found != release_plans.end()) return found->second;
  ReleasePlan plan(statements.size());
  // Walking backwards, a name seen for the first time is last mentioned by
  // this statement. Names of `kept` (read after the list ends, such as a
  // function's result type) are never let go.
  Names seen;
  NameCollector(seen).type(kept);
  for (size_t i = statements.size(); i-- > 0;) {
    Names mentioned;
    if (statements[i]) NameCollector(mentioned).statement(*statements[i]);
    for (const std::string& name : mentioned) {
      if (seen.insert(name).second) plan[i].push_back(name);
    }
  }
  return release_plans.emplace(&statements, std::move(plan)).first->second;
}

void Evaluator::release_dead_locals(const std::vector<std::string>& names, Frame& frame) {
  if (frame.scopes.empty()) return;
  auto& scope = frame.scopes.back();
  for (const std::string& name : names) scope.erase(name);
}

}  // namespace linnet::eval
