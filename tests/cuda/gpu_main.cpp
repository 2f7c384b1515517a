// main() of the GPU suite: without a usable CUDA device it prints why and
// exits 77, which ctest reports as skipped (SKIP_RETURN_CODE), never passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "linnet/cuda/cuda.hpp"

int main(int argc, char** argv) {
  if (const auto reason = linnet::cuda::unavailable_reason()) {
    std::cout << "SKIPPED: the gpu tests need a CUDA device: " << *reason << '\n';
    return 77;
  }
  std::cout << "CUDA device: " << linnet::cuda::device_description() << '\n';
  return Catch::Session().run(argc, argv);
}
