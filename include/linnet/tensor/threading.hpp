// How many threads the tensor kernels use. Elementwise kernels, reductions and
// batched contractions run OpenMP loops; a single large matrix product lets
// Eigen split the work over the same number of threads.
#pragma once

namespace linnet::tensor {

int num_threads();
// Sets the OpenMP thread count and Eigen's to `threads` (at least 1).
void set_num_threads(int threads);

}  // namespace linnet::tensor
