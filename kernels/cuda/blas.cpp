// Row-major GEMM on the GPU through cuBLAS: one handle per (thread, device),
// bound to the current stream with its own workspace, IEEE float32 unless
// TF32 is allowed (PyTorch's matmul default). cuBLAS is loaded on first use
// (dlopen), so a program that never multiplies on a GPU does not map its
// several hundred megabytes at start-up.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <string>

#include "kernels/cuda/check.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {

namespace {

constexpr int kMaxDevices = 16;
// Hopper wants 32 MiB of cuBLAS workspace for its fastest kernels.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

std::atomic<bool> tf32_allowed{false};

// The cuBLAS entry points gradiens calls, resolved from the shared library.
struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

template <class F>
void resolve(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  GD_CHECK(function != nullptr, std::string("cuBLAS: the library has no ") + name);
}

const CublasApi& cublas() {
  static const CublasApi api = [] {
    void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) library = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    GD_CHECK(library != nullptr, std::string("cuBLAS could not be loaded (libcublas.so.13): ") + dlerror());
    CublasApi a{};
    resolve(library, "cublasCreate_v2", a.create);
    resolve(library, "cublasSetStream_v2", a.set_stream);
    resolve(library, "cublasSetWorkspace_v2", a.set_workspace);
    resolve(library, "cublasSetMathMode", a.set_math_mode);
    resolve(library, "cublasSgemmStridedBatched", a.sgemm_strided_batched);
    resolve(library, "cublasDgemmStridedBatched", a.dgemm_strided_batched);
    resolve(library, "cublasGetStatusName", a.status_name);
    resolve(library, "cublasGetStatusString", a.status_string);
    return a;  // the library stays loaded for the life of the process
  }();
  return api;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error: ") + cublas().status_name(status) + " (" +
                cublas().status_string(status) + ") in " + what);
}

struct Handle {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
  cudaStream_t workspace_stream = nullptr;
};

// The thread's handle for `device`, set to the current stream. cublasSetStream
// resets the workspace, so the workspace (allocated on that stream from the
// caching allocator) is set again after it. Handles are never destroyed: the
// CUDA runtime may be gone by the time thread_local destructors run.
cublasHandle_t handle_for(int device) {
  thread_local std::array<Handle, kMaxDevices> handles{};
  Handle& h = handles[device];
  if (!h.handle) check_cublas(cublas().create(&h.handle), "cublasCreate");
  auto stream = static_cast<cudaStream_t>(current_stream(device));
  check_cublas(cublas().set_stream(h.handle, stream), "cublasSetStream");
  if (h.workspace_stream != stream) {
    if (h.workspace) {
      // The old workspace may still be read by work queued on its stream.
      record_stream(h.workspace, device, h.workspace_stream);
      device_free(h.workspace, device);
    }
    h.workspace = device_malloc(kWorkspaceBytes, device);
    h.workspace_stream = stream;
  }
  check_cublas(cublas().set_workspace(h.handle, h.workspace, kWorkspaceBytes), "cublasSetWorkspace");
  check_cublas(
      cublas().set_math_mode(h.handle, tf32_allowed.load() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
      "cublasSetMathMode");
  return h.handle;
}

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow); }
bool allow_tf32() { return tf32_allowed.load(); }

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets
// B as its first operand, A as its second, and m and n swapped.
void gemm(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc, int device) {
  gemm_batched(dtype, 1, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, device);
}

void gemm_batched(ScalarType dtype, int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                  int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c, int device) {
  GD_CHECK(dtype == kFloat32 || dtype == kFloat64,
           std::string("CUDA matrix products support float32 and float64, not ") + std::string(dtype_name(dtype)));
  if (batch == 0 || m == 0 || n == 0) return;
  DeviceGuard guard(device);
  GD_CHECK(m < (int64_t(1) << 31) && n < (int64_t(1) << 31) && k < (int64_t(1) << 31) &&
               batch < (int64_t(1) << 31),
           "CUDA matrix product: a dimension exceeds 2^31 - 1");
  // cuBLAS needs leading dimensions >= 1 even for empty or single-column matrices.
  auto ld = [](int64_t v) { return static_cast<int>(v < 1 ? 1 : v); };
  cublasHandle_t handle = handle_for(device);
  if (dtype == kFloat32) {
    float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    check_cublas(cublas().sgemm_strided_batched(handle, op(trans_b), op(trans_a), static_cast<int>(n), static_cast<int>(m),
                                           static_cast<int>(k), &fa, static_cast<const float*>(b), ld(ldb), stride_b,
                                           static_cast<const float*>(a), ld(lda), stride_a, &fb,
                                           static_cast<float*>(c), ld(ldc), stride_c, static_cast<int>(batch)),
                 "cublasSgemmStridedBatched");
  } else {
    check_cublas(cublas().dgemm_strided_batched(handle, op(trans_b), op(trans_a), static_cast<int>(n), static_cast<int>(m),
                                           static_cast<int>(k), &alpha, static_cast<const double*>(b), ld(ldb),
                                           stride_b, static_cast<const double*>(a), ld(lda), stride_a, &beta,
                                           static_cast<double*>(c), ld(ldc), stride_c, static_cast<int>(batch)),
                 "cublasDgemmStridedBatched");
  }
}

}  // namespace gradiens::kernels::cuda
