// CPU GEMM dispatch: float64 through OpenBLAS dgemm, float32 through oneDNN matmul or
// OpenBLAS sgemm by shape (Note [Float32 GEMM backend]), threads per call from the FLOP
// count (Note [GEMM threads]), and oneDNN primitives kept in a small LRU cache.
#include "kernels/cpu/gemm.h"

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

#include "kernels/error.h"

// Declared by OpenBLAS's cblas.h too; repeated so that the file still compiles when
// Debian's alternatives point <cblas.h> at another BLAS (we link -lopenblas anyway).
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace gradiens::kernels::cpu {
namespace {

// Note [GEMM threads]
// A GEMM below kSingleThreadFlops runs on the calling thread, whatever gemm_threads()
// says. Measured on this 2-core machine (median of repeats, GFLOP/s at 1 / 2 threads):
//   10000x20x20 f64 OpenBLAS (8 MFLOP):  ...
// Waking a second thread costs tens of microseconds on a shared, busy machine, and
// OpenBLAS's 2-thread split of a tall-skinny product is much slower than one thread,
// so the threshold sits well above the PINN shapes.
constexpr double kSingleThreadFlops = 32e6;

std::atomic<int> library_gemm_threads{0};  // 0: not yet read from OpenBLAS

std::atomic<testing::Float32Backend> forced_float32_backend{testing::Float32Backend::Auto};

double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// Note [Float32 GEMM backend]
// TODO(measurements)
bool use_onednn_for_float32(int64_t m, int64_t n, int64_t k) {
  switch (forced_float32_backend.load(std::memory_order_relaxed)) {
    case testing::Float32Backend::OneDnn: return true;
    case testing::Float32Backend::OpenBlas: return false;
    case testing::Float32Backend::Auto: break;
  }
  return gemm_flops(m, n, k) >= 1e5;
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

int checked_blas_int(int64_t value, const char* what) {
  GD_CHECK(value <= INT_MAX, std::string("gemm: ") + what + "=" + std::to_string(value) +
                                 " exceeds OpenBLAS's 32-bit index range");
  return static_cast<int>(value);
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
              trans_b ? CblasTrans : CblasNoTrans, checked_blas_int(m, "m"),
              checked_blas_int(n, "n"), checked_blas_int(k, "k"), alpha, a,
              checked_blas_int(lda, "lda"), b, checked_blas_int(ldb, "ldb"), beta, c,
              checked_blas_int(ldc, "ldc"));
}

void openblas_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                   const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                   double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, checked_blas_int(m, "m"),
              checked_blas_int(n, "n"), checked_blas_int(k, "k"), alpha, a,
              checked_blas_int(lda, "lda"), b, checked_blas_int(ldb, "ldb"), beta, c,
              checked_blas_int(ldc, "ldc"));
}

// OpenBLAS has no batched GEMM: a loop, split over threads when each product is too
// small to be split itself.
template <class T>
void openblas_gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                           int64_t k, T alpha, const T* a, int64_t lda, int64_t stride_a,
                           const T* b, int64_t ldb, int64_t stride_b, T beta, T* c, int64_t ldc,
                           int64_t stride_c) {
  const int threads_per_product = gemm_threads_for(m, n, k);
  const int threads_over_batch =
      threads_per_product == 1
          ? static_cast<int>(std::min<int64_t>(gemm_threads_for(batch * m, n, k), batch))
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

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The scratchpad is ours (scratchpad_mode::user) so that no two threads can ever share
// scratch memory: one growing buffer per thread.
void* thread_scratchpad(size_t bytes) {
  struct AlignedDelete {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  thread_local std::unique_ptr<std::byte[], AlignedDelete> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))));
    capacity = bytes;
  }
  return buffer.get();
}

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
  const dnnl::engine& engine = cpu_engine();
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
// A training loop reuses a handful of shapes, so a least-recently-used map of
// kCapacity entries holds them all. The map is per thread: its entries hold memory
// objects whose data pointers each call rewrites, which threads cannot share, and
// per-thread needs no lock. A second thread asking for the same shape creates its own
// pd, but oneDNN's process-wide primitive cache hands it the already generated code.
class MatmulCache {
 public:
  static constexpr size_t kCapacity = 64;

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

// Streams are not meant to be shared between threads; one per calling thread.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// oneDNN's threads come from OpenMP, read when a primitive is created and run; this
// sets the calling thread's OpenMP count for one call and puts it back afterwards.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads) : saved_(omp_get_max_threads()) {
    if (saved_ != threads) omp_set_num_threads(threads);
  }
  ~OmpThreadsScope() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int saved_;
};

// Requires m, n, k > 0 and alpha != 0 (oneDNN 2.6 dies with SIGFPE creating a k == 0
// matmul); the callers handle those cases. Returns false, having done nothing, when
// oneDNN cannot do this product.
bool onednn_gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                         int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a,
                         const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                         int64_t ldc, int64_t stride_c) {
  const int threads = gemm_threads_for(batch * m, n, k);
  if (batch == 1) stride_a = stride_b = stride_c = 0;  // unused: keep them out of the key
  const MatmulKey key{batch,    m,        n,
                      k,        lda,      ldb,
                      ldc,      stride_a, stride_b,
                      stride_c, std::bit_cast<uint32_t>(alpha), std::bit_cast<uint32_t>(beta),
                      trans_a,  trans_b,  threads};
  const OmpThreadsScope omp_threads(threads);
  BoundMatmul& matmul = thread_matmul_cache().get(key);
  if (!matmul.primitive) return false;
  matmul.a.set_data_handle(const_cast<float*>(a));
  matmul.b.set_data_handle(const_cast<float*>(b));
  matmul.c.set_data_handle(c);
  if (matmul.scratchpad) {
    matmul.scratchpad.set_data_handle(thread_scratchpad(matmul.scratchpad.get_desc().get_size()));
  }
  dnnl::stream& stream = thread_stream();
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
  if constexpr (std::is_same_v<T, float>) {
    if (use_onednn_for_float32(batch * m, n, k) &&
        onednn_gemm_batched(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                            stride_b, beta, c, ldc, stride_c)) {
      return;
    }
  }
  if (batch == 1) {
    use_openblas_threads(gemm_threads_for(m, n, k));
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

int gemm_threads_for(int64_t m, int64_t n, int64_t k) {
  // Read the library count first even when it is not used: its default comes from
  // OpenBLAS's count, which the first small GEMM would otherwise have set to 1.
  const int threads = gemm_threads();
  return gemm_flops(m, n, k) < kSingleThreadFlops ? 1 : threads;
}

const char* gemm_backend_name(bool is_float32, int64_t m, int64_t n, int64_t k) {
  return is_float32 && use_onednn_for_float32(m, n, k) ? "onednn" : "openblas";
}

namespace testing {
void gemm_force_backend(Float32Backend backend) {
  forced_float32_backend.store(backend, std::memory_order_relaxed);
}
int gemm_onednn_cache_size() { return static_cast<int>(thread_matmul_cache().size()); }
}  // namespace testing

}  // namespace gradiens::kernels::cpu
