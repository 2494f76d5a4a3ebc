// The cuSOLVER entry points of solver.h: one cusolverDn handle per (thread,
// device) set to the current stream, batches as loops over cuSOLVER's
// one-matrix routines (a workspace from the caching allocator shared by the
// loop), or one batched call for many small matrices (Note [Batched solvers]).
// cuSOLVER is loaded on first use (dlopen), as blas.cpp loads cuBLAS.
#include "kernels/cuda/solver.h"

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <string>
#include <type_traits>

#include "kernels/cuda/library.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/solver_kernels.h"
#include "kernels/error.h"

namespace gradiens::kernels::cuda::solver {

namespace {

constexpr int kMaxDevices = 16;

// Note [Batched solvers]
// ~~~~~~~~~~~~~~~~~~~~~~
// A loop of one-matrix cuSOLVER calls costs a few launches per matrix, which
// dominates for small matrices. A batch of at least kManyMatrices matrices of
// order n <= kSmallMatrix goes instead to one batched routine:
//   getrf  cublas<t>getrfBatched                 (pointer arrays on the device)
//   getrs  cublas<t>getrsBatched                 (each b solved with its own a)
//   potrf  cusolverDn<t>potrfBatched             (pointer array on the device)
//   syevd  cusolverDn<t>syevjBatched (Jacobi)    (matrices packed n x n, lda = n)
// with the same info meanings (syevj reports no convergence as info = n + 1).
// Their results agree with the looped routines' to rounding, not bit for bit.
// The pointer arrays come from the caching allocator, filled by a kernel on the
// current stream (solver_kernels.h). cuBLAS has its own handle here, loaded
// the way blas.cpp loads it.
constexpr int64_t kSmallMatrix = 32;
constexpr int64_t kManyMatrices = 16;

bool batched_fits(int64_t batch, int64_t n) { return n <= kSmallMatrix && batch >= kManyMatrices; }

// The routines of one precision, resolved from the shared library.
template <class T>
struct Routines;

template <>
struct Routines<float> {
  decltype(&cusolverDnSgetrf_bufferSize) getrf_buffer_size;
  decltype(&cusolverDnSgetrf) getrf;
  decltype(&cusolverDnSgetrs) getrs;
  decltype(&cusolverDnSpotrf_bufferSize) potrf_buffer_size;
  decltype(&cusolverDnSpotrf) potrf;
  decltype(&cusolverDnSsyevd_bufferSize) syevd_buffer_size;
  decltype(&cusolverDnSsyevd) syevd;
  decltype(&cusolverDnSgeqrf_bufferSize) geqrf_buffer_size;
  decltype(&cusolverDnSgeqrf) geqrf;
  decltype(&cusolverDnSorgqr_bufferSize) orgqr_buffer_size;
  decltype(&cusolverDnSorgqr) orgqr;
  decltype(&cusolverDnSgesvd_bufferSize) gesvd_buffer_size;
  decltype(&cusolverDnSgesvd) gesvd;
  decltype(&cusolverDnSpotrfBatched) potrf_batched;
  decltype(&cusolverDnSsyevjBatched_bufferSize) syevj_batched_buffer_size;
  decltype(&cusolverDnSsyevjBatched) syevj_batched;
  decltype(&cublasSgetrfBatched) getrf_batched;  // from cuBLAS
  decltype(&cublasSgetrsBatched) getrs_batched;  // from cuBLAS
};

template <>
struct Routines<double> {
  decltype(&cusolverDnDgetrf_bufferSize) getrf_buffer_size;
  decltype(&cusolverDnDgetrf) getrf;
  decltype(&cusolverDnDgetrs) getrs;
  decltype(&cusolverDnDpotrf_bufferSize) potrf_buffer_size;
  decltype(&cusolverDnDpotrf) potrf;
  decltype(&cusolverDnDsyevd_bufferSize) syevd_buffer_size;
  decltype(&cusolverDnDsyevd) syevd;
  decltype(&cusolverDnDgeqrf_bufferSize) geqrf_buffer_size;
  decltype(&cusolverDnDgeqrf) geqrf;
  decltype(&cusolverDnDorgqr_bufferSize) orgqr_buffer_size;
  decltype(&cusolverDnDorgqr) orgqr;
  decltype(&cusolverDnDgesvd_bufferSize) gesvd_buffer_size;
  decltype(&cusolverDnDgesvd) gesvd;
  decltype(&cusolverDnDpotrfBatched) potrf_batched;
  decltype(&cusolverDnDsyevjBatched_bufferSize) syevj_batched_buffer_size;
  decltype(&cusolverDnDsyevjBatched) syevj_batched;
  decltype(&cublasDgetrfBatched) getrf_batched;  // from cuBLAS
  decltype(&cublasDgetrsBatched) getrs_batched;  // from cuBLAS
};

struct CusolverApi {
  decltype(&cusolverDnCreate) create;
  decltype(&cusolverDnSetStream) set_stream;
  decltype(&cusolverDnCreateSyevjInfo) create_syevj_info;
  decltype(&cusolverDnDestroySyevjInfo) destroy_syevj_info;
  decltype(&cusolverDnXsyevjSetSortEig) syevj_set_sort_eig;
  decltype(&cublasCreate_v2) cublas_create;
  decltype(&cublasSetStream_v2) cublas_set_stream;
  Routines<float> single;
  Routines<double> double_;
};

// `prefix` is "cusolverDnS" or "cusolverDnD", `blas_prefix` "cublasS" or "cublasD".
template <class T>
void resolve_routines(void* library, void* blas_library, const std::string& prefix, const std::string& blas_prefix,
                      Routines<T>& r) {
  resolve(library, (prefix + "getrf_bufferSize").c_str(), r.getrf_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "getrf").c_str(), r.getrf, "cuSOLVER");
  resolve(library, (prefix + "getrs").c_str(), r.getrs, "cuSOLVER");
  resolve(library, (prefix + "potrf_bufferSize").c_str(), r.potrf_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "potrf").c_str(), r.potrf, "cuSOLVER");
  resolve(library, (prefix + "syevd_bufferSize").c_str(), r.syevd_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "syevd").c_str(), r.syevd, "cuSOLVER");
  resolve(library, (prefix + "geqrf_bufferSize").c_str(), r.geqrf_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "geqrf").c_str(), r.geqrf, "cuSOLVER");
  resolve(library, (prefix + "orgqr_bufferSize").c_str(), r.orgqr_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "orgqr").c_str(), r.orgqr, "cuSOLVER");
  resolve(library, (prefix + "gesvd_bufferSize").c_str(), r.gesvd_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "gesvd").c_str(), r.gesvd, "cuSOLVER");
  resolve(library, (prefix + "potrfBatched").c_str(), r.potrf_batched, "cuSOLVER");
  resolve(library, (prefix + "syevjBatched_bufferSize").c_str(), r.syevj_batched_buffer_size, "cuSOLVER");
  resolve(library, (prefix + "syevjBatched").c_str(), r.syevj_batched, "cuSOLVER");
  resolve(blas_library, (blas_prefix + "getrfBatched").c_str(), r.getrf_batched, "cuBLAS");
  resolve(blas_library, (blas_prefix + "getrsBatched").c_str(), r.getrs_batched, "cuBLAS");
}

