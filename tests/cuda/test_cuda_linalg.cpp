// gradiens::linalg on the GPU (cuSOLVER, kernels/cuda/solver.cpp) against the
// same functions on the CPU (LAPACK): values in float64 and float32 over batches,
// 1x1, 0x0 and strided inputs (singular vectors up to sign), float64 gradients,
// gradcheck on the device, and the CPU's error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "engine/linalg.h"
#include "gradiens.h"
#include "tests/cuda/cuda_checks.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace la = gradiens::linalg;
using gd::Tensor;
using V = std::vector<Tensor>;

namespace {

using gd::testing::check_close_normwise;

const gd::Device kGpu("cuda:0");
constexpr double kInf = std::numeric_limits<double>::infinity();

// The normwise tolerance of check_close_normwise, per dtype.
double tolerance(gd::ScalarType dt) { return dt == gd::kFloat64 ? 1e-10 : 1e-4; }

// The same check on a CPU-computed tensor that must equal `want`.
void check_near(const Tensor& got, const Tensor& want, const std::string& what, double tol) {
  INFO(what);
  REQUIRE(got.sizes() == want.sizes());
  if (got.numel() == 0) return;
  const double error = (got.to(gd::kFloat64) - want.to(gd::kFloat64)).abs().max().item<double>();
  CHECK_MESSAGE(error <= tol * std::max(1.0, want.abs().max().item<double>()),
                fmt::format("max error {:.3e}", error));
}

std::string dtype_label(gd::ScalarType dt) { return dt == gd::kFloat64 ? "float64" : "float32"; }

gd::TensorOptions f64() { return gd::TensorOptions().dtype(gd::kFloat64); }

// An input: a base tensor made on the CPU and the view the op sees, applied to the
// base on each device (so a strided input is strided on the GPU too).
struct Input {
  std::string name;
  Tensor base;
  std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
  Tensor cpu() const { return view(base); }
  Tensor gpu() const { return view(base.to(kGpu)); }
};

std::vector<int64_t> sizes_with(std::vector<int64_t> batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

// Diagonally dominant, hence well conditioned: entries in [-1, 1] plus n I.
Tensor well_conditioned(const std::vector<int64_t>& sizes, uint64_t seed) {
  const int64_t n = sizes.back();
  return gd::testing::sample(sizes, -1, 1, seed) + gd::eye(n, f64()) * static_cast<double>(n);
}

// Symmetric positive-definite: X X^T + n I.
Tensor positive_definite(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor x = gd::testing::sample(sizes, -1, 1, seed);
  return x.matmul(x.mT()) + gd::eye(sizes.back(), f64()) * static_cast<double>(sizes.back());
}

// U diag(k + 1, ..., 2) V^T for an m x n A (k = min(m, n)), U and V with
// orthonormal columns (from a CPU QR): singular values 1 apart and away from 0, so
// the singular vectors are determined up to sign to ~eps ||A||.
Tensor with_spread_spectrum(const std::vector<int64_t>& batch, int64_t m, int64_t n, uint64_t seed) {
  const int64_t k = std::min(m, n);
  Tensor values = gd::arange(1, k + 1, f64()).flip({0}) + 1.0;
  Tensor u = std::get<0>(la::qr(gd::testing::sample(sizes_with(batch, m, k), -1, 1, seed)));
  Tensor v = std::get<0>(la::qr(gd::testing::sample(sizes_with(batch, n, k), -1, 1, seed + 1)));
  return (u * values.unsqueeze(-2)).matmul(v.mT());
}

// Symmetric X + X^T + diag(0, 4n, 8n, ...) for X in [-0.5, 0.5]: ||X + X^T|| <= n,
// so eigenvalue gaps stay >= 2n, in every leading block too.
Tensor symmetric_spread(const std::vector<int64_t>& sizes, uint64_t seed) {
  const int64_t n = sizes.back();
  Tensor x = gd::testing::sample(sizes, -0.5, 0.5, seed);
  Tensor offsets = gd::arange(n, f64()) * static_cast<double>(4 * n);
  return x + x.mT() + offsets.unsqueeze(-2) * gd::eye(n, f64());
}

// Square inputs for the LU and Cholesky ops: `make(sizes, seed)` in each layout.
std::vector<Input> square_inputs(const std::function<Tensor(const std::vector<int64_t>&, uint64_t)>& make,
                                 gd::ScalarType dt) {
  auto as = [dt](const Tensor& t) { return t.to(dt); };
  return {
      {"3x3", as(make({3, 3}, 1))},
      {"batch [2, 3] of 4x4", as(make({2, 3, 4, 4}, 2))},
      {"1x1", as(make({1, 1}, 3))},
      {"0x0", gd::empty({0, 0}, gd::TensorOptions().dtype(dt))},
      {"batch of 0x0", gd::empty({2, 0, 0}, gd::TensorOptions().dtype(dt))},
      {"empty batch of 3x3", gd::empty({0, 3, 3}, gd::TensorOptions().dtype(dt))},
      {"transposed 5x5", as(make({5, 5}, 4)), [](const Tensor& t) { return t.mT(); }},
      {"transposed batch", as(make({2, 4, 4}, 5)), [](const Tensor& t) { return t.mT(); }},
      // The leading 5x5 block of a 6x6 (row stride 6); still dominant or definite.
      {"sliced 5x5 of 6x6", as(make({6, 6}, 6)), [](const Tensor& t) { return t.narrow(0, 0, 5).narrow(1, 0, 5); }},
  };
}

// Right-hand sides for A [..., n, n]: [..., n, 2].
Tensor right_hand_side(const Tensor& A, uint64_t seed) {
  std::vector<int64_t> sizes(A.sizes().begin(), A.sizes().end());
  sizes.back() = 2;
  return gd::testing::sample(sizes, -1, 1, seed, A.dtype());
}

Tensor eye_like(const Tensor& square) {
  return gd::eye(square.size(-1), square.options()).expand(square.sizes()).contiguous();
}

// |X^T Y| for matrices of column vectors equal up to sign: the identity.
void check_same_vectors_up_to_sign(const Tensor& cpu, const Tensor& gpu, const std::string& what, double tol) {
  Tensor overlap = cpu.mT().matmul(gpu.cpu().to(cpu.dtype())).abs();
  check_near(overlap, eye_like(overlap), what + " (|cpu^T gpu| = I)", tol);
}

}  // namespace

TEST_CASE("cuda: linalg det, slogdet, inv and solve match the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const double tol = tolerance(dt);
    for (const Input& in : square_inputs(well_conditioned, dt)) {
      const std::string what = fmt::format("{} {}", in.name, dtype_label(dt));
      Tensor a = in.cpu(), g = in.gpu();
      check_close_normwise(la::det(a), la::det(g), what + ": det", tol);
      auto [sign_cpu, logabs_cpu] = la::slogdet(a);
      auto [sign_gpu, logabs_gpu] = la::slogdet(g);
      check_close_normwise(sign_cpu, sign_gpu, what + ": slogdet sign", tol);
      check_close_normwise(logabs_cpu, logabs_gpu, what + ": slogdet logabsdet", tol);
      check_close_normwise(la::inv(a), la::inv(g), what + ": inv", tol);
      Tensor b = right_hand_side(a, 7);
      check_close_normwise(la::solve(a, b), la::solve(g, b.to(kGpu)), what + ": solve", tol);
      Tensor vector = b.select(-1, 0);
      check_close_normwise(la::solve(a, vector), la::solve(g, vector.to(kGpu)), what + ": solve (vector)", tol);
      Tensor bt = b.mT().contiguous();
      check_close_normwise(la::solve(a, bt, false), la::solve(g, bt.to(kGpu), false), what + ": solve (left=false)",
                           tol);
    }
    // A's batch broadcast against B's.
    Tensor A = well_conditioned({2, 1, 3, 3}, 8).to(dt), B = gd::testing::sample({2, 4, 3, 2}, -1, 1, 9, dt);
    check_close_normwise(la::solve(A, B), la::solve(A.to(kGpu), B.to(kGpu)),
                         "solve, broadcast batch " + dtype_label(dt), tol);
    Tensor A1 = well_conditioned({3, 3}, 10).to(dt);
    check_close_normwise(la::solve(A1, B), la::solve(A1.to(kGpu), B.to(kGpu)), "solve, one A " + dtype_label(dt), tol);
  }
  // An exactly zero pivot: det 0, sign 0, logabsdet -inf, as on the CPU.
  Tensor singular = gd::testing::tensor_of({1, 2, 0, 2, 4, 0, 0, 0, 1}, {3, 3}).to(kGpu);
  CHECK(la::det(singular).item<double>() == 0.0);
  auto [sign, logabs] = la::slogdet(gd::stack({singular, gd::eye(3, f64().device(kGpu))}));
  CHECK(sign.cpu()[0].item<double>() == 0.0);
  CHECK(logabs.cpu()[0].item<double>() == -kInf);
  CHECK(sign.cpu()[1].item<double>() == 1.0);
}

