// The device-neutral entry points of kernels/random.h and kernels/linalg.h on the
// CPU: each is the CPU backend's call (kernels/cpu/random.h, kernels/cpu/lapack.h)
// bit for bit, the LAPACK ones one matrix at a time over a strided batch, with
// the infos of each matrix (and potrf's other triangle zeroed).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/lapack.h"
#include "kernels/cpu/random.h"
#include "kernels/linalg.h"
#include "kernels/random.h"

namespace {

namespace kn = gradiens::kernels;
using gradiens::ScalarType;

const kn::DeviceRef kCpu{};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Deterministic entries in [-1, 1].
template <class T>
std::vector<T> entries(size_t count, uint32_t seed) {
  std::vector<T> v(count);
  uint32_t x = seed * 2654435761u + 1;
  for (T& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<T>(static_cast<double>(x >> 8) / 8388608.0 - 1.0);
  }
  return v;
}

}  // namespace

TEST_CASE("random entry points on the CPU are the CPU fills, with their block counts") {
  const kn::PhiloxState s{12345, 678};
  for (int64_t n : {0, 1, 5, 1001}) {
    INFO("n = " << n);
    std::vector<float> f1(n), f2(n);
    std::vector<double> d1(n), d2(n);
    CHECK(kn::fill_uniform(ScalarType::Float32, f1.data(), n, s, -2, 3, kCpu) ==
          kn::cpu::fill_uniform(f2.data(), n, s, -2.f, 3.f));
    CHECK(same_bits(f1, f2));
    CHECK(kn::fill_uniform(ScalarType::Float64, d1.data(), n, s, -2, 3, kCpu) ==
          kn::cpu::fill_uniform(d2.data(), n, s, -2.0, 3.0));
    CHECK(same_bits(d1, d2));
    CHECK(kn::fill_normal(ScalarType::Float32, f1.data(), n, s, 0.1, 2, kCpu) ==
          kn::cpu::fill_normal(f2.data(), n, s, 0.1f, 2.f));
    CHECK(same_bits(f1, f2));
    CHECK(kn::fill_normal(ScalarType::Float64, d1.data(), n, s, 0.1, 2, kCpu) ==
          kn::cpu::fill_normal(d2.data(), n, s, 0.1, 2.0));
    CHECK(same_bits(d1, d2));
    std::vector<int64_t> i1(n), i2(n);
    CHECK(kn::fill_randint(i1.data(), n, s, -3, 77, kCpu) == kn::cpu::fill_randint(i2.data(), n, s, -3, 77));
    CHECK(same_bits(i1, i2));
    std::vector<uint32_t> u1(n), u2(n);
    CHECK(kn::fill_random_bits(u1.data(), n, s, kCpu) == kn::cpu::fill_random_bits(u2.data(), n, s));
    CHECK(same_bits(u1, u2));
    CHECK(kn::philox_blocks_for_32bit_draws(n) == static_cast<uint64_t>((n + 3) / 4));
    CHECK(kn::philox_blocks_for_64bit_draws(n) == static_cast<uint64_t>((n + 1) / 2));
  }
}

