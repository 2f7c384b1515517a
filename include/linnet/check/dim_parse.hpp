// Reading dimension expressions and relations from text, in Linnet's own
// syntax: "B * S * (H / Heads)", "min(P + Batch, MaxSeq)", "H % Heads == 0".
// For tests, tools and command-line input; the checker builds DimExprs from
// its syntax tree instead. Malformed text throws DimParseError.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "linnet/check/dim_expr.hpp"
#include "linnet/check/solver.hpp"

namespace linnet::check {

class DimParseError : public std::invalid_argument {
 public:
  DimParseError(const std::string& message, std::size_t offset)
      : std::invalid_argument(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }  // byte offset of the problem

 private:
  std::size_t offset_;
};

DimExpr parse_dim(std::string_view text);
Relation parse_relation(std::string_view text);
// A comma-separated list of relations, as after `where`.
Facts parse_facts(std::string_view text);

}  // namespace linnet::check
