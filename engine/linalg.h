// gradiens::linalg, the torch.linalg functions computed through LAPACK: det,
// slogdet, inv, solve, cholesky, qr, eigh, svd, svdvals, matrix_norm, cond
// (engine/ops/linalg_lapack.cpp). Matrices are the last two dims; leading dims
// are a batch. float32 and float64 only.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "engine/tensor.h"

namespace gradiens::linalg {

// Derivatives: det, slogdet (logabsdet), inv, solve, cholesky, eigh, svd and
// svdvals (hence matrix_norm and cond of every order) are differentiable to any
// order (their backward formulas are built from these same ops), with limits:
// - det at an exactly singular matrix (some det == 0 in the batch) gets the right
//   first derivative, the cofactor matrix, from an SVD; that gradient is treated
//   as a constant of A, so derivatives of order >= 2 there are not computed.
// - slogdet at a singular matrix has an infinite derivative: its gradient holds
//   infinities (and NaN where the cofactor is 0), as in PyTorch.
// - cholesky and eigh read one triangle of A, but their gradient is the one for
//   a symmetric A (symmetrized for cholesky, as in PyTorch); differentiate a
//   function that builds A symmetric.
// - Gradients through eigenvectors or singular vectors need distinct eigenvalues
//   (singular values; for singular vectors also a full-rank A) and are meaningful
//   only for losses that do not depend on the vectors' signs. The extra columns
//   of svd's complete U and Vh (full_matrices) get no gradient, as in PyTorch.
//   Singular values alone (svdvals, norms) need none of this.
// - qr is forward only: backward through it throws gradiens::Error.

// Determinant of each matrix of A [..., n, n] -> [...].
Tensor det(const Tensor& A);
// (sign, log|det|) of each matrix, both [...]; sign is 0 and logabsdet -inf for
// a singular matrix. Only logabsdet is differentiable.
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
// Inverse of each matrix; a singular one is an error naming its zero pivot.
Tensor inv(const Tensor& A);
// X with A X = B (left) or X A = B (!left). A [..., n, n]; B [..., n, k], or a
// batch of vectors [..., n] when B is 1-D or B's shape is A's without the last dim
// (then X is [..., n]). Batch dims broadcast.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
// Cholesky factor of each symmetric positive-definite matrix: lower L with
// A = L L^T, or upper U = L^T with A = U^T U.
Tensor cholesky(const Tensor& A, bool upper = false);
// QR of A [..., m, n], k = min(m, n). mode "reduced": Q [..., m, k], R [..., k, n];
// "complete": Q [..., m, m], R [..., m, n]; "r": Q empty, R [..., k, n].
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");
// (eigenvalues ascending [..., n], orthonormal eigenvectors as columns [..., n, n])
// of symmetric matrices, read from the lower ("L") or upper ("U") triangle.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO = "L");
// (U, S, Vh) with A = U diag(S) Vh, S descending; full_matrices: U [..., m, m] and
// Vh [..., n, n], else U [..., m, k] and Vh [..., k, n].
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
// The singular values S [..., k], descending.
Tensor svdvals(const Tensor& A);
// Matrix norm over the two dims `dim`: ord "fro", "nuc", or a number: inf and -inf
// (max/min absolute row sum), 1 and -1 (max/min absolute column sum), 2 and -2
// (largest/smallest singular value).
Tensor matrix_norm(const Tensor& A, std::string_view ord = "fro", IntArrayRef dim = {-2, -1}, bool keepdim = false);
Tensor matrix_norm(const Tensor& A, const char* ord, IntArrayRef dim = {-2, -1}, bool keepdim = false);
Tensor matrix_norm(const Tensor& A, Scalar ord, IntArrayRef dim = {-2, -1}, bool keepdim = false);
// Condition number in the norm p: p = 2 (the default) or -2 use the singular
// values and accept any A [..., m, n]; "fro", "nuc", inf, -inf, 1, -1 compute
// norm(A) * norm(inv(A)) on square matrices and give inf for a singular one.
Tensor cond(const Tensor& A, std::optional<Scalar> p = std::nullopt);
Tensor cond(const Tensor& A, std::string_view p);
Tensor cond(const Tensor& A, const char* p);

}  // namespace gradiens::linalg
