#include "linnet/tensor/threading.hpp"

#include <omp.h>

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>

namespace linnet::tensor {

void bound_idle_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // About ten microseconds of spinning: enough to catch the next region of a
  // loop of products, short beside a time slice.
  if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

int num_threads() { return omp_get_max_threads(); }

bool worth_threads(int64_t work) { return work >= kParallelWork && !omp_in_parallel() && omp_get_max_threads() > 1; }

void set_num_threads(int threads) {
  threads = std::max(threads, 1);
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

}  // namespace linnet::tensor
