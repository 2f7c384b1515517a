// `linnet inspect --ast`: one node per line, indented by depth, each with its
// span as line:column-line:column.
#include <sstream>

#include "linnet/syntax/parser.hpp"

namespace linnet::syntax {

namespace {

using namespace ast;

class Dumper {
 public:
  Dumper(const SourceManager& sources) : sources_(sources) {}

  std::string run(const File& file) {
    line(0, "File module " + (file.module_path.empty() ? std::string("<missing>") : join_path(file.module_path)),
         file.module_span);
    for (const UseDecl& use : file.uses) {
      std::string text = "Use " + join_path(use.path);
      if (use.imports_module) text += " (module)";
      for (const ImportName& name : use.names) {
        text += " " + name.name.text;
        if (!name.alias.empty()) text += " as " + name.alias.text;
      }
      line(1, text, use.span);
    }
    for (const ItemPtr& item : file.items) dump(*item, 1);
    return out_.str();
  }

 private:
  std::string where(Span span) const {
    if (!span.valid() || span.file >= sources_.size()) return "";
    const SourceFile& file = sources_.file(span.file);
    const LineColumn a = file.line_column(span.begin);
    const LineColumn b = file.line_column(span.end);
    return " @" + std::to_string(a.line) + ":" + std::to_string(a.column) + "-" + std::to_string(b.line) + ":" +
           std::to_string(b.column);
  }

  void line(int depth, const std::string& text, Span span) {
    out_ << std::string(static_cast<size_t>(depth) * 2, ' ') << text << where(span) << '\n';
  }

  void dump_generics(const std::vector<GenericParam>& generics, int depth) {
    for (const GenericParam& g : generics) {
      line(depth, std::string("Generic ") + (g.is_pack ? "*" : "") + g.name.text + ": " + generic_kind_spelling(g.constraint),
           g.span);
      if (g.default_value) dump(*g.default_value, depth + 1, "default ");
    }
  }

  void dump_params(const std::vector<Param>& params, int depth) {
    for (const Param& p : params) {
      line(depth, "Param " + p.name.text, p.span);
      if (p.type) dump(*p.type, depth + 1);
      if (p.default_value) dump(*p.default_value, depth + 1, "default ");
    }
  }

  void dump_where(const WhereClause& where_clause, int depth) {
    if (where_clause.constraints.empty()) return;
    line(depth, "Where", where_clause.span);
    for (const ExprPtr& c : where_clause.constraints) dump(*c, depth + 1);
  }

  void dump(const GenericArg& arg, int depth, const std::string& prefix = "") {
    if (arg.type) dump(*arg.type, depth, prefix);
    if (arg.expr) dump(*arg.expr, depth, prefix);
  }

  void dump(const Body& body, int depth, const std::string& title = "Body") {
    line(depth, title, body.span);
    for (const StmtPtr& s : body.statements) dump(*s, depth + 1);
  }

