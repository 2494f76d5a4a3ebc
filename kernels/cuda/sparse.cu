// The sparse (COO, rows sorted) times dense product of indexing.h on the GPU:
// one thread per output element, summing its row's entries in entry order
// with separate roundings, as the CPU loop does, so no atomics are needed and
// the result does not depend on the launch.
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/indexing.h"

namespace gradiens::kernels::cuda {
namespace {

template <class T>
__global__ void sparse_dense_mm_kernel(const int64_t* row_start, const int64_t* col_of, const T* values,
                                       const T* dense, int64_t rows, int64_t n, T* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * n) return;
  const int64_t r = i / n, j = i - r * n;
  T sum = out[i];
  for (int64_t k = row_start[r]; k < row_start[r + 1]; ++k)
    sum = add_rounded(sum, multiply_rounded(values[k], dense[col_of[k] * n + j]));
  out[i] = sum;
}

}  // namespace

void sparse_dense_mm(ScalarType dtype, const int64_t* row_start, const int64_t* col_of, const void* values,
                     const void* dense, int64_t rows, int64_t n, void* out, StreamHandle stream) {
  if (rows * n == 0) return;
  dispatch_cuda_floating(dtype, "sparse.mm", [&]<class T>() {
    sparse_dense_mm_kernel<T><<<blocks_for(rows * n), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
        row_start, col_of, static_cast<const T*>(values), static_cast<const T*>(dense), rows, n,
        static_cast<T*>(out));
    GD_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace gradiens::kernels::cuda
