// Reading files safely (file_reading.hpp).
#include "linnet/syntax/file_reading.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace linnet::syntax {

namespace {

// The kind of a path that is not a regular file or a directory.
PathProblemKind kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return PathProblemKind::Fifo;
  if (S_ISCHR(mode)) return PathProblemKind::CharacterDevice;
  if (S_ISBLK(mode)) return PathProblemKind::BlockDevice;
  if (S_ISSOCK(mode)) return PathProblemKind::Socket;
  return PathProblemKind::OtherKind;
}

PathProblem problem_of(PathProblemKind kind, PathUse use, int error_number = 0) {
  PathProblem problem;
  problem.kind = kind;
  problem.use = use;
  problem.error_number = error_number;
  return problem;
}

// Closes a descriptor when it goes.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

bool PathProblem::wrong_kind() const {
  switch (kind) {
    case PathProblemKind::Directory:
    case PathProblemKind::File:
    case PathProblemKind::Fifo:
    case PathProblemKind::CharacterDevice:
    case PathProblemKind::BlockDevice:
    case PathProblemKind::Socket:
    case PathProblemKind::OtherKind:
      return true;
    case PathProblemKind::None:
    case PathProblemKind::Empty:
    case PathProblemKind::Missing:
    case PathProblemKind::Unreachable:
    case PathProblemKind::Unreadable:
      return false;
  }
  return false;
}

PathProblem path_problem(const std::string& path, PathUse use) {
  if (path.empty()) return problem_of(PathProblemKind::Empty, use);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return problem_of(PathProblemKind::Missing, use);
    return problem_of(PathProblemKind::Unreachable, use, errno);
  }
  const bool directory = S_ISDIR(info.st_mode);
  if (directory) {
    if (use == PathUse::File) return problem_of(PathProblemKind::Directory, use);
  } else if (S_ISREG(info.st_mode)) {
    if (use == PathUse::Directory) return problem_of(PathProblemKind::File, use);
  } else {
    return problem_of(kind_of(info.st_mode), use);
  }
  // Opened without blocking (it is a file or a directory by now) to learn
  // whether this process may read it: access() answers for the real user
  // and says yes to root where reading fails.
  Descriptor opened{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (directory ? O_DIRECTORY : 0))};
  if (opened.fd < 0) return problem_of(PathProblemKind::Unreadable, use, errno);
  return {};
}

std::string path_problem_text(const PathProblem& problem) {
  const std::string wanted = problem.use == PathUse::Directory ? ", not a directory" : ", not a file";
  switch (problem.kind) {
    case PathProblemKind::None:
      return "";
    case PathProblemKind::Empty:
      return "is an empty path";
    case PathProblemKind::Missing:
      return "does not exist";
    case PathProblemKind::Unreachable:
      return std::string("cannot be reached: ") + std::strerror(problem.error_number);
    case PathProblemKind::Directory:
      return "is a directory, not a file";
    case PathProblemKind::File:
      return "is a file, not a directory";
    case PathProblemKind::Fifo:
      return "is a FIFO (named pipe)" + wanted;
    case PathProblemKind::CharacterDevice:
      return "is a character device" + wanted;
    case PathProblemKind::BlockDevice:
      return "is a block device" + wanted;
    case PathProblemKind::Socket:
      return "is a socket" + wanted;
    case PathProblemKind::OtherKind:
      return "is not a regular file" + wanted;
    case PathProblemKind::Unreadable:
      return std::string("cannot be read: ") + std::strerror(problem.error_number);
  }
  return "";
}

bool read_whole_file(const std::string& path, std::string& text, std::string& problem) {
  problem = path_problem_text(path_problem(path, PathUse::File));
  if (!problem.empty()) return false;
  Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) {
    problem = std::string("cannot be read: ") + std::strerror(errno);
    return false;
  }
  // The path could have been swapped for something else since the check.
  struct stat info {};
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    problem = "is not a regular file";
    return false;
  }
  text.clear();
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      problem = std::string("cannot be read: ") + std::strerror(errno);
      return false;
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  return true;
}

}  // namespace linnet::syntax