  void dump(const Item& item, int depth) {
    const std::string pub = item.is_pub ? "pub " : "";
    switch (item.kind) {
      case ItemKind::Const: {
        const auto& c = item.cast<ConstItem>();
        line(depth, pub + "Const " + c.name.text, c.span);
        if (c.type) dump(*c.type, depth + 1);
        if (c.value) dump(*c.value, depth + 1);
        break;
      }
      case ItemKind::TypeAlias: {
        const auto& t = item.cast<TypeAliasItem>();
        line(depth, pub + "TypeAlias " + t.name.text, t.span);
        dump_generics(t.generics, depth + 1);
        if (t.type) dump(*t.type, depth + 1);
        break;
      }
      case ItemKind::Struct: {
        const auto& s = item.cast<StructItem>();
        line(depth, pub + "Struct " + s.name.text, s.span);
        dump_generics(s.generics, depth + 1);
        for (const Field& f : s.fields) {
          line(depth + 1, "Field " + f.name.text, f.span);
          if (f.type) dump(*f.type, depth + 2);
        }
        break;
      }
      case ItemKind::Enum: {
        const auto& e = item.cast<EnumItem>();
        std::string text = pub + "Enum " + e.name.text;
        for (const Ident& v : e.variants) text += " " + v.text;
        line(depth, text, e.span);
        dump_generics(e.generics, depth + 1);
        break;
      }
      case ItemKind::Function: {
        const auto& f = item.cast<FunctionItem>();
        line(depth, pub + "Function " + function_kind_spelling(f.function) + " " + f.name.text, f.span);
        dump_generics(f.generics, depth + 1);
        dump_params(f.params, depth + 1);
        if (f.result) dump(*f.result, depth + 1, "result ");
        if (f.kernel) {
          line(depth + 1, "KernelBinding " + f.kernel->kernel.text, f.kernel->span);
          for (const GenericArg& a : f.kernel->generic_args) dump(a, depth + 2);
        }
        dump_where(f.where, depth + 1);
        dump(f.body, depth + 1);
        if (f.grad) dump(f.grad->body, depth + 1, "Grad " + f.grad->result.text + ", " + f.grad->gradient.text);
        break;
      }
      case ItemKind::Kernel: {
        const auto& k = item.cast<KernelItem>();
        line(depth, pub + "Kernel " + k.name.text, k.span);
        dump_generics(k.generics, depth + 1);
        dump_params(k.params, depth + 1);
        for (const KernelResult& r : k.results) {
          line(depth + 1, "Result " + r.name.text, r.span);
          if (r.type) dump(*r.type, depth + 2);
        }
        line(depth + 1, "Grid", k.grid_span);
        for (const ExprPtr& g : k.grid) dump(*g, depth + 2);
        for (const LaunchHint& h : k.hints) {
          line(depth + 1, "Hint " + h.name.text, h.span);
          if (h.value) dump(*h.value, depth + 2);
        }
        dump_where(k.where, depth + 1);
        dump(k.body, depth + 1);
        break;
      }
      case ItemKind::Block: {
        const auto& b = item.cast<BlockItem>();
        line(depth, pub + "Block " + b.name.text, b.span);
        dump_generics(b.generics, depth + 1);
        dump_where(b.where, depth + 1);
        for (const ItemPtr& m : b.members) dump(*m, depth + 1);
        break;
      }
      case ItemKind::Member: {
        const auto& m = item.cast<MemberItem>();
        line(depth, std::string("Member ") + member_kind_spelling(m.member) + " " + m.name.text, m.span);
        if (m.type) dump(*m.type, depth + 1);
        if (m.default_value) dump(*m.default_value, depth + 1, "default ");
        break;
      }
      case ItemKind::Error: line(depth, "ErrorItem", item.span); break;
    }
  }

  void dump(const Type& type, int depth, const std::string& prefix = "") {
    switch (type.kind) {
      case TypeKind::Named: {
        const auto& n = type.cast<NamedType>();
        line(depth, prefix + "Type " + join_path(n.path), n.span);
        for (const GenericArg& a : n.generic_args) dump(a, depth + 1);
        break;
      }
      case TypeKind::Tensor: {
        const auto& t = type.cast<TensorType>();
        line(depth, prefix + "Type Tensor", t.span);
        for (const ShapeElement& e : t.shape) {
          if (e.is_pack) {
            line(depth + 1, "Pack *" + e.pack.text, e.span);
          } else if (e.dim) {
            dump(*e.dim, depth + 1);
          }
        }
        if (t.dtype) dump(*t.dtype, depth + 1, "dtype ");
        break;
      }
      case TypeKind::Tuple: {
        const auto& t = type.cast<TupleType>();
        line(depth, prefix + "Type Tuple", t.span);
        for (const TypePtr& e : t.elements) dump(*e, depth + 1);
        break;
      }
      case TypeKind::Array: {
        const auto& a = type.cast<ArrayType>();
        line(depth, prefix + "Type Array", a.span);
        if (a.element) dump(*a.element, depth + 1);
        if (a.length) dump(*a.length, depth + 1, "length ");
        break;
      }
      case TypeKind::Optional: {
        const auto& o = type.cast<OptionalType>();
        line(depth, prefix + "Type Optional", o.span);
        if (o.inner) dump(*o.inner, depth + 1);
        break;
      }
      case TypeKind::Error: line(depth, prefix + "ErrorType", type.span); break;
    }
  }

  void dump(const Pattern& pattern, int depth) {
    switch (pattern.kind) {
      case PatternKind::Binding: line(depth, "Pattern " + pattern.cast<BindingPattern>().name.text, pattern.span); break;
      case PatternKind::Tuple:
        line(depth, "Pattern Tuple", pattern.span);
        for (const PatternPtr& e : pattern.cast<TuplePattern>().elements) dump(*e, depth + 1);
        break;
      case PatternKind::Some:
        line(depth, "Pattern Some", pattern.span);
        if (pattern.cast<SomePattern>().inner) dump(*pattern.cast<SomePattern>().inner, depth + 1);
        break;
      case PatternKind::None: line(depth, "Pattern None", pattern.span); break;
      case PatternKind::Error: line(depth, "ErrorPattern", pattern.span); break;
    }
  }

