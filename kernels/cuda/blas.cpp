// Row-major GEMM on the GPU through cuBLAS: one handle per (thread, device),
// bound to the current stream with its own workspace, IEEE float32 unless
// TF32 is allowed (PyTorch's matmul default); float16/bfloat16 accumulate in
// float32 with no reduced-precision reduction. The epilogues (Linear's bias,
// and bias + relu or tanh-gelu for _addmm_activation: gemm_epilogue) go
// through cuBLASLt on the same workspace. Both libraries are
// loaded on first use (dlopen), so a program that never multiplies on a GPU
// does not map their several hundred megabytes at start-up.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "kernels/cuda/blas.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/library.h"
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
  // Named by its type: C++ sees an inline overload beside the library's function.
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long int, const void*,
                                            cudaDataType, int, long long int, const void*, void*, cudaDataType, int,
                                            long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

// The cuBLASLt entry points of the epilogues.
struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
};

// cuBLASLt, or nullptr when the library cannot be loaded or
// GRADIENS_CUDA_NO_LT=1 turns every epilogue off (gemm_epilogue then declines
// and the caller adds the bias and applies the activation itself).
const CublasLtApi* cublas_lt() {
  static const std::optional<CublasLtApi> api = []() -> std::optional<CublasLtApi> {
    const char* off = std::getenv("GRADIENS_CUDA_NO_LT");
    if (off != nullptr && std::string(off) == "1") return std::nullopt;
    void* library = open_library("libcublasLt.so.13", "libcublasLt.so");
    if (library == nullptr) return std::nullopt;
    CublasLtApi a{};
    try {
      resolve(library, "cublasLtCreate", a.create, "cuBLASLt");
      resolve(library, "cublasLtMatmulDescCreate", a.desc_create, "cuBLASLt");
      resolve(library, "cublasLtMatmulDescDestroy", a.desc_destroy, "cuBLASLt");
      resolve(library, "cublasLtMatmulDescSetAttribute", a.desc_set, "cuBLASLt");
      resolve(library, "cublasLtMatrixLayoutCreate", a.layout_create, "cuBLASLt");
      resolve(library, "cublasLtMatrixLayoutDestroy", a.layout_destroy, "cuBLASLt");
      resolve(library, "cublasLtMatmulPreferenceCreate", a.preference_create, "cuBLASLt");
      resolve(library, "cublasLtMatmulPreferenceDestroy", a.preference_destroy, "cuBLASLt");
      resolve(library, "cublasLtMatmulPreferenceSetAttribute", a.preference_set, "cuBLASLt");
      resolve(library, "cublasLtMatmulAlgoGetHeuristic", a.heuristic, "cuBLASLt");
      resolve(library, "cublasLtMatmul", a.matmul, "cuBLASLt");
    } catch (const Error&) {
      return std::nullopt;
    }
    return a;
  }();
  return api ? &*api : nullptr;
}

