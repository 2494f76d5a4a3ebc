// gradiens::linalg on batches of many small matrices, which kernels/cuda/solver.cpp
// hands to the batched cuBLAS and cuSOLVER routines (Note [Batched solvers]):
// 1000 matrices of order 8, 16 and 32 (and 33, just past the batched routines),
// float64 and float32, against the CPU's LAPACK, and the CPU's error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "engine/linalg.h"
#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace la = gradiens::linalg;
using gd::Tensor;

namespace {

using gd::testing::check_close_normwise;

const gd::Device kGpu("cuda:0");
constexpr int64_t kBatch = 1000;

// Normwise, as a backward-stable factorization promises: max |gpu - cpu| <= tol * max(1, max |cpu|).
double tolerance(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-10 : 1e-4; }

std::string label(gd::ScalarType dt, int64_t n) {
  return fmt::format("{} x {}x{} {}", kBatch, n, n, dt == gd::kFloat64 ? "float64" : "float32");
}

gd::TensorOptions f64() { return gd::TensorOptions().dtype(gd::kFloat64); }

// Symmetric positive-definite: X X^T + n I, X in [-1, 1].
Tensor positive_definite(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor x = gd::testing::sample(sizes, -1, 1, seed);
  return x.matmul(x.mT()) + gd::eye(sizes.back(), f64()) * static_cast<double>(sizes.back());
}

// I + X / n, X in [-1, 1]: diagonally dominant, determinants of order 1 (a float32
// determinant of an unscaled matrix of order 32 would overflow).
Tensor well_conditioned(const std::vector<int64_t>& sizes, uint64_t seed) {
  const int64_t n = sizes.back();
  return gd::testing::sample(sizes, -1, 1, seed) / static_cast<double>(n) + gd::eye(n, f64());
}

// Symmetric X + X^T + diag(0, 4n, 8n, ...), X in [-0.5, 0.5]: eigenvalue gaps >= 2n.
Tensor symmetric_spread(const std::vector<int64_t>& sizes, uint64_t seed) {
  const int64_t n = sizes.back();
  Tensor x = gd::testing::sample(sizes, -0.5, 0.5, seed);
  return x + x.mT() + (gd::arange(n, f64()) * static_cast<double>(4 * n)).unsqueeze(-2) * gd::eye(n, f64());
}

// The n x n identity in every matrix of a batch except `index`, which is `odd`.
Tensor identities_with(const Tensor& odd, int64_t index) {
  Tensor batch = gd::eye(odd.size(-1), odd.options()).expand({kBatch, odd.size(-2), odd.size(-1)}).contiguous();
  batch.select(0, index).copy_(odd);
  return batch;
}

}  // namespace

TEST_CASE("cuda: batched cholesky of 1000 SPD matrices matches the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (int64_t n : {8, 16, 32, 33}) {
      const std::string what = label(dt, n);
      Tensor a = positive_definite({kBatch, n, n}, static_cast<uint64_t>(n)).to(dt), g = a.to(kGpu);
      check_close_normwise(la::cholesky(a), la::cholesky(g), what + ": cholesky", tolerance(dt));
      check_close_normwise(la::cholesky(a, true), la::cholesky(g, true), what + ": cholesky (upper)", tolerance(dt));
      // A transposed batch is copied column-major first: the same factors.
      check_close_normwise(la::cholesky(a.mT()), la::cholesky(g.mT()), what + ": cholesky (transposed)", tolerance(dt));
    }
  }
}

TEST_CASE("cuda: batched eigh of 1000 symmetric matrices matches the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (int64_t n : {8, 16, 32, 33}) {
      const std::string what = label(dt, n);
      const double tol = tolerance(dt);
      Tensor a = symmetric_spread({kBatch, n, n}, static_cast<uint64_t>(100 + n)).to(dt), g = a.to(kGpu);
      for (const char* uplo : {"L", "U"}) {
        auto [w_cpu, v_cpu] = la::eigh(a, uplo);
        auto [w_gpu, v_gpu] = la::eigh(g, uplo);
        check_close_normwise(w_cpu, w_gpu, what + ": eigenvalues " + uplo, tol);
        REQUIRE(v_gpu.sizes() == v_cpu.sizes());
        // Eigenvectors up to sign: |V_cpu^T V_gpu| = I.
        Tensor overlap = v_cpu.mT().matmul(v_gpu.cpu()).abs();
        check_close_normwise(gd::eye(n, overlap.options()).expand(overlap.sizes()), overlap.to(kGpu),
                    what + ": |V_cpu^T V_gpu| = I " + uplo, tol);
        // V diag(w) V^T gives A back.
        Tensor rebuilt = (v_gpu * w_gpu.unsqueeze(-2)).matmul(v_gpu.mT());
        check_close_normwise(a, rebuilt, what + ": V diag(w) V^T = A " + uplo, tol);
      }
    }
  }
}

