// GD_CUDA_CHECK and GD_CUDA_LAUNCH_CHECK: a failing CUDA runtime call becomes a
// gradiens::Error naming the call, the CUDA error and where it happened.
// Include only from translation units built with the CUDA toolkit.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/error.h"

namespace gradiens::kernels::cuda::detail {
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* expression, const char* file, int line);
}  // namespace gradiens::kernels::cuda::detail

#define GD_CUDA_CHECK(expression)                                                              \
  do {                                                                                         \
    cudaError_t gd_cuda_status_ = (expression);                                                \
    if (gd_cuda_status_ != cudaSuccess)                                                        \
      ::gradiens::kernels::cuda::detail::throw_cuda_error(gd_cuda_status_, #expression, __FILE__, \
                                                          __LINE__);                           \
  } while (false)

// After a kernel launch: reports a bad launch configuration at its source.
#define GD_CUDA_LAUNCH_CHECK() GD_CUDA_CHECK(cudaGetLastError())