TEST_CASE("cuda: linalg cholesky and eigh match the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const double tol = tolerance(dt);
    for (const Input& in : square_inputs(positive_definite, dt)) {
      const std::string what = fmt::format("{} {}", in.name, dtype_label(dt));
      Tensor a = in.cpu(), g = in.gpu();
      check_close_normwise(la::cholesky(a), la::cholesky(g), what + ": cholesky", tol);
      check_close_normwise(la::cholesky(a, true), la::cholesky(g, true), what + ": cholesky (upper)", tol);
    }
    for (const Input& in : square_inputs(symmetric_spread, dt)) {
      const std::string what = fmt::format("{} {}", in.name, dtype_label(dt));
      Tensor a = in.cpu(), g = in.gpu();
      for (const char* uplo : {"L", "U"}) {
        auto [w_cpu, v_cpu] = la::eigh(a, uplo);
        auto [w_gpu, v_gpu] = la::eigh(g, uplo);
        check_close_normwise(w_cpu, w_gpu, what + ": eigh eigenvalues " + uplo, tol);
        REQUIRE(v_gpu.sizes() == v_cpu.sizes());
        if (v_cpu.numel() > 0) check_same_vectors_up_to_sign(v_cpu, v_gpu, what + ": eigh eigenvectors " + uplo, tol);
      }
    }
    // UPLO picks the triangle that is read: a matrix that is not symmetric.
    Tensor t =
        gd::testing::sample({4, 4}, -1, 1, 11, dt) + gd::eye(4, f64()).to(dt) * gd::arange(4, f64()).to(dt) * 3.0;
    for (const char* uplo : {"L", "U"})
      check_close_normwise(std::get<0>(la::eigh(t, uplo)), std::get<0>(la::eigh(t.to(kGpu), uplo)),
                           fmt::format("eigh of a non-symmetric matrix, UPLO {} {}", uplo, dtype_label(dt)), tol);
  }
}

