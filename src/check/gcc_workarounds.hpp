// Included first in every checker source file, before any standard header.
//
// g++ 12 reports a false -Wrestrict inside libstdc++ when it inlines
// `"literal" + std::string` at -O2 (GCC PR 105329), and -Werror turns that
// into a build failure. The messages the checker assembles are full of such
// concatenations; the warning is silenced for these files only, and only on
// the compiler version that has the bug.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
