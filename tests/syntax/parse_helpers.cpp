// g++ 12 reports a false -Wrestrict inside libstdc++ when it inlines
// `"literal" + std::string` at -O2 (GCC PR 105329); the S-expression printers
// below are made of such concatenations, so the warning is silenced here, on
// that compiler only. It must come before any standard header.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "parse_helpers.hpp"

namespace linnet::syntax::testing {

using namespace ast;

std::vector<std::string> Parsed::codes() const {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics.all()) out.push_back(d.code);
  return out;
}

std::string Parsed::first_code() const { return diagnostics.all().empty() ? "" : diagnostics.all().front().code; }

std::string Parsed::first_position() const {
  if (diagnostics.all().empty()) return "";
  const Span span = diagnostics.all().front().span;
  const LineColumn at = sources.file(span.file).line_column(span.begin);
  return std::to_string(at.line) + ":" + std::to_string(at.column);
}

std::string Parsed::slice(Span span) const {
  return sources.file(span.file).text().substr(span.begin, span.end - span.begin);
}

std::unique_ptr<Parsed> parse(const std::string& text) {
  auto parsed = std::make_unique<Parsed>();
  parsed->file = parsed->sources.add("test.linnet", text);
  parsed->tree = parse_file(parsed->sources, parsed->file, parsed->diagnostics);
  return parsed;
}

std::unique_ptr<Parsed> parse_body(const std::string& body) { return parse("module m\nfn f() {\n" + body + "\n}\n"); }

const Expr& first_let_value(const Parsed& parsed) {
  static const ErrorExpr error(Span{});
  static const Expr& missing = error;
  if (parsed.tree->items.empty()) return missing;
  const auto* function = parsed.tree->items.front()->as<FunctionItem>();
  if (!function || function->body.statements.empty()) return missing;
  const Stmt& stmt = *function->body.statements.front();
  if (const auto* let = stmt.as<LetStmt>()) return let->value ? *let->value : missing;
  if (const auto* ret = stmt.as<ReturnStmt>()) return ret->value ? *ret->value : missing;
  return missing;
}

namespace {

std::string list(const std::vector<ExprPtr>& items) {
  std::string out;
  for (const ExprPtr& item : items) out += " " + sexpr(*item);
  return out;
}

std::string index_component(const IndexComponent& c) {
  switch (c.kind) {
    case IndexComponentKind::Value: return sexpr(*c.value);
    case IndexComponentKind::Ellipsis: return "...";
    case IndexComponentKind::Pack: return "*" + c.pack.text;
    case IndexComponentKind::Slice:
      return "(: " + (c.start ? sexpr(*c.start) : "_") + " " + (c.stop ? sexpr(*c.stop) : "_") + " " +
             (c.step ? sexpr(*c.step) : "_") + ")";
  }
  return "?";
}

}  // namespace

std::string sexpr(const GenericArg& arg) {
  if (arg.type) return "type:" + sexpr(*arg.type);
  if (arg.expr) return sexpr(*arg.expr);
  return "?";
}