TEST_CASE("cuda: linalg qr and svd match the CPU") {
  struct Shape {
    std::vector<int64_t> batch;
    int64_t m, n;
  };
  const Shape shapes[] = {{{}, 4, 4}, {{}, 5, 3}, {{}, 3, 5}, {{2}, 4, 3}, {{2, 2}, 3, 4}, {{}, 1, 1},
                          {{}, 0, 0}, {{}, 0, 3}, {{}, 3, 0}, {{0}, 3, 2}};
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const double tol = tolerance(dt);
    uint64_t seed = 20;
    for (const Shape& s : shapes) {
      const std::string base_name = fmt::format("[{}] {}x{} {}", fmt::join(s.batch, ", "), s.m, s.n, dtype_label(dt));
      Tensor spectrum = s.m * s.n > 0 ? with_spread_spectrum(s.batch, s.m, s.n, ++seed)
                                      : gd::empty(sizes_with(s.batch, s.m, s.n), f64());
      // Each shape as it is, and as the transpose of a contiguous matrix (strided).
      const Input inputs[] = {{base_name, spectrum.to(dt)},
                              {base_name + " (transposed)", spectrum.mT().contiguous().to(dt),
                               [](const Tensor& t) { return t.mT(); }}};
      for (const Input& in : inputs) {
        Tensor a = in.cpu(), g = in.gpu();
        const std::string& what = in.name;
        const int64_t k = std::min(s.m, s.n);
        // QR: R and the first k columns of Q are unique once R's diagonal is made
        // positive; the rest of a complete Q is any orthonormal completion.
        for (const char* mode : {"reduced", "complete", "r"}) {
          auto [q_cpu, r_cpu] = la::qr(a, mode);
          auto [q_gpu, r_gpu] = la::qr(g, mode);
          REQUIRE(q_gpu.sizes() == q_cpu.sizes());
          REQUIRE(r_gpu.sizes() == r_cpu.sizes());
          Tensor rc = r_cpu, rg = r_gpu.cpu(), qc = q_cpu, qg = q_gpu.cpu();
          if (k > 0) {
            Tensor sign_cpu = rc.narrow(-2, 0, k).diagonal(0, -2, -1).sign().unsqueeze(-1);
            Tensor sign_gpu = rg.narrow(-2, 0, k).diagonal(0, -2, -1).sign().unsqueeze(-1);
            check_near(rg.narrow(-2, 0, k) * sign_gpu, rc.narrow(-2, 0, k) * sign_cpu,
                       fmt::format("{}: qr {} R", what, mode), tol);
            if (std::string(mode) != "r")
              check_near(qg.narrow(-1, 0, k) * sign_gpu.mT(), qc.narrow(-1, 0, k) * sign_cpu.mT(),
                         fmt::format("{}: qr {} Q", what, mode), tol);
          }
          if (std::string(mode) != "r" && qg.numel() > 0) {
            check_near(qg.mT().matmul(qg), eye_like(qg.mT().matmul(qg)), fmt::format("{}: qr {} Q^T Q", what, mode),
                       tol);
            check_near(qg.matmul(rg), a, fmt::format("{}: qr {} Q R", what, mode), tol);
          }
        }
        // SVD: singular values directly, vectors up to sign, and U S Vh = A.
        check_close_normwise(la::svdvals(a), la::svdvals(g), what + ": svdvals", tol);
        for (bool full : {false, true}) {
          const std::string label = fmt::format("{}: svd full_matrices={}", what, full);
          auto [u_cpu, s_cpu, vh_cpu] = la::svd(a, full);
          auto [u_gpu, s_gpu, vh_gpu] = la::svd(g, full);
          check_close_normwise(s_cpu, s_gpu, label + " S", tol);
          REQUIRE(u_gpu.sizes() == u_cpu.sizes());
          REQUIRE(vh_gpu.sizes() == vh_cpu.sizes());
          Tensor u = u_gpu.cpu(), vh = vh_gpu.cpu(), sv = s_gpu.cpu();
          if (u.numel() > 0) check_near(u.mT().matmul(u), eye_like(u.mT().matmul(u)), label + " U^T U", tol);
          if (vh.numel() > 0) check_near(vh.matmul(vh.mT()), eye_like(vh.matmul(vh.mT())), label + " Vh Vh^T", tol);
          if (k == 0) continue;
          check_same_vectors_up_to_sign(u_cpu.narrow(-1, 0, k), u_gpu.narrow(-1, 0, k), label + " U", tol);
          check_same_vectors_up_to_sign(vh_cpu.narrow(-2, 0, k).mT(), vh_gpu.narrow(-2, 0, k).mT(), label + " V", tol);
          check_near((u.narrow(-1, 0, k) * sv.unsqueeze(-2)).matmul(vh.narrow(-2, 0, k)), a, label + " U S Vh", tol);
        }
      }
    }
  }
}