const CusolverApi& cusolver() {
  static const CusolverApi api = [] {
    std::string error;
    void* library = open_library("libcusolver.so.12", "libcusolver.so", &error);
    GD_CHECK(library != nullptr, "cuSOLVER could not be loaded (libcusolver.so.12): " + error);
    void* blas_library = open_library("libcublas.so.13", "libcublas.so", &error);
    GD_CHECK(blas_library != nullptr, "cuBLAS could not be loaded (libcublas.so.13): " + error);
    CusolverApi a{};
    resolve(library, "cusolverDnCreate", a.create, "cuSOLVER");
    resolve(library, "cusolverDnSetStream", a.set_stream, "cuSOLVER");
    resolve(library, "cusolverDnCreateSyevjInfo", a.create_syevj_info, "cuSOLVER");
    resolve(library, "cusolverDnDestroySyevjInfo", a.destroy_syevj_info, "cuSOLVER");
    resolve(library, "cusolverDnXsyevjSetSortEig", a.syevj_set_sort_eig, "cuSOLVER");
    resolve(blas_library, "cublasCreate_v2", a.cublas_create, "cuBLAS");
    resolve(blas_library, "cublasSetStream_v2", a.cublas_set_stream, "cuBLAS");
    resolve_routines(library, blas_library, "cusolverDnS", "cublasS", a.single);
    resolve_routines(library, blas_library, "cusolverDnD", "cublasD", a.double_);
    return a;  // the libraries stay loaded for the life of the process
  }();
  return api;
}

