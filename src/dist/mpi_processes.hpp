// The MPI side of processes.hpp, built only when CMake found MPI
// (LINNET_WITH_MPI); this header is empty otherwise.
#pragma once

#ifdef LINNET_WITH_MPI
#include <memory>

#include "linnet/dist/processes.hpp"

namespace linnet::dist {

// MPI_Init, and the world as a group. Throws LaunchError when MPI cannot start.
std::unique_ptr<Processes> start_mpi_processes(int& argc, char**& argv);

}  // namespace linnet::dist
#endif
