// path_problem: what a path is, as a kind callers branch on, and the
// phrase said to the user, derived from that kind alone.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "linnet/syntax/file_reading.hpp"
#include "temp_dir.hpp"

using linnet::syntax::path_problem;
using linnet::syntax::path_problem_text;
using linnet::syntax::PathProblemKind;
using linnet::syntax::PathUse;

TEST_CASE("path_problem names each kind of path, and its text follows from the kind", "[file_reading]") {
  linnet_test::TempDir dir("linnet-file-reading");
  const std::string file = dir.write("a.txt", "text");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

  struct Case {
    std::string path;
    PathUse use;
    PathProblemKind kind;
    std::string text;
    bool wrong_kind;
  };
  const Case cases[] = {
      {file, PathUse::File, PathProblemKind::None, "", false},
      {dir.path().string(), PathUse::Directory, PathProblemKind::None, "", false},
      {dir.path().string(), PathUse::FileOrDirectory, PathProblemKind::None, "", false},
      {"", PathUse::File, PathProblemKind::Empty, "is an empty path", false},
      {dir.file("absent"), PathUse::File, PathProblemKind::Missing, "does not exist", false},
      {file + "/below", PathUse::File, PathProblemKind::Missing, "does not exist", false},
      {dir.path().string(), PathUse::File, PathProblemKind::Directory, "is a directory, not a file", true},
      {file, PathUse::Directory, PathProblemKind::File, "is a file, not a directory", true},
      {fifo, PathUse::File, PathProblemKind::Fifo, "is a FIFO (named pipe), not a file", true},
      {fifo, PathUse::Directory, PathProblemKind::Fifo, "is a FIFO (named pipe), not a directory", true},
      {"/dev/null", PathUse::FileOrDirectory, PathProblemKind::CharacterDevice, "is a character device, not a file",
       true},
  };
  for (const Case& c : cases) {
    INFO(c.path);
    const auto problem = path_problem(c.path, c.use);
    CHECK(problem.kind == c.kind);
    CHECK(static_cast<bool>(problem) == (c.kind != PathProblemKind::None));
    CHECK(problem.wrong_kind() == c.wrong_kind);
    CHECK(path_problem_text(problem) == c.text);
  }
  if (::geteuid() != 0) {
    // Root reads anything: only others can see an unreadable file.
    const std::string locked = dir.write("locked.txt", "secret");
    REQUIRE(::chmod(locked.c_str(), 0) == 0);
    const auto problem = path_problem(locked);
    CHECK(problem.kind == PathProblemKind::Unreadable);
    CHECK_FALSE(problem.wrong_kind());
    CHECK(path_problem_text(problem) == "cannot be read: Permission denied");
  }
}