template <class T>
const Routines<T>& routines() {
  if constexpr (std::is_same_v<T, float>) return cusolver().single;
  else return cusolver().double_;
}

// cuSOLVER has no status-to-string function.
const char* status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cuSOLVER status";
  }
}

void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw Error(fmt::format("cuSOLVER error: {} ({}) in {}", status_name(status), static_cast<int>(status), what));
}

// The thread's handle for `device` (the current device), set to its current
// stream. Handles are never destroyed: the CUDA runtime may be gone by the time
// thread_local destructors run.
cusolverDnHandle_t handle_for(int device) {
  GD_CHECK(device >= 0 && device < kMaxDevices, fmt::format("cuSOLVER: device index {} out of range", device));
  thread_local std::array<cusolverDnHandle_t, kMaxDevices> handles{};
  cusolverDnHandle_t& handle = handles[static_cast<size_t>(device)];
  if (handle == nullptr) check_cusolver(cusolver().create(&handle), "cusolverDnCreate");
  check_cusolver(cusolver().set_stream(handle, static_cast<cudaStream_t>(current_stream(device))),
                 "cusolverDnSetStream");
  return handle;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(fmt::format("cuBLAS error: status {} in {}", static_cast<int>(status), what));
}

// The thread's cuBLAS handle for `device` (the current device), set to its
// current stream; never destroyed, as handle_for's.
cublasHandle_t blas_handle_for(int device) {
  GD_CHECK(device >= 0 && device < kMaxDevices, fmt::format("cuBLAS: device index {} out of range", device));
  thread_local std::array<cublasHandle_t, kMaxDevices> handles{};
  cublasHandle_t& handle = handles[static_cast<size_t>(device)];
  if (handle == nullptr) check_cublas(cusolver().cublas_create(&handle), "cublasCreate");
  check_cublas(cusolver().cublas_set_stream(handle, static_cast<cudaStream_t>(current_stream(device))),
               "cublasSetStream");
  return handle;
}

// cuSOLVER counts in 32-bit integers.
int solver_int(int64_t v, const char* routine) {
  GD_CHECK(v <= INT_MAX, fmt::format("{}: a dimension of {} elements is too large for cuSOLVER's 32-bit integers",
                                     routine, v));
  return static_cast<int>(v);
}

int leading_dim(int64_t ld, int64_t rows, const char* routine) {
  GD_INTERNAL_ASSERT(ld >= std::max<int64_t>(rows, 1), fmt::format("{}: leading dimension {} < {}", routine, ld, rows));
  return solver_int(ld, routine);
}

// `count` elements of T on the device's current stream, for the span of one
// call: freed when the call has queued its work (the caching allocator hands
// the block out again only to work queued after it on that stream).
template <class T>
class DeviceScratch {
 public:
  DeviceScratch(int64_t count, int device)
      : device_(device),
        data_(static_cast<T*>(device_malloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(count, 1)), device))) {}
  ~DeviceScratch() { device_free(data_, device_); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  T* get() const { return data_; }

 private:
  int device_;
  T* data_;
};

cublasFillMode_t fill_mode(bool upper) { return upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }

// Empty matrices are not handed to cuSOLVER: their infos are 0.
void zero_infos(int* info, int64_t batch, int device) {
  if (info != nullptr) fill(ScalarType::Int32, info, batch, Number::of_integer(0), current_stream(device));
}

// A device array of the batch's matrix pointers a + b * stride, b in [0, batch).
template <class T>
class MatrixPointers {
 public:
  MatrixPointers(const T* a, int64_t stride, int64_t batch, int device) : pointers_(batch, device) {
    fill_matrix_pointers(reinterpret_cast<void**>(pointers_.get()), const_cast<T*>(a),
                         stride * static_cast<int64_t>(sizeof(T)), batch, current_stream(device));
  }
  T** get() const { return pointers_.get(); }

