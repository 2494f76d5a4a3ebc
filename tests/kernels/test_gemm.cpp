// Tests for kernels/cpu/gemm: every backend against a long double triple loop, over
// transposes, padded rows, Gram products, batches with broadcasting, degenerate sizes and threads.
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hwy/targets.h"
#include "kernels/error.h"
#include "tests/kernels/simd_targets.h"

namespace gradiens::kernels::cpu {
namespace {

using testing::Float32Backend;

// Forces a float32 backend (and optionally a thread count) for one scope.
class GemmSettingsScope {
 public:
  explicit GemmSettingsScope(Float32Backend backend, int threads = 0)
      : saved_threads_(gemm_threads()) {
    testing::gemm_force_backend(backend);
    if (threads > 0) set_gemm_threads(threads);
  }
  ~GemmSettingsScope() {
    testing::gemm_force_backend(Float32Backend::Auto);
    set_gemm_threads(saved_threads_);
  }
  GemmSettingsScope(const GemmSettingsScope&) = delete;
  GemmSettingsScope& operator=(const GemmSettingsScope&) = delete;

 private:
  int saved_threads_;
};

const char* backend_label(Float32Backend backend) {
  switch (backend) {
    case Float32Backend::Auto: return "auto";
    case Float32Backend::OneDnn: return "onednn";
    case Float32Backend::OpenBlas: return "openblas";
  }
  return "?";
}

// One product, or a batch of them. Each stored row carries row_padding extra elements
// and consecutive matrices matrix_gap extra elements; both are filled with NaN in A and
// B (a kernel that reads them produces NaN) and with a sentinel in C (a kernel that
// writes them is caught).
struct GemmCase {
  bool trans_a, trans_b;
  int64_t m, n, k;
  double alpha, beta;
  int64_t row_padding = 0;
  int64_t batch = 1;
  bool broadcast_a = false, broadcast_b = false;
  int64_t matrix_gap = 0;

  std::string describe() const {
    return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N") + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
           " pad=" + std::to_string(row_padding) + " batch=" + std::to_string(batch) +
           (broadcast_a ? " broadcast_a" : "") + (broadcast_b ? " broadcast_b" : "") +
           " gap=" + std::to_string(matrix_gap);
  }
};

constexpr double kCSentinel = 12345.0;

// A stored matrix: rows x columns with row stride ld, repeated `count` times.
template <class T>
struct StoredMatrices {
  int64_t rows, columns, ld, stride, count;
  std::vector<T> values;

  StoredMatrices(int64_t rows_, int64_t columns_, int64_t padding, int64_t gap, int64_t count_,
                 T filler)
      : rows(rows_), columns(columns_), ld(columns_ + padding), stride(rows_ * ld + gap),
        count(count_), values(static_cast<size_t>(std::max<int64_t>(stride * count, 1)), filler) {}

  T& at(int64_t matrix, int64_t row, int64_t column) {
    return values[matrix * stride + row * ld + column];
  }
  T at(int64_t matrix, int64_t row, int64_t column) const {
    return values[matrix * stride + row * ld + column];
  }
  bool is_payload(size_t index) const {
    if (rows * columns == 0) return false;
    const int64_t in_matrix = static_cast<int64_t>(index) % stride;
    return in_matrix < rows * ld && in_matrix % ld < columns;
  }
};

template <class T>
void check_gemm_case(const GemmCase& cs, uint32_t seed) {
  CAPTURE(cs.describe());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const T nan = std::numeric_limits<T>::quiet_NaN();

  StoredMatrices<T> a(cs.trans_a ? cs.k : cs.m, cs.trans_a ? cs.m : cs.k, cs.row_padding,
                      cs.matrix_gap, cs.broadcast_a ? 1 : cs.batch, nan);
  StoredMatrices<T> b(cs.trans_b ? cs.n : cs.k, cs.trans_b ? cs.k : cs.n, cs.row_padding,
                      cs.matrix_gap, cs.broadcast_b ? 1 : cs.batch, nan);
  StoredMatrices<T> c(cs.m, cs.n, cs.row_padding, cs.matrix_gap, cs.batch, T(kCSentinel));
  for (auto* operand : {&a, &b})
    for (int64_t i = 0; i < operand->count; ++i)
      for (int64_t r = 0; r < operand->rows; ++r)
        for (int64_t col = 0; col < operand->columns; ++col)
          operand->at(i, r, col) = static_cast<T>(uniform(rng));
  // With beta == 0 the old C must not matter, not even NaN.
  for (int64_t i = 0; i < c.count; ++i)
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.columns; ++col)
        c.at(i, r, col) = cs.beta == 0.0 ? nan : static_cast<T>(uniform(rng));
  const StoredMatrices<T> c_before = c;

