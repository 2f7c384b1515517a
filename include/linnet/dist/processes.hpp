// Starting and ending a run that an MPI launcher (`mpirun -np N linnet
// ...`) started as N processes.
//
//   auto processes = dist::start_processes(argc, argv);  // MPI_Init under a launcher
//   options.communicator = processes->group();           // what runs the card across them
//   ...
//   processes->meet_at_end(...);                         // see below
//
// Outside a launcher (or launched as one process) the group is this
// process alone, and MPI is never initialised. A launch of several
// processes of a linnet built without MPI is refused (LaunchError): each
// would otherwise run the whole model by itself.
//
// Ending: a process that finished (well or not) calls meet_at_end. One
// that succeeded waits for every other; one that failed waits a limited
// time, because the others may be blocked in a collective it will never
// join: when the limit passes it prints its diagnostic and stop_all()
// ends every process (MPI_Abort).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>

#include "linnet/dist/communicator.hpp"

namespace linnet::dist {

// Whether this linnet was built with MPI (CMake's LINNET_MPI found it).
bool built_with_mpi();

// What a launcher's environment says about this process: Open MPI's
// OMPI_COMM_WORLD_RANK/SIZE, else MPICH's (Hydra) PMI_RANK/PMI_SIZE.
// Rank 0 of 1 outside any launcher.
struct LaunchEnvironment {
  int rank = 0;
  int size = 1;
};
LaunchEnvironment launch_environment();

class LaunchError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

class Processes {
 public:
  virtual ~Processes() = default;  // MPI: MPI_Finalize
  // The group every process of this run belongs to.
  virtual std::shared_ptr<Communicator> group() const = 0;
  // Waits until every process has called meet_at_end; without a limit,
  // as long as that takes. False when `limit_seconds` passed first.
  virtual bool meet_at_end(std::optional<double> limit_seconds) = 0;
  // Ends every process of the run now with `exit_code`.
  [[noreturn]] virtual void stop_all(int exit_code) = 0;
};

// The processes of this run (see above). Throws LaunchError.
std::unique_ptr<Processes> start_processes(int& argc, char**& argv);

}  // namespace linnet::dist