 private:
  DeviceScratch<T*> pointers_;
};

template <class T>
void getrf_impl(int64_t batch, int64_t n64, T* a, int64_t lda64, int64_t stride_a, int* ipiv, int* info, int device) {
  if (batch == 0) return;
  DeviceGuard guard(device);
  if (n64 == 0) return zero_infos(info, batch, device);
  const int n = solver_int(n64, "getrf"), lda = leading_dim(lda64, n64, "getrf");
  if (batched_fits(batch, n64)) {
    MatrixPointers<T> pointers(a, stride_a, batch, device);
    DeviceScratch<int> unread_infos(info ? 1 : batch, device);
    check_cublas(routines<T>().getrf_batched(blas_handle_for(device), n, pointers.get(), lda, ipiv,
                                             info ? info : unread_infos.get(), solver_int(batch, "getrf")),
                 "cublas getrfBatched");
    return;
  }
  cusolverDnHandle_t handle = handle_for(device);
  int lwork = 0;
  check_cusolver(routines<T>().getrf_buffer_size(handle, n, n, a, lda, &lwork), "cusolverDn getrf_bufferSize");
  DeviceScratch<T> work(lwork, device);
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(routines<T>().getrf(handle, n, n, a + b * stride_a, lda, work.get(), ipiv + b * n,
                                       info ? info + b : unread_info.get()),
                   "cusolverDn getrf");
}

template <class T>
void getrs_impl(bool transpose, int64_t batch, int64_t n64, int64_t nrhs64, const T* a, int64_t lda64,
                int64_t stride_a, const int* ipiv, const int64_t* a_index, T* x, int64_t ldb64, int64_t stride_b,
                int device) {
  if (batch == 0 || n64 == 0 || nrhs64 == 0) return;
  DeviceGuard guard(device);
  const int n = solver_int(n64, "getrs"), nrhs = solver_int(nrhs64, "getrs");
  const int lda = leading_dim(lda64, n64, "getrs"), ldb = leading_dim(ldb64, n64, "getrs");
  // The batched routine reads the pivots of matrix b at ipiv + b * n: each b solved with its own a.
  bool own_factors = true;
  for (int64_t b = 0; a_index != nullptr && b < batch; ++b) own_factors = own_factors && a_index[b] == b;
  if (own_factors && batched_fits(batch, n64)) {
    MatrixPointers<T> a_pointers(a, stride_a, batch, device), x_pointers(x, stride_b, batch, device);
    int argument_info = 0;  // host: only argument errors
    check_cublas(routines<T>().getrs_batched(blas_handle_for(device), transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n, nrhs,
                                             a_pointers.get(), lda, ipiv, x_pointers.get(), ldb, &argument_info,
                                             solver_int(batch, "getrs")),
                 "cublas getrsBatched");
    GD_INTERNAL_ASSERT(argument_info == 0, fmt::format("cublas getrsBatched rejected argument {}", -argument_info));
    return;
  }
  cusolverDnHandle_t handle = handle_for(device);
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t m = a_index ? a_index[b] : b;
    check_cusolver(routines<T>().getrs(handle, transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n, nrhs, a + m * stride_a, lda,
                                       ipiv + m * n64, x + b * stride_b, ldb, unread_info.get()),
                   "cusolverDn getrs");
  }
}

template <class T>
void getri_impl(int64_t batch, int64_t n64, const T* a, int64_t lda64, int64_t stride_a, const int* ipiv, T* out,
                int64_t ld_out, int64_t stride_out, int device) {
  if (batch == 0 || n64 == 0) return;
  DeviceGuard guard(device);
  fill_identity(batch, n64, out, ld_out, stride_out, current_stream(device));
  getrs_impl(false, batch, n64, n64, a, lda64, stride_a, ipiv, nullptr, out, ld_out, stride_out, device);
}

