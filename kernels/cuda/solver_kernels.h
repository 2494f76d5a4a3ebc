// The small device kernels around the cuSOLVER and cuBLAS calls of
// kernels/cuda/solver.cpp: matrix-pointer arrays for the batched routines, the
// identity a getrs turns into an inverse, and zeroing the triangle a Cholesky
// factorization leaves alone. Each is queued on `stream`; no CUDA headers.
#pragma once

#include <cstdint>

#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda::solver {

// pointers[b] = base + b * stride_bytes for b in [0, batch), into `pointers`
// (device memory of batch entries).
void fill_matrix_pointers(void** pointers, void* base, int64_t stride_bytes, int64_t batch, StreamHandle stream);

// Each of the batch column-major n x n matrices at a + b * stride (leading
// dimension lda) set to the identity.
template <class T>
void fill_identity(int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride, StreamHandle stream);

// Element (i, j) of each matrix set to 0 where i > j (strictly_lower) or i < j.
template <class T>
void zero_triangle(bool strictly_lower, int64_t batch, int64_t n, T* a, int64_t lda, int64_t stride,
                   StreamHandle stream);

}  // namespace gradiens::kernels::cuda::solver