  if (cs.batch == 1 && cs.matrix_gap == 0 && !cs.broadcast_a && !cs.broadcast_b) {
    gemm(cs.trans_a, cs.trans_b, cs.m, cs.n, cs.k, static_cast<T>(cs.alpha), a.values.data(), a.ld,
         b.values.data(), b.ld, static_cast<T>(cs.beta), c.values.data(), c.ld);
  } else {
    gemm_batched(cs.batch, cs.trans_a, cs.trans_b, cs.m, cs.n, cs.k, static_cast<T>(cs.alpha),
                 a.values.data(), a.ld, cs.broadcast_a ? 0 : a.stride, b.values.data(), b.ld,
                 cs.broadcast_b ? 0 : b.stride, static_cast<T>(cs.beta), c.values.data(), c.ld,
                 c.stride);
  }

  // Closed form in long double; |error| <= 2 (k + 2) eps (|alpha| sum |a b| + |beta c|)
  // bounds any summation order.
  const long double tolerance = 2.0L * (cs.k + 2) * std::numeric_limits<T>::epsilon();
  int failures = 0;
  for (int64_t i = 0; i < cs.batch; ++i) {
    const int64_t ia = cs.broadcast_a ? 0 : i, ib = cs.broadcast_b ? 0 : i;
    for (int64_t r = 0; r < cs.m; ++r) {
      for (int64_t col = 0; col < cs.n; ++col) {
        long double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < cs.k; ++p) {
          const long double x = cs.trans_a ? a.at(ia, p, r) : a.at(ia, r, p);
          const long double y = cs.trans_b ? b.at(ib, col, p) : b.at(ib, p, col);
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        long double expected = cs.alpha * sum;
        long double bound = std::fabs(cs.alpha) * magnitude;
        if (cs.beta != 0.0) {
          const long double old = c_before.at(i, r, col);
          expected += cs.beta * old;
          bound += std::fabs(cs.beta * old);
        }
        const long double got = c.at(i, r, col);
        const bool ok = std::isfinite(static_cast<double>(got)) &&
                        std::fabs(got - expected) <= tolerance * bound + 1e-30L;
        if (!ok && ++failures <= 5) {
          CAPTURE(i);
          CAPTURE(r);
          CAPTURE(col);
          CHECK(static_cast<double>(got) == doctest::Approx(static_cast<double>(expected)));
        }
      }
    }
  }
  CHECK(failures == 0);
  // Padding and gaps in C are untouched.
  int clobbered = 0;
  for (size_t index = 0; index < c.values.size(); ++index)
    if (!c.is_payload(index) && c.values[index] != T(kCSentinel)) ++clobbered;
  CHECK(clobbered == 0);
}

// Runs a table of cases for float64 and, for float32, on each backend.
void check_cases(const std::vector<GemmCase>& cases, int threads = 0) {
  uint32_t seed = 1;
  for (const GemmCase& cs : cases) {
    {
      GemmSettingsScope settings(Float32Backend::Auto, threads);
      const std::string dtype = "float64";
      CAPTURE(dtype);
      check_gemm_case<double>(cs, seed);
    }
    for (Float32Backend backend :
         {Float32Backend::Auto, Float32Backend::OneDnn, Float32Backend::OpenBlas}) {
      GemmSettingsScope settings(backend, threads);
      const std::string backend_name = backend_label(backend);
      CAPTURE(backend_name);
      check_gemm_case<float>(cs, seed);
    }
    ++seed;
  }
}

std::vector<GemmCase> all_transposes(int64_t m, int64_t n, int64_t k, double alpha, double beta,
                                     int64_t row_padding = 0) {
  std::vector<GemmCase> cases;
  for (bool trans_a : {false, true})
    for (bool trans_b : {false, true})
      cases.push_back({trans_a, trans_b, m, n, k, alpha, beta, row_padding});
  return cases;
}

}  // namespace

