// "Did you mean ...?": the candidate closest to a misspelled name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::syntax {

// Edit distance with adjacent transpositions (optimal string alignment):
// insertions, deletions, substitutions and swaps of two neighbours cost 1.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `wrong` when it is near enough to be a slip:
// none for names of 1 or 2 characters, one edit for 3 or 4, else a third
// of the length (and never the name itself). A case-only difference always
// counts.
// Ties go to the first candidate.
std::optional<std::string> closest_name(std::string_view wrong, const std::vector<std::string>& candidates);

// "; did you mean `x`?" when closest_name finds one, else "".
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

// "; did you mean `x`?" when closest_name finds one; otherwise the choices,
// counted right: "; its only entry is `a`", "; its entries are `a`, `b`",
// "; it has no entries" (with `singular` "entry", `plural` "entries").
std::string did_you_mean_or_list(std::string_view wrong, const std::vector<std::string>& candidates,
                                 std::string_view singular, std::string_view plural);

// "`a`", "`a` and `b`", "`a`, `b` and `c`".
std::string quoted_list(const std::vector<std::string>& names);

// "1 error", "2 errors": a count with its noun in the right number.
std::string count_of(std::size_t count, std::string_view singular, std::string_view plural);

}  // namespace linnet::syntax
