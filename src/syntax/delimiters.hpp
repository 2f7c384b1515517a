// Bracket balance of one file, checked on its tokens before parsing.
// Not a public header.
#pragma once

#include <vector>

#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"
#include "linnet/syntax/token.hpp"

namespace linnet::syntax::detail {

// Matches every `(`, `[` and `{` with its closing bracket. On the first
// imbalance, reports one E1101 where it most likely is (a stray closing
// bracket, or the opening bracket left unclosed, placed by indentation) and
// returns false; the parser then reports nothing more for the file, as its
// errors would only follow from the imbalance.
bool check_delimiters(const std::vector<Token>& tokens, const SourceFile& file, Diagnostics& diagnostics);

}  // namespace linnet::syntax::detail