TEST_CASE("gemm: every transpose against the closed form") {
  for (const auto& cases : {
           all_transposes(5, 7, 3, 1.0, 0.0),       // smaller than any kernel block
           all_transposes(37, 19, 23, 1.0, 0.0),    // odd sizes, partial blocks
           all_transposes(64, 48, 80, -0.5, 0.0),   // alpha != 1
           all_transposes(33, 65, 17, 1.0, 1.0),    // accumulate into C
           all_transposes(40, 24, 56, 2.0, -0.75),  // general alpha and beta
       })
    check_cases(cases);
}

template <class T>
void check_gram(bool trans, int64_t n, int64_t k, double alpha, double beta, int64_t padding) {
  CAPTURE(trans);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(beta);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  // A stored [k, n] for A^T A (trans), [n, k] for A A^T; padding NaN.
  const int64_t rows = trans ? k : n, columns = trans ? n : k, ld = columns + padding;
  std::vector<T> a(static_cast<size_t>(rows * ld), std::numeric_limits<T>::quiet_NaN());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c) a[static_cast<size_t>(r * ld + c)] = static_cast<T>(uniform(rng));
  const int64_t ldc = n + padding;
  std::vector<T> c(static_cast<size_t>(n * ldc), T(kCSentinel)), c_before;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[static_cast<size_t>(i * ldc + j)] =
          beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(uniform(rng));
  c_before = c;
  gemm(trans, !trans, n, n, k, static_cast<T>(alpha), a.data(), ld, a.data(), ld, static_cast<T>(beta), c.data(), ldc);
  auto element = [&](int64_t i, int64_t p) {
    return trans ? a[static_cast<size_t>(p * ld + i)] : a[static_cast<size_t>(i * ld + p)];
  };
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      long double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<long double>(element(i, p)) * element(j, p);
      long double expected = alpha * sum;
      if (beta != 0) expected += beta * static_cast<long double>(c_before[static_cast<size_t>(i * ldc + j)]);
      worst = std::max(worst, static_cast<double>(std::fabs(expected - c[static_cast<size_t>(i * ldc + j)])));
      if (beta == 0) CHECK(c[static_cast<size_t>(i * ldc + j)] == c[static_cast<size_t>(j * ldc + i)]);
    }
    for (int64_t j = n; j < ldc; ++j) CHECK(c[static_cast<size_t>(i * ldc + j)] == T(kCSentinel));
  }
  CHECK(worst < (std::is_same_v<T, double> ? 1e-12 : 1e-4) * static_cast<double>(k));
}

TEST_CASE("gemm: A^T A and A A^T (one matrix read twice) are exactly symmetric and equal the closed form") {
  GemmSettingsScope openblas(Float32Backend::OpenBlas);
  for (const bool trans : {true, false}) {
    check_gram<double>(trans, 70, 300, 1.0, 0.0, 0);
    check_gram<double>(trans, 45, 129, -0.5, 0.0, 3);
    check_gram<double>(trans, 40, 90, 1.0, 1.0, 2);  // beta != 0: a GEMM, C's both triangles read
    check_gram<float>(trans, 33, 200, 2.0, 0.0, 1);
  }
}

TEST_CASE("gemm: padded rows (ld larger than the row length)") {
  for (const auto& cases : {
           all_transposes(13, 11, 9, 1.0, 0.0, 3),
           all_transposes(70, 50, 30, 1.0, 1.0, 5),
           all_transposes(128, 10, 256, 0.25, 0.5, 16),
       })
    check_cases(cases);
}

TEST_CASE("gemm: the library's shapes (MLP, PINN, LSTM)") {
  check_cases({
      // MLP 784-512-256-10, batch 128: forward, weight gradient, input gradient.
      {false, true, 128, 512, 784, 1.0, 0.0},
      {true, false, 512, 784, 128, 1.0, 1.0},
      {false, false, 128, 784, 512, 1.0, 0.0},
      {false, true, 128, 10, 256, 1.0, 0.0},
      {true, false, 10, 256, 128, 1.0, 0.0},
      // PINN 2-20x8-1 over 10000 points.
      {false, false, 10000, 20, 2, 1.0, 0.0},
      {false, false, 10000, 20, 20, 1.0, 0.0},
      {false, false, 10000, 1, 20, 1.0, 0.0},
      {true, false, 20, 20, 10000, 1.0, 0.0},
      // LSTM gates.
      {false, true, 64, 512, 32, 1.0, 1.0},
      {false, false, 1, 1, 1, 1.0, 0.0},
      {false, false, 1, 300, 70, 1.0, 0.0},
      {false, false, 300, 1, 70, 1.0, 0.0},
  });
}

