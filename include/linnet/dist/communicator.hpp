// The processes one model runs across, and how they exchange bytes.
//
// A card with a `Shards` generic can run as N processes, each holding
// 1/N of every split weight (docs/commands.md, "Running across
// processes"). The processes meet only in collectives: every process
// calls the same collective, in the same order, with the same byte count.
// A Communicator is one process's handle on its group. Without MPI (or
// outside `mpirun`) the group is this process alone (one_process()).
//
// The collectives that the standard library's std.nn.parallel ops become
// are built on all_gather (collectives.hpp): gathering every part and
// combining them in rank order makes each process compute bit-identical
// results, whatever the transport's own reduction order would be.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace linnet::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's place in the group, 0 .. size() - 1; rank 0 prints and
  // writes the outputs.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's `bytes` bytes from `send`, placed in rank order into
  // `receive` (size() * bytes bytes), on every process.
  virtual void all_gather(const void* send, size_t bytes, void* receive) = 0;
  // What carries the messages, for reports: "one process", "MPI, Open MPI v4.1.4".
  virtual std::string transport() const = 0;
};

// The group of this process alone (rank 0 of 1): all_gather copies.
std::shared_ptr<Communicator> one_process();

}  // namespace linnet::dist
