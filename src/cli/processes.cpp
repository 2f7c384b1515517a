// The processes of one run at the terminal (processes.hpp).
#include "processes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

namespace linnet::cli {

namespace {

// How long a failed process waits for the others before stopping them.
constexpr double kFailureWaitSeconds = 10.0;

// This process's rank in the run (RunProcesses sets it once, at start).
int this_rank = 0;

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written <= 0) return;
    data += written;
    size -= static_cast<size_t>(written);
  }
}

}  // namespace

bool writes_outputs() { return this_rank == 0; }

RunProcesses::RunProcesses(std::unique_ptr<dist::Processes> processes) : processes_(std::move(processes)) {
  rank_ = processes_->group()->rank();
  this_rank = rank_;
  size_ = processes_->group()->size();
  if (rank_ == 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  const int null_device = ::open("/dev/null", O_WRONLY);
  if (null_device >= 0) {
    ::dup2(null_device, STDOUT_FILENO);
    ::close(null_device);
  }
  kept_errors_ = std::tmpfile();
  if (kept_errors_ != nullptr) {
    real_stderr_ = ::dup(STDERR_FILENO);
    ::dup2(::fileno(kept_errors_), STDERR_FILENO);
  }
}

RunProcesses::~RunProcesses() {
  if (kept_errors_ != nullptr) std::fclose(kept_errors_);
  if (real_stderr_ >= 0) ::close(real_stderr_);
}

void RunProcesses::release_errors() {
  if (kept_errors_ == nullptr || real_stderr_ < 0) return;
  std::cerr.flush();
  std::fflush(stderr);
  const int fd = ::fileno(kept_errors_);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return;
  std::vector<char> text(static_cast<size_t>(size));
  if (::pread(fd, text.data(), text.size(), 0) != size) return;
  write_all(real_stderr_, text.data(), text.size());
}

int RunProcesses::finish(int exit_code) {
  if (size_ == 1) return exit_code;
  std::cout.flush();
  std::fflush(stdout);
  std::cerr.flush();
  if (!processes_->meet_at_end(exit_code == 0 ? std::nullopt : std::optional<double>(kFailureWaitSeconds))) {
    release_errors();
    const std::string line = "error: process " + std::to_string(rank_) + " of " + std::to_string(size_) +
                             " failed while the others wait for it in a collective; stopping every process\n";
    write_all(real_stderr_ >= 0 ? real_stderr_ : STDERR_FILENO, line.data(), line.size());
    processes_->stop_all(exit_code);
  }
  // Everyone is here: the lowest-ranked failure decides, and speaks.
  std::vector<int> codes(static_cast<size_t>(size_));
  processes_->group()->all_gather(&exit_code, sizeof exit_code, codes.data());
  for (int r = 0; r < size_; ++r) {
    if (codes[static_cast<size_t>(r)] == 0) continue;
    if (r == rank_ && r != 0) release_errors();
    return codes[static_cast<size_t>(r)];
  }
  return 0;
}

}  // namespace linnet::cli
