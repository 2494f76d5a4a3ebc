// The op sweep's rows for gradiens::linalg (tests/engine/test_linalg_lapack.cpp):
// det, slogdet, inv, solve, cholesky, eigh, svd, svdvals, matrix_norm and cond.
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "engine/linalg.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace la = gradiens::linalg;
using gd::Tensor;
using V = std::vector<Tensor>;

// Inputs are built inside each function so that the matrices stay well
// conditioned whatever the variant (contiguous, transposed, broadcast): A = X + 3 I
// is diagonally dominant for X in [-1, 1]^(3x3); X X^T + 3 I is positive-definite;
// X + X^T + diag(0, 8, 16) has eigenvalue gaps >= 2 for X in [-0.5, 0.5]^(3x3).
// Functions of eigenvectors and singular vectors are invariant to their signs.
namespace {

using gd::testing::InputSpec;
using gd::testing::OpInfo;
constexpr unsigned kMatrixVariants = gd::testing::kContiguous | gd::testing::kTransposed | gd::testing::kBroadcast;
constexpr double kInf = std::numeric_limits<double>::infinity();

// [..., n] -> [..., n, n] with v on the diagonal.
Tensor diag_embed(const Tensor& v) { return v.unsqueeze(-2) * gd::eye(v.size(-1), v.options()); }

Tensor shifted(const Tensor& x, double shift) { return x + gd::eye(x.size(-1), x.options()) * shift; }

Tensor spd(const Tensor& x) { return shifted(x.matmul(x.mT()), 3.0); }

Tensor spread_symmetric(const Tensor& x) {
  int64_t n = x.size(-1);
  Tensor offsets = gd::arange(n, x.options()) * 8.0;
  return x + x.mT() + diag_embed(offsets);
}

// X + 4 diag(1, 2, ..., k) on the leading k x k block.
Tensor spread_rectangular(const Tensor& x) {
  int64_t m = x.size(-2), n = x.size(-1);
  Tensor steps = (gd::arange(n, x.options()) + 1.0) * 4.0;
  return x + gd::eye(m, n, x.options()) * steps;
}

OpInfo matrix_op(std::string name, std::function<V(const V&)> fn, std::vector<InputSpec> inputs) {
  return {std::move(name), std::move(fn), std::move(inputs), kMatrixVariants, {}};
}

const gd::testing::OpRegistrar linalg_rows({
    matrix_op("linalg.det", [](const V& x) { return V{la::det(shifted(x[0], 3))}; }, {{{2, 3, 3}}}),
    matrix_op("linalg.det (negative)", [](const V& x) { return V{la::det(shifted(x[0], -3))}; }, {{{3, 3}}}),
    matrix_op("linalg.slogdet", [](const V& x) { return V{std::get<1>(la::slogdet(shifted(x[0], -3)))}; },
              {{{2, 3, 3}}}),
    matrix_op("linalg.inv", [](const V& x) { return V{la::inv(shifted(x[0], 3))}; }, {{{2, 3, 3}}}),
    matrix_op("linalg.solve", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; },
              {{{2, 3, 3}}, {{2, 3, 2}}}),
    matrix_op("linalg.solve (vector)", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; },
              {{{3, 3}}, {{3}}}),
    matrix_op("linalg.solve (broadcast A)", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1])}; },
              {{{3, 3}}, {{2, 3, 2}}}),
    matrix_op("linalg.solve (left=false)", [](const V& x) { return V{la::solve(shifted(x[0], 3), x[1], false)}; },
              {{{2, 3, 3}}, {{2, 2, 3}}}),
    matrix_op("linalg.cholesky", [](const V& x) { return V{la::cholesky(spd(x[0]))}; }, {{{2, 3, 3}}}),
    matrix_op("linalg.cholesky (upper)", [](const V& x) { return V{la::cholesky(spd(x[0]), true)}; }, {{{3, 3}}}),
    // Eigenvalues, and the squares of the eigenvectors' entries (sign-invariant).
    matrix_op("linalg.eigh",
              [](const V& x) {
                auto [w, Vecs] = la::eigh(spread_symmetric(x[0]));
                return V{w, Vecs.square()};
              },
              {{{2, 3, 3}, -0.5, 0.5}}),
    matrix_op("linalg.eigh (UPLO U)",
              [](const V& x) {
                auto [w, Vecs] = la::eigh(spread_symmetric(x[0]), "U");
                return V{w, Vecs.square()};
              },
              {{{3, 3}, -0.5, 0.5}}),
    // Singular values and the squares of the singular vectors' entries (sign-invariant),
    // on tall, wide and complete decompositions: A = X + a spread diagonal keeps the
    // singular values apart and away from 0 for X in [-0.5, 0.5].
    matrix_op("linalg.svd (tall)",
              [](const V& x) {
                auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), false);
                return V{S, U.square(), Vh.square()};
              },
              {{{2, 4, 3}, -0.5, 0.5}}),
    matrix_op("linalg.svd (wide)",
              [](const V& x) {
                auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), false);
                return V{S, U.square(), Vh.square()};
              },
              {{{3, 4}, -0.5, 0.5}}),
    matrix_op("linalg.svd (complete)",
              [](const V& x) {
                auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), true);
                return V{S, U.narrow(-1, 0, 3).square(), Vh.square()};
              },
              {{{4, 3}, -0.5, 0.5}}),
    matrix_op("linalg.svd (U diag(S) Vh)",
              [](const V& x) {
                auto [U, S, Vh] = la::svd(spread_rectangular(x[0]), false);
                return V{(U * S.unsqueeze(-2)).matmul(Vh)};
              },
              {{{3, 4}, -0.5, 0.5}}),
    matrix_op("linalg.svdvals", [](const V& x) { return V{la::svdvals(x[0])}; }, {{{2, 3, 4}}}),
    matrix_op("linalg.matrix_norm nuc", [](const V& x) { return V{la::matrix_norm(x[0], "nuc")}; }, {{{2, 4, 3}}}),
    matrix_op("linalg.matrix_norm -2",
              [](const V& x) {
                return V{la::matrix_norm(x[0], -2, {-1, 1}, true)};
              },
              {{{2, 3, 4}}}),
    matrix_op("linalg.cond", [](const V& x) { return V{la::cond(spread_rectangular(x[0]))}; },
              {{{2, 4, 3}, -0.5, 0.5}}),
    matrix_op("linalg.matrix_norm fro", [](const V& x) { return V{la::matrix_norm(x[0])}; }, {{{2, 3, 4}}}),
    matrix_op("linalg.matrix_norm 1", [](const V& x) { return V{la::matrix_norm(x[0], 1)}; }, {{{2, 3, 4}}}),
    matrix_op("linalg.matrix_norm -inf",
              [](const V& x) {
                return V{la::matrix_norm(x[0], -kInf, {0, 2}, true)};
              },
              {{{2, 3, 4}}}),
    matrix_op("linalg.cond inf", [](const V& x) { return V{la::cond(shifted(x[0], 3), kInf)}; }, {{{2, 3, 3}}}),
});

}  // namespace