TEST_CASE("cuda: batched LU (det, slogdet, inv, solve) of 1000 matrices matches the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    for (int64_t n : {8, 16, 32, 33}) {
      const std::string what = label(dt, n);
      const double tol = tolerance(dt);
      Tensor a = well_conditioned({kBatch, n, n}, static_cast<uint64_t>(200 + n)).to(dt), g = a.to(kGpu);
      check_close_normwise(la::det(a), la::det(g), what + ": det", tol);
      auto [sign_cpu, logabs_cpu] = la::slogdet(a);
      auto [sign_gpu, logabs_gpu] = la::slogdet(g);
      check_close_normwise(sign_cpu, sign_gpu, what + ": slogdet sign", tol);
      check_close_normwise(logabs_cpu, logabs_gpu, what + ": slogdet logabsdet", tol);
      check_close_normwise(la::inv(a), la::inv(g), what + ": inv", tol);
      check_close_normwise(la::inv(a.mT()), la::inv(g.mT()), what + ": inv (transposed)", tol);
      Tensor b = gd::testing::sample({kBatch, n, 3}, -1, 1, 7, dt);
      check_close_normwise(la::solve(a, b), la::solve(g, b.to(kGpu)), what + ": solve", tol);
      check_close_normwise(la::solve(a.mT(), b), la::solve(g.mT(), b.to(kGpu)), what + ": solve (transposed A)", tol);
      Tensor bt = b.mT().contiguous();
      check_close_normwise(la::solve(a, bt, false), la::solve(g, bt.to(kGpu), false), what + ": solve (left=false)",
                           tol);
      // One A for every B: the looped solve with A's factors shared.
      Tensor a1 = a.select(0, 3).unsqueeze(0);
      check_close_normwise(la::solve(a1, b), la::solve(a1.to(kGpu), b.to(kGpu)), what + ": solve (one A)", tol);
    }
  }
}

TEST_CASE("cuda: errors in a batch of 1000 small matrices are the CPU's") {
  using gd::testing::error_of;
  using gd::testing::tensor_of;
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    INFO((dt == gd::kFloat64 ? "float64" : "float32"));
    // Exact arithmetic: the zero pivot and the failing minor are found at the same place.
    Tensor singular = identities_with(tensor_of({1, 2, 0, 2, 4, 0, 0, 0, 1}, {3, 3}, dt), 617);
    Tensor not_pd = identities_with(tensor_of({1, 2, 2, 1}, {2, 2}, dt), 617);
    Tensor rhs = gd::ones({kBatch, 3, 1}, gd::TensorOptions().dtype(dt));
    const std::string inv_cpu = error_of([&] { la::inv(singular); });
    CHECK(!inv_cpu.empty());
    CHECK(error_of([&] { la::inv(singular.to(kGpu)); }) == inv_cpu);
    const std::string solve_cpu = error_of([&] { la::solve(singular, rhs); });
    CHECK(!solve_cpu.empty());
    CHECK(error_of([&] { la::solve(singular.to(kGpu), rhs.to(kGpu)); }) == solve_cpu);
    const std::string cholesky_cpu = error_of([&] { la::cholesky(not_pd); });
    CHECK(!cholesky_cpu.empty());
    CHECK(error_of([&] { la::cholesky(not_pd.to(kGpu)); }) == cholesky_cpu);
    CHECK(error_of([&] { la::cholesky(not_pd.to(kGpu), true); }) == error_of([&] { la::cholesky(not_pd, true); }));
    // det and slogdet report a singular matrix instead: 0 and (0, -inf).
    CHECK(la::det(singular.to(kGpu)).cpu()[617].item<double>() == 0.0);
    auto [sign, logabs] = la::slogdet(singular.to(kGpu));
    CHECK(sign.cpu()[617].item<double>() == 0.0);
    CHECK(logabs.cpu()[617].item<double>() == -std::numeric_limits<double>::infinity());
    CHECK(sign.cpu()[616].item<double>() == 1.0);
  }
}
