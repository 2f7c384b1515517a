// The one-process group.
#include "linnet/dist/communicator.hpp"

#include <cstring>

namespace linnet::dist {

namespace {

class OneProcess : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(const void* send, size_t bytes, void* receive) override {
    if (bytes > 0) std::memcpy(receive, send, bytes);
  }
  std::string transport() const override { return "one process"; }
};

}  // namespace

std::shared_ptr<Communicator> one_process() { return std::make_shared<OneProcess>(); }

}  // namespace linnet::dist
