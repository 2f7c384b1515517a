// A fresh directory under the system's temporary directory, removed with
// everything in it when the object goes out of scope (also when a REQUIRE
// fails or an exception leaves the test), so that no test run leaves
// folders behind in /tmp.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace linnet_test {

class TempDir {
 public:
  // `prefix` names the folder (`<prefix>-<pid>-<n>`) for whoever looks into /tmp.
  explicit TempDir(const std::string& prefix) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to `name` inside the directory (making the folders `name`
  // names) and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    return write_bytes(name, text.data(), text.size());
  }
  std::string write(const std::string& name, const std::vector<std::byte>& bytes) const {
    return write_bytes(name, bytes.data(), bytes.size());
  }

 private:
  std::string write_bytes(const std::string& name, const void* data, size_t size) const {
    const std::filesystem::path target = path_ / name;
    std::filesystem::create_directories(target.parent_path());
    std::ofstream(target, std::ios::binary).write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    return target.string();
  }

  std::filesystem::path path_;
};

}  // namespace linnet_test