// Runs `check` once per SIMD target the small float64 GEMM kernel has (AVX-512,
// AVX2) that this CPU supports; returns how many targets ran.
namespace {

template <class Check>
size_t for_each_small_gemm_target(Check check) {
  return gradiens::testing::run_on_simd_targets({HWY_AVX3, HWY_AVX2}, check).size();
}

}  // namespace

// float64 products with n <= 64 and a short k (or a short m and a long k) take the
// direct kernel of small_gemm.cpp: every width (full vectors, half-width, paired and
// masked tails, one and two column panels), row counts around its tiles, reduction
// lengths across its 64-row passes and 256-row chunks, operands large enough to be
// prefetched (a long reduction's A and B, a C read back), and tall products and
// long reductions split over threads; on each SIMD target the kernel has (AVX-512
// and AVX2).
TEST_CASE("gemm: thin float64 products (the direct small-matrix kernel)") {
  std::vector<GemmCase> cases;
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 20, 24, 28, 31, 32, 33, 36, 40, 44, 47, 48, 57, 63, 64})
    for (int64_t m : {1, 2, 5, 9, 19})
      cases.push_back({m % 2 == 1, m % 3 == 0, m, n, 20, 1.0, 0.0, m % 2});
  for (int64_t k : {1, 2, 63, 64, 65, 127, 128, 129, 257, 1000, 3001})
    for (int64_t m : {1, 8, 20, 32, 64})
      for (double beta : {0.0, 1.0, -0.5}) cases.push_back({true, false, m, m == 64 ? 64 : 20, k, 0.75, beta, k % 3});
  for (bool trans_a : {false, true})
    for (bool trans_b : {false, true}) {
      cases.push_back({trans_a, trans_b, 3001, 20, 20, 1.0, 1.0, 1});
      cases.push_back({trans_a, trans_b, 1001, 64, 64, -1.0, 0.5, 3});
      cases.push_back({trans_a, trans_b, 5003, 20, 20, 1.0, 1.0, 0});  // C (800 KB) prefetched
    }
  // The kernel exists for AVX2 and AVX-512 only; elsewhere every product goes to OpenBLAS.
  const bool cpu_has_kernel = small_gemm_applies(false, false, 1, 1, 1);
  CHECK(small_gemm_applies(false, false, 10000, 20, 20) == cpu_has_kernel);
  CHECK(small_gemm_applies(false, true, 8192, 64, 64) == cpu_has_kernel);
  CHECK(small_gemm_applies(true, false, 20, 20, 10000) == cpu_has_kernel);
  CHECK(small_gemm_applies(true, false, 64, 64, 8192) == cpu_has_kernel);
  CHECK_FALSE(small_gemm_applies(false, true, 20, 20, 10000));  // a long transposed B is packed by OpenBLAS
  CHECK_FALSE(small_gemm_applies(false, false, 100, 65, 20));
  CHECK_FALSE(small_gemm_applies(true, false, 65, 20, 10000));
  const size_t targets_run = !cpu_has_kernel ? 0 : for_each_small_gemm_target([&] {
    uint32_t seed = 100;
    for (int threads : {1, 2}) {
      GemmSettingsScope settings(Float32Backend::Auto, threads);
      for (const GemmCase& cs : cases) check_gemm_case<double>(cs, seed++);
    }
  });
  if (targets_run == 0) {  // OpenBLAS takes them all
    uint32_t seed = 100;
    for (const GemmCase& cs : cases) check_gemm_case<double>(cs, seed++);
  }
}

