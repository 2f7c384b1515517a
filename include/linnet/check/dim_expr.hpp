// Dimension expressions as written in Linnet source: `H / Heads`,
// `P + Batch`, `min(stop, D)`. A DimExpr is an immutable tree that keeps the
// user's form (for messages); `normalize()` in dim_normalize.hpp turns it
// into the canonical DimPoly the solver compares.
//
// Semantics (spec ch. 4 and 5.4): values are 64-bit integers; `/` and `%`
// truncate toward zero; dividing by zero is an error. Dimensions are
// non-negative, so truncation and flooring agree on every whole dimension;
// they differ only on a negative intermediate such as `(A - B) / 2`, where
// we follow the spec and truncate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

namespace linnet::check {

// Concrete values for generic symbols, as given by `--bind H=4096`.
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

enum class EvalStatus {
  Ok,
  Unbound,         // a symbol has no binding
  DivisionByZero,  // `x / 0` or `x % 0`
  Overflow,        // a result outside the 64-bit range
  NotInteger,      // a normal form evaluated to a fraction (its facts do not hold)
};

struct EvalResult {
  EvalStatus status = EvalStatus::Ok;
  std::int64_t value = 0;
  std::string detail;  // for failures: what failed, in words

  bool ok() const { return status == EvalStatus::Ok; }
  static EvalResult success(std::int64_t value) { return {EvalStatus::Ok, value, {}}; }
  static EvalResult failure(EvalStatus status, std::string detail) {
    return {status, 0, std::move(detail)};
  }
};

class DimExpr {
 public:
  enum class Kind { Constant, Symbol, Negate, Add, Sub, Mul, Div, Mod, Min, Max };

  DimExpr();                         // the constant 0
  DimExpr(std::int64_t value);       // NOLINT(google-explicit-constructor): a constant
  static DimExpr constant(std::int64_t value);
  static DimExpr symbol(std::string name);
  static DimExpr negate(DimExpr operand);
  // Kind must be one of Add, Sub, Mul, Div, Mod, Min, Max.
  static DimExpr binary(Kind kind, DimExpr lhs, DimExpr rhs);
  static DimExpr min(DimExpr a, DimExpr b) { return binary(Kind::Min, std::move(a), std::move(b)); }
  static DimExpr max(DimExpr a, DimExpr b) { return binary(Kind::Max, std::move(a), std::move(b)); }

  Kind kind() const;
  bool is_constant() const { return kind() == Kind::Constant; }
  bool is_symbol() const { return kind() == Kind::Symbol; }
  std::int64_t value() const;        // Constant only (else std::logic_error)
  const std::string& name() const;   // Symbol only
  const DimExpr& operand() const;    // Negate only
  const DimExpr& lhs() const;        // binary kinds only
  const DimExpr& rhs() const;

  // Structural identity of the trees as written (`H + 1` != `1 + H`);
  // use the solver for equality of values.
  friend bool operator==(const DimExpr& a, const DimExpr& b);
  std::size_t hash() const;

  // Linnet syntax with the fewest parentheses that keep the tree:
  // `B * S * (H / Heads)`, `min(P + Batch, MaxSeq) - P`.
  std::string to_string() const;
  std::set<std::string> symbols() const;
  DimExpr substitute(const std::map<std::string, DimExpr, std::less<>>& replacement) const;
  EvalResult evaluate(const Bindings& bindings) const;

 private:
  struct Node;
  explicit DimExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

DimExpr operator-(const DimExpr& operand);
DimExpr operator+(const DimExpr& a, const DimExpr& b);
DimExpr operator-(const DimExpr& a, const DimExpr& b);
DimExpr operator*(const DimExpr& a, const DimExpr& b);
DimExpr operator/(const DimExpr& a, const DimExpr& b);
DimExpr operator%(const DimExpr& a, const DimExpr& b);
std::ostream& operator<<(std::ostream& out, const DimExpr& e);

// The operator's spelling for binary kinds ("+", "min", ...).
std::string_view kind_spelling(DimExpr::Kind kind);

}  // namespace linnet::check

template <>
struct std::hash<linnet::check::DimExpr> {
  std::size_t operator()(const linnet::check::DimExpr& e) const { return e.hash(); }
};
