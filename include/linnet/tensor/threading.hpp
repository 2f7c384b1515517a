// How many threads the tensor kernels use. Elementwise kernels, reductions and
// batched contractions run OpenMP loops; a single large matrix product lets
// Eigen split the work over the same number of threads.
#pragma once

#include <cstdint>

namespace linnet::tensor {

// The least work (elements touched, or multiply-adds) worth starting threads
// for. Below it a kernel runs on the calling thread: a parallel region costs
// a wake-up of every thread, and on a busy machine a descheduled thread makes
// each region wait for a time slice, so many small regions (a tiny model's
// forward pass) run many times slower threaded than serial.
inline constexpr int64_t kParallelWork = int64_t{1} << 16;

// Whether `work` is worth threads here: large enough, more than one thread
// available, and not already inside a parallel region.
bool worth_threads(int64_t work);

// Bounds how long idle OpenMP threads spin before they sleep, by running
// the program again (execv of /proc/self/exe with `argv`) with
// GOMP_SPINCOUNT set, unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is already
// set. Call first thing in main. Why: after each parallel region libgomp's
// workers spin for about a millisecond by default; on a machine with more
// runnable threads than cores a spinning worker takes the time slices the
// main thread needs for the serial work between regions (a tiny model's
// forward pass ran 2x slower with 2 threads than with 1). libgomp reads the
// setting once, when it loads, hence the second start. When libgomp binds
// threads to places (OMP_PROC_BIND, OMP_PLACES), the calling thread is
// first given every place's CPUs back, which the second start would
// otherwise not see (threading.cpp). Returns if execv fails.
void bound_idle_spinning(char** argv);

// The CPUs the OpenMP threads may run on: with binding, those of all of
// libgomp's places; otherwise the calling thread's affinity mask (0 if it
// cannot be read). For --stats: fewer than the machine's cores says the
// threads were confined.
int cpus_in_reach();

int num_threads();
// Sets the OpenMP thread count and Eigen's to `threads` (at least 1).
void set_num_threads(int threads);

}  // namespace linnet::tensor