template <class T>
void potrf_impl(bool upper, int64_t batch, int64_t n64, T* a, int64_t lda64, int64_t stride_a, int* info,
                int device) {
  if (batch == 0) return;
  DeviceGuard guard(device);
  if (n64 == 0) return zero_infos(info, batch, device);
  const int n = solver_int(n64, "potrf"), lda = leading_dim(lda64, n64, "potrf");
  cusolverDnHandle_t handle = handle_for(device);
  if (batched_fits(batch, n64)) {
    MatrixPointers<T> pointers(a, stride_a, batch, device);
    DeviceScratch<int> unread_infos(info ? 1 : batch, device);
    check_cusolver(routines<T>().potrf_batched(handle, fill_mode(upper), n, pointers.get(), lda,
                                               info ? info : unread_infos.get(), solver_int(batch, "potrf")),
                   "cusolverDn potrfBatched");
  } else {
    int lwork = 0;
    check_cusolver(routines<T>().potrf_buffer_size(handle, fill_mode(upper), n, a, lda, &lwork),
                   "cusolverDn potrf_bufferSize");
    DeviceScratch<T> work(lwork, device);
    DeviceScratch<int> unread_info(1, device);
    for (int64_t b = 0; b < batch; ++b)
      check_cusolver(routines<T>().potrf(handle, fill_mode(upper), n, a + b * stride_a, lda, work.get(), lwork,
                                         info ? info + b : unread_info.get()),
                     "cusolverDn potrf");
  }
  // cuSOLVER, as LAPACK, leaves A's entries in the other triangle.
  zero_triangle(upper, batch, n64, a, lda64, stride_a, current_stream(device));
}

template <class T>
void syevd_impl(bool vectors, bool upper, int64_t batch, int64_t n64, T* a, int64_t lda64, int64_t stride_a, T* w,
                int64_t stride_w, int* info, int device) {
  if (batch == 0) return;
  DeviceGuard guard(device);
  if (n64 == 0) return zero_infos(info, batch, device);
  const int n = solver_int(n64, "syevd"), lda = leading_dim(lda64, n64, "syevd");
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  cusolverDnHandle_t handle = handle_for(device);
  if (batched_fits(batch, n64) && lda64 == n64 && stride_a == n64 * n64 && stride_w == n64) {
    syevjInfo_t params = nullptr;  // the default tolerance (eps) and sweeps (100); ascending eigenvalues
    check_cusolver(cusolver().create_syevj_info(&params), "cusolverDnCreateSyevjInfo");
    struct Release {
      syevjInfo_t params;
      ~Release() { cusolver().destroy_syevj_info(params); }
    } release{params};
    check_cusolver(cusolver().syevj_set_sort_eig(params, 1), "cusolverDnXsyevjSetSortEig");
    const int count = solver_int(batch, "syevd");
    int lwork = 0;
    check_cusolver(routines<T>().syevj_batched_buffer_size(handle, jobz, fill_mode(upper), n, a, lda, w, &lwork,
                                                           params, count),
                   "cusolverDn syevjBatched_bufferSize");
    DeviceScratch<T> work(lwork, device);
    DeviceScratch<int> unread_infos(info ? 1 : batch, device);
    check_cusolver(routines<T>().syevj_batched(handle, jobz, fill_mode(upper), n, a, lda, w, work.get(), lwork,
                                               info ? info : unread_infos.get(), params, count),
                   "cusolverDn syevjBatched");
    return;
  }
  int lwork = 0;
  check_cusolver(routines<T>().syevd_buffer_size(handle, jobz, fill_mode(upper), n, a, lda, w, &lwork),
                 "cusolverDn syevd_bufferSize");
  DeviceScratch<T> work(lwork, device);
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(routines<T>().syevd(handle, jobz, fill_mode(upper), n, a + b * stride_a, lda, w + b * stride_w,
                                       work.get(), lwork, info ? info + b : unread_info.get()),
                   "cusolverDn syevd");
}

template <class T>
void geqrf_impl(int64_t batch, int64_t m64, int64_t n64, T* a, int64_t lda64, int64_t stride_a, T* tau,
                int64_t stride_tau, int device) {
  if (batch == 0 || m64 == 0 || n64 == 0) return;
  DeviceGuard guard(device);
  const int m = solver_int(m64, "geqrf"), n = solver_int(n64, "geqrf"), lda = leading_dim(lda64, m64, "geqrf");
  cusolverDnHandle_t handle = handle_for(device);
  int lwork = 0;
  check_cusolver(routines<T>().geqrf_buffer_size(handle, m, n, a, lda, &lwork), "cusolverDn geqrf_bufferSize");
  DeviceScratch<T> work(lwork, device);
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(routines<T>().geqrf(handle, m, n, a + b * stride_a, lda, tau + b * stride_tau, work.get(), lwork,
                                       unread_info.get()),
                   "cusolverDn geqrf");
}