std::string sexpr(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::Integer: return expr.cast<IntegerLiteral>().text;
    case ExprKind::Float: return expr.cast<FloatLiteral>().text;
    case ExprKind::String: return "\"" + expr.cast<StringLiteral>().value + "\"";
    case ExprKind::Bool: return expr.cast<BoolLiteral>().value ? "true" : "false";
    case ExprKind::Name: return expr.cast<NameExpr>().name.text;
    case ExprKind::Member: {
      const auto& m = expr.cast<MemberExpr>();
      return "(. " + sexpr(*m.object) + " " + m.member.text + ")";
    }
    case ExprKind::Call: {
      const auto& c = expr.cast<CallExpr>();
      std::string out = "(call " + sexpr(*c.callee);
      if (c.has_generic_args) {
        out += " <";
        for (size_t i = 0; i < c.generic_args.size(); ++i) out += (i ? " " : "") + sexpr(c.generic_args[i]);
        out += ">";
      }
      for (const Argument& a : c.arguments) out += " " + (a.name.empty() ? "" : a.name.text + "=") + sexpr(*a.value);
      return out + ")";
    }
    case ExprKind::Index: {
      const auto& x = expr.cast<IndexExpr>();
      std::string out = "(index " + sexpr(*x.object);
      for (const IndexComponent& c : x.components) out += " " + index_component(c);
      return out + ")";
    }
    case ExprKind::Unary: {
      const auto& u = expr.cast<UnaryExpr>();
      return std::string("(") + unary_op_spelling(u.op) + " " + sexpr(*u.operand) + ")";
    }
    case ExprKind::Binary: {
      const auto& b = expr.cast<BinaryExpr>();
      return std::string("(") + binary_op_spelling(b.op) + " " + sexpr(*b.lhs) + " " + sexpr(*b.rhs) + ")";
    }
    case ExprKind::Tuple: return "(tuple" + list(expr.cast<TupleExpr>().elements) + ")";
    case ExprKind::Shape: return "(shape" + list(expr.cast<ShapeExpr>().elements) + ")";
    case ExprKind::Reduction: {
      const auto& r = expr.cast<ReductionExpr>();
      std::string out = std::string("(") + reduction_spelling(r.reduction);
      if (r.accumulator) out += "<" + sexpr(*r.accumulator) + ">";
      out += " [";
      for (size_t i = 0; i < r.indices.size(); ++i) out += (i ? " " : "") + r.indices[i].text;
      return out + "] " + sexpr(*r.body) + ")";
    }
    case ExprKind::Some: return "(some " + sexpr(*expr.cast<SomeExpr>().value) + ")";
    case ExprKind::None: return "none";
    case ExprKind::If: {
      const auto& i = expr.cast<IfExpr>();
      return "(if " + sexpr(*i.condition) + " " + sexpr(*i.then_value) + " " + sexpr(*i.else_value) + ")";
    }
    case ExprKind::Match: {
      const auto& m = expr.cast<MatchExpr>();
      std::string out = "(match " + sexpr(*m.scrutinee);
      for (const MatchArm& arm : m.arms) out += " (" + sexpr(*arm.pattern) + " => " + sexpr(*arm.value) + ")";
      return out + ")";
    }
    case ExprKind::For: {
      const auto& f = expr.cast<ForExpr>();
      return "(for " + f.loop.variable.text + " " + sexpr(*f.loop.start) + " " + sexpr(*f.loop.stop) + " " +
             std::to_string(f.loop.body.statements.size()) + " statements)";
    }
    case ExprKind::Error: return "<error>";
  }
  return "?";
}

std::string sexpr(const Type& type) {
  switch (type.kind) {
    case TypeKind::Named: {
      const auto& n = type.cast<NamedType>();
      std::string out = join_path(n.path);
      if (n.has_generic_args) {
        out += "<";
        for (size_t i = 0; i < n.generic_args.size(); ++i) out += (i ? " " : "") + sexpr(n.generic_args[i]);
        out += ">";
      }
      return out;
    }
    case TypeKind::Tensor: {
      const auto& t = type.cast<TensorType>();
      std::string out = "Tensor[";
      for (size_t i = 0; i < t.shape.size(); ++i) {
        out += i ? " " : "";
        out += t.shape[i].is_pack ? "*" + t.shape[i].pack.text : sexpr(*t.shape[i].dim);
      }
      return out + "; " + sexpr(*t.dtype) + "]";
    }
    case TypeKind::Tuple: {
      std::string out = "(tuple";
      for (const TypePtr& e : type.cast<TupleType>().elements) out += " " + sexpr(*e);
      return out + ")";
    }
    case TypeKind::Array: {
      const auto& a = type.cast<ArrayType>();
      return "[" + sexpr(*a.element) + "; " + sexpr(*a.length) + "]";
    }
    case TypeKind::Optional: return sexpr(*type.cast<OptionalType>().inner) + "?";
    case TypeKind::Error: return "<error>";
  }
  return "?";
}

std::string sexpr(const Pattern& pattern) {
  switch (pattern.kind) {
    case PatternKind::Binding: return pattern.cast<BindingPattern>().name.text;
    case PatternKind::Tuple: {
      std::string out = "(tuple";
      for (const PatternPtr& e : pattern.cast<TuplePattern>().elements) out += " " + sexpr(*e);
      return out + ")";
    }
    case PatternKind::Some: return "(some " + sexpr(*pattern.cast<SomePattern>().inner) + ")";
    case PatternKind::None: return "none";
    case PatternKind::Error: return "<error>";
  }
  return "?";
}

std::string expr_of(const std::string& expression) {
  const auto parsed = parse_body("let v = " + expression);
  if (!parsed->diagnostics.all().empty()) {
    std::string out = "ERR:";
    for (const std::string& code : parsed->codes()) out += code + " ";
    return out;
  }
  return sexpr(first_let_value(*parsed));
}

std::string type_of(const std::string& type) {
  const auto parsed = parse("module m\nfn f(x: " + type + ") {}\n");
  if (!parsed->diagnostics.all().empty()) {
    std::string out = "ERR:";
    for (const std::string& code : parsed->codes()) out += code + " ";
    return out;
  }
  const auto& function = parsed->tree->items.front()->cast<FunctionItem>();
  return sexpr(*function.params.front().type);
}

}  // namespace linnet::syntax::testing
