// CPU matrix products: row-major GEMM and strided-batched GEMM for float32 and
// float64, dispatched to OpenBLAS or oneDNN (see gemm.cpp), with the thread count
// chosen per call so that small products stay single-threaded.
#pragma once

#include <cstdint>

namespace gradiens::kernels::cpu {

// Shape legend: op(A) is [m, k], op(B) is [k, n], C is [m, n]; op transposes when
// trans_* is set. All matrices are row-major; lda/ldb/ldc are the row strides (in
// elements) of the matrices as stored, so A stored untransposed needs lda >= k and
// A stored transposed ([k, m]) needs lda >= m.
//
// C = alpha * op(A) * op(B) + beta * C, with BLAS conventions: beta == 0 overwrites C
// (NaN in C does not survive) and alpha == 0 or k == 0 leaves C = beta * C without
// reading A or B.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

// batch independent GEMMs; matrix i is at a + i * stride_a (likewise b, c). A stride
// of 0 for A or B broadcasts one matrix to every product. The C matrices must not
// overlap.
void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float* a, int64_t lda, int64_t stride_a, const float* b,
                  int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                  int64_t stride_c);
void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const double* a, int64_t lda, int64_t stride_a, const double* b,
                  int64_t ldb, int64_t stride_b, double beta, double* c, int64_t ldc,
                  int64_t stride_c);

// The library-wide thread count used for GEMMs large enough to profit from threads
// (small ones always run on the calling thread). Defaults to OpenBLAS's own count at
// start-up (OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the number of cores).
void set_gemm_threads(int threads);
int gemm_threads();

// The threads one GEMM of this dtype and size runs on: gemm_threads() when it is big
// enough to profit on its backend, else 1 (Note [GEMM threads] in gemm.cpp).
int gemm_threads_for(bool is_float32, int64_t m, int64_t n, int64_t k);

// "onednn" or "openblas": the backend gemm() uses for this shape, for reports.
const char* gemm_backend_name(bool is_float32, int64_t m, int64_t n, int64_t k);

namespace testing {
// Forces every float32 GEMM onto one backend, so tests cover both; Auto restores
// the per-shape rule. Not for production use: it is a process-wide switch.
enum class Float32Backend { Auto, OneDnn, OpenBlas };
void gemm_force_backend(Float32Backend backend);
// Number of oneDNN matmul primitives cached for the calling thread (the cache is
// per thread), for the cache tests.
int gemm_onednn_cache_size();
// How many primitives that cache holds at most before it evicts the least recently used.
int gemm_onednn_cache_capacity();
}  // namespace testing

}  // namespace gradiens::kernels::cpu
