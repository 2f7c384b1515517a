#include "linnet/check/dim_parse.hpp"

#include <cctype>
#include <limits>
#include <optional>

#include "linnet/check/dim_text.hpp"

namespace linnet::check {

namespace {

// Recursive descent over the precedence levels of spec 5.4:
// comparison < additive < multiplicative < unary < primary.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  DimExpr expression_only() {
    DimExpr e = additive();
    expect_end();
    return e;
  }

  Relation relation_only() {
    Relation r = relation();
    expect_end();
    return r;
  }

  Facts facts() {
    Facts out;
    skip_space();
    if (pos_ == text_.size()) return out;
    out.add(relation());
    while (accept(",")) {
      skip_space();
      if (pos_ == text_.size()) break;  // a trailing comma, as where clauses allow
      out.add(relation());
    }
    expect_end();
    return out;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw DimParseError(cat({what, " at offset ", std::to_string(pos_), " in ", code(text_)}), pos_);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  void expect(std::string_view token) {
    if (!accept(token)) fail(cat({"expected ", code(token)}));
  }

  void expect_end() {
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text");
  }

  Relation relation() {
    DimExpr lhs = additive();
    static const std::pair<std::string_view, RelOp> kOps[] = {
        {"==", RelOp::Eq}, {"!=", RelOp::Ne}, {"<=", RelOp::Le},
        {">=", RelOp::Ge}, {"<", RelOp::Lt},  {">", RelOp::Gt},
    };
    for (const auto& [token, op] : kOps) {
      if (accept(token)) return {lhs, op, additive()};
    }
    fail("expected a comparison (==, !=, <, <=, >, >=)");
  }

  DimExpr additive() {
    DimExpr e = multiplicative();
    while (true) {
      skip_space();
      // `-` starts a subtraction, but `->` or `-=` would not be dimension syntax anyway.
      if (accept("+")) {
        e = e + multiplicative();
      } else if (pos_ < text_.size() && text_[pos_] == '-') {
        ++pos_;
        e = e - multiplicative();
      } else {
        return e;
      }
    }
  }

  DimExpr multiplicative() {
    DimExpr e = unary();
    while (true) {
      if (accept("*")) {
        e = e * unary();
      } else if (accept("/")) {
        e = e / unary();
      } else if (accept("%")) {
        e = e % unary();
      } else {
        return e;
      }
    }
  }

  DimExpr unary() {
    if (accept("-")) {
      // A literal after unary minus is a negative constant, as `-1` reads.
      skip_space();
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        return DimExpr::constant(-number());
      }
      return -unary();
    }
    if (accept("+")) return unary();
    return primary();
  }

  std::int64_t number() {
    std::int64_t value = 0;
    std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      if (text_[pos_] != '_') {
        int digit = text_[pos_] - '0';
        if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
          pos_ = start;
          fail("integer literal too large");
        }
        value = value * 10 + digit;
      }
      ++pos_;
    }
    return value;
  }

  DimExpr primary() {
    skip_space();
    if (pos_ == text_.size()) fail("expected a dimension expression");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) return DimExpr::constant(number());
    if (c == '(') {
      ++pos_;
      DimExpr e = additive();
      expect(")");
      return e;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name(text_.substr(start, pos_ - start));
      if (name == "min" || name == "max") {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == '(') {
          ++pos_;
          DimExpr a = additive();
          expect(",");
          DimExpr b = additive();
          expect(")");
          return name == "min" ? DimExpr::min(a, b) : DimExpr::max(a, b);
        }
      }
      return DimExpr::symbol(std::move(name));
    }
    fail("expected a dimension expression");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

DimExpr parse_dim(std::string_view text) { return Parser(text).expression_only(); }
Relation parse_relation(std::string_view text) { return Parser(text).relation_only(); }
Facts parse_facts(std::string_view text) { return Parser(text).facts(); }

}  // namespace linnet::check
