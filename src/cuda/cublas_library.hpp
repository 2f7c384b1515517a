// cuBLAS, loaded when the CUDA table is first used rather than linked.
//
// Linking libcublas makes every process start pay for its static
// initialisation (libcublasLt's is over a second here), also for commands
// that never touch a GPU: `linnet check`, `--version`, every CPU run. So the
// few entry points we call are looked up with dlopen/dlsym on first use.
#pragma once

#include <cublas_v2.h>

namespace linnet::cuda::detail {

// The C entry points (the header also declares C++ overloads of the
// products, hence the spelled-out types).
using GemmFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                      int, const void*, const void*, cudaDataType, int, long long int,
                                                      const void*, cudaDataType, int, long long int, const void*,
                                                      void*, cudaDataType, int, long long int, int,
                                                      cublasComputeType_t, cublasGemmAlgo_t);

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  GemmFunction gemm = nullptr;
  GemmStridedBatchedFunction gemm_strided_batched = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
};

// Loads the library once; throws std::runtime_error saying which file or
// symbol is missing when it cannot.
const CublasLibrary& cublas();

}  // namespace linnet::cuda::detail
