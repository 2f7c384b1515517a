// OpenMP thread binding across linnet's restart: `linnet` starts itself a
// second time with short idle spinning (tensor/threading.hpp), and with
// OMP_PROC_BIND set libgomp has tied the first start's thread to one place
// by then. These runs hold that binding does not confine the threads to
// that place's CPUs (`--stats` reports the CPUs the threads may use).
#include <sched.h>

#include <regex>

#include "cli_test_util.hpp"

using cli_test::run_linnet;
using cli_test::ScratchDir;

namespace {

const char* const kProgram = R"(module demo.threads

pub entry double<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x * 2.0
}
)";

// The CPU count of `--stats`' "threads N on M CPUs" line, or -1.
int cpus_reported(const std::string& out) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex(R"(threads (\d+) on (\d+) CPUs?)"))) return -1;
  return std::stoi(match[2].str());
}

// The first CPU this process may run on (linnet, started from here, may too).
int first_allowed_cpu() {
  cpu_set_t cpus;
  REQUIRE(sched_getaffinity(0, sizeof cpus, &cpus) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) return cpu;
  }
  FAIL("no CPU in this process's affinity mask");
  return -1;
}

}  // namespace

TEST_CASE("linnet run --stats: OpenMP binding keeps every CPU across the restart", "[cli][threads]") {
  ScratchDir scratch;
  const std::string program = scratch.write("threads.linnet", kProgram);
  const std::vector<std::string> command = {"run", program, "--entry", "double", "--input", "x=[1, 2, 3]", "--stats"};

  const cli_test::Outcome unbound = run_linnet(command, {"OMP_NUM_THREADS=2"});
  INFO(unbound.err);
  REQUIRE(unbound.status == 0);
  const int cpus = cpus_reported(unbound.out);
  INFO(unbound.out);
  REQUIRE(cpus >= 1);

  for (const char* binding : {"OMP_PROC_BIND=true", "OMP_PROC_BIND=close", "OMP_PLACES=cores"}) {
    const cli_test::Outcome bound = run_linnet(command, {"OMP_NUM_THREADS=2", binding});
    INFO(binding << '\n' << bound.out << bound.err);
    REQUIRE(bound.status == 0);
    CHECK(cpus_reported(bound.out) == cpus);
  }
  // A place list the user narrows stays narrowed.
  const std::string place = "OMP_PLACES={" + std::to_string(first_allowed_cpu()) + "}";
  const cli_test::Outcome one_place = run_linnet(command, {"OMP_NUM_THREADS=2", "OMP_PROC_BIND=true", place});
  INFO(one_place.out << one_place.err);
  REQUIRE(one_place.status == 0);
  CHECK(cpus_reported(one_place.out) == 1);
}
