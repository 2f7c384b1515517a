#include "linnet/tensor/threading.hpp"

#include <omp.h>

#include <sched.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace linnet::tensor {

namespace {

// Whether libgomp binds its threads to places (OMP_PROC_BIND other than
// false, or OMP_PLACES or GOMP_CPU_AFFINITY given), and then the CPUs of
// all its places together.
bool bound_places(cpu_set_t& cpus) {
  CPU_ZERO(&cpus);
  if (omp_get_proc_bind() == omp_proc_bind_false) return false;
  const int places = omp_get_num_places();
  for (int place = 0; place < places; ++place) {
    std::vector<int> ids(static_cast<size_t>(std::max(omp_get_place_num_procs(place), 0)));
    omp_get_place_proc_ids(place, ids.data());
    for (int id : ids) {
      if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &cpus);
    }
  }
  return CPU_COUNT(&cpus) > 0;
}

}  // namespace

void bound_idle_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // About ten microseconds of spinning: enough to catch the next region of a
  // loop of products, short beside a time slice.
  if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return;
  // With binding asked for, libgomp has already tied this thread to its
  // first place when it loaded, and a process keeps its affinity across
  // execv: the second start would see that place's CPUs as all it may use
  // and put every thread on them (OMP_PROC_BIND=true on 2 cores: every
  // thread on CPU 0, a GPT-OSS decode step 1.3-1.9x as long). So the thread
  // gets every place's CPUs back first, and the second start lays out the
  // same places again.
  cpu_set_t cpus;
  if (bound_places(cpus)) sched_setaffinity(0, sizeof cpus, &cpus);
  execv("/proc/self/exe", argv);
}

int cpus_in_reach() {
  cpu_set_t cpus;
  if (bound_places(cpus)) return CPU_COUNT(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 0;
  return CPU_COUNT(&cpus);
}

int num_threads() { return omp_get_max_threads(); }

bool worth_threads(int64_t work) { return work >= kParallelWork && !omp_in_parallel() && omp_get_max_threads() > 1; }

void set_num_threads(int threads) {
  threads = std::max(threads, 1);
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

}  // namespace linnet::tensor
