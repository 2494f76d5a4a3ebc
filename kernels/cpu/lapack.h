// Thin wrappers over the LAPACK routines that OpenBLAS ships (LU, Cholesky, QR,
// symmetric eigendecomposition, SVD), one matrix per call, float32 and float64.
#pragma once

#include <cstdint>

#include "kernels/linalg.h"  // SvdVectors

namespace gradiens::kernels::cpu::lapack {

// Every matrix is COLUMN-MAJOR, as LAPACK wants it: element (i, j) of an m x n
// matrix is at a[i + j * lda], lda >= max(1, m). The caller (engine/) owns the
// layout change from gradiens' row-major tensors. Each function returns LAPACK's
// `info`: 0 on success, > 0 for a numerical failure whose meaning is given below
// (the caller turns it into a user error); a negative info is an argument bug and
// throws an internal error here. Sizes must fit LAPACK's 32-bit integers
// (a gradiens::Error otherwise). Workspaces are queried and allocated inside.

// LU with partial pivoting of the n x n matrix a, in place: P A = L U. ipiv (n
// entries) gets LAPACK's 1-based pivot rows. info = i > 0: U(i, i) is exactly zero.
int getrf(int64_t n, float* a, int64_t lda, int* ipiv);
int getrf(int64_t n, double* a, int64_t lda, int* ipiv);

// The inverse from getrf's factors, in place. info = i > 0: U(i, i) is zero.
int getri(int64_t n, float* a, int64_t lda, const int* ipiv);
int getri(int64_t n, double* a, int64_t lda, const int* ipiv);

// Solves A X = B (transpose: A^T X = B) for the n x nrhs matrix b, in place, from
// getrf's factors of A.
int getrs(bool transpose, int64_t n, int64_t nrhs, const float* a, int64_t lda, const int* ipiv, float* b, int64_t ldb);
int getrs(bool transpose, int64_t n, int64_t nrhs, const double* a, int64_t lda, const int* ipiv, double* b,
          int64_t ldb);

// Cholesky factor of the symmetric positive-definite n x n matrix a, in place,
// reading and writing only its lower (upper: upper) triangle: A = L L^T or U^T U.
// info = i > 0: the leading minor of order i is not positive-definite.
int potrf(bool upper, int64_t n, float* a, int64_t lda);
int potrf(bool upper, int64_t n, double* a, int64_t lda);

// Eigenvalues w (ascending) and, with vectors, orthonormal eigenvectors (the
// columns of a, overwriting it) of the symmetric n x n matrix a, reading its lower
// (upper: upper) triangle. Divide and conquer (syevd). info > 0: no convergence.
int syevd(bool vectors, bool upper, int64_t n, float* a, int64_t lda, float* w);
int syevd(bool vectors, bool upper, int64_t n, double* a, int64_t lda, double* w);

// Householder QR of the m x n matrix a, in place: R in the upper triangle,
// reflectors below it, their scalars in tau (min(m, n) entries).
int geqrf(int64_t m, int64_t n, float* a, int64_t lda, float* tau);
int geqrf(int64_t m, int64_t n, double* a, int64_t lda, double* tau);

// The m x n matrix Q with orthonormal columns (m >= n >= k) made from the first k
// reflectors geqrf left in a, in place.
int orgqr(int64_t m, int64_t n, int64_t k, float* a, int64_t lda, const float* tau);
int orgqr(int64_t m, int64_t n, int64_t k, double* a, int64_t lda, const double* tau);

// SVD of the m x n matrix a (destroyed), divide and conquer (gesdd): s gets the
// min(m, n) singular values, descending. SvdVectors::All: u is m x m and vt n x n;
// Reduced: u is m x k and vt k x n (k = min(m, n)); None: u and vt are not touched
// (may be null). info > 0: no convergence. A non-finite input gives info = -4 from
// LAPACK; it is returned (not thrown) so the caller can name the cause.
using kernels::SvdVectors;
int gesdd(SvdVectors vectors, int64_t m, int64_t n, float* a, int64_t lda, float* s, float* u, int64_t ldu, float* vt,
          int64_t ldvt);
int gesdd(SvdVectors vectors, int64_t m, int64_t n, double* a, int64_t lda, double* s, double* u, int64_t ldu,
          double* vt, int64_t ldvt);

}  // namespace gradiens::kernels::cpu::lapack
