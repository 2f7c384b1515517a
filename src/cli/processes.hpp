// How the processes of one `mpirun -np N linnet ...` share the terminal
// and end together (docs/commands.md, "Running across processes").
//
// Rank 0 speaks: the other processes' standard output goes nowhere and
// their standard error is kept aside. At the end every process meets the
// others (dist::Processes::meet_at_end) and all exit with the status of
// the lowest-ranked process that failed, whose diagnostic is the one
// printed: rank 0's own, or the kept-aside error output of the other. A
// failed process that the others do not join within a few seconds (they
// wait in a collective it left) prints its diagnostic and stops them all.
#pragma once

#include <cstdio>
#include <memory>

#include "linnet/dist/processes.hpp"

namespace linnet::cli {

// False on the processes of a run other than rank 0: they compute the same
// outputs but do not write them (write_outputs).
bool writes_outputs();

class RunProcesses {
 public:
  explicit RunProcesses(std::unique_ptr<dist::Processes> processes);
  ~RunProcesses();
  RunProcesses(const RunProcesses&) = delete;
  RunProcesses& operator=(const RunProcesses&) = delete;

  std::shared_ptr<dist::Communicator> group() const { return processes_->group(); }
  // The exit status of the whole run, once every process is here (above).
  int finish(int exit_code);

 private:
  // Writes this process's kept-aside error output to the real stderr.
  void release_errors();

  std::unique_ptr<dist::Processes> processes_;
  int rank_ = 0;
  int size_ = 1;
  int real_stderr_ = -1;        // rank > 0: the terminal's stderr, kept while fd 2 goes aside
  std::FILE* kept_errors_ = nullptr;
};

}  // namespace linnet::cli
