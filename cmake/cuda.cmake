# The optional CUDA component (src/cuda, include/linnet/cuda).
#
# LINNET_CUDA=AUTO builds it when a CUDA compiler is found (on PATH, through
# CUDACXX, or at /usr/local/cuda/bin/nvcc); ON requires one; OFF never looks.
# Machine code for sm_90 (H100, H200) plus compute_90 PTX, which the driver
# compiles for newer GPUs at start. Defines LINNET_WITH_CUDA.
set(LINNET_WITH_CUDA OFF)
if(NOT LINNET_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(LINNET_WITH_CUDA ON)
  elseif(LINNET_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LINNET_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER or CUDACXX)")
  else()
    message(STATUS "linnet: no CUDA compiler found; building without the CUDA op table")
  endif()
endif()

if(LINNET_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)
  endif()
  # C++17: CMake 3.25 knows no C++20 flag for nvcc. kernels.cu needs no more.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER} CACHE FILEPATH "CUDA host compiler")
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "linnet: CUDA op table on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")

  file(GLOB cuda_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/*.cpp ${PROJECT_SOURCE_DIR}/src/cuda/*.cu)
  add_library(linnet_cuda STATIC ${cuda_sources})
  target_include_directories(linnet_cuda PUBLIC ${PROJECT_SOURCE_DIR}/include)
  # cuBLAS is opened on first use (src/cuda/cublas_library.cpp), not linked:
  # its start-up cost would fall on every process. The runtime is linked
  # statically for the same reason.
  target_link_libraries(linnet_cuda PUBLIC linnet_ops PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
  target_include_directories(linnet_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(linnet_cuda PRIVATE LINNET_CUDA_LIBRARY_DIR="${CUDAToolkit_LIBRARY_DIR}")
  # Warnings are errors in device code too; host code inside .cu files gets g++'s.
  if(LINNET_WERROR)
    target_compile_options(linnet_cuda PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings;-Xcompiler=-Wall,-Wextra,-Werror>")
  else()
    target_compile_options(linnet_cuda PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
  endif()
endif()
