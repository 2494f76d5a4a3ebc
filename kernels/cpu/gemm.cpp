// CPU GEMM dispatch: float64 through OpenBLAS dgemm, float32 through oneDNN matmul or
// OpenBLAS sgemm by shape (Note [Float32 GEMM backend]), threads per call from size and
// shape (Note [GEMM threads]), and oneDNN primitives in a small LRU cache per thread
// (Note [Matmul cache]).
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm.h"

#include <cblas.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstddef>
#include <list>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "kernels/cpu/onednn.h"
#include "kernels/error.h"

// Declared by OpenBLAS's cblas.h too; repeated so that the file still compiles when
// Debian's alternatives point <cblas.h> at another BLAS (we link -lopenblas anyway).
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace gradiens::kernels::cpu {
namespace {

struct GemmScratchpad;  // tags this file's per-thread oneDNN scratchpad

std::atomic<int> library_gemm_threads{0};  // 0: not yet read from OpenBLAS

std::atomic<testing::Float32Backend> forced_float32_backend{testing::Float32Backend::Auto};

double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// Note [Float32 GEMM backend]
// oneDNN's matmul (brgemm kernels) runs at about 200 GFLOP/s on one core of this
// machine's AVX-512 CPU, OpenBLAS 0.3.21's sgemm at about 105 (openblas_get_corename()
// says "Haswell": it runs its AVX2 kernels here). oneDNN wins every shape class we
// measured except two, where its
// fixed cost per call (~0.35 us, against OpenBLAS's ~0.08 us) or its GEMV handling
// loses, so the rule is: OpenBLAS below kMinOneDnnFlops or when n == 1, else oneDNN.
// Medians, 1 thread, microseconds, oneDNN / OpenBLAS; shapes are M x K x N, i.e.
// (M x K) . (K x N), with the layouts the library produces:
//   1024x1024x1024 NN, TN, NT    10447 / 20556, 10458 / 20173, 10481 / 20092   (2.0x)
//   128x784x512 NT (MLP fwd)       508 / 1028      784x128x512 TN (dW)   491 / 968
//   128x512x784 NN (MLP dX)        481 / 1001      128x512x256 NT        163 / 333
//   128x256x10 NT                  7.3 / 12.6      128x10x256 NN         3.8 / 7.8
//   10000x20x20 NN, NT            71.9 / 113.6, 73.4 / 113.6   20x10000x20 TN   96 / 139
//   10000x2x20 NN                 14.0 / 31.6      64x32x512 NN         11.1 / 21.5
//   32x32x32 (65 kFLOP)           0.76 / 0.90      100x20x20 (80 kFLOP)  1.10 / 1.34
//   28x28x28 (44 kFLOP)           0.68 / 0.79      24x24x24 (28 kFLOP)   0.61 / 0.43
//   16x16x16                      0.40 / 0.22      1x1x1                 0.35 / 0.08
//   n == 1: 10000x20x1            94.7 / 89.5      128x32x1              3.1 / 0.8
// Padded rows (ld > row length) and batch gaps move oneDNN from brgemm to its
// gemm:jit kernels, which still beat OpenBLAS (1024^3 with ld = 1032: 134 vs 105
// GFLOP/s). With 2 threads oneDNN's lead holds (1024^3: 380 vs 201 GFLOP/s).
constexpr double kMinOneDnnFlops = 32768;

bool use_onednn_for_float32(int64_t m, int64_t n, int64_t k) {
  switch (forced_float32_backend.load(std::memory_order_relaxed)) {
    case testing::Float32Backend::OneDnn: return true;
    case testing::Float32Backend::OpenBlas: return false;
    case testing::Float32Backend::Auto: break;
  }
  return n != 1 && gemm_flops(m, n, k) >= kMinOneDnnFlops;
}

// Note [GEMM threads]
// gemm_threads() is the most a GEMM may use; whether one product gets them depends on
// its size and backend, because waking a second thread has a fixed cost and
// OpenBLAS's threaded driver synchronises its threads once per packed block. Medians
// on this 2-core VM with no other load, microseconds, 1 thread -> 2 threads; where
// two values are given, runs at different times disagreed (the host is shared):
//   oneDNN f32:   1024^3 10447 -> 5222      128x784x512 507 -> 264..300
//                 10000x20x20 73 -> 39..43  1000x100x100 105 -> 56
//                 500x64x64 (4.1 MFLOP) 19.9 -> 15.6   128^3 (4.2) 20 -> 13.7..16.8
//                 64x32x512 (2.1) 10.7 -> 9.2..14.2    250x64x64 (2.0) 9.7 -> 9.9
//                 128x256x10 (0.66) 5.7 -> 6.8         64x64x64 2.8 -> 6.7
//   OpenBLAS f64: 1024^3 41019 -> 20679..22293   128x784x512 2157 -> 1128..1403
//                 10000x128x128 6966 -> 5374     10000x64x64 1785 -> 989..2197
//                 128^3 90 -> 52..87             64x32x512 45 -> 31.5..70
//                 1000x100x100 398 -> 243..521   1000x1000x20 1033 -> 714..1594
//                 10000x20x20 214 -> 350..1273   100000x20x20 2693 -> 4753
//                 10000x2x20 56 -> 330..1020     10000x48x48 1069 -> 1763
//                 10000x20x200 1977 -> 3237      20x10000x20 260 -> 431
// oneDNN's threads pay from about 4 MFLOP (20 us on one core) on, whatever the
// shape. OpenBLAS's pay reliably only for large products, and never when a row of C
// is cheap (n or k small: the PINN's 10000x20x20 hidden layers, 5-18x slower in
// BENCHMARKS.md) or C itself is small (m * n small: the PINN's 20x10000x20 weight
// gradients), however many FLOPs there are. On a busy machine a second thread helps
// nothing at any size; set_gemm_threads(1) is the remedy there.
constexpr double kMinOneDnnThreadedFlops = 4e6;
constexpr double kMinOpenBlasThreadedFlops = 32e6;
constexpr int64_t kMinOpenBlasThreadedInner = 64;     // n and k
constexpr int64_t kMinOpenBlasThreadedOutput = 4096;  // m * n

// Both read gemm_threads() even when they return 1: its default comes from OpenBLAS's
// own count, which the first small GEMM would otherwise have set to 1 already.
int onednn_threads(int64_t m, int64_t n, int64_t k) {
  const int library_threads = gemm_threads();
  return gemm_flops(m, n, k) >= kMinOneDnnThreadedFlops ? library_threads : 1;
}

int openblas_threads(int64_t m, int64_t n, int64_t k) {
  const int library_threads = gemm_threads();
  const bool splits_well = gemm_flops(m, n, k) >= kMinOpenBlasThreadedFlops &&
                           std::min(n, k) >= kMinOpenBlasThreadedInner &&
                           m * n >= kMinOpenBlasThreadedOutput;
  return splits_well ? library_threads : 1;
}

// ---------------------------------------------------------------------------------
// Argument checks and the parts every backend shares.

void check_gemm_arguments(const char* who, bool trans_a, bool trans_b, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  GD_INTERNAL_ASSERT(m >= 0 && n >= 0 && k >= 0,
                     std::string(who) + ": negative size m=" + std::to_string(m) +
                         " n=" + std::to_string(n) + " k=" + std::to_string(k));
  // Row strides of the matrices as stored: A is [m, k] or, transposed, [k, m].
  const int64_t a_columns = trans_a ? m : k;
  const int64_t b_columns = trans_b ? k : n;
  GD_INTERNAL_ASSERT(lda >= a_columns, std::string(who) + ": lda=" + std::to_string(lda) +
                                           " is smaller than A's row length " +
                                           std::to_string(a_columns));
  GD_INTERNAL_ASSERT(ldb >= b_columns, std::string(who) + ": ldb=" + std::to_string(ldb) +
                                           " is smaller than B's row length " +
                                           std::to_string(b_columns));
  GD_INTERNAL_ASSERT(ldc >= n, std::string(who) + ": ldc=" + std::to_string(ldc) +
                                   " is smaller than C's row length " + std::to_string(n));
}

// C = beta * C, where beta == 0 writes zeros (BLAS semantics: NaN in C is overwritten).
template <class T>
void scale_matrix(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// ---------------------------------------------------------------------------------
// OpenBLAS

// OpenBLAS takes 32-bit sizes. Checked once per call, before any threads start, so
// that the error is thrown from the caller's thread.
void check_blas_range(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  for (const auto& [what, value] : {std::pair{"m", m}, std::pair{"n", n}, std::pair{"k", k},
                                    std::pair{"lda", lda}, std::pair{"ldb", ldb},
                                    std::pair{"ldc", ldc}}) {
    GD_CHECK(value <= INT_MAX, std::string("gemm: ") + what + "=" + std::to_string(value) +
                                   " exceeds OpenBLAS's 32-bit index range");
  }
}

// OpenBLAS keeps one process-wide thread count; we set it before every call, which is
// a couple of loads when it is already right. Two user threads calling GEMMs of
// different sizes at once may run one of them on the other's count: only speed, never
// results, depends on it.
void use_openblas_threads(int threads) {
  if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
}

void openblas_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
}

void openblas_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                   const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                   double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
}

// Note [Gram products]: C = A^T A or A A^T (one matrix read twice, transposed
// once: a Gauss-Newton step's J^T J) is symmetric. syrk computes the upper
// triangle with half a GEMM's FLOPs; the lower one is mirrored, so C comes out
// exactly symmetric. Only with beta = 0: syrk leaves the lower triangle of C
// unread and unwritten.
template <class T>
bool is_gram(bool trans_a, bool trans_b, int64_t m, int64_t n, const T* a, int64_t lda, const T* b, int64_t ldb,
             T beta) {
  return a == b && lda == ldb && trans_a != trans_b && m == n && beta == T(0);
}

template <class T>
void openblas_gram(bool trans_a, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T* c, int64_t ldc) {
  const auto trans = trans_a ? CblasTrans : CblasNoTrans;  // A^T A reads A as [k, n]; A A^T as [n, k]
  if constexpr (std::is_same_v<T, double>)
    cblas_dsyrk(CblasRowMajor, CblasUpper, trans, static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), 0.0, c, static_cast<int>(ldc));
  else
    cblas_ssyrk(CblasRowMajor, CblasUpper, trans, static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), 0.0f, c, static_cast<int>(ldc));
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) c[i * ldc + j] = c[j * ldc + i];
}

