#include "linnet/tensor/threading.hpp"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>

namespace linnet::tensor {

int num_threads() { return omp_get_max_threads(); }

bool worth_threads(int64_t work) { return work >= kParallelWork && !omp_in_parallel() && omp_get_max_threads() > 1; }

void set_num_threads(int threads) {
  threads = std::max(threads, 1);
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

}  // namespace linnet::tensor