template <class T>
void orgqr_impl(int64_t batch, int64_t m64, int64_t n64, int64_t k64, T* a, int64_t lda64, int64_t stride_a,
                const T* tau, int64_t stride_tau, int device) {
  if (batch == 0 || m64 == 0 || n64 == 0) return;
  GD_INTERNAL_ASSERT(m64 >= n64 && n64 >= k64 && k64 >= 1,
                     fmt::format("orgqr: needs m >= n >= k >= 1, got {}, {}, {}", m64, n64, k64));
  DeviceGuard guard(device);
  const int m = solver_int(m64, "orgqr"), n = solver_int(n64, "orgqr"), k = solver_int(k64, "orgqr");
  const int lda = leading_dim(lda64, m64, "orgqr");
  cusolverDnHandle_t handle = handle_for(device);
  int lwork = 0;
  check_cusolver(routines<T>().orgqr_buffer_size(handle, m, n, k, a, lda, tau, &lwork), "cusolverDn orgqr_bufferSize");
  DeviceScratch<T> work(lwork, device);
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(routines<T>().orgqr(handle, m, n, k, a + b * stride_a, lda, tau + b * stride_tau, work.get(), lwork,
                                       unread_info.get()),
                   "cusolverDn orgqr");
}

template <class T>
void gesvd_impl(SvdVectors vectors, int64_t batch, int64_t m64, int64_t n64, T* a, int64_t lda64, int64_t stride_a,
                T* s, int64_t stride_s, T* u, int64_t ldu64, int64_t stride_u, T* vt, int64_t ldvt64, int64_t stride_vt,
                int* info, int device) {
  GD_INTERNAL_ASSERT(m64 >= n64, fmt::format("gesvd: cuSOLVER needs m >= n, got {} x {}", m64, n64));
  if (batch == 0) return;
  DeviceGuard guard(device);
  if (n64 == 0) return zero_infos(info, batch, device);
  const int m = solver_int(m64, "gesvd"), n = solver_int(n64, "gesvd"), lda = leading_dim(lda64, m64, "gesvd");
  const bool with_vectors = vectors != SvdVectors::None;
  const signed char job = vectors == SvdVectors::All ? 'A' : vectors == SvdVectors::Reduced ? 'S' : 'N';
  // Leading dimensions are checked by cuSOLVER even when u and vt are not referenced.
  const int ldu = with_vectors ? leading_dim(ldu64, m64, "gesvd") : m;
  const int ldvt = with_vectors ? leading_dim(ldvt64, n64, "gesvd") : n;
  cusolverDnHandle_t handle = handle_for(device);
  int lwork = 0;
  check_cusolver(routines<T>().gesvd_buffer_size(handle, m, n, &lwork), "cusolverDn gesvd_bufferSize");
  DeviceScratch<T> work(lwork, device);
  DeviceScratch<T> unconverged(n, device);  // rwork: the superdiagonal left when it does not converge
  DeviceScratch<int> unread_info(1, device);
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(routines<T>().gesvd(handle, job, job, m, n, a + b * stride_a, lda, s + b * stride_s,
                                       with_vectors ? u + b * stride_u : nullptr, ldu,
                                       with_vectors ? vt + b * stride_vt : nullptr, ldvt, work.get(), lwork,
                                       unconverged.get(), info ? info + b : unread_info.get()),
                   "cusolverDn gesvd");
}

}  // namespace

void getrf(int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, int* ipiv, int* info, int device) {
  getrf_impl(batch, n, a, lda, stride_a, ipiv, info, device);
}
void getrf(int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, int* ipiv, int* info, int device) {
  getrf_impl(batch, n, a, lda, stride_a, ipiv, info, device);
}

