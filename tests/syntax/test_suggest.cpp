// "Did you mean": edit distance with transpositions, and when a candidate is near enough.
#include <catch2/catch.hpp>

#include "linnet/syntax/suggest.hpp"

using linnet::syntax::closest_name;
using linnet::syntax::did_you_mean;
using linnet::syntax::edit_distance;

TEST_CASE("edit distance counts swaps of neighbours as one edit", "[syntax][suggest]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("check", "check") == 0);
  CHECK(edit_distance("chek", "check") == 1);
  CHECK(edit_distance("wieghts", "weights") == 1);
  CHECK(edit_distance("forwrd", "forward") == 1);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("closest_name suggests slips, never far or very short names", "[syntax][suggest]") {
  const std::vector<std::string> commands{"check", "inspect", "spec-test", "run", "generate", "explain", "validate"};
  CHECK(closest_name("chek", commands) == std::optional<std::string>("check"));
  CHECK(closest_name("generat", commands) == std::optional<std::string>("generate"));
  CHECK_FALSE(closest_name("frobnicate", commands));
  CHECK_FALSE(closest_name("check", {"check"}));  // never the name itself
  CHECK(closest_name("vocab", {"Vocab", "H"}) == std::optional<std::string>("Vocab"));
  // One- and two-letter names: only a case slip.
  CHECK_FALSE(closest_name("y", {"x", "factor"}));
  CHECK(closest_name("h", {"H"}) == std::optional<std::string>("H"));
  CHECK(did_you_mean("forwrd", {"forward", "decode"}) == "; did you mean `forward`?");
  CHECK(did_you_mean("zzz", {"forward"}).empty());
}

TEST_CASE("suggestions fall back to the choices, counted right", "[syntax][suggest]") {
  CHECK(linnet::syntax::did_you_mean_or_list("forwrd", {"forward", "decode"}, "entry", "entries") == "; did you mean `forward`?");
  CHECK(linnet::syntax::did_you_mean_or_list("zzz", {"forward"}, "entry", "entries") == "; its only entry is `forward`");
  CHECK(linnet::syntax::did_you_mean_or_list("zzz", {"prefill", "decode"}, "entry", "entries") ==
        "; its entries are `prefill` and `decode`");
  CHECK(linnet::syntax::did_you_mean_or_list("zzz", {}, "entry", "entries") == "; it has no entries");
  CHECK(linnet::syntax::quoted_list({"a", "b", "c"}) == "`a`, `b` and `c`");
  CHECK(linnet::syntax::count_of(1, "error", "errors") == "1 error");
  CHECK(linnet::syntax::count_of(0, "error", "errors") == "0 errors");
  CHECK(linnet::syntax::count_of(2, "index", "indices") == "2 indices");
}