TEST_CASE("cuda: linalg matrix_norm and cond match the CPU") {
  for (gd::ScalarType dt : {gd::kFloat64, gd::kFloat32}) {
    const double tol = tolerance(dt);
    const std::string label = dtype_label(dt);
    Tensor tall = with_spread_spectrum({2}, 4, 3, 31).to(dt), square = well_conditioned({2, 3, 3}, 32).to(dt);
    Tensor tall_gpu = tall.to(kGpu), square_gpu = square.to(kGpu);
    check_close_normwise(la::matrix_norm(tall, "nuc"), la::matrix_norm(tall_gpu, "nuc"), "matrix_norm nuc " + label,
                         tol);
    check_close_normwise(la::matrix_norm(tall, "fro"), la::matrix_norm(tall_gpu, "fro"), "matrix_norm fro " + label,
                         tol);
    for (double ord : {2.0, -2.0, 1.0, -1.0, kInf, -kInf})
      check_close_normwise(la::matrix_norm(tall, ord), la::matrix_norm(tall_gpu, ord),
                           fmt::format("matrix_norm {} {}", ord, label), tol);
    check_close_normwise(la::cond(tall), la::cond(tall_gpu), "cond 2 " + label, tol);
    check_close_normwise(la::cond(tall, -2), la::cond(tall_gpu, -2), "cond -2 " + label, tol);
    for (double ord : {1.0, -1.0, kInf, -kInf})
      check_close_normwise(la::cond(square, ord), la::cond(square_gpu, ord), fmt::format("cond {} {}", ord, label),
                           tol);
    check_close_normwise(la::cond(square, "fro"), la::cond(square_gpu, "fro"), "cond fro " + label, tol);
    check_close_normwise(la::cond(square, "nuc"), la::cond(square_gpu, "nuc"), "cond nuc " + label, tol);
  }
  // A singular matrix in the batch: inf there, as on the CPU.
  Tensor singular = gd::stack({gd::testing::tensor_of({1, 2, 0, 2, 4, 0, 0, 0, 1}, {3, 3}), gd::eye(3, f64()) * 2.0});
  Tensor cond_gpu = la::cond(singular.to(kGpu), 1).cpu();
  CHECK(cond_gpu[0].item<double>() == kInf);
  CHECK(cond_gpu[1].item<double>() == doctest::Approx(1.0));
  CHECK(la::cond(singular.to(kGpu), "fro").cpu()[0].item<double>() == kInf);
}

