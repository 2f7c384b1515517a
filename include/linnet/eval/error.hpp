// Errors the interpreter reports while a program runs.
//
// Every failure is an EvalError carrying one syntax::Diagnostic: a code, a
// message naming what went wrong, the span of the expression that failed,
// notes with the values involved (the tensor, the axis, the index, the
// extent, the expected and actual shapes) and a note with the chain of calls
// that led there. Where a static rule of the specification was broken (a
// shape that does not fit a parameter type, dtypes that differ) the code is
// the specification's; conditions only a running program can meet have codes
// of their own, listed below and in docs/semantics.md.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "linnet/syntax/diagnostic.hpp"

namespace linnet::eval {

namespace codes {
// Conditions that exist only at run time.
inline constexpr const char* runtime_index = "E6001";      // a runtime index outside its axis
inline constexpr const char* division_by_zero = "E6002";   // integer `/` or `%` by zero
inline constexpr const char* parameter_binding = "E6003";  // a parameter missing, or of the wrong shape/dtype
inline constexpr const char* bad_input = "E6004";          // an entry input that does not fit its parameter
inline constexpr const char* resource_limit = "E6005";     // a loop or a tensor past the interpreter's limits
inline constexpr const char* collective = "E6006";         // a collective the processes of a run cannot perform
// A weights or data file that is not what it claims: a malformed safetensors
// file (header, truncated data, dtype), shard index or config.json, a golden
// case's meta.json or .npz, an input .npy; or no checkpoint where one is named.
inline constexpr const char* malformed_file = "E6007";

// The specification's codes for the static rules a run can also break.
inline constexpr const char* unknown_symbol = "E1201";
inline constexpr const char* wrong_symbol_kind = "E1208";
inline constexpr const char* type_mismatch = "E2101";
inline constexpr const char* bad_arguments = "E2102";
inline constexpr const char* dtype_mismatch = "E2103";
inline constexpr const char* invalid_operand = "E2104";
inline constexpr const char* literal_out_of_range = "E2105";
inline constexpr const char* not_callable = "E2106";
inline constexpr const char* unknown_member = "E2107";
inline constexpr const char* assign_immutable = "E2108";
inline constexpr const char* assign_changes_type = "E2109";
inline constexpr const char* cannot_infer = "E2110";
inline constexpr const char* bad_generic_arguments = "E2111";
inline constexpr const char* dtype_constraint = "E2112";
inline constexpr const char* condition_not_bool = "E2114";
inline constexpr const char* logical_not_bool = "E2116";
inline constexpr const char* invalid_pattern = "E2117";
inline constexpr const char* non_exhaustive_match = "E2118";
inline constexpr const char* recursion = "E2119";
inline constexpr const char* missing_return = "E2120";
inline constexpr const char* invalid_static_for = "E2121";
inline constexpr const char* not_compile_time = "E2123";
inline constexpr const char* misplaced_yield = "E2124";
inline constexpr const char* invalid_kernel = "E2127";
inline constexpr const char* not_implemented = "E2190";
inline constexpr const char* contraction_mismatch = "E2201";
inline constexpr const char* shape_mismatch = "E2202";
inline constexpr const char* reshape_count = "E2203";
inline constexpr const char* rank_mismatch = "E2204";
inline constexpr const char* constraint_unsatisfied = "E2206";
inline constexpr const char* broadcast_mismatch = "E2207";
inline constexpr const char* negative_dimension = "E2208";
inline constexpr const char* invalid_slice = "E2209";
inline constexpr const char* invalid_axis = "E2210";
inline constexpr const char* unbound_index = "E3101";
inline constexpr const char* unused_reduction_index = "E3102";
inline constexpr const char* index_without_domain = "E3103";
inline constexpr const char* invalid_index_expression = "E3104";
inline constexpr const char* duplicate_index = "E3105";
inline constexpr const char* pack_index_misuse = "E3106";
}  // namespace codes

class EvalError : public std::runtime_error {
 public:
  explicit EvalError(syntax::Diagnostic diagnostic);

  const syntax::Diagnostic& diagnostic() const { return diagnostic_; }
  syntax::Diagnostic& diagnostic() { return diagnostic_; }
  const std::string& code() const { return diagnostic_.code; }

  // What the failure was about, where it was a value from outside the
  // program, so that the entry call can name the input that held it
  // (EntryInputs::origins): the index that was out of range (E6001), or the
  // parameter an argument did not fit, with the parameter list it belongs
  // to (identifying the function).
  std::optional<int64_t> index_value;
  const void* argument_of = nullptr;
  std::string argument;

 private:
  syntax::Diagnostic diagnostic_;
};

}  // namespace linnet::eval