// OpenBLAS has no batched GEMM: a loop, split over threads when each product is too
// small to be split itself.
template <class T>
void openblas_gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                           int64_t k, T alpha, const T* a, int64_t lda, int64_t stride_a,
                           const T* b, int64_t ldb, int64_t stride_b, T beta, T* c, int64_t ldc,
                           int64_t stride_c) {
  // Independent products need no synchronisation: only the total size counts, as for
  // oneDNN.
  const int threads_per_product = openblas_threads(m, n, k);
  const int threads_over_batch =
      threads_per_product == 1 && gemm_flops(batch * m, n, k) >= kMinOneDnnThreadedFlops
          ? static_cast<int>(std::min<int64_t>(gemm_threads(), batch))
          : 1;
  use_openblas_threads(threads_per_product);
#pragma omp parallel for num_threads(threads_over_batch) schedule(static) if (threads_over_batch > 1)
  for (int64_t i = 0; i < batch; ++i) {
    openblas_gemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb,
                  beta, c + i * stride_c, ldc);
  }
}

// ---------------------------------------------------------------------------------
// oneDNN (float32 only: oneDNN has no float64 matmul on the CPU)

// Everything a matmul primitive is specialised on. oneDNN bakes alpha (the output
// scale) and beta (the sum post-op's scale) into the primitive: a runtime output
// scale would move the 1024^3 product from the brgemm kernel to the slower gemm:jit
// one. The library passes alpha = 1 and beta in {0, 1} almost always, so keying on
// the values costs nothing in practice. The thread count is part of the key because
// the brgemm kernel fixes its work split when the primitive is created.
struct MatmulKey {
  int64_t batch, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c;
  uint32_t alpha_bits, beta_bits;  // bit patterns, so that equality and hashing agree
  bool trans_a, trans_b;
  int threads;
  bool operator==(const MatmulKey&) const = default;

