#include "linnet/check/dim_rational.hpp"

#include "linnet/check/dim_text.hpp"

#include <cstdint>
#include <limits>

namespace linnet::check {

namespace {

using Wide = __int128;
using UWide = unsigned __int128;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

UWide wide_abs(Wide v) { return v < 0 ? UWide(0) - UWide(v) : UWide(v); }

std::uint64_t narrow_gcd(std::uint64_t a, std::uint64_t b) {
  while (b != 0) {
    std::uint64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

UWide wide_gcd(UWide a, UWide b) {
  // 128-bit division is slow; most values fit in 64 bits.
  while (b != 0) {
    if ((a >> 64) == 0 && (b >> 64) == 0) return narrow_gcd(std::uint64_t(a), std::uint64_t(b));
    UWide r = a % b;
    a = b;
    b = r;
  }
  return a;
}

[[noreturn]] void overflow() {
  throw DimArithmeticError("dimension arithmetic does not fit in 64 bits");
}

}  // namespace

Rational::Rational(std::int64_t value) : num_(value) {
  if (value == std::numeric_limits<std::int64_t>::min()) overflow();
}

Rational::Rational(std::int64_t numerator, std::int64_t denominator) {
  *this = reduce(numerator, denominator);
}

Rational Rational::reduce(Wide numerator, Wide denominator) {
  if (denominator == 0) throw DimArithmeticError("division by zero in exact dimension arithmetic");
  if (denominator < 0) {
    numerator = -numerator;
    denominator = -denominator;
  }
  UWide g = wide_gcd(wide_abs(numerator), UWide(denominator));
  if (g > 1) {
    numerator /= Wide(g);
    denominator /= Wide(g);
  }
  if (numerator > kMax || numerator < -Wide(kMax) || denominator > kMax) overflow();
  Rational r;
  r.num_ = std::int64_t(numerator);
  r.den_ = std::int64_t(denominator);
  return r;
}

Rational Rational::abs() const {
  Rational r = *this;
  if (r.num_ < 0) r.num_ = -r.num_;
  return r;
}

Rational Rational::inverse() const {
  if (num_ == 0) throw DimArithmeticError("division by zero in exact dimension arithmetic");
  return reduce(den_, num_);
}

std::int64_t Rational::floor() const {
  std::int64_t q = num_ / den_;
  if ((num_ % den_ != 0) && (num_ < 0)) --q;
  return q;
}

std::int64_t Rational::trunc() const { return num_ / den_; }

std::string Rational::to_string() const {
  if (den_ == 1) return std::to_string(num_);
  return cat({std::to_string(num_), "/", std::to_string(den_)});
}

std::size_t Rational::hash() const {
  std::size_t h = std::hash<std::int64_t>{}(num_);
  return h * 1000003u ^ std::hash<std::int64_t>{}(den_);
}

Rational Rational::operator-() const {
  Rational r = *this;
  r.num_ = -r.num_;
  return r;
}

Rational operator+(const Rational& a, const Rational& b) {
  if (a.den_ == 1 && b.den_ == 1) {
    std::int64_t sum = 0;
    if (!__builtin_add_overflow(a.num_, b.num_, &sum)) return Rational(sum);
    overflow();
  }
  return Rational::reduce(Wide(a.num_) * b.den_ + Wide(b.num_) * a.den_, Wide(a.den_) * b.den_);
}

Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }

Rational operator*(const Rational& a, const Rational& b) {
  if (a.den_ == 1 && b.den_ == 1) {
    std::int64_t product = 0;
    if (!__builtin_mul_overflow(a.num_, b.num_, &product)) return Rational(product);
    overflow();
  }
  return Rational::reduce(Wide(a.num_) * b.num_, Wide(a.den_) * b.den_);
}

Rational operator/(const Rational& a, const Rational& b) { return a * b.inverse(); }

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
  Wide lhs = Wide(a.num_) * b.den_;
  Wide rhs = Wide(b.num_) * a.den_;
  if (lhs < rhs) return std::strong_ordering::less;
  if (lhs > rhs) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

Rational Rational::gcd(const Rational& a, const Rational& b) {
  if (a.is_zero()) return b.abs();
  if (b.is_zero()) return a.abs();
  // gcd(p1/q1, p2/q2) = gcd(p1, p2) / lcm(q1, q2) for reduced fractions.
  UWide top = wide_gcd(wide_abs(a.num_), wide_abs(b.num_));
  UWide dg = wide_gcd(UWide(a.den_), UWide(b.den_));
  UWide lcm = UWide(a.den_) / dg * UWide(b.den_);
  return reduce(Wide(top), Wide(lcm));
}

}  // namespace linnet::check
