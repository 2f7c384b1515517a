// The processes of an MPI launch: MPI_COMM_WORLD, with the collectives
// on one duplicate of it and the end-of-run meeting on another, so that a
// process waiting at the end never matches a collective that another is
// still inside. Compiled only with MPI (CMakeLists.txt).
#include "mpi_processes.hpp"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace linnet::dist {

namespace {

// All bytes in one MPI_Allgather call take an `int` count.
constexpr size_t kLargestMessage = size_t{1} << 30;

class MpiGroup : public Communicator {
 public:
  explicit MpiGroup(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(const void* send, size_t bytes, void* receive) override {
    if (bytes <= kLargestMessage) {
      MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, receive, static_cast<int>(bytes), MPI_BYTE, comm_);
      return;
    }
    // Larger parts go a piece at a time, each piece then moved to its
    // process's place in `receive`.
    std::vector<std::byte> pieces(kLargestMessage * static_cast<size_t>(size_));
    for (size_t offset = 0; offset < bytes; offset += kLargestMessage) {
      const size_t length = std::min(kLargestMessage, bytes - offset);
      MPI_Allgather(static_cast<const std::byte*>(send) + offset, static_cast<int>(length), MPI_BYTE, pieces.data(),
                    static_cast<int>(length), MPI_BYTE, comm_);
      for (int r = 0; r < size_; ++r) {
        std::memcpy(static_cast<std::byte*>(receive) + static_cast<size_t>(r) * bytes + offset,
                    pieces.data() + static_cast<size_t>(r) * length, length);
      }
    }
  }

  std::string transport() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string text(version, static_cast<size_t>(length));
    // "Open MPI v4.1.4, package: Debian OpenMPI, ..." -> "Open MPI v4.1.4".
    const size_t cut = text.find_first_of(",\n");
    if (cut != std::string::npos) text.resize(cut);
    return "MPI (" + text + ")";
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

class MpiProcesses : public Processes {
 public:
  MpiProcesses() {
    MPI_Comm_dup(MPI_COMM_WORLD, &collectives_);
    MPI_Comm_dup(MPI_COMM_WORLD, &ending_);
    group_ = std::make_shared<MpiGroup>(collectives_);
  }
  ~MpiProcesses() override {
    group_.reset();
    MPI_Comm_free(&ending_);
    MPI_Comm_free(&collectives_);
    MPI_Finalize();
  }

  std::shared_ptr<Communicator> group() const override { return group_; }

  bool meet_at_end(std::optional<double> limit_seconds) override {
    MPI_Request request;
    MPI_Ibarrier(ending_, &request);
    if (!limit_seconds) {
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      return true;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(*limit_seconds);
    for (;;) {
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;  // the request dies with MPI_Abort
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  [[noreturn]] void stop_all(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  MPI_Comm collectives_ = MPI_COMM_NULL;
  MPI_Comm ending_ = MPI_COMM_NULL;
  std::shared_ptr<MpiGroup> group_;
};

}  // namespace

std::unique_ptr<Processes> start_mpi_processes(int& argc, char**& argv) {
  int provided = 0;
  // Only the main thread calls MPI (OpenMP threads compute between collectives).
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw LaunchError("MPI could not start");
  }
  return std::make_unique<MpiProcesses>();
}

}  // namespace linnet::dist
