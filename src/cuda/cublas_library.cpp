// Finding libcublas at run time (cublas_library.hpp).
#include "cublas_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace linnet::cuda::detail {

namespace {

// The spelled-out types name the header's C functions (unevaluated: no link).
static_assert(sizeof(static_cast<GemmFunction>(&cublasGemmEx)) > 0);
static_assert(sizeof(static_cast<GemmStridedBatchedFunction>(&cublasGemmStridedBatchedEx)) > 0);

// The soname of the cuBLAS we were compiled against, tried as is (the
// loader's search path) and then in the toolkit's library folder.
const std::string kSoname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);

void* open_library(std::string& tried) {
  for (const std::string& candidate : {kSoname, std::string(LINNET_CUDA_LIBRARY_DIR) + "/" + kSoname}) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  return nullptr;
}

template <class Function>
void find(void* handle, const char* name, Function& slot) {
  slot = reinterpret_cast<Function>(dlsym(handle, name));
  if (!slot) throw std::runtime_error("cuBLAS has no `" + std::string(name) + "` (" + kSoname + ")");
}

}  // namespace

const CublasLibrary& cublas() {
  static std::once_flag once;
  static CublasLibrary library;
  static std::string failure;
  std::call_once(once, [] {
    std::string tried;
    void* handle = open_library(tried);
    if (!handle) {
      failure = "cannot load cuBLAS: " + tried;
      return;
    }
    try {
      find(handle, "cublasCreate_v2", library.create);
      find(handle, "cublasGemmEx", library.gemm);
      find(handle, "cublasGemmStridedBatchedEx", library.gemm_strided_batched);
      find(handle, "cublasGetStatusName", library.status_name);
    } catch (const std::exception& error) {
      library = CublasLibrary{};
      failure = error.what();
    }
  });
  if (!library.create) throw std::runtime_error(failure);
  return library;
}

}  // namespace linnet::cuda::detail