TEST_CASE_TEMPLATE("LAPACK entry points on the CPU loop over the batch, bit for bit", T, float, double) {
  const ScalarType dtype = sizeof(T) == 8 ? ScalarType::Float64 : ScalarType::Float32;
  constexpr int64_t n = 5, lda = 7, stride = lda * n + 3, batch = 4;  // padded leading dim and gaps between matrices
  std::vector<T> a = entries<T>(static_cast<size_t>(stride * batch), 1);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(b * stride + i + i * lda)] += static_cast<T>(n);
  // Matrix 2 is singular (a zero column 3: U(4, 4) is the first zero pivot).
  for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(2 * stride + i + 3 * lda)] = 0;

  SUBCASE("getrf, getrs and getri") {
    std::vector<T> lu = a, reference = a;
    std::vector<int> pivots(static_cast<size_t>(n * batch)), reference_pivots(pivots.size());
    std::vector<int> infos(static_cast<size_t>(batch), 0);
    kn::getrf(dtype, batch, n, lu.data(), lda, stride, pivots.data(), infos.data(), kCpu);
    for (int64_t b = 0; b < batch; ++b) {
      const int info = kn::cpu::lapack::getrf(n, reference.data() + b * stride, lda, reference_pivots.data() + b * n);
      CHECK(infos[static_cast<size_t>(b)] == info);
      CHECK((info == 0) == (b != 2));
    }
    CHECK(same_bits(lu, reference));
    CHECK(pivots == reference_pivots);

    // Right-hand sides of matrices 0, 1 and 3, two columns each; matrix 3 solves twice.
    const std::vector<int64_t> a_index = {0, 1, 3, 3};
    constexpr int64_t nrhs = 2, ldb = n + 1, stride_b = ldb * nrhs;
    std::vector<T> x = entries<T>(static_cast<size_t>(stride_b * 4), 2), x_reference = x;
    kn::getrs(dtype, true, 4, n, nrhs, lu.data(), lda, stride, pivots.data(), a_index.data(), x.data(), ldb, stride_b,
              kCpu);
    for (size_t b = 0; b < a_index.size(); ++b)
      kn::cpu::lapack::getrs(true, n, nrhs, lu.data() + a_index[b] * stride, lda, pivots.data() + a_index[b] * n,
                             x_reference.data() + static_cast<int64_t>(b) * stride_b, ldb);
    CHECK(same_bits(x, x_reference));

    // The inverses of matrices 0 and 1 into a buffer with its own layout.
    constexpr int64_t ld_out = n, stride_out = n * n;
    std::vector<T> inverse(static_cast<size_t>(stride_out * 2), 0);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < n; ++i) inverse[static_cast<size_t>(b * stride_out + i + i * ld_out)] = 1;
    kn::getri(dtype, 2, n, lu.data(), lda, stride, pivots.data(), inverse.data(), ld_out, stride_out, kCpu);
    std::vector<T> inverse_reference = lu;
    for (int64_t b = 0; b < 2; ++b) {
      kn::cpu::lapack::getri(n, inverse_reference.data() + b * stride, lda, pivots.data() + b * n);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          CHECK(inverse[static_cast<size_t>(b * stride_out + i + j * ld_out)] ==
                inverse_reference[static_cast<size_t>(b * stride + i + j * lda)]);
    }
  }

  SUBCASE("potrf and syevd on symmetric matrices") {
    // A + A^T + 2n I is symmetric positive-definite (diagonally dominant).
    std::vector<T> sym = a;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          sym[static_cast<size_t>(b * stride + i + j * lda)] =
              a[static_cast<size_t>(b * stride + i + j * lda)] + a[static_cast<size_t>(b * stride + j + i * lda)] +
              (i == j ? static_cast<T>(2 * n) : T(0));
    for (bool upper : {false, true}) {
      std::vector<T> factor = sym, reference = sym;
      std::vector<int> infos(static_cast<size_t>(batch), 0);
      kn::potrf(dtype, upper, batch, n, factor.data(), lda, stride, infos.data(), kCpu);
      for (int64_t b = 0; b < batch; ++b) {
        T* r = reference.data() + b * stride;
        CHECK(infos[static_cast<size_t>(b)] == kn::cpu::lapack::potrf(upper, n, r, lda));
        for (int64_t j = 0; j < n; ++j)  // the entry point zeroes the other triangle
          for (int64_t i = 0; i < n; ++i)
            if (upper ? i > j : i < j) r[i + j * lda] = 0;
      }
      CHECK(same_bits(factor, reference));

      std::vector<T> vectors = sym, vectors_reference = sym;
      std::vector<T> w(static_cast<size_t>(n * batch)), w_reference(w.size());
      kn::syevd(dtype, true, upper, batch, n, vectors.data(), lda, stride, w.data(), n, infos.data(), kCpu);
      for (int64_t b = 0; b < batch; ++b)
        CHECK(infos[static_cast<size_t>(b)] == kn::cpu::lapack::syevd(true, upper, n, vectors_reference.data() + b * stride,
                                                                      lda, w_reference.data() + b * n));
      CHECK(same_bits(vectors, vectors_reference));
      CHECK(same_bits(w, w_reference));
    }
  }

  SUBCASE("geqrf, orgqr and the SVD of tall matrices") {
    constexpr int64_t m = 7, cols = 4, k = cols;  // m x cols in the first columns of each lda x n block
    std::vector<T> qr = a, reference = a;
    std::vector<T> tau(static_cast<size_t>(k * batch)), tau_reference(tau.size());
    kn::geqrf(dtype, batch, m, cols, qr.data(), lda, stride, tau.data(), k, kCpu);
    for (int64_t b = 0; b < batch; ++b)
      kn::cpu::lapack::geqrf(m, cols, reference.data() + b * stride, lda, tau_reference.data() + b * k);
    CHECK(same_bits(qr, reference));
    CHECK(same_bits(tau, tau_reference));
    kn::orgqr(dtype, batch, m, cols, k, qr.data(), lda, stride, tau.data(), k, kCpu);
    for (int64_t b = 0; b < batch; ++b)
      kn::cpu::lapack::orgqr(m, cols, k, reference.data() + b * stride, lda, tau_reference.data() + b * k);
    CHECK(same_bits(qr, reference));

    for (kn::SvdVectors vectors : {kn::SvdVectors::None, kn::SvdVectors::Reduced, kn::SvdVectors::All}) {
      const bool with_vectors = vectors != kn::SvdVectors::None;
      const int64_t u_cols = vectors == kn::SvdVectors::All ? m : k;
      std::vector<T> svd = a, svd_reference = a;
      std::vector<T> s(static_cast<size_t>(k * batch)), s_reference(s.size());
      std::vector<T> u(static_cast<size_t>(m * u_cols * batch)), u_reference(u.size());
      std::vector<T> vt(static_cast<size_t>(cols * cols * batch)), vt_reference(vt.size());
      std::vector<int> infos(static_cast<size_t>(batch), 0);
      kn::svd(dtype, vectors, batch, m, cols, svd.data(), lda, stride, s.data(), k, with_vectors ? u.data() : nullptr,
              m, m * u_cols, with_vectors ? vt.data() : nullptr, cols, cols * cols, infos.data(), kCpu);
      for (int64_t b = 0; b < batch; ++b)
        CHECK(infos[static_cast<size_t>(b)] ==
              kn::cpu::lapack::gesdd(vectors, m, cols, svd_reference.data() + b * stride, lda,
                                     s_reference.data() + b * k, with_vectors ? u_reference.data() + b * m * u_cols : nullptr,
                                     m, with_vectors ? vt_reference.data() + b * cols * cols : nullptr, cols));
      CHECK(same_bits(s, s_reference));
      CHECK(same_bits(u, u_reference));
      CHECK(same_bits(vt, vt_reference));
      CHECK_FALSE(kn::svd_needs_tall_matrices(kCpu));
    }
  }
}