namespace {

// The sweep's well-conditioned constructions (tests/engine/test_linalg_lapack.cpp).
Tensor shifted(const Tensor& x, double shift) { return x + gd::eye(x.size(-1), x.options()) * shift; }
Tensor spd(const Tensor& x) { return shifted(x.matmul(x.mT()), 3.0); }
Tensor spread_symmetric(const Tensor& x) {
  Tensor offsets = gd::arange(x.size(-1), x.options()) * 8.0;
  return x + x.mT() + offsets.unsqueeze(-2) * gd::eye(x.size(-1), x.options());
}
Tensor spread_rectangular(const Tensor& x) {
  Tensor steps = (gd::arange(x.size(-1), x.options()) + 1.0) * 4.0;
  return x + gd::eye(x.size(-2), x.size(-1), x.options()) * steps;
}

struct GradCase {
  std::string name;
  std::function<V(const V&)> fn;
  std::vector<std::vector<int64_t>> shapes;
  double lo = -1, hi = 1;
};

// Each function's outputs, and the gradient of sum(output * weight) over them, for
// float64 leaves on `device` made from the same samples.
struct Evaluated {
  V outputs, grads;
};

Evaluated evaluate(const GradCase& c, const gd::Device& device) {
  V leaves;
  uint64_t seed = 40;
  for (const auto& shape : c.shapes)
    leaves.push_back(gd::testing::sample(shape, c.lo, c.hi, ++seed).to(device).requires_grad_(true));
  Evaluated e;
  e.outputs = c.fn(leaves);
  Tensor loss = gd::zeros({}, f64().device(device));
  for (const Tensor& out : e.outputs)
    loss = loss + (out * gd::testing::sample(out.sizes(), -1, 1, ++seed).to(device)).sum();
  e.grads = gd::autograd::grad({loss}, leaves);
  return e;
}

}  // namespace