  void dump(const ForLoop& loop, int depth) {
    if (loop.start) dump(*loop.start, depth, "start ");
    if (loop.stop) dump(*loop.stop, depth, "stop ");
    dump(loop.body, depth);
  }

  void dump(const Stmt& stmt, int depth) {
    switch (stmt.kind) {
      case StmtKind::Let: {
        const auto& s = stmt.cast<LetStmt>();
        line(depth, "Let", s.span);
        if (s.pattern) dump(*s.pattern, depth + 1);
        if (s.type) dump(*s.type, depth + 1);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::Comprehension: {
        const auto& s = stmt.cast<ComprehensionStmt>();
        std::string text = "Comprehension " + s.name.text + "[";
        for (size_t i = 0; i < s.outputs.size(); ++i) {
          text += (i ? ", " : "") + std::string(s.outputs[i].is_pack ? "*" : "") + s.outputs[i].name.text;
        }
        line(depth, text + "]", s.span);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::Var: {
        const auto& s = stmt.cast<VarStmt>();
        line(depth, "Var " + s.name.text, s.span);
        if (s.type) dump(*s.type, depth + 1);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::Assign: {
        const auto& s = stmt.cast<AssignStmt>();
        line(depth, "Assign " + s.target.text, s.span);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::Return: {
        const auto& s = stmt.cast<ReturnStmt>();
        line(depth, "Return", s.span);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::StaticFor: {
        const auto& s = stmt.cast<StaticForStmt>();
        line(depth, s.is_range() ? "StaticFor range" : "StaticFor", s.span);
        if (s.pattern) dump(*s.pattern, depth + 1);
        if (s.iterable) dump(*s.iterable, depth + 1, s.is_range() ? "start " : "");
        if (s.range_stop) dump(*s.range_stop, depth + 1, "stop ");
        dump(s.body, depth + 1);
        break;
      }
      case StmtKind::While: {
        const auto& s = stmt.cast<WhileStmt>();
        line(depth, "While", s.span);
        if (s.condition) dump(*s.condition, depth + 1);
        dump(s.body, depth + 1);
        break;
      }
      case StmtKind::For: {
        const auto& s = stmt.cast<ForStmt>();
        line(depth, "For " + s.loop.variable.text, s.span);
        dump(s.loop, depth + 1);
        break;
      }
      case StmtKind::Yield: {
        const auto& s = stmt.cast<YieldStmt>();
        line(depth, "Yield", s.span);
        if (s.value) dump(*s.value, depth + 1);
        break;
      }
      case StmtKind::Store: {
        const auto& s = stmt.cast<StoreStmt>();
        line(depth, std::string("Store ") + store_kind_spelling(s.store), s.span);
        if (s.target) dump(*s.target, depth + 1);
        if (s.value) dump(*s.value, depth + 1);
        if (s.mask) dump(*s.mask, depth + 1, "mask ");
        break;
      }
      case StmtKind::Error: line(depth, "ErrorStmt", stmt.span); break;
    }
  }

  void dump(const Expr& expr, int depth, const std::string& prefix = "") {
    const std::string p = prefix + (expr.parenthesized ? "(parenthesized) " : "");
    switch (expr.kind) {
      case ExprKind::Integer: line(depth, p + "Integer " + expr.cast<IntegerLiteral>().text, expr.span); break;
      case ExprKind::Float: line(depth, p + "Float " + expr.cast<FloatLiteral>().text, expr.span); break;
      case ExprKind::String: line(depth, p + "String", expr.span); break;
      case ExprKind::Bool: line(depth, p + (expr.cast<BoolLiteral>().value ? "Bool true" : "Bool false"), expr.span); break;
      case ExprKind::Name: line(depth, p + "Name " + expr.cast<NameExpr>().name.text, expr.span); break;
      case ExprKind::Member: {
        const auto& m = expr.cast<MemberExpr>();
        line(depth, p + "Member ." + m.member.text, m.span);
        if (m.object) dump(*m.object, depth + 1);
        break;
      }
      case ExprKind::Call: {
        const auto& c = expr.cast<CallExpr>();
        line(depth, p + "Call", c.span);
        if (c.callee) dump(*c.callee, depth + 1, "callee ");
        for (const GenericArg& a : c.generic_args) dump(a, depth + 1, "generic ");
        for (const Argument& a : c.arguments) {
          if (a.value) dump(*a.value, depth + 1, a.name.empty() ? "" : a.name.text + " = ");
        }
        break;
      }
      case ExprKind::Index: {
        const auto& x = expr.cast<IndexExpr>();
        line(depth, p + "Index", x.span);
        if (x.object) dump(*x.object, depth + 1);
        for (const IndexComponent& c : x.components) {
          switch (c.kind) {
            case IndexComponentKind::Value:
              if (c.value) dump(*c.value, depth + 1);
              break;
            case IndexComponentKind::Ellipsis: line(depth + 1, "Ellipsis", c.span); break;
            case IndexComponentKind::Pack: line(depth + 1, "Pack *" + c.pack.text, c.span); break;
            case IndexComponentKind::Slice:
              line(depth + 1, "Slice", c.span);
              if (c.start) dump(*c.start, depth + 2, "start ");
              if (c.stop) dump(*c.stop, depth + 2, "stop ");
              if (c.step) dump(*c.step, depth + 2, "step ");
              break;
          }
        }
        break;
      }
      case ExprKind::Unary: {
        const auto& u = expr.cast<UnaryExpr>();
        line(depth, p + "Unary " + unary_op_spelling(u.op), u.span);
        if (u.operand) dump(*u.operand, depth + 1);
        break;
      }
      case ExprKind::Binary: {
        const auto& b = expr.cast<BinaryExpr>();
        line(depth, p + "Binary " + binary_op_spelling(b.op), b.span);
        if (b.lhs) dump(*b.lhs, depth + 1);
        if (b.rhs) dump(*b.rhs, depth + 1);
        break;
      }
      case ExprKind::Tuple:
        line(depth, p + "Tuple", expr.span);
        for (const ExprPtr& e : expr.cast<TupleExpr>().elements) dump(*e, depth + 1);
        break;
      case ExprKind::Shape:
        line(depth, p + "Shape", expr.span);
        for (const ExprPtr& e : expr.cast<ShapeExpr>().elements) dump(*e, depth + 1);
        break;
      case ExprKind::Reduction: {
        const auto& r = expr.cast<ReductionExpr>();
        std::string text = p + "Reduction " + reduction_spelling(r.reduction) + "[";
        for (size_t i = 0; i < r.indices.size(); ++i) text += (i ? ", " : "") + r.indices[i].text;
        line(depth, text + "]", r.span);
        if (r.accumulator) dump(*r.accumulator, depth + 1, "accumulator ");
        if (r.body) dump(*r.body, depth + 1);
        break;
      }
      case ExprKind::Some:
        line(depth, p + "Some", expr.span);
        if (expr.cast<SomeExpr>().value) dump(*expr.cast<SomeExpr>().value, depth + 1);
        break;
      case ExprKind::None: line(depth, p + "None", expr.span); break;
      case ExprKind::If: {
        const auto& i = expr.cast<IfExpr>();
        line(depth, p + "If", i.span);
        if (i.condition) dump(*i.condition, depth + 1, "condition ");
        if (i.then_value) dump(*i.then_value, depth + 1, "then ");
        if (i.else_value) dump(*i.else_value, depth + 1, "else ");
        break;
      }
      case ExprKind::Match: {
        const auto& m = expr.cast<MatchExpr>();
        line(depth, p + "Match", m.span);
        if (m.scrutinee) dump(*m.scrutinee, depth + 1, "scrutinee ");
        for (const MatchArm& arm : m.arms) {
          line(depth + 1, "Arm", arm.span);
          if (arm.pattern) dump(*arm.pattern, depth + 2);
          if (arm.value) dump(*arm.value, depth + 2);
        }
        break;
      }
      case ExprKind::For: {
        const auto& f = expr.cast<ForExpr>();
        line(depth, p + "ForValue " + f.loop.variable.text, f.span);
        dump(f.loop, depth + 1);
        break;
      }
      case ExprKind::Error: line(depth, p + "ErrorExpr", expr.span); break;
    }
  }

  const SourceManager& sources_;
  std::ostringstream out_;
};

}  // namespace

std::string dump_ast(const File& file, const SourceManager& sources) { return Dumper(sources).run(file); }

}  // namespace linnet::syntax