  float alpha() const { return std::bit_cast<float>(alpha_bits); }
  float beta() const { return std::bit_cast<float>(beta_bits); }
};

struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t seed = 0;
    auto mix = [&seed](uint64_t value) {
      seed ^= std::hash<uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    };
    for (int64_t v : {key.batch, key.m, key.n, key.k, key.lda, key.ldb, key.ldc, key.stride_a,
                      key.stride_b, key.stride_c})
      mix(static_cast<uint64_t>(v));
    mix((uint64_t{key.alpha_bits} << 32) | key.beta_bits);
    mix((uint64_t(key.trans_a) << 1) | uint64_t(key.trans_b) | (uint64_t(key.threads) << 2));
    return seed;
  }
};

// A primitive with the memory objects that bind it to data: a call only swaps their
// data pointers. Building four dnnl::memory objects and the argument map each call
// cost 1.2 us of a 1.5 us 1x1x1 matmul (mostly malloc); set_data_handle costs ~3 ns.
struct BoundMatmul {
  dnnl::matmul primitive;  // empty when oneDNN has no implementation for the key
  dnnl::memory a, b, c, scratchpad;  // scratchpad is empty when none is needed
  std::unordered_map<int, dnnl::memory> args;
};

BoundMatmul create_matmul(const MatmulKey& key) {
  using dims = dnnl::memory::dims;
  using dnnl::memory;
  const auto f32 = memory::data_type::f32;
  // op(A) is described as an [m, k] matrix whose strides say how it is stored: a
  // transposed operand is just a column-major one.
  const dims a_strides = key.trans_a ? dims{1, key.lda} : dims{key.lda, 1};
  const dims b_strides = key.trans_b ? dims{1, key.ldb} : dims{key.ldb, 1};
  memory::desc a_desc, b_desc, c_desc;
  if (key.batch == 1) {
    a_desc = memory::desc({key.m, key.k}, f32, a_strides);
    b_desc = memory::desc({key.k, key.n}, f32, b_strides);
    c_desc = memory::desc({key.m, key.n}, f32, dims{key.ldc, 1});
  } else {
    // A broadcast operand (stride 0) is a batch of one, which matmul broadcasts; its
    // batch stride is then never used, but must describe a non-overlapping layout.
    const int64_t a_extent = (key.trans_a ? key.k : key.m) * key.lda;
    const int64_t b_extent = (key.trans_b ? key.n : key.k) * key.ldb;
    a_desc = memory::desc({key.stride_a == 0 ? 1 : key.batch, key.m, key.k}, f32,
                          {key.stride_a == 0 ? a_extent : key.stride_a, a_strides[0], a_strides[1]});
    b_desc = memory::desc({key.stride_b == 0 ? 1 : key.batch, key.k, key.n}, f32,
                          {key.stride_b == 0 ? b_extent : key.stride_b, b_strides[0], b_strides[1]});
    c_desc = memory::desc({key.batch, key.m, key.n}, f32, {key.stride_c, key.ldc, 1});
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (key.alpha() != 1.0f) attr.set_output_scales(0, {key.alpha()});
  if (key.beta() != 0.0f) {
    dnnl::post_ops post_ops;
    post_ops.append_sum(key.beta());
    attr.set_post_ops(post_ops);
  }
  const dnnl::engine& engine = onednn::cpu_engine();
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_desc, c_desc), attr, engine);
  } catch (const dnnl::error&) {
    // A layout oneDNN does not take (both operands broadcast, for one): the cached
    // empty entry sends every call with this key to OpenBLAS.
    return BoundMatmul{};
  }
  BoundMatmul bound{dnnl::matmul(pd),
                    dnnl::memory(a_desc, engine, nullptr),
                    dnnl::memory(b_desc, engine, nullptr),
                    dnnl::memory(c_desc, engine, nullptr),
                    {},
                    {}};
  bound.args = {{DNNL_ARG_SRC, bound.a}, {DNNL_ARG_WEIGHTS, bound.b}, {DNNL_ARG_DST, bound.c}};
  if (pd.scratchpad_desc().get_size() != 0) {
    bound.scratchpad = dnnl::memory(pd.scratchpad_desc(), engine, nullptr);
    bound.args.emplace(DNNL_ARG_SCRATCHPAD, bound.scratchpad);
  }
  return bound;
}

