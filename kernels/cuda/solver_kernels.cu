// The device kernels of solver_kernels.h, one thread per pointer or element,
// grid-stride loops with 64-bit indices.
#include "kernels/cuda/solver_kernels.h"

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

// Calls set(element, i, j) for every element (i, j) of the batch's n x n matrices.
template <class T, class Set>
__global__ void __launch_bounds__(kThreadsPerBlock)
    matrix_elements_kernel(int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride, Set set) {
  const int64_t total = batch * n * n;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t b = e / (n * n), rest = e % (n * n), j = rest / n, i = rest % n;
    set(a[b * stride + i + j * lda], i, j);
  }
}

template <class T, class Set>
void launch_on_elements(int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride, Set set, StreamHandle stream) {
  if (batch <= 0 || n <= 0) return;
  matrix_elements_kernel<<<blocks_for(batch * n * n), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(batch, n, a, lda,
                                                                                                   stride, set);
  GD_CUDA_LAUNCH_CHECK();
}

template <class T>
struct SetIdentity {
  __device__ void operator()(T& element, int64_t i, int64_t j) const { element = i == j ? T(1) : T(0); }
};

template <class T>
struct ZeroTriangle {
  bool strictly_lower;
  __device__ void operator()(T& element, int64_t i, int64_t j) const {
    if (strictly_lower ? i > j : i < j) element = T(0);
  }
};

}  // namespace

void fill_matrix_pointers(void** pointers, void* base, int64_t stride_bytes, int64_t batch, StreamHandle stream) {
  if (batch <= 0) return;
  matrix_pointers_kernel<<<blocks_for(batch), kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
      pointers, static_cast<char*>(base), stride_bytes, batch);
  GD_CUDA_LAUNCH_CHECK();
}

template <class T>
void fill_identity(int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride, StreamHandle stream) {
  launch_on_elements(batch, n, a, lda, stride, SetIdentity<T>{}, stream);
}

template <class T>
void zero_triangle(bool strictly_lower, int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride,
                   StreamHandle stream) {
  launch_on_elements(batch, n, a, lda, stride, ZeroTriangle<T>{strictly_lower}, stream);
}

template void fill_identity<float>(int64_t, int64_t, float*, int64_t, int64_t, StreamHandle);
template void fill_identity<double>(int64_t, int64_t, double*, int64_t, int64_t, StreamHandle);
template void zero_triangle<float>(bool, int64_t, int64_t, float*, int64_t, int64_t, StreamHandle);
template void zero_triangle<double>(bool, int64_t, int64_t, double*, int64_t, int64_t, StreamHandle);

}  // namespace gradiens::kernels::cuda::solver