void getrs(bool transpose, int64_t batch, int64_t n, int64_t nrhs, const float* a, int64_t lda, int64_t stride_a,
           const int* ipiv, const int64_t* a_index, float* b, int64_t ldb, int64_t stride_b, int device) {
  getrs_impl(transpose, batch, n, nrhs, a, lda, stride_a, ipiv, a_index, b, ldb, stride_b, device);
}
void getrs(bool transpose, int64_t batch, int64_t n, int64_t nrhs, const double* a, int64_t lda, int64_t stride_a,
           const int* ipiv, const int64_t* a_index, double* b, int64_t ldb, int64_t stride_b, int device) {
  getrs_impl(transpose, batch, n, nrhs, a, lda, stride_a, ipiv, a_index, b, ldb, stride_b, device);
}

void getri(int64_t batch, int64_t n, const float* a, int64_t lda, int64_t stride_a, const int* ipiv, float* out,
           int64_t ld_out, int64_t stride_out, int device) {
  getri_impl(batch, n, a, lda, stride_a, ipiv, out, ld_out, stride_out, device);
}
void getri(int64_t batch, int64_t n, const double* a, int64_t lda, int64_t stride_a, const int* ipiv, double* out,
           int64_t ld_out, int64_t stride_out, int device) {
  getri_impl(batch, n, a, lda, stride_a, ipiv, out, ld_out, stride_out, device);
}

void potrf(bool upper, int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, int* info, int device) {
  potrf_impl(upper, batch, n, a, lda, stride_a, info, device);
}
void potrf(bool upper, int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, int* info, int device) {
  potrf_impl(upper, batch, n, a, lda, stride_a, info, device);
}

void syevd(bool vectors, bool upper, int64_t batch, int64_t n, float* a, int64_t lda, int64_t stride_a, float* w,
           int64_t stride_w, int* info, int device) {
  syevd_impl(vectors, upper, batch, n, a, lda, stride_a, w, stride_w, info, device);
}
void syevd(bool vectors, bool upper, int64_t batch, int64_t n, double* a, int64_t lda, int64_t stride_a, double* w,
           int64_t stride_w, int* info, int device) {
  syevd_impl(vectors, upper, batch, n, a, lda, stride_a, w, stride_w, info, device);
}

void geqrf(int64_t batch, int64_t m, int64_t n, float* a, int64_t lda, int64_t stride_a, float* tau,
           int64_t stride_tau, int device) {
  geqrf_impl(batch, m, n, a, lda, stride_a, tau, stride_tau, device);
}
void geqrf(int64_t batch, int64_t m, int64_t n, double* a, int64_t lda, int64_t stride_a, double* tau,
           int64_t stride_tau, int device) {
  geqrf_impl(batch, m, n, a, lda, stride_a, tau, stride_tau, device);
}

void orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, float* a, int64_t lda, int64_t stride_a, const float* tau,
           int64_t stride_tau, int device) {
  orgqr_impl(batch, m, n, k, a, lda, stride_a, tau, stride_tau, device);
}
void orgqr(int64_t batch, int64_t m, int64_t n, int64_t k, double* a, int64_t lda, int64_t stride_a,
           const double* tau, int64_t stride_tau, int device) {
  orgqr_impl(batch, m, n, k, a, lda, stride_a, tau, stride_tau, device);
}

void gesvd(SvdVectors vectors, int64_t batch, int64_t m, int64_t n, float* a, int64_t lda, int64_t stride_a, float* s,
           int64_t stride_s, float* u, int64_t ldu, int64_t stride_u, float* vt, int64_t ldvt, int64_t stride_vt,
           int* info, int device) {
  gesvd_impl(vectors, batch, m, n, a, lda, stride_a, s, stride_s, u, ldu, stride_u, vt, ldvt, stride_vt, info, device);
}
void gesvd(SvdVectors vectors, int64_t batch, int64_t m, int64_t n, double* a, int64_t lda, int64_t stride_a,
           double* s, int64_t stride_s, double* u, int64_t ldu, int64_t stride_u, double* vt, int64_t ldvt,
           int64_t stride_vt, int* info, int device) {
  gesvd_impl(vectors, batch, m, n, a, lda, stride_a, s, stride_s, u, ldu, stride_u, vt, ldvt, stride_vt, info, device);
}

}  // namespace gradiens::kernels::cuda::solver
