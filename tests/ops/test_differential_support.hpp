// Shared by the differential tests: the standard library loaded once, an
// op run both as its body (`exact`, no dispatcher) and through the CPU op
// table, and the measures the two results are held to.
//
// Agreement rules (docs/ops.md, "How the kernels are tested"):
// - f32: every element within 1e-5 of the body's, relative to the largest
//   magnitude in its row (the last axis) -- a row's elements are computed
//   from the same sums, so that is the scale their rounding errors live on.
// - bf16: the kernel and the body compute the same f32 values up to the
//   order of f32 sums (the f32 rule above, delta), then round to bf16. One
//   rounding of two f32 values delta apart lands at most delta + 1 ulp
//   apart (rounding is monotone and moves each by at most half an ulp), and
//   every further rounding the body makes on the way to the result adds at
//   most one ulp of that intermediate. So an element may differ by
//   `roundings` ulps (of the larger of the element and the intermediates'
//   magnitude) plus delta.
// - Kernels that only move data, or repeat the body's elementwise steps,
//   must agree bit for bit.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "linnet/eval/interpreter.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/tensor/half.hpp"
#include "linnet/tensor/kernels.hpp"

namespace ops_test {

using linnet::eval::DType;
using linnet::eval::EntryInputs;
using linnet::eval::GenericBindings;
using linnet::eval::GenericValue;
using linnet::eval::Interpreter;
using linnet::eval::NumericsPolicy;
using linnet::eval::Value;
using linnet::tensor::Shape;
using linnet::tensor::Tensor;

inline std::string stdlib_dir() { return std::string(LINNET_SOURCE_DIR) + "/stdlib"; }

// The whole standard library, loaded once for every test.
inline const linnet::eval::LoadedProgram& stdlib_program() {
  static const std::unique_ptr<linnet::eval::LoadedProgram> loaded = [] {
    linnet::syntax::Diagnostics diagnostics;
    auto program = linnet::eval::load_program({stdlib_dir()}, stdlib_dir(), diagnostics);
    if (!program) {
      std::string text;
      for (const auto& d : diagnostics.all()) text += d.code + " " + d.message + "\n";
      FAIL("the standard library did not load:\n" << text);
    }
    return program;
  }();
  return *loaded;
}

inline GenericValue dim(int64_t value) { return GenericValue::of_dim(value); }
inline GenericValue dtype(DType value) { return GenericValue::of_dtype(value); }
inline GenericValue shape(Shape value) { return GenericValue::of_shape(std::move(value)); }
inline Value v(const Tensor& tensor) { return Value::from_tensor(tensor); }
inline Value f32_scalar(float value) { return Value::scalar(DType::F32, value); }
inline Value i32_scalar(int32_t value) { return Value::scalar(DType::I32, value); }

// Uniform values in [low, high) as `dtype` (rounded to it).
inline Tensor random_tensor(std::mt19937& rng, const Shape& dims, DType type, double low = -1.0,
                            double high = 1.0) {
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> data(static_cast<size_t>(linnet::tensor::shape_numel(dims)));
  for (double& x : data) x = uniform(rng);
  return Tensor::from_vector(data, dims, type);
}

inline Tensor i32_tensor(const std::vector<int32_t>& values, const Shape& dims) {
  return Tensor::from_vector(values, dims);
}
inline Tensor i64_tensor(const std::vector<int64_t>& values, const Shape& dims) {
  return Tensor::from_vector(values, dims);
}
inline Tensor bool_tensor(const std::vector<bool>& values, const Shape& dims) {
  return Tensor::from_vector(values, dims);
}

// One op call, run as its body and natively.
struct OpCall {
  std::string op;  // "std.nn.softmax::softmax"
  std::vector<Value> positional;
  GenericBindings generics;
};

// The body's result (exact, no dispatcher).
inline Value run_body(const OpCall& call) {
  Interpreter interpreter(stdlib_program());
  EntryInputs inputs;
  inputs.positional = call.positional;
  inputs.generics = call.generics;
  const Value result = interpreter.call_function(call.op, inputs);
  const auto& stats = interpreter.stats();
  REQUIRE(stats.count(call.op) == 1);
  CHECK(stats.at(call.op).native == 0);
  return result;
}

// The result through the CPU table under `policy`; requires that the op ran
// natively (its body never started).
inline Value run_native(const OpCall& call, NumericsPolicy policy = NumericsPolicy::Equivalent) {
  linnet::eval::Options options;
  options.numerics = policy;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = call.positional;
  inputs.generics = call.generics;
  const Value result = interpreter.call_function(call.op, inputs);
  const auto& stats = interpreter.stats();
  REQUIRE(stats.count(call.op) == 1);
  INFO("op " << call.op);
  REQUIRE(stats.at(call.op).native == 1);
  REQUIRE(stats.at(call.op).body == 0);
  return result;
}

// --- Measures ------------------------------------------------------------------

// One bf16 ulp at magnitude `m`: the gap between bf16 numbers near m (8
// significant bits), at least the smallest normal's.
inline double bf16_ulp(double m) {
  m = std::fabs(m);
  if (!(m >= 1.1754943508222875e-38)) m = 1.1754943508222875e-38;
  return std::ldexp(1.0, std::ilogb(m) - 7);
}

inline std::vector<double> as_doubles(const Tensor& x) { return x.to_vector<double>(); }

// The largest |value| of each element's row (the last axis).
inline std::vector<double> row_scales(const Tensor& x) {
  const std::vector<double> values = as_doubles(x);
  const int64_t width = x.rank() == 0 ? 1 : std::max<int64_t>(x.extent(-1), 1);
  std::vector<double> scales(values.size(), 0.0);
  for (size_t start = 0; start < values.size(); start += static_cast<size_t>(width)) {
    double largest = 0.0;
    for (size_t i = start; i < start + static_cast<size_t>(width); ++i) {
      if (std::isfinite(values[i])) largest = std::max(largest, std::fabs(values[i]));
    }
    for (size_t i = start; i < start + static_cast<size_t>(width); ++i) scales[i] = largest;
  }
  return scales;
}

// What a comparison observed, for the report and for the checks.
struct Difference {
  double max_absolute = 0.0;
  double max_relative = 0.0;  // |a - b| / row scale
  double max_ulps = 0.0;      // |a - b| in bf16 ulps of the larger element
  size_t elements = 0;
};

inline std::string describe(const Difference& d) {
  char text[160];
  std::snprintf(text, sizeof text, "max |a-b| %.3g, max relative %.3g, max bf16 ulps %.3g over %zu elements",
                d.max_absolute, d.max_relative, d.max_ulps, d.elements);
  return text;
}

// Prints one line per comparison when LINNET_OPS_REPORT is set.
inline void report(const std::string& what, const Difference& d) {
  if (std::getenv("LINNET_OPS_REPORT") != nullptr) std::cout << "[ops] " << what << ": " << describe(d) << "\n";
}

inline void require_same_shape(const Tensor& native, const Tensor& body) {
  REQUIRE(native.dtype() == body.dtype());
  REQUIRE(native.shape() == body.shape());
}

// Checks `native` against `body` elementwise with a tolerance per element:
// allowed(i, row_scale) returns the largest |a - b| accepted. NaN must match
// NaN and infinities must be equal.
template <class Allowed>
Difference compare(const std::string& what, const Tensor& native, const Tensor& body, Allowed allowed) {
  require_same_shape(native, body);
  const std::vector<double> a = as_doubles(native), b = as_doubles(body), scale = row_scales(body);
  Difference d;
  d.elements = a.size();
  size_t failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i]) || std::isinf(a[i]) || std::isinf(b[i])) {
      const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
      if (!same && failures++ < 5) FAIL_CHECK(what << ": element " << i << " is " << a[i] << ", the body's " << b[i]);
      continue;
    }
    const double gap = std::fabs(a[i] - b[i]);
    d.max_absolute = std::max(d.max_absolute, gap);
    if (scale[i] > 0) d.max_relative = std::max(d.max_relative, gap / scale[i]);
    d.max_ulps = std::max(d.max_ulps, gap / bf16_ulp(std::max(std::fabs(a[i]), std::fabs(b[i]))));
    if (gap > allowed(i, scale[i]) && failures++ < 5) {
      FAIL_CHECK(what << ": element " << i << " is " << a[i] << ", the body's " << b[i] << " (allowed "
                      << allowed(i, scale[i]) << ")");
    }
  }
  report(what, d);
  return d;
}

