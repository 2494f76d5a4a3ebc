// Device-neutral entry points of the row-major GEMM behind every matrix product:
// kernels/cpu/gemm.h (OpenBLAS, oneDNN, the small float64 kernel) on the CPU,
// cuBLAS and cuBLASLt (kernels/cuda/runtime.h) on a cuda device.
#pragma once

#include <cstdint>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"

namespace gradiens::kernels {

// C_i = alpha * op(A_i) op(B_i) + beta * C_i for i < batch, matrix i of each
// operand stride_* elements after the one before; op(A) is [m, k], op(B) [k, n]
// and C [m, n], row-major with leading dims lda, ldb, ldc (elements). float32
// and float64 on the CPU; a cuda device also takes float16 and bfloat16
// (accumulated in float32).
void gemm_batched(ScalarType dtype, int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                  int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c, const DeviceRef& device);

// C = op(A) op(B) + bias (n values, one per column of C: Linear's bias) in one
// call, float32 or float64. Returns false, having done nothing, where no such
// fused kernel exists (always on the CPU; on a cuda device when cuBLASLt is not
// there or declines): the caller then adds the bias itself.
bool gemm_bias(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, const void* bias, void* c, int64_t ldc,
               const DeviceRef& device);

// What happens to op(A) op(B) on its way out of gemm_epilogue: the bias added,
// then relu or gelu (tanh approximation) for _addmm_activation.
enum class GemmEpilogue { Bias, BiasRelu, BiasGeluTanh };

// C = epilogue(op(A) op(B) + bias) in one call, float32, float64, float16 or
// bfloat16. As gemm_bias, false (nothing done) where no fused kernel exists;
// the CPU has one for the float64 bias of a thin product (k <= 64, n <= 64:
// kernels/cpu/small_gemm.h) and its callers compose the parts elsewhere. The
// bias is added after the product's rounding, so the result equals the
// composition bit for bit.
bool gemm_epilogue(GemmEpilogue epilogue, ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* bias, void* c,
                   int64_t ldc, const DeviceRef& device);

// C = op(A) op(B) and bias_grad (m values) = the row sums of op(A), a sum over
// k, in one call: Linear's weight gradient g^T x and its bias gradient (sum of
// g over the rows) on a cuda device (cuBLASLt's bias-gradient epilogue),
// float32 or float64. false, having done nothing, where no such fused kernel
// exists (always on the CPU): the caller then sums.
bool gemm_bias_gradient(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                        int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc, void* bias_grad,
                        const DeviceRef& device);

}  // namespace gradiens::kernels
