// Direct float64 GEMM for thin products (Note [Small float64 GEMM] in small_gemm.cpp):
// a register-tiled Highway kernel that reads A and B in place, for the shapes of
// narrow MLPs (PINNs) where OpenBLAS spends more time packing than multiplying.
#pragma once

#include <cstdint>

namespace gradiens::kernels::cpu {

// Whether small_gemm handles C[m, n] = alpha * op(A) op(B) + beta * C (same
// conventions as gemm() in gemm.h): n is at most kSmallGemmMaxN and either k is
// small (a tall product, any m) or m is small and B is not transposed (a long
// reduction, any k).
bool small_gemm_applies(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k);

// Whether small_gemm takes a bias for this shape: a tall product (k <= 64),
// whose reduction is one chunk.
bool small_gemm_bias_applies(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k);

// Requires small_gemm_applies(...), k > 0. beta == 0 overwrites C without reading it.
// bias (n values, or null) is added to every row of alpha * op(A) op(B) after its
// rounding, as a separate add would be: C = alpha * op(A) op(B) + bias; it
// requires small_gemm_bias_applies(...) and beta == 0.
void small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                double* c, int64_t ldc, const double* bias = nullptr);

inline constexpr int64_t kSmallGemmMaxN = 64;

}  // namespace gradiens::kernels::cpu
