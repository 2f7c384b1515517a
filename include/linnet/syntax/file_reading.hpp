// Reading a file named on the command line or in a card, safely: a path
// that exists but is not a regular file (a directory, /dev/null, a FIFO,
// a socket) or that cannot be read is said to be exactly that, never "no
// such file", and nothing is ever opened in a way that blocks (opening a
// FIFO for reading waits for a writer; a FIFO is refused before that).
#pragma once

#include <string>

namespace linnet::syntax {

// What a path may be.
enum class PathUse {
  File,              // a regular file to read
  Directory,         // a directory to list
  FileOrDirectory,   // either (`check PATH`, `--weights`)
};

// Why `path` cannot be used as `use` asks, as a phrase that follows the
// quoted path ("does not exist", "is a FIFO, not a file", "is a directory,
// not a file", "cannot be read: Permission denied"), or "" when it can.
std::string path_problem(const std::string& path, PathUse use = PathUse::File);

// The whole of a regular file. False with `problem` set (a path_problem
// phrase, or the read error) when it cannot be read.
bool read_whole_file(const std::string& path, std::string& text, std::string& problem);

}  // namespace linnet::syntax
