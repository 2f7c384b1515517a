// Reading files safely (file_reading.hpp).
#include "linnet/syntax/file_reading.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace linnet::syntax {

namespace {

// "is a FIFO", "is a character device", ... for a path that is not a
// regular file or a directory.
std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

// Closes a descriptor when it goes.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string path_problem(const std::string& path, PathUse use) {
  if (path.empty()) return "is an empty path";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return "does not exist";
    return std::string("cannot be reached: ") + std::strerror(errno);
  }
  const bool directory = S_ISDIR(info.st_mode);
  if (directory) {
    if (use == PathUse::File) return "is a directory, not a file";
  } else if (S_ISREG(info.st_mode)) {
    if (use == PathUse::Directory) return "is a file, not a directory";
  } else {
    return kind_of(info.st_mode) + (use == PathUse::Directory ? ", not a directory" : ", not a file");
  }
  // Opened without blocking (it is a file or a directory by now) to learn
  // whether this process may read it: access() answers for the real user
  // and says yes to root where reading fails.
  Descriptor opened{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (directory ? O_DIRECTORY : 0))};
  if (opened.fd < 0) return std::string("cannot be read: ") + std::strerror(errno);
  return "";
}

bool read_whole_file(const std::string& path, std::string& text, std::string& problem) {
  problem = path_problem(path, PathUse::File);
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
