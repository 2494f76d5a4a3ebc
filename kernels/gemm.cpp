// The GEMM entry points (kernels/gemm.h): kernels/cpu/gemm.h, or cuBLAS and
// cuBLASLt through kernels/cuda/runtime.h and kernels/cuda/blas.h on a cuda device.
#include "kernels/gemm.h"

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels {

void gemm_batched(ScalarType dtype, int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                  int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c, const DeviceRef& device) {
  if (device.is_cuda()) {
    cuda::gemm_batched(dtype, batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                       ldc, stride_c, device.index);
    return;
  }
  dispatch_floating(dtype, "gemm", [&]<class T>() {
    const T *ap = static_cast<const T*>(a), *bp = static_cast<const T*>(b);
    T* cp = static_cast<T*>(c);
    if (batch == 1)
      cpu::gemm(trans_a, trans_b, m, n, k, T(alpha), ap, lda, bp, ldb, T(beta), cp, ldc);
    else
      cpu::gemm_batched(batch, trans_a, trans_b, m, n, k, T(alpha), ap, lda, stride_a, bp, ldb, stride_b, T(beta), cp,
                        ldc, stride_c);
  });
}

bool gemm_bias(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, const void* bias, void* c, int64_t ldc,
               const DeviceRef& device) {
  if (!device.is_cuda()) return false;
  return cuda::gemm_bias(dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, bias, c, ldc, device.index);
}

bool gemm_epilogue(GemmEpilogue epilogue, ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* bias, void* c,
                   int64_t ldc, const DeviceRef& device) {
  if (!device.is_cuda()) {
    // The float64 bias epilogue of a thin product (a PINN's Linear layer), added
    // as its results leave the registers instead of in a pass of its own.
    if (epilogue != GemmEpilogue::Bias || dtype != ScalarType::Float64 ||
        !cpu::small_gemm_bias_applies(trans_a, trans_b, m, n, k))
      return false;
    cpu::small_gemm(trans_a, trans_b, m, n, k, 1.0, static_cast<const double*>(a), lda,
                    static_cast<const double*>(b), ldb, 0.0, static_cast<double*>(c), ldc,
                    static_cast<const double*>(bias));
    return true;
  }
  return cuda::gemm_epilogue(epilogue, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, bias, c, ldc,
                             device.index);
}

bool gemm_bias_gradient(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                        int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc, void* bias_grad,
                        const DeviceRef& device) {
  if (!device.is_cuda()) return false;
  return cuda::gemm_bias_gradient(dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, bias_grad, device.index);
}

}  // namespace gradiens::kernels
