// The cuBLASLt epilogues of kernels/gemm.h on the GPU (kernels/cuda/blas.cpp),
// beside the plain GEMM of kernels/cuda/runtime.h. Needs no CUDA headers.
#pragma once

#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels::cuda {

// C = epilogue(op(A) op(B) + bias) (bias: n values, one per column of the
// row-major C) in one cuBLASLt call, float32, float64, float16 or bfloat16
// (the last two accumulated in float32 and rounded once). Returns false,
// having done nothing, when cuBLASLt is not there (or GRADIENS_CUDA_NO_LT=1)
// or has no kernel for the problem: the caller then composes it.
bool gemm_epilogue(GemmEpilogue epilogue, ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* bias, void* c,
                   int64_t ldc, int device);

// C = op(A) op(B), and bias_grad (m values) receives the row sums of op(A)
// (sums over k) from the same call (cuBLASLt's BGRADB epilogue): Linear's
// weight gradient g^T x with its bias gradient. float32 or float64; false,
// having done nothing, where cuBLASLt is not there or declines.
bool gemm_bias_gradient(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                        int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc, void* bias_grad, int device);

}  // namespace gradiens::kernels::cuda
