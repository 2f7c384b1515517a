// Exact rational numbers for the coefficients of dimension polynomials.
//
// A normal form such as `H / 32` (when `H % 32 == 0` is known) carries the
// coefficient 1/32, so coefficients are rationals, not integers. Every
// operation is exact: a result that does not fit in 64 bits throws
// DimArithmeticError instead of wrapping, so the solver can answer "unknown"
// rather than prove something from a wrapped value.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace linnet::check {

// Dimension arithmetic left the 64-bit range, or divided by zero where an
// exact value was required.
class DimArithmeticError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Rational {
 public:
  Rational() = default;
  // Implicit on purpose: integer literals are the common coefficients.
  Rational(std::int64_t value);  // NOLINT(google-explicit-constructor)
  Rational(std::int64_t numerator, std::int64_t denominator);

  std::int64_t num() const { return num_; }
  std::int64_t den() const { return den_; }
  bool is_integer() const { return den_ == 1; }
  bool is_zero() const { return num_ == 0; }
  int sign() const { return (num_ > 0) - (num_ < 0); }

  Rational abs() const;
  Rational inverse() const;      // throws DimArithmeticError for zero
  std::int64_t floor() const;    // largest integer <= value
  std::int64_t trunc() const;    // rounds toward zero
  std::string to_string() const;  // "3", "-1/2"
  std::size_t hash() const;

  Rational operator-() const;
  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  friend Rational operator/(const Rational& a, const Rational& b);
  friend bool operator==(const Rational& a, const Rational& b) = default;
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

  // The largest positive rational g with a/g and b/g both integers (for
  // integers, the ordinary gcd). gcd(0, 0) is 0.
  static Rational gcd(const Rational& a, const Rational& b);

 private:
  // Reduces num/den and checks that both fit in 64 bits (excluding INT64_MIN,
  // so negation and abs never overflow).
  static Rational reduce(__int128 numerator, __int128 denominator);

  std::int64_t num_ = 0;
  std::int64_t den_ = 1;  // always > 0, gcd(|num_|, den_) == 1
};

}  // namespace linnet::check