// Note [Matmul cache]
// Creating a matmul primitive takes tens of microseconds to milliseconds (the pd
// search and JIT code generation); running a small one a fraction of a microsecond.
// A training loop reuses a limited set of shapes, so a least-recently-used map of
// kCapacity entries holds them all: a handful for an MLP, but one per batch size
// for a packed LSTM, whose batch shrinks step by step (bench lstm_packed_f32 cycles
// through 141; with 64 entries LRU evicted each before its reuse and the
// re-creations took a fifth of the step). The map is per thread: its entries hold memory
// objects whose data pointers each call rewrites, which threads cannot share, and
// per-thread needs no lock. A second thread asking for the same shape creates its own
// pd, but oneDNN's process-wide primitive cache hands it the already generated code.
class MatmulCache {
 public:
  static constexpr size_t kCapacity = 1024;

  BoundMatmul& get(const MatmulKey& key) {
    auto found = index_.find(key);
    if (found != index_.end()) {
      entries_.splice(entries_.begin(), entries_, found->second);  // now most recent
      return found->second->second;
    }
    entries_.emplace_front(key, create_matmul(key));
    index_.emplace(key, entries_.begin());
    if (entries_.size() > kCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }

  size_t size() const { return entries_.size(); }

 private:
  using Entry = std::pair<MatmulKey, BoundMatmul>;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<MatmulKey, std::list<Entry>::iterator, MatmulKeyHash> index_;
};

MatmulCache& thread_matmul_cache() {
  thread_local MatmulCache cache;
  return cache;
}

using onednn::OmpThreadsScope;

// Requires m, n, k > 0 and alpha != 0 (oneDNN 2.6 dies with SIGFPE creating a k == 0
// matmul); the callers handle those cases. Returns false, having done nothing, when
// oneDNN cannot do this product.
bool onednn_gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                         int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a,
                         const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                         int64_t ldc, int64_t stride_c) {
  const int threads = onednn_threads(batch * m, n, k);
  if (batch == 1) stride_a = stride_b = stride_c = 0;  // unused: keep them out of the key
  const MatmulKey key{.batch = batch, .m = m, .n = n, .k = k,
                      .lda = lda, .ldb = ldb, .ldc = ldc,
                      .stride_a = stride_a, .stride_b = stride_b, .stride_c = stride_c,
                      .alpha_bits = std::bit_cast<uint32_t>(alpha),
                      .beta_bits = std::bit_cast<uint32_t>(beta),
                      .trans_a = trans_a, .trans_b = trans_b, .threads = threads};
  const OmpThreadsScope omp_threads(threads);
  BoundMatmul& matmul = thread_matmul_cache().get(key);
  if (!matmul.primitive) return false;
  matmul.a.set_data_handle(const_cast<float*>(a));
  matmul.b.set_data_handle(const_cast<float*>(b));
  matmul.c.set_data_handle(c);
  if (matmul.scratchpad) {
    matmul.scratchpad.set_data_handle(onednn::thread_scratchpad<GemmScratchpad>(matmul.scratchpad.get_desc().get_size()));
  }
  dnnl::stream& stream = onednn::thread_stream();
  matmul.primitive.execute(stream, matmul.args);
  stream.wait();
  return true;
}

