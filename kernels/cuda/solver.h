// Dense linear algebra on the GPU through cuSOLVER, the device twin of
// kernels/cpu/lapack.h: the same routines on the same column-major matrices,
// each call over a batch of them. Needs no CUDA headers (engine code includes it).
#pragma once

#include <cstdint>

#include "kernels/linalg.h"  // SvdVectors

namespace gradiens::kernels::cuda::solver {

// Every pointer is device memory on `device`, except a_index (host). A call
// covers `batch` matrices, matrix b at a + b * stride_a (likewise for every
// other operand), and is queued on the device's current stream: it returns
// before the GPU has finished. Matrices are COLUMN-MAJOR with the leading
// dimensions of kernels::cpu::lapack, and each routine means what its LAPACK
// twin there means. `info` (batch ints, device memory) gets LAPACK's info of each
// matrix: 0, or > 0 for the numerical failure the CPU twin describes (0 for
// empty matrices, which are not handed to cuSOLVER), and may be null where the
// caller does not read it. Reading it back is the caller's one
// synchronisation. A negative info (an argument bug) is not detected. Sizes must
// fit cuSOLVER's 32-bit integers (a gradiens::Error otherwise). Workspaces come
// from the caching allocator. cuSOLVER is loaded on first use (dlopen of
// libcusolver.so.12), so a program that never calls these does not need it.

using kernels::SvdVectors;

// LU with partial pivoting, in place; ipiv gets n 1-based pivots per matrix
// (ipiv + b * n). info = i > 0: U(i, i) is exactly zero.
void getrf(int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, int* ipiv, int* info, int device);
void getrf(int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, int* ipiv, int* info, int device);

// Solves A X = B (transpose: A^T X = B) in place for each n x nrhs matrix b of
// the batch, from getrf's factors of matrix a_index[b] (b itself when a_index is
// null) and its pivots at ipiv + a_index[b] * n.
void getrs(bool transpose, int64_t batch, int64_t n, int64_t nrhs, const float* a, int64_t lda, int64_t stride_a,
           const int* ipiv, const int64_t* a_index, float* b, int64_t ldb, int64_t stride_b, int device);
void getrs(bool transpose, int64_t batch, int64_t n, int64_t nrhs, const double* a, int64_t lda, int64_t stride_a,
           const int* ipiv, const int64_t* a_index, double* b, int64_t ldb, int64_t stride_b, int device);

// The inverses from getrf's factors (all nonsingular), written to the n x n
// matrices out + b * stride_out: cuSOLVER has no getri, so out is set to the
// identity and getrs solves A X = I in it.
void getri(int64_t batch, int64_t n, const float* a, int64_t lda, int64_t stride_a, const int* ipiv, float* out,
           int64_t ld_out, int64_t stride_out, int device);
void getri(int64_t batch, int64_t n, const double* a, int64_t lda, int64_t stride_a, const int* ipiv, double* out,
           int64_t ld_out, int64_t stride_out, int device);

// Cholesky factor in place, in the lower (upper: upper) triangle; the other
// triangle is zeroed. info = i > 0: the leading minor of order i is not
// positive-definite.
void potrf(bool upper, int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, int* info, int device);
void potrf(bool upper, int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, int* info, int device);

// Eigenvalues (ascending, n per matrix at w + b * stride_w) and, with vectors,
// orthonormal eigenvectors overwriting a, of symmetric matrices read from the
// lower (upper) triangle. info > 0: no convergence.
void syevd(bool vectors, bool upper, int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, float* w,
           int64_t stride_w, int* info, int device);
void syevd(bool vectors, bool upper, int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, double* w,
           int64_t stride_w, int* info, int device);

// Householder QR in place (R above the diagonal, reflectors below), min(m, n)
// scalars per matrix at tau + b * stride_tau.
void geqrf(int64_t batch, int64_t m, int64_t n, float* a, int64_t lda, int64_t stride_a, float* tau,
           int64_t stride_tau, int device);
void geqrf(int64_t batch, int64_t m, int64_t n, double* a, int64_t lda, int64_t stride_a, double* tau,
           int64_t stride_tau, int device);

// The m x n Q (m >= n >= k) from the first k reflectors geqrf left, in place.
// k must be >= 1 (with k = 0, Q is the identity: the caller makes it).
void orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, float* a, int64_t lda, int64_t stride_a, const float* tau,
           int64_t stride_tau, int device);
void orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, double* a, int64_t lda, int64_t stride_a,
           const double* tau, int64_t stride_tau, int device);

// SVD of m x n matrices (destroyed) with m >= n (cuSOLVER's gesvd has no m < n:
// the caller decomposes A^T instead). s gets n singular values per matrix,
// descending; u (m x m for All, m x n for Reduced) and vt (n x n) as for
// kernels::cpu::lapack::gesdd, not touched (may be null) for None.
// info > 0: no convergence.
void gesvd(SvdVectors vectors, int64_t batch, int64_t m, int64_t n, float* a, int64_t lda, int64_t stride_a, float* s,
           int64_t stride_s, float* u, int64_t ldu, int64_t stride_u, float* vt, int64_t ldvt, int64_t stride_vt,
           int* info, int device);
void gesvd(SvdVectors vectors, int64_t batch, int64_t m, int64_t n, double* a, int64_t lda, int64_t stride_a,
           double* s, int64_t stride_s, double* u, int64_t ldu, int64_t stride_u, double* vt, int64_t ldvt,
           int64_t stride_vt, int* info, int device);

}  // namespace gradiens::kernels::cuda::solver
