// The linear-algebra entry points (kernels/linalg.h): on the CPU a loop over the
// batch into kernels/cpu/lapack.h, one LAPACK call per matrix, in batch order;
// on a cuda device one call of kernels/cuda/solver.h for the whole batch.
#include "kernels/linalg.h"

#include <algorithm>
#include <string>

#include "kernels/cpu/lapack.h"
#include "kernels/cuda/solver.h"
#include "kernels/error.h"

namespace gradiens::kernels {

namespace {

// Runs f.template operator()<T>() for the float32 or float64 dtype of a call.
template <class F>
void dispatch_lapack_type(ScalarType dtype, const char* routine, F&& f) {
  switch (dtype) {
    case ScalarType::Float32: f.template operator()<float>(); return;
    case ScalarType::Float64: f.template operator()<double>(); return;
    default: GD_INTERNAL_ASSERT(false, std::string(routine) + ": a float32 or float64 buffer was expected");
  }
}

template <class T>
T* at(void* base, int64_t b, int64_t stride) {
  return static_cast<T*>(base) + b * stride;
}
template <class T>
const T* at(const void* base, int64_t b, int64_t stride) {
  return static_cast<const T*>(base) + b * stride;
}

}  // namespace

void getrf(ScalarType dtype, int64_t batch, int64_t n, void* a, int64_t lda, int64_t stride_a, int* pivots,
           int* infos, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "getrf", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::getrf(batch, n, static_cast<T*>(a), lda, stride_a, pivots, infos, device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b) infos[b] = cpu::lapack::getrf(n, at<T>(a, b, stride_a), lda, pivots + b * n);
  });
}

void getrs(ScalarType dtype, bool transpose, int64_t batch, int64_t n, int64_t nrhs, const void* a, int64_t lda,
           int64_t stride_a, const int* pivots, const int64_t* a_index, void* b, int64_t ldb, int64_t stride_b,
           const DeviceRef& device) {
  dispatch_lapack_type(dtype, "getrs", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::getrs(transpose, batch, n, nrhs, static_cast<const T*>(a), lda, stride_a, pivots, a_index,
                          static_cast<T*>(b), ldb, stride_b, device.index);
      return;
    }
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t m = a_index ? a_index[i] : i;
      cpu::lapack::getrs(transpose, n, nrhs, at<T>(a, m, stride_a), lda, pivots + m * n, at<T>(b, i, stride_b), ldb);
    }
  });
}

void getri(ScalarType dtype, int64_t batch, int64_t n, const void* a, int64_t lda, int64_t stride_a,
           const int* pivots, void* out, int64_t ld_out, int64_t stride_out, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "getri", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::getri(batch, n, static_cast<const T*>(a), lda, stride_a, pivots, static_cast<T*>(out), ld_out,
                          stride_out, device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b) {
      const T* factors = at<T>(a, b, stride_a);
      T* inverse = at<T>(out, b, stride_out);
      for (int64_t j = 0; j < n; ++j) std::copy(factors + j * lda, factors + j * lda + n, inverse + j * ld_out);
      cpu::lapack::getri(n, inverse, ld_out, pivots + b * n);
    }
  });
}

void potrf(ScalarType dtype, bool upper, int64_t batch, int64_t n, void* a, int64_t lda, int64_t stride_a,
           int* infos, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "potrf", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::potrf(upper, batch, n, static_cast<T*>(a), lda, stride_a, infos, device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b) {
      T* factor = at<T>(a, b, stride_a);
      infos[b] = cpu::lapack::potrf(upper, n, factor, lda);
      // LAPACK leaves A's entries in the other triangle.
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          if (upper ? i > j : i < j) factor[i + j * lda] = 0;
    }
  });
}

void syevd(ScalarType dtype, bool vectors, bool upper, int64_t batch, int64_t n, void* a, int64_t lda,
           int64_t stride_a, void* w, int64_t stride_w, int* infos, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "syevd", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::syevd(vectors, upper, batch, n, static_cast<T*>(a), lda, stride_a, static_cast<T*>(w), stride_w,
                          infos, device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b)
      infos[b] = cpu::lapack::syevd(vectors, upper, n, at<T>(a, b, stride_a), lda, at<T>(w, b, stride_w));
  });
}

void geqrf(ScalarType dtype, int64_t batch, int64_t m, int64_t n, void* a, int64_t lda, int64_t stride_a, void* tau,
           int64_t stride_tau, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "geqrf", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::geqrf(batch, m, n, static_cast<T*>(a), lda, stride_a, static_cast<T*>(tau), stride_tau,
                          device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b)
      cpu::lapack::geqrf(m, n, at<T>(a, b, stride_a), lda, at<T>(tau, b, stride_tau));
  });
}

void orgqr(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, void* a, int64_t lda, int64_t stride_a,
           const void* tau, int64_t stride_tau, const DeviceRef& device) {
  dispatch_lapack_type(dtype, "orgqr", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::orgqr(batch, m, n, k, static_cast<T*>(a), lda, stride_a, static_cast<const T*>(tau), stride_tau,
                          device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b)
      cpu::lapack::orgqr(m, n, k, at<T>(a, b, stride_a), lda, at<T>(tau, b, stride_tau));
  });
}

bool svd_needs_tall_matrices(const DeviceRef& device) { return device.is_cuda(); }

void svd(ScalarType dtype, SvdVectors vectors, int64_t batch, int64_t m, int64_t n, void* a, int64_t lda,
         int64_t stride_a, void* s, int64_t stride_s, void* u, int64_t ldu, int64_t stride_u, void* vt, int64_t ldvt,
         int64_t stride_vt, int* infos, const DeviceRef& device) {
  const bool with_vectors = vectors != SvdVectors::None;
  dispatch_lapack_type(dtype, "svd", [&]<class T>() {
    if (device.is_cuda()) {
      cuda::solver::gesvd(vectors, batch, m, n, static_cast<T*>(a), lda, stride_a, static_cast<T*>(s), stride_s,
                          static_cast<T*>(u), ldu, stride_u, static_cast<T*>(vt), ldvt, stride_vt, infos,
                          device.index);
      return;
    }
    for (int64_t b = 0; b < batch; ++b)
      infos[b] = cpu::lapack::gesdd(vectors, m, n, at<T>(a, b, stride_a), lda, at<T>(s, b, stride_s),
                                    with_vectors ? at<T>(u, b, stride_u) : nullptr, ldu,
                                    with_vectors ? at<T>(vt, b, stride_vt) : nullptr, ldvt);
  });
}

}  // namespace gradiens::kernels
