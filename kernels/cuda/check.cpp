// The thrower behind GD_CUDA_CHECK (check.h): a failed CUDA runtime call
// becomes a gradiens::Error naming the error, the call and where it was made.
#include "kernels/cuda/check.h"

#include <string>

namespace gradiens::kernels::cuda::detail {

void throw_cuda_error(cudaError_t error, const char* expression, const char* file, int line) {
  throw Error(std::string("CUDA error: ") + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ") in " +
              expression + " at " + file + ":" + std::to_string(line));
}

}  // namespace gradiens::kernels::cuda::detail
