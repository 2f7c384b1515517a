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

// Why a path cannot be used: what callers branch on. The words said to
// the user come from path_problem_text, never compared by callers.
enum class PathProblemKind {
  None,             // usable
  Empty,            // the empty string
  Missing,          // no such path (ENOENT, ENOTDIR)
  Unreachable,      // stat failed otherwise (EACCES on a parent, ELOOP, ...)
  Directory,        // a directory where a file is wanted
  File,             // a regular file where a directory is wanted
  Fifo,             // a named pipe (never opened: that would block)
  CharacterDevice,  // /dev/null, a terminal
  BlockDevice,
  Socket,
  OtherKind,        // anything else that is no regular file or directory
  Unreadable,       // the right kind, but opening it for reading failed
};

struct PathProblem {
  PathProblemKind kind = PathProblemKind::None;
  PathUse use = PathUse::File;  // what the path was wanted as (", not a file")
  int error_number = 0;         // errno, for Unreachable and Unreadable
  explicit operator bool() const { return kind != PathProblemKind::None; }
  // The path exists but is something other than what was wanted (a
  // directory, a FIFO, a device, ...): not missing, not merely unreadable.
  bool wrong_kind() const;
};

// Why `path` cannot be used as `use` asks; kind None when it can.
PathProblem path_problem(const std::string& path, PathUse use = PathUse::File);

// The problem as a phrase that follows the quoted path ("does not exist",
// "is a FIFO (named pipe), not a file", "is a directory, not a file",
// "cannot be read: Permission denied"); "" for None.
std::string path_problem_text(const PathProblem& problem);

// The whole of a regular file. False with `problem` set (a
// path_problem_text phrase, or the read error) when it cannot be read.
bool read_whole_file(const std::string& path, std::string& text, std::string& problem);

}  // namespace linnet::syntax