// f32: within 1e-5 of the row scale.
inline Difference require_f32_agreement(const std::string& what, const Tensor& native, const Tensor& body) {
  return compare(what, native, body, [](size_t, double scale) { return 1e-5 * scale; });
}

// bf16: `roundings` ulps of max(|a|, |b|, aux[i]) plus 1e-5 of the row scale
// (see the top of this file); aux holds magnitudes of rounded intermediates
// (empty: none).
inline Difference require_bf16_agreement(const std::string& what, const Tensor& native, const Tensor& body,
                                         int roundings, const std::vector<double>& aux = {}) {
  const std::vector<double> a = as_doubles(native), b = as_doubles(body);
  return compare(what, native, body, [&](size_t i, double scale) {
    double magnitude = std::max(std::fabs(a[i]), std::fabs(b[i]));
    if (!aux.empty()) magnitude = std::max(magnitude, aux[i]);
    return roundings * bf16_ulp(magnitude) + 1e-5 * scale;
  });
}

// Attention under `equivalent`: f32 as above; in bf16 the kernel rounds each
// weight w = exp(s - m) to bf16 as it enters the mix (the bf16 operand of
// the second product, as fused attention operators take it; docs/ops.md),
// which the body does not. That moves each weight by at most u w (u = 2^-8),
// so the mix divided by the sum l moves by at most u sum_k (w_k / l) |v_k|
// <= u max|v| (the weights over l sum to at most 1; sinks only lower it);
// both results are then rounded once (one ulp), plus the f32 rule.
inline Difference require_attention_agreement(const std::string& what, const Tensor& native, const Tensor& body,
                                              const Tensor& value) {
  if (body.dtype() == DType::F32) return require_f32_agreement(what, native, body);
  double largest_value = 0.0;
  for (double x : as_doubles(value)) largest_value = std::max(largest_value, std::fabs(x));
  const double weight_rounding = std::ldexp(1.0, -8) * largest_value;
  const std::vector<double> a = as_doubles(native), b = as_doubles(body);
  return compare(what, native, body, [&](size_t i, double scale) {
    return weight_rounding + bf16_ulp(std::max(std::fabs(a[i]), std::fabs(b[i]))) + 1e-5 * scale;
  });
}