// The direct kernel's summation order (Note [Small float64 GEMM]), bit for bit:
// per chunk of 256 reduction rows one FMA chain over p in order, the first
// chunk's sum s giving fma(beta, C, alpha s), each later one C plus alpha s
// rounded; however the kernel cuts the chunks into passes over its tiles (64
// rows, or 32 at n = 64 where L1 holds 32 KiB: Note [Passes in L1]).
// Reduction lengths around the chunks and passes, widths with full, paired,
// half and masked tails, and row counts around the tiles, on each SIMD target,
// on one thread and with the larger products' rows split over three.
TEST_CASE("gemm: a long float64 reduction rounds as its chunks, bit for bit") {
  if (!small_gemm_applies(false, false, 1, 1, 1)) return;  // OpenBLAS takes every product
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  int checked = 0;
  for_each_small_gemm_target([&] {
    for (int threads : {1, 3})
      for (int64_t k : {65, 127, 129, 256, 257, 300, 1000, 3001})
        for (int64_t n : {2, 5, 20, 36, 64})
          for (int64_t m : {3, 20, 64})
            for (double beta : {0.0, 1.0, -0.5}) {
              CAPTURE(threads);
              CAPTURE(k);
              CAPTURE(n);
              CAPTURE(m);
              CAPTURE(beta);
              GemmSettingsScope settings(Float32Backend::Auto, threads);
              const double alpha = m == 20 ? 1.0 : 0.75;
              std::vector<double> a(static_cast<size_t>(k * m)), b(static_cast<size_t>(k * n)),
                  c(static_cast<size_t>(m * n));
              for (double& v : a) v = uniform(rng);
              for (double& v : b) v = uniform(rng);
              for (double& v : c) v = uniform(rng);
              std::vector<double> expected = c;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  double& out = expected[static_cast<size_t>(i * n + j)];
                  for (int64_t p0 = 0; p0 < k; p0 += 256) {
                    double sum = 0;  // A^T B: a is [k, m], b is [k, n]
                    for (int64_t p = p0; p < std::min<int64_t>(k, p0 + 256); ++p)
                      sum = std::fma(a[static_cast<size_t>(p * m + i)], b[static_cast<size_t>(p * n + j)], sum);
                    volatile double scaled = alpha * sum;  // rounded: no fused multiply-add here
                    if (p0 == 0) out = beta == 0.0 ? scaled : std::fma(beta, out, scaled);
                    else out = out + scaled;
                  }
                }
              small_gemm(true, false, m, n, k, alpha, a.data(), m, b.data(), n, beta, c.data(), n);
              bool same = true;
              for (size_t e = 0; e < c.size(); ++e)
                same = same && std::memcmp(&c[e], &expected[e], sizeof(double)) == 0;
              CHECK(same);
              ++checked;
            }
  });
  CHECK(checked > 0);
}

// The direct kernel's bias (Linear's, added as the results leave the registers):
// bit for bit the product followed by a separate add, on every width and tail,
// both layouts of each operand, row counts around its tiles, and threads.
TEST_CASE("gemm: the thin float64 kernel's bias equals the product then an add, bit for bit") {
  const bool cpu_has_kernel = small_gemm_applies(false, false, 1, 1, 1);
  CHECK(small_gemm_bias_applies(false, true, 10000, 20, 20) == cpu_has_kernel);
  CHECK_FALSE(small_gemm_bias_applies(true, false, 20, 20, 10000));  // a long reduction comes in chunks
  if (!cpu_has_kernel) return;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  int checked = 0;
  for_each_small_gemm_target([&] {
    for (int threads : {1, 2}) {
      GemmSettingsScope settings(Float32Backend::Auto, threads);
      for (int64_t n : {1, 3, 4, 8, 12, 17, 20, 32, 36, 47, 64})
        for (int64_t m : {1, 5, 19, 3001})
          for (int64_t k : {1, 20, 64})
            for (bool trans_b : {false, true}) {
              const bool trans_a = (m + n) % 2 == 1;
              CAPTURE(n);
              CAPTURE(m);
              CAPTURE(k);
              CAPTURE(trans_b);
              std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), bias(n);
              for (double& v : a) v = uniform(rng);
              for (double& v : b) v = uniform(rng);
              for (double& v : bias) v = uniform(rng);
              const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
              std::vector<double> fused(static_cast<size_t>(m * n), std::nan("")), composed(fused);
              small_gemm(trans_a, trans_b, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, fused.data(), n,
                         bias.data());
              small_gemm(trans_a, trans_b, m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, composed.data(), n);
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) composed[i * n + j] += bias[j];
              CHECK(std::memcmp(fused.data(), composed.data(), fused.size() * sizeof(double)) == 0);
              // And against the definition, summed in long double.
              double worst = 0;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  long double sum = bias[j];
                  for (int64_t p = 0; p < k; ++p)
                    sum += static_cast<long double>(a[trans_a ? p * lda + i : i * lda + p]) *
                           b[trans_b ? j * ldb + p : p * ldb + j];
                  worst = std::max(worst, std::abs(fused[i * n + j] - static_cast<double>(sum)));
                }
              CHECK(worst <= 1e-13 * static_cast<double>(k + 1));
              ++checked;
            }
    }
  });
  CHECK(checked > 0);
}