TEST_CASE("cuda: linalg gradients match the CPU in float64") {
  const GradCase cases[] = {
      {"det", [](const V& x) { return V{la::det(shifted(x[0], 3))}; }, {{2, 3, 3}}},
      {"det (singular: cofactors)",
       [](const V& x) {
         return V{la::det(x[0] * gd::testing::tensor_of({1, 1, 1, 1, 1, 1, 0, 0, 0}, {3, 3}).to(x[0].device()))};
       },
       {{3, 3}}},
      {"slogdet", [](const V& x) { return V{std::get<1>(la::slogdet(shifted(x[0], -3)))}; }, {{2, 3, 3}}},
      {"inv", [](const V& x) { return V{la::inv(shifted(x[0], 3))}; }, {{2, 3, 3}}},
      {"inv (transposed)", [](const V& x) { return V{la::inv(shifted(x[0].mT(), 3))}; }, {{4, 4}}},
      {"solve", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; }, {{2, 3, 3}, {2, 3, 2}}},
      {"solve (broadcast A)", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; }, {{3, 3}, {2, 3, 2}}},
      {"solve (left=false)",
       [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1], false)}; },
       {{2, 3, 3}, {2, 2, 3}}},
      {"cholesky", [](const V& x) { return V{la::cholesky(spd(x[0]))}; }, {{2, 3, 3}}},
      {"cholesky (upper)", [](const V& x) { return V{la::cholesky(spd(x[0]), true)}; }, {{3, 3}}},
      {"eigh",
       [](const V& x) {
         auto [w, vectors] = la::eigh(spread_symmetric(x[0]));
         return V{w, vectors.square()};
       },
       {{2, 3, 3}},
       -0.5,
       0.5},
      {"svd (tall)",
       [](const V& x) {
         auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), false);
         return V{S, U.square(), Vh.square()};
       },
       {{2, 4, 3}},
       -0.5,
       0.5},
      {"svd (wide)",
       [](const V& x) {
         auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), false);
         return V{S, U.square(), Vh.square()};
       },
       {{3, 4}},
       -0.5,
       0.5},
      {"svd (complete)",
       [](const V& x) {
         auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), true);
         return V{S, U.narrow(-1, 0, 3).square(), Vh.square()};
       },
       {{4, 3}},
       -0.5,
       0.5},
      {"svdvals", [](const V& x) { return V{la::svdvals(spread_rectangular(x[0]))}; }, {{2, 3, 4}}, -0.5, 0.5},
      {"matrix_norm nuc",
       [](const V& x) { return V{la::matrix_norm(spread_rectangular(x[0]), "nuc")}; },
       {{2, 4, 3}},
       -0.5,
       0.5},
      {"cond", [](const V& x) { return V{la::cond(spread_rectangular(x[0]))}; }, {{2, 4, 3}}, -0.5, 0.5},
      {"cond 1", [](const V& x) { return V{la::cond(shifted(x[0], 3), 1)}; }, {{2, 3, 3}}},
  };
  for (const GradCase& c : cases) {
    INFO(c.name);
    Evaluated cpu = evaluate(c, gd::Device(gd::kCPU)), gpu = evaluate(c, kGpu);
    REQUIRE(gpu.outputs.size() == cpu.outputs.size());
    for (size_t o = 0; o < cpu.outputs.size(); ++o)
      check_close_normwise(cpu.outputs[o], gpu.outputs[o], fmt::format("{}: output {}", c.name, o), 1e-10);
    REQUIRE(gpu.grads.size() == cpu.grads.size());
    for (size_t g = 0; g < cpu.grads.size(); ++g)
      check_close_normwise(cpu.grads[g], gpu.grads[g], fmt::format("{}: gradient {}", c.name, g), 1e-9);
  }
}

