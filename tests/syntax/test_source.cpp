// SourceFile's position mapping: offsets to line/column and back.
#include <catch2/catch.hpp>

#include "linnet/syntax/source.hpp"

using linnet::syntax::LineColumn;
using linnet::syntax::SourceFile;

TEST_CASE("offset_of inverts line_column, counting columns in code points", "[source]") {
  const SourceFile file("t.linnet", "ab\n\xc3\xa9x\nlast");
  for (uint32_t offset : {0u, 1u, 3u, 5u, 7u, 10u}) {
    INFO(offset);
    CHECK(file.offset_of(file.line_column(offset)) == offset);
  }
  CHECK(file.offset_of({2, 2}) == 5);   // after the two-byte é
  CHECK(file.offset_of({0, 1}) == 0);   // no line: the start
  CHECK(file.offset_of({9, 1}) == 11);  // past the last line: the end
  CHECK(file.offset_of({1, 99}) == 11); // clamped to the file
}