// ---------------------------------------------------------------------------------
// The dtype-independent front end.

template <class T>
void gemm_batched_impl(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                       int64_t k, T alpha, const T* a, int64_t lda, int64_t stride_a, const T* b,
                       int64_t ldb, int64_t stride_b, T beta, T* c, int64_t ldc,
                       int64_t stride_c) {
  check_gemm_arguments("gemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  GD_INTERNAL_ASSERT(batch >= 0, "gemm_batched: negative batch " + std::to_string(batch));
  if (batch == 0 || m == 0 || n == 0) return;
  GD_INTERNAL_ASSERT(batch == 1 || stride_c != 0,
                     "gemm_batched: the C matrices overlap (stride_c = 0)");
  if (k == 0 || alpha == T(0)) {  // nothing to multiply: C = beta * C
    for (int64_t i = 0; i < batch; ++i) scale_matrix(m, n, beta, c + i * stride_c, ldc);
    return;
  }
  // A batch of row blocks times one shared B (a Linear layer over [batch, m, k]) is a
  // single [batch * m, k] x [k, n] product when the blocks follow one another.
  if (batch > 1 && stride_b == 0 && !trans_a && stride_a == m * lda && stride_c == m * ldc) {
    m *= batch;
    batch = 1;
  }
  if constexpr (std::is_same_v<T, double>) {
    if (small_gemm_applies(trans_a, trans_b, m, n, k)) {  // Note [Small float64 GEMM]
      for (int64_t i = 0; i < batch; ++i)
        small_gemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
                   c + i * stride_c, ldc);
      return;
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (use_onednn_for_float32(batch * m, n, k) &&
        onednn_gemm_batched(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                            stride_b, beta, c, ldc, stride_c)) {
      return;
    }
  }
  check_blas_range(m, n, k, lda, ldb, ldc);
  if (batch == 1) {
    use_openblas_threads(openblas_threads(m, n, k));
    if (is_gram(trans_a, trans_b, m, n, a, lda, b, ldb, beta)) {  // Note [Gram products]
      openblas_gram(trans_a, n, k, alpha, a, lda, c, ldc);
      return;
    }
    openblas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    openblas_gemm_batched(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                          stride_b, beta, c, ldc, stride_c);
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  gemm_batched_impl(1, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  gemm_batched_impl(1, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0);
}

void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float* a, int64_t lda, int64_t stride_a, const float* b,
                  int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  double alpha, const double* a, int64_t lda, int64_t stride_a, const double* b,
                  int64_t ldb, int64_t stride_b, double beta, double* c, int64_t ldc,
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

void set_gemm_threads(int threads) {
  GD_CHECK(threads >= 1,
           "set_gemm_threads: the thread count must be at least 1, got " + std::to_string(threads));
  library_gemm_threads.store(threads, std::memory_order_relaxed);
}

int gemm_threads() {
  int threads = library_gemm_threads.load(std::memory_order_relaxed);
  if (threads == 0) {
    int unset = 0;
    library_gemm_threads.compare_exchange_strong(unset, std::max(1, openblas_get_num_threads()));
    threads = library_gemm_threads.load(std::memory_order_relaxed);
  }
  return threads;
}

int gemm_threads_for(bool is_float32, int64_t m, int64_t n, int64_t k) {
  return is_float32 && use_onednn_for_float32(m, n, k) ? onednn_threads(m, n, k)
                                                       : openblas_threads(m, n, k);
}

const char* gemm_backend_name(bool is_float32, int64_t m, int64_t n, int64_t k) {
  return is_float32 && use_onednn_for_float32(m, n, k) ? "onednn" : "openblas";
}

namespace testing {
void gemm_force_backend(Float32Backend backend) {
  forced_float32_backend.store(backend, std::memory_order_relaxed);
}
int gemm_onednn_cache_size() { return static_cast<int>(thread_matmul_cache().size()); }
int gemm_onednn_cache_capacity() { return static_cast<int>(MatmulCache::kCapacity); }
}  // namespace testing

}  // namespace gradiens::kernels::cpu
