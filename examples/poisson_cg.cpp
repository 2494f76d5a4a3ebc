// Poisson's equation -lap(u) = f on the unit square (zero Dirichlet boundary),
// discretized by the 5-point Laplacian on a 100x100 interior grid as a sparse
// COO matrix and solved by conjugate gradients with sparse::mm, in float64.
// The manufactured solution u = sin(pi x) y (1 - y), f = sin(pi x) (pi^2 y (1 - y) + 2)
// gives the discretization error, which should be O(h^2). (sin(pi x) sin(pi y)
// is an eigenvector of the discrete Laplacian, so CG would finish in one step.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "engine/sparse.h"
#include "gradiens.h"

namespace gd = gradiens;

int main() {
  auto start = std::chrono::steady_clock::now();
  gd::NoGradGuard no_grad;  // a linear solve: nothing to differentiate
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const double pi = std::numbers::pi;
  const int64_t n = 100, unknowns = n * n;
  const double h = 1.0 / static_cast<double>(n + 1), inv_h2 = 1.0 / (h * h);

  // Rows in order and, within a row, columns in order (p - n, p - 1, p, p + 1,
  // p + n), so the matrix is built already coalesced.
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  auto add = [&](int64_t r, int64_t c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(v);
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t p = i * n + j;
      if (i > 0) add(p, p - n, -inv_h2);
      if (j > 0) add(p, p - 1, -inv_h2);
      add(p, p, 4 * inv_h2);
      if (j + 1 < n) add(p, p + 1, -inv_h2);
      if (i + 1 < n) add(p, p + n, -inv_h2);
    }
  const int64_t nnz = static_cast<int64_t>(vals.size());
  gd::Tensor indices = gd::empty({2, nnz}, gd::TensorOptions().dtype(gd::kInt64));
  std::copy(rows.begin(), rows.end(), indices.data_ptr<int64_t>());
  std::copy(cols.begin(), cols.end(), indices.data_ptr<int64_t>() + nnz);
  gd::Tensor values = gd::empty({nnz}, f64);
  std::copy(vals.begin(), vals.end(), values.data_ptr<double>());
  gd::Tensor a = gd::sparse_coo_tensor(indices, values, {unknowns, unknowns}, /*is_coalesced=*/true);

  gd::Tensor exact = gd::empty({unknowns, 1}, f64), f = gd::empty({unknowns, 1}, f64);
  double* e = exact.data_ptr<double>();
  double* rhs = f.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double x = static_cast<double>(i + 1) * h, y = static_cast<double>(j + 1) * h;
      e[i * n + j] = std::sin(pi * x) * y * (1 - y);
      rhs[i * n + j] = std::sin(pi * x) * (pi * pi * y * (1 - y) + 2);
    }

  auto dot = [](const gd::Tensor& x, const gd::Tensor& y) { return (x * y).sum().item<double>(); };
  gd::Tensor u = gd::zeros({unknowns, 1}, f64);
  gd::Tensor r = f.clone(), p = f.clone();
  const double f_norm = std::sqrt(dot(f, f));
  double rr = dot(r, r);
  int iterations = 0;
  while (std::sqrt(rr) > 1e-10 * f_norm && iterations < 10 * unknowns) {
    gd::Tensor ap = gd::sparse::mm(a, p);
    double alpha = rr / dot(p, ap);
    u = u + p * alpha;
    r = r - ap * alpha;
    double rr_next = dot(r, r);
    p = r + p * (rr_next / rr);
    rr = rr_next;
    ++iterations;
  }
  // The true residual, not the recurrence's, so rounding drift would show.
  gd::Tensor residual = f - gd::sparse::mm(a, u);
  const double rel_residual = std::sqrt(dot(residual, residual)) / f_norm;
  const double max_error = (u - exact).abs().max().item<double>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long sparse_bytes = static_cast<long long>(nnz) * (2 * 8 + 8);
  const long long dense_bytes = static_cast<long long>(unknowns) * unknowns * 8;

  std::printf("5-point Laplacian, %lldx%lld interior grid: %lld unknowns, %lld nonzeros\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(unknowns),
              static_cast<long long>(nnz));
  std::printf("matrix memory: %lld bytes sparse (indices + values) vs %lld bytes dense (not allocated)\n",
              sparse_bytes, dense_bytes);
  std::printf("conjugate gradients: %d iterations, relative residual %.3e\n", iterations, rel_residual);
  std::printf("max |u - sin(pi x) y (1 - y)| = %.3e (h^2 = %.3e)\n", max_error, h * h);
  std::printf("{\"example\": \"poisson_cg\", \"iterations\": %d, \"rel_residual\": %.3e, \"max_error\": %.3e, "
              "\"sparse_bytes\": %lld, \"dense_bytes\": %lld, \"seconds\": %.3f}\n",
              iterations, rel_residual, max_error, sparse_bytes, dense_bytes, seconds);
  return 0;
}
