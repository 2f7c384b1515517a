#include "linnet/check/dim_expr.hpp"

#include "linnet/check/dim_text.hpp"

#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace linnet::check {

struct DimExpr::Node {
  Kind kind = Kind::Constant;
  std::int64_t value = 0;
  std::string name;
  std::vector<DimExpr> children;  // empty for constants and symbols
  std::size_t hash = 0;
};

namespace {

std::size_t mix(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

bool is_binary(DimExpr::Kind kind) {
  switch (kind) {
    case DimExpr::Kind::Add:
    case DimExpr::Kind::Sub:
    case DimExpr::Kind::Mul:
    case DimExpr::Kind::Div:
    case DimExpr::Kind::Mod:
    case DimExpr::Kind::Min:
    case DimExpr::Kind::Max:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string_view kind_spelling(DimExpr::Kind kind) {
  switch (kind) {
    case DimExpr::Kind::Add: return "+";
    case DimExpr::Kind::Sub: return "-";
    case DimExpr::Kind::Mul: return "*";
    case DimExpr::Kind::Div: return "/";
    case DimExpr::Kind::Mod: return "%";
    case DimExpr::Kind::Min: return "min";
    case DimExpr::Kind::Max: return "max";
    case DimExpr::Kind::Negate: return "-";
    case DimExpr::Kind::Constant: return "constant";
    case DimExpr::Kind::Symbol: return "symbol";
  }
  return "?";
}

DimExpr::DimExpr() : DimExpr(std::int64_t{0}) {}

DimExpr::DimExpr(std::int64_t value) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::Constant;
  node->value = value;
  node->hash = mix(std::hash<std::int64_t>{}(value), 1);
  node_ = std::move(node);
}

DimExpr DimExpr::constant(std::int64_t value) { return DimExpr(value); }

DimExpr DimExpr::symbol(std::string name) {
  if (name.empty()) throw std::invalid_argument("a dimension symbol needs a name");
  auto node = std::make_shared<Node>();
  node->kind = Kind::Symbol;
  node->hash = mix(std::hash<std::string>{}(name), 2);
  node->name = std::move(name);
  return DimExpr(std::shared_ptr<const Node>(std::move(node)));
}

DimExpr DimExpr::negate(DimExpr operand) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::Negate;
  node->hash = mix(operand.hash(), 3);
  node->children.push_back(std::move(operand));
  return DimExpr(std::shared_ptr<const Node>(std::move(node)));
}

DimExpr DimExpr::binary(Kind kind, DimExpr lhs, DimExpr rhs) {
  if (!is_binary(kind)) throw std::invalid_argument("DimExpr::binary needs a binary operator kind");
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->hash = mix(mix(std::size_t(kind) * 31 + 7, lhs.hash()), rhs.hash());
  node->children.push_back(std::move(lhs));
  node->children.push_back(std::move(rhs));
  return DimExpr(std::shared_ptr<const Node>(std::move(node)));
}

DimExpr::Kind DimExpr::kind() const { return node_->kind; }

std::int64_t DimExpr::value() const {
  if (node_->kind != Kind::Constant) throw std::logic_error("DimExpr::value on a non-constant");
  return node_->value;
}

const std::string& DimExpr::name() const {
  if (node_->kind != Kind::Symbol) throw std::logic_error("DimExpr::name on a non-symbol");
  return node_->name;
}

const DimExpr& DimExpr::operand() const {
  if (node_->kind != Kind::Negate) throw std::logic_error("DimExpr::operand on a non-negation");
  return node_->children[0];
}

const DimExpr& DimExpr::lhs() const {
  if (!is_binary(node_->kind)) throw std::logic_error("DimExpr::lhs on a non-binary expression");
  return node_->children[0];
}

const DimExpr& DimExpr::rhs() const {
  if (!is_binary(node_->kind)) throw std::logic_error("DimExpr::rhs on a non-binary expression");
  return node_->children[1];
}

std::size_t DimExpr::hash() const { return node_->hash; }

bool operator==(const DimExpr& a, const DimExpr& b) {
  if (a.node_ == b.node_) return true;
  if (a.node_->hash != b.node_->hash || a.node_->kind != b.node_->kind) return false;
  switch (a.node_->kind) {
    case DimExpr::Kind::Constant: return a.node_->value == b.node_->value;
    case DimExpr::Kind::Symbol: return a.node_->name == b.node_->name;
    default: return a.node_->children == b.node_->children;
  }
}

// ---------------------------------------------------------------------------
// Printing

namespace {

// Binding strength: sums 1, products 2, unary minus 3, leaves and calls 4.
int precedence(const DimExpr& e) {
  switch (e.kind()) {
    case DimExpr::Kind::Add:
    case DimExpr::Kind::Sub: return 1;
    case DimExpr::Kind::Mul:
    case DimExpr::Kind::Div:
    case DimExpr::Kind::Mod: return 2;
    case DimExpr::Kind::Negate: return 3;
    case DimExpr::Kind::Constant: return e.value() < 0 ? 3 : 4;
    default: return 4;
  }
}

void print(const DimExpr& e, std::string& out);

void print_operand(const DimExpr& e, bool parenthesize, std::string& out) {
  if (parenthesize) out += '(';
  print(e, out);
  if (parenthesize) out += ')';
}

void print(const DimExpr& e, std::string& out) {
  using K = DimExpr::Kind;
  switch (e.kind()) {
    case K::Constant: out += std::to_string(e.value()); return;
    case K::Symbol: out += e.name(); return;
    case K::Negate:
      out += '-';
      print_operand(e.operand(), precedence(e.operand()) <= 3, out);
      return;
    case K::Min:
    case K::Max:
      out += kind_spelling(e.kind());
      out += '(';
      print(e.lhs(), out);
      out += ", ";
      print(e.rhs(), out);
      out += ')';
      return;
    default: break;
  }
  const int own = precedence(e);
  const int left = precedence(e.lhs());
  const int right = precedence(e.rhs());
  // Integer + and * are associative, so `a + (b - c)` and `a * (b * c)`
  // print without parentheses; every other same-level right operand keeps them.
  // A right-hand product regroups only if no division sits on its left
  // spine: a * (b / c * d) is not a * b / c * d.
  auto spine_has_division = [](const DimExpr& x) {
    const DimExpr* cur = &x;
    while (cur->kind() == K::Mul) cur = &cur->lhs();
    return cur->kind() == K::Div || cur->kind() == K::Mod;
  };
  const bool right_regroups =
      (e.kind() == K::Add && (e.rhs().kind() == K::Add || e.rhs().kind() == K::Sub)) ||
      (e.kind() == K::Mul && e.rhs().kind() == K::Mul && !spine_has_division(e.rhs()));
  // `(H / Heads) % 2` keeps its parentheses for the reader, though
  // left-to-right reading would not need them.
  const bool mixed_division =
      (e.kind() == K::Mod && (e.lhs().kind() == K::Div || e.lhs().kind() == K::Mod)) ||
      (e.kind() == K::Div && e.lhs().kind() == K::Mod);
  print_operand(e.lhs(), left < own || mixed_division, out);
  out += ' ';
  out += kind_spelling(e.kind());
  out += ' ';
  print_operand(e.rhs(), right < own || (right == own && !right_regroups), out);
}

void collect(const DimExpr& e, std::set<std::string>& out) {
  switch (e.kind()) {
    case DimExpr::Kind::Constant: return;
    case DimExpr::Kind::Symbol: out.insert(e.name()); return;
    case DimExpr::Kind::Negate: collect(e.operand(), out); return;
    default:
      collect(e.lhs(), out);
      collect(e.rhs(), out);
  }
}

}  // namespace

std::string DimExpr::to_string() const {
  std::string out;
  print(*this, out);
  return out;
}

std::ostream& operator<<(std::ostream& out, const DimExpr& e) { return out << e.to_string(); }

std::set<std::string> DimExpr::symbols() const {
  std::set<std::string> out;
  collect(*this, out);
  return out;
}

DimExpr DimExpr::substitute(const std::map<std::string, DimExpr, std::less<>>& replacement) const {
  switch (kind()) {
    case Kind::Constant: return *this;
    case Kind::Symbol: {
      auto it = replacement.find(name());
      return it == replacement.end() ? *this : it->second;
    }
    case Kind::Negate: {
      DimExpr inner = operand().substitute(replacement);
      return inner == operand() ? *this : negate(std::move(inner));
    }
    default: {
      DimExpr a = lhs().substitute(replacement);
      DimExpr b = rhs().substitute(replacement);
      if (a == lhs() && b == rhs()) return *this;
      return binary(kind(), std::move(a), std::move(b));
    }
  }
}

// ---------------------------------------------------------------------------
// Evaluation with 64-bit checks

EvalResult DimExpr::evaluate(const Bindings& bindings) const {
  switch (kind()) {
    case Kind::Constant: return EvalResult::success(value());
    case Kind::Symbol: {
      auto it = bindings.find(name());
      if (it == bindings.end()) {
        return EvalResult::failure(EvalStatus::Unbound, cat({code(name()), " has no value"}));
      }
      return EvalResult::success(it->second);
    }
    case Kind::Negate: {
      EvalResult inner = operand().evaluate(bindings);
      if (!inner.ok()) return inner;
      if (inner.value == std::numeric_limits<std::int64_t>::min()) {
        return EvalResult::failure(EvalStatus::Overflow, cat({code(to_string()), " overflows 64 bits"}));
      }
      return EvalResult::success(-inner.value);
    }
    default: break;
  }
  EvalResult a = lhs().evaluate(bindings);
  if (!a.ok()) return a;
  EvalResult b = rhs().evaluate(bindings);
  if (!b.ok()) return b;
  std::int64_t result = 0;
  bool overflowed = false;
  switch (kind()) {
    case Kind::Add: overflowed = __builtin_add_overflow(a.value, b.value, &result); break;
    case Kind::Sub: overflowed = __builtin_sub_overflow(a.value, b.value, &result); break;
    case Kind::Mul: overflowed = __builtin_mul_overflow(a.value, b.value, &result); break;
    case Kind::Div:
    case Kind::Mod:
      if (b.value == 0) {
        return EvalResult::failure(EvalStatus::DivisionByZero,
                                   cat({code(to_string()), " divides by zero (", code(rhs().to_string()),
                                            " is 0)"}));
      }
      if (a.value == std::numeric_limits<std::int64_t>::min() && b.value == -1) {
        overflowed = kind() == Kind::Div;
        result = 0;
      } else {
        // C++ `/` and `%` truncate toward zero, as Linnet's do.
        result = kind() == Kind::Div ? a.value / b.value : a.value % b.value;
      }
      break;
    case Kind::Min: result = std::min(a.value, b.value); break;
    case Kind::Max: result = std::max(a.value, b.value); break;
    default: break;
  }
  if (overflowed) {
    return EvalResult::failure(EvalStatus::Overflow, cat({code(to_string()), " overflows 64 bits"}));
  }
  return EvalResult::success(result);
}

DimExpr operator-(const DimExpr& operand) { return DimExpr::negate(operand); }
DimExpr operator+(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Add, a, b); }
DimExpr operator-(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Sub, a, b); }
DimExpr operator*(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Mul, a, b); }
DimExpr operator/(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Div, a, b); }
DimExpr operator%(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Mod, a, b); }

}  // namespace linnet::check