const CublasApi& cublas() {
  static const CublasApi api = [] {
    std::string error;
    void* library = open_library("libcublas.so.13", "libcublas.so", &error);
    GD_CHECK(library != nullptr, "cuBLAS could not be loaded (libcublas.so.13): " + error);
    CublasApi a{};
    resolve(library, "cublasCreate_v2", a.create, "cuBLAS");
    resolve(library, "cublasSetStream_v2", a.set_stream, "cuBLAS");
    resolve(library, "cublasSetWorkspace_v2", a.set_workspace, "cuBLAS");
    resolve(library, "cublasSetMathMode", a.set_math_mode, "cuBLAS");
    resolve(library, "cublasSgemmStridedBatched", a.sgemm_strided_batched, "cuBLAS");
    resolve(library, "cublasDgemmStridedBatched", a.dgemm_strided_batched, "cuBLAS");
    resolve(library, "cublasGemmStridedBatchedEx", a.gemm_strided_batched_ex, "cuBLAS");
    resolve(library, "cublasGetStatusName", a.status_name, "cuBLAS");
    resolve(library, "cublasGetStatusString", a.status_string, "cuBLAS");
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
Handle& handle_state(int device) {
  thread_local std::array<Handle, kMaxDevices> handles{};
  return handles[device];
}

cublasHandle_t handle_for(int device) {
  Handle& h = handle_state(device);
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
      cublas().set_math_mode(h.handle, static_cast<cublasMath_t>(
                                           (tf32_allowed.load() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) |
                                           CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
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
  GD_CHECK(is_floating_point(dtype), std::string("CUDA matrix products support float32, float64, float16 and "
                                                  "bfloat16, not ") + std::string(dtype_name(dtype)));
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
  } else if (dtype == kFloat16 || dtype == kBFloat16) {
    // Read and written in the 16-bit type, accumulated in float32 and rounded
    // once (the CPU's Note [Reduced floats compute in float32]).
    const cudaDataType type = dtype == kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
    float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    check_cublas(cublas().gemm_strided_batched_ex(handle, op(trans_b), op(trans_a), static_cast<int>(n),
                                                  static_cast<int>(m), static_cast<int>(k), &fa, b, type, ld(ldb),
                                                  stride_b, a, type, ld(lda), stride_a, &fb, c, type, ld(ldc),
                                                  stride_c, static_cast<int>(batch), CUBLAS_COMPUTE_32F,
                                                  CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
  } else {
    check_cublas(cublas().dgemm_strided_batched(handle, op(trans_b), op(trans_a), static_cast<int>(n), static_cast<int>(m),
                                           static_cast<int>(k), &alpha, static_cast<const double*>(b), ld(ldb),
                                           stride_b, static_cast<const double*>(a), ld(lda), stride_a, &beta,
                                           static_cast<double*>(c), ld(ldc), stride_c, static_cast<int>(batch)),
                 "cublasDgemmStridedBatched");
  }
}

namespace {

// The largest power of two up to 256 that divides the address (cuBLASLt picks
// kernels by the operands' alignment).
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

// The cuBLASLt descriptors and the chosen kernel of one problem (epilogue,
// dtype, transposes, sizes, leading dimensions, alignments, TF32): built once
// per thread and kept, so a repeated Linear pays only for setting the bias
// pointer and the launch. `usable` is false when cuBLASLt has no kernel for it.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layouts[3] = {};
  cublasLtMatmulAlgo_t algo{};
  bool usable = false;
};

struct LtPlanKey {
  int64_t values[14];
  bool operator==(const LtPlanKey& other) const {
    return std::equal(std::begin(values), std::end(values), std::begin(other.values));
  }
};

struct LtPlanKeyHash {
  size_t operator()(const LtPlanKey& key) const {
    size_t h = 0;
    for (int64_t v : key.values) h = h * 1000003u ^ std::hash<int64_t>{}(v);
    return h;
  }
};

cudaDataType lt_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float64: return CUDA_R_64F;
    case ScalarType::Float16: return CUDA_R_16F;
    case ScalarType::BFloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cublasLtEpilogue_t lt_epilogue(GemmEpilogue epilogue) {
  switch (epilogue) {
    case GemmEpilogue::BiasRelu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case GemmEpilogue::BiasGeluTanh: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case GemmEpilogue::Bias: break;
  }
  return CUBLASLT_EPILOGUE_BIAS;
}

// Builds the plan (descriptors, heuristic's first kernel); never throws.
LtPlan make_lt_plan(const CublasLtApi& lt, cublasLtHandle_t handle, cublasLtEpilogue_t epilogue, ScalarType dtype,
                    bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                    uint32_t align_a, uint32_t align_b, uint32_t align_c, bool tf32) {
  LtPlan plan;
  const cudaDataType type = lt_type(dtype);
  // float16/bfloat16 scale and accumulate in float32, as gemm_batched does.
  const cudaDataType scale_type = dtype == kFloat64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute =
      dtype == kFloat64 ? CUBLAS_COMPUTE_64F
                        : (dtype == kFloat32 && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
  bool ok = lt.desc_create(&plan.desc, compute, scale_type) == CUBLAS_STATUS_SUCCESS;
  // As in gemm_batched: column-major D^T (n x m, ld ldc) = op(B)^T op(A)^T, so
  // the bias, one value per column of the row-major C, runs along D's rows,
  // and the row sums of our op(A), one per row of C, are the sums over k of
  // cuBLASLt's op(B), one per column of D (BGRADB).
  const cublasOperation_t first = op(trans_b), second = op(trans_a);
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void* value, size_t size) {
    ok = ok && lt.desc_set(plan.desc, attribute, value, size) == CUBLAS_STATUS_SUCCESS;
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &first, sizeof(first));
  set(CUBLASLT_MATMUL_DESC_TRANSB, &second, sizeof(second));
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  auto layout = [&](cublasLtMatrixLayout_t& out, int64_t rows, int64_t cols, int64_t leading) {
    ok = ok && lt.layout_create(&out, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), leading) ==
                   CUBLAS_STATUS_SUCCESS;
  };
  layout(plan.layouts[0], trans_b ? k : n, trans_b ? n : k, ldb);
  layout(plan.layouts[1], trans_a ? m : k, trans_a ? k : m, lda);
  layout(plan.layouts[2], n, m, ldc);
  cublasLtMatmulPreference_t preference = nullptr;
  ok = ok && lt.preference_create(&preference) == CUBLAS_STATUS_SUCCESS;
  const uint64_t workspace = kWorkspaceBytes;
  auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attribute, const void* value, size_t size) {
    ok = ok && lt.preference_set(preference, attribute, value, size) == CUBLAS_STATUS_SUCCESS;
  };
  prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  // cuBLASLt's A is our B and its B our A (see above).
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof(align_b));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof(align_a));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof(align_c));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof(align_c));
  if (dtype == kFloat16 || dtype == kBFloat16) {
    // Split-k partial sums only in the compute type (float32), never in the
    // output's: cuBLAS's CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION.
    const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    prefer(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof(schemes));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  ok = ok && lt.heuristic(handle, plan.desc, plan.layouts[0], plan.layouts[1], plan.layouts[2], plan.layouts[2],
                          preference, 1, &result, &found) == CUBLAS_STATUS_SUCCESS && found > 0;
  if (preference) lt.preference_destroy(preference);
  plan.algo = result.algo;
  plan.usable = ok;
  return plan;
}

