// Device-neutral entry points of dense linear algebra (LU, Cholesky, symmetric
// eigendecomposition, QR, SVD) over batches of column-major matrices: a loop
// over kernels/cpu/lapack.h (LAPACK) on the CPU, kernels/cuda/solver.h
// (cuSOLVER, batched routines where they fit) on a cuda device.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// Which singular vectors an SVD computes. All: U is m x m and V^T n x n;
// Reduced: U is m x k and V^T k x n (k = min(m, n)); None: neither.
enum class SvdVectors { None, Reduced, All };

// Every call covers `batch` matrices of dtype float32 or float64: matrix b of an
// operand x is at x + b * stride_x (elements), COLUMN-MAJOR with leading
// dimension ld_x (element (i, j) at x[i + j * ld_x]), all in memory of `device`
// (host memory for the CPU) except a_index, which is host memory. On a cuda
// device the work is queued on the device's current stream and the call returns
// before it has finished. Each routine means what its LAPACK twin in
// kernels/cpu/lapack.h means.
//
// `infos` (batch ints in the device's memory) gets LAPACK's info of each matrix:
// 0 (also for empty matrices), or > 0 for the numerical failure described below.
// Reading it on the host is the caller's one synchronisation. Pivots are LAPACK's 1-based rows, n per matrix
// (pivots + b * n). Sizes must fit 32-bit integers (a gradiens::Error otherwise).

// LU with partial pivoting in place, P A = L U. info = i > 0: U(i, i) is exactly zero.
void getrf(ScalarType dtype, int64_t batch, int64_t n, void* a, int64_t lda, int64_t stride_a, int* pivots,
           int* infos, const DeviceRef& device);

// Solves A X = B (transpose: A^T X = B) in place for each n x nrhs matrix of b,
// from getrf's factors of matrix a_index[b] of a (matrix b when a_index is null)
// and its pivots.
void getrs(ScalarType dtype, bool transpose, int64_t batch, int64_t n, int64_t nrhs, const void* a, int64_t lda,
           int64_t stride_a, const int* pivots, const int64_t* a_index, void* b, int64_t ldb, int64_t stride_b,
           const DeviceRef& device);

// The inverses from getrf's factors (all nonsingular), written to the n x n
// matrices of `out` (the CPU copies the factors there and runs getri; the GPU
// solves A X = I there).
void getri(ScalarType dtype, int64_t batch, int64_t n, const void* a, int64_t lda, int64_t stride_a,
           const int* pivots, void* out, int64_t ld_out, int64_t stride_out, const DeviceRef& device);

// Cholesky factor in place, in the lower (upper: upper) triangle; the other
// triangle is zeroed. info = i > 0: the leading minor of order i is not
// positive-definite.
void potrf(ScalarType dtype, bool upper, int64_t batch, int64_t n, void* a, int64_t lda, int64_t stride_a,
           int* infos, const DeviceRef& device);

// Eigenvalues (ascending, n per matrix at w + b * stride_w) and, with vectors,
// orthonormal eigenvectors overwriting a, of symmetric matrices read from the
// lower (upper) triangle. info > 0: no convergence.
void syevd(ScalarType dtype, bool vectors, bool upper, int64_t batch, int64_t n, void* a, int64_t lda,
           int64_t stride_a, void* w, int64_t stride_w, int* infos, const DeviceRef& device);

// Householder QR of m x n matrices in place (R on and above the diagonal,
// reflectors below it), min(m, n) scalars per matrix at tau + b * stride_tau.
void geqrf(ScalarType dtype, int64_t batch, int64_t m, int64_t n, void* a, int64_t lda, int64_t stride_a, void* tau,
           int64_t stride_tau, const DeviceRef& device);

// The m x n Q with orthonormal columns (m >= n >= k >= 1) from the first k
// reflectors geqrf left in a, in place.
void orgqr(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, void* a, int64_t lda, int64_t stride_a,
           const void* tau, int64_t stride_tau, const DeviceRef& device);

// SVD of m x n matrices (destroyed): s gets min(m, n) singular values per matrix,
// descending; u and vt as SvdVectors says (not touched, may be null, for None).
// The CPU runs LAPACK's gesdd on any shape and reports a non-finite input as
// info = -4; cuSOLVER's gesvd needs m >= n (the caller decomposes A^T instead)
// and does not look for non-finite values. info > 0: no convergence.
bool svd_needs_tall_matrices(const DeviceRef& device);
void svd(ScalarType dtype, SvdVectors vectors, int64_t batch, int64_t m, int64_t n, void* a, int64_t lda,
         int64_t stride_a, void* s, int64_t stride_s, void* u, int64_t ldu, int64_t stride_u, void* vt, int64_t ldvt,
         int64_t stride_vt, int* infos, const DeviceRef& device);

}  // namespace gradiens::kernels
