// Which processes this run has: one, or an MPI launcher's world.
#include "linnet/dist/processes.hpp"

#include <cstdlib>
#include <string>

#include "mpi_processes.hpp"

namespace linnet::dist {

namespace {

// A non-negative integer from the environment, or nothing.
std::optional<int> environment_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000) return std::nullopt;
  return static_cast<int>(value);
}

class OneProcessRun : public Processes {
 public:
  std::shared_ptr<Communicator> group() const override { return group_; }
  bool meet_at_end(std::optional<double>) override { return true; }
  [[noreturn]] void stop_all(int exit_code) override { std::exit(exit_code); }

 private:
  std::shared_ptr<Communicator> group_ = one_process();
};

}  // namespace

bool built_with_mpi() {
#ifdef LINNET_WITH_MPI
  return true;
#else
  return false;
#endif
}

LaunchEnvironment launch_environment() {
  LaunchEnvironment launched;
  for (const auto& [rank_name, size_name] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                             std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const std::optional<int> rank = environment_int(rank_name);
    const std::optional<int> size = environment_int(size_name);
    if (rank && size && *size >= 1 && *rank < *size) {
      launched.rank = *rank;
      launched.size = *size;
      break;
    }
  }
  return launched;
}

std::unique_ptr<Processes> start_processes(int& argc, char**& argv) {
  const LaunchEnvironment launched = launch_environment();
  if (launched.size <= 1) return std::make_unique<OneProcessRun>();
#ifdef LINNET_WITH_MPI
  return start_mpi_processes(argc, argv);
#else
  (void)argc;
  (void)argv;
  throw LaunchError("this linnet was built without MPI, so it cannot run as process " + std::to_string(launched.rank) +
                    " of " + std::to_string(launched.size) +
                    "; install Open MPI (libopenmpi-dev) and rebuild, or run it as one process");
#endif
}

}  // namespace linnet::dist