// C = op(A) op(B) with cuBLASLt's `epilogue`, whose vector is `bias` (read,
// or written by BGRADB); false, having done nothing, where cuBLASLt is not
// there or has no kernel.
bool lt_matmul(cublasLtEpilogue_t epilogue, ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
               int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* bias, void* c,
               int64_t ldc, int device) {
  if (!is_floating_point(dtype) || m <= 0 || n <= 0 || k <= 0) return false;
  if (m >= (int64_t(1) << 31) || n >= (int64_t(1) << 31) || k >= (int64_t(1) << 31)) return false;
  const CublasLtApi* lt = cublas_lt();
  if (lt == nullptr) return false;
  DeviceGuard guard(device);
  // One cuBLASLt handle per thread (it holds no stream); the workspace is the
  // cuBLAS handle's, bound to the current stream by handle_for. Plans are per
  // thread too and live as long as it (descriptors are host memory).
  thread_local cublasLtHandle_t lt_handle = nullptr;
  thread_local std::unordered_map<LtPlanKey, LtPlan, LtPlanKeyHash> plans;
  if (!lt_handle && lt->create(&lt_handle) != CUBLAS_STATUS_SUCCESS) return false;
  handle_for(device);
  const Handle& h = handle_state(device);
  const uint32_t align_a = alignment_of(a), align_b = alignment_of(b), align_c = alignment_of(c);
  const bool tf32 = tf32_allowed.load();
  const LtPlanKey key{{static_cast<int64_t>(epilogue), static_cast<int64_t>(dtype), trans_a, trans_b, m, n, k, lda,
                       ldb, ldc, align_a, align_b, align_c,
                       static_cast<int64_t>(tf32) | (static_cast<int64_t>(device) << 1)}};
  auto found = plans.find(key);
  if (found == plans.end())
    found = plans.emplace(key, make_lt_plan(*lt, lt_handle, epilogue, dtype, trans_a, trans_b, m, n, k, lda, ldb, ldc,
                                            align_a, align_b, align_c, tf32))
                .first;
  const LtPlan& plan = found->second;
  if (!plan.usable) return false;  // no kernel for this problem: the caller does the epilogue itself
  if (lt->desc_set(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)) != CUBLAS_STATUS_SUCCESS)
    return false;
  const auto stream = static_cast<cudaStream_t>(current_stream(device));
  const float alpha32 = 1, beta32 = 0;
  const double alpha64 = 1, beta64 = 0;
  const void* alpha = dtype == kFloat64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = dtype == kFloat64 ? static_cast<const void*>(&beta64) : &beta32;
  check_cublas(lt->matmul(lt_handle, plan.desc, alpha, b, plan.layouts[0], a, plan.layouts[1], beta, c,
                          plan.layouts[2], c, plan.layouts[2], &plan.algo, h.workspace, kWorkspaceBytes, stream),
               "cublasLtMatmul");
  return true;
}

}  // namespace

bool gemm_bias(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, const void* bias, void* c, int64_t ldc, int device) {
  if (dtype != kFloat32 && dtype != kFloat64) return false;
  return lt_matmul(CUBLASLT_EPILOGUE_BIAS, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, bias, c, ldc, device);
}

bool gemm_epilogue(GemmEpilogue epilogue, ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* bias, void* c,
                   int64_t ldc, int device) {
  return lt_matmul(lt_epilogue(epilogue), dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, bias, c, ldc, device);
}

bool gemm_bias_gradient(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                        int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc, void* bias_grad, int device) {
  if (dtype != kFloat32 && dtype != kFloat64) return false;
  return lt_matmul(CUBLASLT_EPILOGUE_BGRADB, dtype, trans_a, trans_b, m, n, k, a, lda, b, ldb, bias_grad, c, ldc,
                   device);
}

}  // namespace gradiens::kernels::cuda