TEST_CASE("cuda: linalg gradcheck on the GPU for det, inv, solve and cholesky") {
  auto leaf = [](const std::vector<int64_t>& sizes, uint64_t seed) {
    return gd::testing::sample(sizes, -1, 1, seed).to(kGpu).requires_grad_(true);
  };
  Tensor A = leaf({2, 3, 3}, 51), B = leaf({2, 3, 2}, 52), X = leaf({3, 3}, 53);
  CHECK(gd::autograd::gradcheck([](const V& x) { return V{la::det(shifted(x[0], 3))}; }, {A}));
  CHECK(gd::autograd::gradcheck([](const V& x) { return V{la::inv(shifted(x[0], 3))}; }, {A}));
  CHECK(gd::autograd::gradcheck([](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; }, {A, B}));
  CHECK(gd::autograd::gradcheck([](const V& x) { return V{la::cholesky(spd(x[0]))}; }, {X}));
  // Second derivatives too (a PINN differentiates twice).
  CHECK(gd::autograd::gradgradcheck([](const V& x) { return V{la::inv(shifted(x[0], 3))}; }, {X}));
  CHECK(gd::autograd::gradgradcheck([](const V& x) { return V{la::det(shifted(x[0], 3))}; }, {X}));
}

TEST_CASE("cuda: linalg errors for singular and non-positive-definite matrices are the CPU's") {
  using gd::testing::error_of;
  using gd::testing::tensor_of;
  // Exact arithmetic: the zero pivot is found at the same place on both devices.
  Tensor singular = tensor_of({1, 2, 0, 2, 4, 0, 0, 0, 1}, {3, 3});
  Tensor eye3 = gd::eye(3, f64());
  Tensor batch_singular = gd::stack({eye3, singular});
  Tensor not_pd = tensor_of({1, 2, 2, 1}, {2, 2});
  Tensor batch_not_pd = gd::stack({gd::eye(2, f64()), not_pd});
  Tensor rhs = gd::ones({3}, f64());
  struct Case {
    std::string name;
    std::function<void(const gd::Device&)> call;
  };
  const Case cases[] = {
      {"inv", [&](const gd::Device& d) { la::inv(singular.to(d)); }},
      {"inv (transposed)", [&](const gd::Device& d) { la::inv(singular.to(d).mT()); }},
      {"inv (batch)", [&](const gd::Device& d) { la::inv(batch_singular.to(d)); }},
      {"solve", [&](const gd::Device& d) { la::solve(singular.to(d), rhs.to(d)); }},
      {"solve (batch)", [&](const gd::Device& d) { la::solve(batch_singular.to(d), rhs.to(d)); }},
      {"cholesky", [&](const gd::Device& d) { la::cholesky(not_pd.to(d)); }},
      {"cholesky (upper)", [&](const gd::Device& d) { la::cholesky(not_pd.to(d), true); }},
      {"cholesky (batch)", [&](const gd::Device& d) { la::cholesky(batch_not_pd.to(d)); }},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string cpu = error_of([&] { c.call(gd::Device(gd::kCPU)); });
    const std::string gpu = error_of([&] { c.call(kGpu); });
    CHECK(!cpu.empty());
    CHECK(gpu == cpu);
  }
  // float32 takes the single-precision routines: same messages.
  const std::string cpu = error_of([&] { la::inv(singular.to(gd::kFloat32)); });
  CHECK(error_of([&] { la::inv(singular.to(kGpu, gd::kFloat32)); }) == cpu);
}
