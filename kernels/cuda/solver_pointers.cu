// The matrix-pointer arrays of the batched solver routines (solver_pointers.h):
// one thread per matrix.
#include "kernels/cuda/solver_pointers.h"

#include "kernels/cuda/check.h"
#include "kernels/cuda/device_math.cuh"

namespace gradiens::kernels::cuda::solver {
namespace {

__global__ void __launch_bounds__(kThreadsPerBlock)
    matrix_pointers_kernel(void** pointers, char* base, int64_t stride_bytes, int64_t batch) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch; b += step)
    pointers[b] = base + b * stride_bytes;
}

}  // namespace

void fill_matrix_pointers(void** pointers, void* base, int64_t stride_bytes, int64_t batch, StreamHandle stream) {
  if (batch <= 0) return;
  matrix_pointers_kernel<<<blocks_for(batch), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
      pointers, static_cast<char*>(base), stride_bytes, batch);
  GD_CUDA_LAUNCH_CHECK();
}

}  // namespace gradiens::kernels::cuda::solver