TEST_CASE("gemm: degenerate sizes") {
  check_cases({
      {false, false, 6, 5, 0, 1.0, 0.0},   // k == 0, beta == 0: C becomes 0 even from NaN
      {true, true, 6, 5, 0, 1.0, 2.0},     // k == 0: C = beta * C
      {false, false, 6, 5, 0, 1.0, 1.0},   // k == 0, beta == 1: C unchanged
      {false, false, 0, 5, 4, 1.0, 0.0},   // m == 0: nothing to do
      {false, true, 6, 0, 4, 1.0, 0.0},    // n == 0
      {false, false, 0, 0, 0, 1.0, 0.0},
      {false, false, 6, 5, 4, 0.0, 0.0},   // alpha == 0: C = 0
      {true, false, 6, 5, 4, 0.0, -3.0},   // alpha == 0: C = beta * C
      {false, false, 1, 1, 1, 3.0, 0.5},
  });

  SUBCASE("alpha == 0 does not read A or B") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> a(4, nan), b(4, nan), c{1, 2, 3, 4};
    gemm(false, false, 2, 2, 2, 0.0, a.data(), 2, b.data(), 2, 2.0, c.data(), 2);
    CHECK(c == std::vector<double>{2, 4, 6, 8});
  }
  SUBCASE("k == 0 and m == 0 accept null pointers") {
    std::vector<float> c(6, std::numeric_limits<float>::quiet_NaN());
    for (Float32Backend backend : {Float32Backend::OneDnn, Float32Backend::OpenBlas}) {
      GemmSettingsScope settings(backend);
      gemm(false, false, 2, 3, 0, 1.0f, nullptr, 0, nullptr, 3, 0.0f, c.data(), 3);
      CHECK(c == std::vector<float>(6, 0.0f));
      gemm(false, false, 0, 3, 4, 1.0f, nullptr, 4, nullptr, 3, 0.0f, nullptr, 3);
    }
  }
}

TEST_CASE("gemm_batched: strides, gaps and broadcasting") {
  std::vector<GemmCase> cases;
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      const auto add = [&](GemmCase cs) {
        cs.trans_a = trans_a;
        cs.trans_b = trans_b;
        cases.push_back(cs);
      };
      add({false, false, 9, 7, 5, 1.0, 0.0, 0, 4});                       // contiguous
      add({false, false, 9, 7, 5, 1.0, 0.5, 2, 3, false, false, 11});     // padded, with gaps
      add({false, false, 16, 12, 20, 1.0, 0.0, 0, 5, true, false, 0});    // shared A
      add({false, false, 16, 12, 20, -1.0, 1.0, 3, 5, false, true, 7});   // shared B
      add({false, false, 16, 12, 20, 1.0, 0.0, 0, 6, false, true, 0});    // Linear over a batch
      add({false, false, 7, 6, 0, 1.0, 2.0, 1, 3, false, false, 2});      // k == 0
      add({false, false, 1, 1, 1, 1.0, 0.0, 0, 2, true, true, 0});        // both shared
    }
  }
  cases.push_back({false, false, 128, 64, 96, 1.0, 0.0, 0, 8});          // threaded over batch
  cases.push_back({true, false, 100, 20, 20, 1.0, 0.0, 0, 40, false, true, 0});
  check_cases(cases);
  check_cases({{false, false, 0, 3, 4, 1.0, 0.0, 0, 3}, {false, false, 2, 3, 4, 1.0, 0.0, 0, 0}});
}

TEST_CASE("gemm: two threads give the same results") {
  check_cases(
      {
          {false, false, 256, 256, 256, 1.0, 0.0},
          {true, true, 300, 200, 100, 0.5, 1.0, 4},
          {false, true, 10000, 20, 20, 1.0, 0.0},
          {false, false, 128, 64, 96, 1.0, 0.0, 0, 16, false, false, 4},  // over the batch
          {true, false, 20, 20, 1000, 1.0, 1.0, 0, 64, false, true, 3},
      },
      /*threads=*/2);
}