// Bit for bit (NaN matching NaN).
inline Difference require_identical(const std::string& what, const Tensor& native, const Tensor& body) {
  return compare(what, native, body, [](size_t, double) { return 0.0; });
}

// The tolerance for `dtype`: the f32 rule, or the bf16 rule with `roundings`.
inline Difference require_agreement(const std::string& what, const Tensor& native, const Tensor& body,
                                    int bf16_roundings, const std::vector<double>& aux = {}) {
  if (body.dtype() == DType::F32) return require_f32_agreement(what, native, body);
  return require_bf16_agreement(what, native, body, bf16_roundings, aux);
}

// Runs both and returns (native, body) tensors.
struct Results {
  Tensor native, body;
};

inline Results run_both(const OpCall& call, NumericsPolicy policy = NumericsPolicy::Equivalent) {
  const Value body = run_body(call);
  const Value native = run_native(call, policy);
  REQUIRE(body.is_tensor());
  REQUIRE(native.is_tensor());
  return {native.tensor(), body.tensor()};
}

inline std::string label(const OpCall& call, DType type, const std::string& detail = "") {
  std::string text = call.op + " " + std::string(linnet::tensor::dtype_name(type));
  if (!detail.empty()) text += " (" + detail + ")";
  return text;
}

}  // namespace ops_test