TEST_CASE("gemm: concurrent callers share nothing they should not") {
  GemmSettingsScope settings(Float32Backend::OneDnn);
  std::vector<std::thread> workers;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([t, &failures] {
      const int64_t m = 40 + t, n = 24, k = 32;  // different shapes, and one shared below
      for (int iteration = 0; iteration < 50; ++iteration) {
        const int64_t rows = iteration % 2 == 0 ? m : 64;
        std::vector<float> a(rows * k, 1.0f + t), b(k * n, 0.5f), c(rows * n, -1.0f);
        gemm(false, false, rows, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
        for (float value : c)
          if (value != (1.0f + t) * 0.5f * k) ++failures[t];
      }
    });
  }
  for (auto& worker : workers) worker.join();
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("gemm: the oneDNN primitive cache stays bounded") {
  GemmSettingsScope settings(Float32Backend::OneDnn);
  const int64_t shapes = testing::gemm_onednn_cache_capacity() + 50;
  std::vector<float> a(shapes * 8, 1.0f), b(8 * 8, 1.0f), c(shapes * 8);
  for (int64_t m = 1; m <= shapes; ++m)
    gemm(false, false, m, 8, 8, 1.0f, a.data(), 8, b.data(), 8, 0.0f, c.data(), 8);
  CHECK(testing::gemm_onednn_cache_size() == testing::gemm_onednn_cache_capacity());
  CHECK(testing::gemm_onednn_cache_size() > 0);
  // An evicted shape is created again and still right.
  std::fill(c.begin(), c.end(), 0.0f);
  gemm(false, false, 1, 8, 8, 2.0f, a.data(), 8, b.data(), 8, 0.0f, c.data(), 8);
  CHECK(c[0] == 16.0f);
  CHECK(c[7] == 16.0f);
  CHECK(c[8] == 0.0f);
}

TEST_CASE("gemm: thread count and backend names") {
  const int saved = gemm_threads();
  CHECK(saved >= 1);
  set_gemm_threads(3);
  CHECK(gemm_threads() == 3);
  // Small products stay on one thread (Note [GEMM threads]).
  CHECK(gemm_threads_for(true, 1, 1, 1) == 1);
  CHECK(gemm_threads_for(false, 1, 1, 1) == 1);
  CHECK(gemm_threads_for(true, 128, 10, 256) == 1);
  CHECK(gemm_threads_for(true, 1024, 1024, 1024) == 3);
  CHECK(gemm_threads_for(false, 1024, 1024, 1024) == 3);
  CHECK(gemm_threads_for(false, 128, 512, 784) == 3);
  // OpenBLAS keeps the PINN's tall-skinny products and their weight gradients on one
  // thread whatever their size; oneDNN splits them well.
  CHECK(gemm_threads_for(false, 10000, 20, 20) == 1);
  CHECK(gemm_threads_for(false, 100000, 20, 20) == 1);
  CHECK(gemm_threads_for(false, 20, 20, 10000) == 1);
  CHECK(gemm_threads_for(true, 10000, 20, 20) == 3);
  CHECK_THROWS_AS(set_gemm_threads(0), gradiens::Error);
  set_gemm_threads(saved);

  CHECK(std::string(gemm_backend_name(false, 1024, 1024, 1024)) == "openblas");
  CHECK(std::string(gemm_backend_name(true, 1024, 1024, 1024)) == "onednn");
  CHECK(std::string(gemm_backend_name(true, 1, 1, 1)) == "openblas");
}

TEST_CASE("gemm: a row stride shorter than the row is a bug, not a crash") {
  std::vector<double> a(16), b(16), c(16);
  CHECK_THROWS(gemm(false, false, 4, 4, 4, 1.0, a.data(), 3, b.data(), 4, 0.0, c.data(), 4));
  CHECK_THROWS(gemm(true, false, 4, 4, 2, 1.0, a.data(), 2, b.data(), 4, 0.0, c.data(), 4));
  CHECK_THROWS(gemm(false, false, 4, 4, 4, 1.0, a.data(), 4, b.data(), 4, 0.0, c.data(), 3));
}

}  // namespace gradiens::kernels::cpu
