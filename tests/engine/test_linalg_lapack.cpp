// Tests of gradiens::linalg (engine/ops/linalg_lapack.cpp): values against PyTorch
// 1.13 and closed forms (A inv(A) = I, Q R = A, L L^T = A, A V = V diag(w), U S Vh =
// A), batches, PyTorch's error messages, and derivatives: the special cases here,
// the gradcheck + gradgradcheck rows of the op sweep in op_rows/linalg_lapack.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "engine/dims.h"
#include "engine/linalg.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace la = gradiens::linalg;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using V = std::vector<Tensor>;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The matrices the PyTorch literals below were computed from.
Tensor A3() { return tensor_of({4, -2, 1, 3, 6, -4, 2, 1, 8}, {3, 3}); }            // det 263
Tensor B3() { return tensor_of({1, 2, 3, 0, 1, 4, 5, 6, 0}, {3, 3}); }              // det 1
Tensor N3() { return tensor_of({0, 1, 2, 1, 0, 3, 4, -3, 8}, {3, 3}); }             // det -2, zero first pivot
Tensor S3() { return tensor_of({4, 2, -2, 2, 10, 4, -2, 4, 9}, {3, 3}); }           // symmetric positive-definite
Tensor T3() { return tensor_of({2, 7, 7, -1, 3, 5, 0.5, 0, 1}, {3, 3}); }           // not symmetric: UPLO matters
Tensor M43() { return tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 10, -1, 0, 2}, {4, 3}); }  // tall
Tensor Singular3() { return tensor_of({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3}); }       // rank 2

Tensor scalar(double v) { return gd::scalar_tensor(v, gd::TensorOptions().dtype(gd::kFloat64)); }

Tensor eye3() { return gd::eye(3, gd::TensorOptions().dtype(gd::kFloat64)); }

// [..., n] -> [..., n, n] with v on the diagonal.
Tensor diag_embed(const Tensor& v) { return v.unsqueeze(-2) * gd::eye(v.size(-1), v.options()); }

// The entries of t strictly above (above = false: below) the diagonal, others zeroed.
Tensor off_triangle(const Tensor& t, bool above) {
  int64_t rows = t.size(-2), cols = t.size(-1);
  std::vector<double> mask(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[static_cast<size_t>(i * cols + j)] = (above ? j > i : j < i) ? 1 : 0;
  return t * tensor_of(mask, {rows, cols}, t.dtype());
}

// Q^T Q or U^T U: the identity when the columns are orthonormal.
Tensor gram(const Tensor& q) { return q.mT().matmul(q); }
Tensor identity_like(const Tensor& square) { return gd::eye(square.size(-1), square.options()).expand(square.sizes()); }

}  // namespace

TEST_CASE("linalg: det, slogdet, inv and solve against PyTorch") {
  // Literals: python3 -c "import torch; A = torch.tensor(..., dtype=torch.float64); print(torch.linalg.det(A), ...)"
  Tensor b = tensor_of({1, -2, 3});
  Tensor Bm = tensor_of({1, 0, 2, 1, -1, 3}, {3, 2});
  auto [sign, logabs] = la::slogdet(gd::stack({A3(), B3(), N3()}));
  struct Case {
    const char* name;
    Tensor got;
    Tensor want;
  };
  const Case cases[] = {
      {"det A", la::det(A3()), scalar(263.0)},
      {"det B", la::det(B3()), scalar(0.9999999999999964)},
      {"det N", la::det(N3()), scalar(-1.9999999999999982)},
      {"det batch", la::det(gd::stack({A3(), B3(), N3()})),
       tensor_of({263.0, 0.9999999999999964, -1.9999999999999982})},
      {"det singular", la::det(Singular3()), scalar(0.0)},
      {"slogdet sign", sign, tensor_of({1, 1, -1})},
      {"slogdet logabsdet", logabs, tensor_of({5.572154032177764, -3.3306690738754696e-15, 0.6931471805599443})},
      {"inv A", la::inv(A3()),
       tensor_of(
           {0.1977186311787072, 0.06463878326996197, 0.007604562737642585, -0.12167300380228138, 0.11406844106463879,
            0.07224334600760457, -0.034220532319391636, -0.030418250950570346, 0.1140684410646388},
           {3, 3})},
      {"inv B", la::inv(B3()),
       tensor_of({-24.00000000000009, 18.000000000000068, 5.000000000000018, 20.000000000000075, -15.000000000000055,
                  -4.000000000000014, -5.0000000000000195, 4.000000000000013, 1.0000000000000033},
                 {3, 3})},
      {"solve vector", la::solve(A3(), b), tensor_of({0.09125475285171103, -0.1330798479087452, 0.36882129277566544})},
      {"solve matrix", la::solve(A3(), Bm),
       tensor_of({0.31939163498098855, 0.08745247148288975, 0.03422053231939162, 0.3307984790874525,
                  -0.20912547528517111, 0.31178707224334606},
                 {3, 2})},
      {"solve left=false", la::solve(A3(), Bm.mT(), false),
       tensor_of({-0.011406844106463865, 0.3231939163498099, 0.03802281368821293, -0.22433460076045628,
                  0.022813688212927744, 0.41444866920152096},
                 {2, 3})},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(value_mismatch(c.got, c.want, 1e-12, 1e-14) == "");
  }
  // The singular matrix has an exact zero pivot: sign 0, logabsdet -inf, as PyTorch.
  auto [s0, l0] = la::slogdet(Singular3());
  CHECK(s0.item<double>() == 0.0);
  CHECK(l0.item<double>() == -kInf);
}

TEST_CASE("linalg: float32 goes through the single-precision routines") {
  Tensor A = A3().to(gd::kFloat32);
  CHECK(la::det(A).dtype() == gd::kFloat32);
  CHECK(la::inv(A).dtype() == gd::kFloat32);
  // torch.linalg.inv(A.float()), torch.linalg.det(A.float()) in PyTorch 1.13.
  CHECK(value_mismatch(la::det(A), scalar(263.0), 1e-6) == "");
  CHECK(value_mismatch(la::inv(A),
                       tensor_of({0.19771863520145416, 0.06463878601789474, 0.007604567334055901, -0.12167301774024963,
                                  0.11406844854354858, 0.0722433552145958, -0.034220531582832336, -0.03041825257241726,
                                  0.11406844109296799},
                                 {3, 3}),
                       1e-6) == "");
  Tensor S = S3().to(gd::kFloat32);
  Tensor L = la::cholesky(S);
  CHECK(value_mismatch(L.matmul(L.mT()), S, 1e-6, 1e-6) == "");
  auto [w, Vecs] = la::eigh(S);
  CHECK(w.dtype() == gd::kFloat32);
  CHECK(value_mismatch(S.matmul(Vecs), Vecs * w.unsqueeze(-2), 1e-5, 1e-5) == "");
  auto [U, Sv, Vh] = la::svd(M43().to(gd::kFloat32), false);
  CHECK(value_mismatch((U * Sv.unsqueeze(-2)).matmul(Vh), M43(), 1e-5, 1e-5) == "");
  auto [Q, R] = la::qr(M43().to(gd::kFloat32));
  CHECK(value_mismatch(Q.matmul(R), M43(), 1e-5, 1e-5) == "");
}

TEST_CASE("linalg: closed forms on batches and strided inputs") {
  // A batch [2, 2, 3, 3] of diagonally dominant matrices, read through a transpose.
  Tensor X = gd::testing::sample({2, 2, 3, 3}, -1, 1, 11) + eye3() * 4;
  Tensor At = X.mT().contiguous().mT();  // same values, column-major strides
  REQUIRE(!At.is_contiguous());
  Tensor I = eye3().expand({2, 2, 3, 3});
  CHECK(value_mismatch(X.matmul(la::inv(At)), I, 0, 1e-14) == "");
  Tensor B = gd::testing::sample({2, 1, 3, 2}, -1, 1, 12);  // batch broadcast against A's
  Tensor Xs = la::solve(At, B);
  CHECK(Xs.sizes() == gd::IntArrayRef({2, 2, 3, 2}));
  CHECK(value_mismatch(X.matmul(Xs), B.expand({2, 2, 3, 2}), 0, 1e-14) == "");
  // One matrix A broadcast against a batch of right-hand sides, and the reverse.
  Tensor A0 = X.select(0, 0).select(0, 0);
  Tensor Bb = gd::testing::sample({4, 3, 2}, -1, 1, 13);
  CHECK(value_mismatch(A0.matmul(la::solve(A0, Bb)), Bb, 0, 1e-14) == "");
  Tensor bv = gd::testing::sample({3}, -1, 1, 14);
  CHECK(value_mismatch(X.matmul(la::solve(X, bv).unsqueeze(-1)).squeeze(-1), bv.expand({2, 2, 3}), 0, 1e-14) == "");
  // A batch of vectors: B shaped like A without its last dim.
  Tensor bb = gd::testing::sample({2, 2, 3}, -1, 1, 15);
  CHECK(la::solve(X, bb).sizes() == gd::IntArrayRef({2, 2, 3}));
  // det of the batch equals the per-matrix dets; det(A B) = det(A) det(B).
  Tensor d = la::det(At);
  CHECK(value_mismatch(d.select(1, 1), la::det(X.select(1, 1).contiguous()), 1e-14) == "");
  Tensor Y = gd::testing::sample({2, 2, 3, 3}, -1, 1, 16) + eye3() * 4;
  CHECK(value_mismatch(la::det(X.matmul(Y)), d * la::det(Y), 1e-12) == "");
  auto [sign, logabs] = la::slogdet(X);
  CHECK(value_mismatch(sign * logabs.exp(), d, 1e-12) == "");
}

TEST_CASE("linalg: cholesky against PyTorch and L L^T = A") {
  // torch.linalg.cholesky(S), torch.linalg.cholesky(S, upper=True)
  CHECK(value_mismatch(la::cholesky(S3()),
                       tensor_of({2, 0, 0, 1, 3, 0, -1, 1.6666666666666665, 2.2852182001336816}, {3, 3}), 1e-14) == "");
  CHECK(value_mismatch(la::cholesky(S3(), true),
                       tensor_of({2, 1, -1, 0, 3, 1.6666666666666665, 0, 0, 2.2852182001336816}, {3, 3}), 1e-14) == "");
  Tensor X = gd::testing::sample({4, 5, 5}, -1, 1, 21);
  Tensor A = X.matmul(X.mT()) + gd::eye(5, X.options());
  Tensor L = la::cholesky(A);
  CHECK(value_mismatch(L.matmul(L.mT()), A, 0, 1e-13) == "");
  CHECK(value_mismatch(off_triangle(L, true), gd::zeros_like(L)) == "");
  Tensor U = la::cholesky(A, true);
  CHECK(value_mismatch(U, L.mT(), 0, 1e-14) == "");
  // Only the lower (upper) triangle is read: garbage in the other one is ignored.
  Tensor garbage = A + off_triangle(gd::ones_like(A) * 100, true);
  CHECK(value_mismatch(la::cholesky(garbage), L) == "");
}

TEST_CASE("linalg: eigh against PyTorch and A V = V diag(w)") {
  // torch.linalg.eigh(S): eigenvalues ascending; eigenvectors checked up to sign.
  auto [w, Vecs] = la::eigh(S3());
  CHECK(value_mismatch(w, tensor_of({1.8158505197872317, 7.649406538474655, 13.53474294173811}), 1e-14) == "");
  Tensor torch_vectors =
      tensor_of({0.7912111463418927, 0.6111974012447018, 0.020558662798703026, -0.4135429501180238, 0.5099713596743097,
                 0.7542621830104019, 0.4505187568925731, -0.6052825365262559, 0.6562514005046481},
                {3, 3});
  CHECK(value_mismatch(Vecs.abs(), torch_vectors.abs(), 1e-12) == "");
  CHECK(value_mismatch(S3().matmul(Vecs), Vecs * w.unsqueeze(-2), 0, 1e-13) == "");
  CHECK(value_mismatch(Vecs.mT().matmul(Vecs), eye3(), 0, 1e-15) == "");
  // UPLO picks the triangle of a non-symmetric input: torch.linalg.eigh(T), (T, UPLO='U').
  CHECK(value_mismatch(std::get<0>(la::eigh(T3())),
                       tensor_of({0.7078872783917396, 1.6471401801395207, 3.6449725414687393}), 1e-14) == "");
  CHECK(value_mismatch(std::get<0>(la::eigh(T3(), "U")),
                       tensor_of({-5.844457662512972, -2.900943103245363, 14.74540076575834}), 1e-14) == "");
  // A batch: each matrix decomposed on its own.
  Tensor X = gd::testing::sample({3, 4, 4}, -1, 1, 31);
  Tensor A = X + X.mT();
  auto [wb, Vb] = la::eigh(A);
  CHECK(wb.sizes() == gd::IntArrayRef({3, 4}));
  CHECK(value_mismatch(Vb.matmul(diag_embed(wb)).matmul(Vb.mT()), A, 0, 1e-13) == "");
  CHECK(value_mismatch(std::get<0>(la::eigh(A.select(0, 2))), wb.select(0, 2), 1e-14, 1e-14) == "");
}

TEST_CASE("linalg: qr against PyTorch and Q R = A") {
  // torch.linalg.qr(M) (both use LAPACK's geqrf, so the signs agree too).
  auto [Q, R] = la::qr(M43());
  CHECK(value_mismatch(Q,
                       tensor_of({-0.12216944435630528, 0.5642764926868793, 0.47781848256749826, -0.48867777742522095,
                                  0.23175641663925378, 0.5187743525018512, -0.8551861104941366, -0.10076365940837123,
                                  -0.4436885909555317, 0.12216944435630524, 0.7859565433852946, -0.5529042441138187},
                                 {4, 3}),
                       1e-12, 1e-15) == "");
  CHECK(value_mismatch(R,
                       tensor_of({-8.18535277187245, -9.529216659791809, -11.606097213848996, 0, 1.4812257933030573,
                                  3.6476444705830344, 0, 0, -0.9965928350693529},
                                 {3, 3}),
                       1e-12) == "");
  struct Case {
    std::vector<int64_t> shape;
    const char* mode;
    std::vector<int64_t> q_shape, r_shape;
  };
  const Case cases[] = {
      {{4, 3}, "reduced", {4, 3}, {3, 3}},          {{4, 3}, "complete", {4, 4}, {4, 3}},
      {{3, 5}, "reduced", {3, 3}, {3, 5}},          {{3, 5}, "complete", {3, 3}, {3, 5}},
      {{2, 4, 3}, "reduced", {2, 4, 3}, {2, 3, 3}}, {{2, 3, 5}, "complete", {2, 3, 3}, {2, 3, 5}},
      {{3, 0}, "reduced", {3, 0}, {0, 0}},          {{3, 0}, "complete", {3, 3}, {3, 0}},
  };
  for (const auto& c : cases) {
    INFO(gd::shape_to_string(c.shape), " ", c.mode);
    Tensor A = gd::testing::sample(c.shape, -1, 1, 41);
    auto [q, r] = la::qr(A, c.mode);
    CHECK(q.sizes() == gd::IntArrayRef(c.q_shape));
    CHECK(r.sizes() == gd::IntArrayRef(c.r_shape));
    CHECK(value_mismatch(q.matmul(r), A, 0, 1e-14) == "");
    CHECK(value_mismatch(gram(q), identity_like(gram(q)), 0, 1e-14) == "");
    CHECK(value_mismatch(off_triangle(r, false), gd::zeros_like(r)) == "");
  }
  auto [q_none, r_only] = la::qr(M43(), "r");
  CHECK(q_none.numel() == 0);
  CHECK(value_mismatch(r_only, R) == "");
}

TEST_CASE("linalg: svd against PyTorch and U diag(S) Vh = A") {
  // torch.linalg.svdvals(M), torch.linalg.svdvals(M.T)
  Tensor want = tensor_of({17.436984282741232, 2.2028674771350567, 0.31456954972769696});
  CHECK(value_mismatch(la::svdvals(M43()), want, 1e-13) == "");
  CHECK(value_mismatch(la::svdvals(M43().mT()), want, 1e-13) == "");
  struct Case {
    std::vector<int64_t> shape;
    bool full;
    std::vector<int64_t> u_shape, s_shape, vh_shape;
  };
  const Case cases[] = {
      {{4, 3}, true, {4, 4}, {3}, {3, 3}},
      {{4, 3}, false, {4, 3}, {3}, {3, 3}},
      {{3, 5}, true, {3, 3}, {3}, {5, 5}},
      {{3, 5}, false, {3, 3}, {3}, {3, 5}},
      {{2, 4, 3}, false, {2, 4, 3}, {2, 3}, {2, 3, 3}},
      {{2, 3, 5}, true, {2, 3, 3}, {2, 3}, {2, 5, 5}},
      {{3, 0}, true, {3, 3}, {0}, {0, 0}},
      {{3, 0}, false, {3, 0}, {0}, {0, 0}},
  };
  for (const auto& c : cases) {
    INFO(gd::shape_to_string(c.shape), c.full ? " full" : " reduced");
    Tensor A = gd::testing::sample(c.shape, -1, 1, 51);
    auto [U, S, Vh] = la::svd(A, c.full);
    CHECK(U.sizes() == gd::IntArrayRef(c.u_shape));
    CHECK(S.sizes() == gd::IntArrayRef(c.s_shape));
    CHECK(Vh.sizes() == gd::IntArrayRef(c.vh_shape));
    int64_t k = S.size(-1);
    Tensor Uk = U.narrow(-1, 0, k), Vhk = Vh.narrow(-2, 0, k);
    CHECK(value_mismatch((Uk * S.unsqueeze(-2)).matmul(Vhk), A, 0, 1e-14) == "");
    CHECK(value_mismatch(gram(U), identity_like(gram(U)), 0, 1e-14) == "");
    CHECK(value_mismatch(gram(Vh.mT()), identity_like(gram(Vh.mT())), 0, 1e-14) == "");
    CHECK(value_mismatch(la::svdvals(A), S) == "");
  }
}

TEST_CASE("linalg: matrix_norm and cond against PyTorch") {
  // torch.linalg.matrix_norm(M, ord), torch.linalg.cond(A, p)
  struct Case {
    const char* name;
    Tensor got;
    Tensor want;
  };
  Tensor X = gd::arange(24, gd::TensorOptions().dtype(gd::kFloat64)).reshape({2, 3, 4}) - 11.5;
  Tensor batch = gd::stack({Singular3(), eye3() * 2});
  const Case cases[] = {
      {"fro", la::matrix_norm(M43()), scalar(17.578395831246947)},
      {"nuc", la::matrix_norm(M43(), "nuc"), scalar(19.954421309603987)},
      {"inf", la::matrix_norm(M43(), kInf), scalar(25.0)},
      {"-inf", la::matrix_norm(M43(), -kInf), scalar(3.0)},
      {"1", la::matrix_norm(M43(), 1), scalar(21.0)},
      {"-1", la::matrix_norm(M43(), -1), scalar(13.0)},
      {"2", la::matrix_norm(M43(), 2), scalar(17.436984282741232)},
      {"-2", la::matrix_norm(M43(), -2.0), scalar(0.31456954972769696)},
      {"fro dims (0, 2)", la::matrix_norm(X, "fro", {0, 2}),
       tensor_of({20.639767440550294, 17.26267650163207, 20.639767440550294})},
      {"nuc dims (0, 2)", la::matrix_norm(X, "nuc", {0, 2}),
       tensor_of({23.093965941777736, 20.132840408645517, 23.093965941777732})},
      {"inf dims (0, 2)", la::matrix_norm(X, kInf, {0, 2}), tensor_of({40, 24, 40})},
      {"1 dims (0, 2)", la::matrix_norm(X, 1, {0, 2}), tensor_of({12, 12, 12})},
      {"-2 dims (0, 2)", la::matrix_norm(X, -2, {0, 2}),
       tensor_of({2.6213354162291758, 3.1622776601683786, 2.6213354162291775})},
      {"fro dims (2, 0) keepdim", la::matrix_norm(X, "fro", {2, 0}, true),
       tensor_of({20.639767440550294, 17.26267650163207, 20.639767440550294}, {1, 3, 1})},
      {"nuc dims (2, 0) keepdim", la::matrix_norm(X, "nuc", {2, 0}, true),
       tensor_of({23.093965941777732, 20.13284040864552, 23.093965941777732}, {1, 3, 1})},
      {"inf dims (2, 0) keepdim", la::matrix_norm(X, kInf, {2, 0}, true), tensor_of({12, 12, 12}, {1, 3, 1})},
      {"1 dims (2, 0) keepdim", la::matrix_norm(X, 1, {2, 0}, true), tensor_of({40, 24, 40}, {1, 3, 1})},
      {"cond default", la::cond(A3()), scalar(2.2654014672180973)},
      {"cond 2", la::cond(A3(), 2), scalar(2.2654014672180973)},
      {"cond -2", la::cond(A3(), -2), scalar(0.4414228623361825)},
      {"cond fro", la::cond(A3(), "fro"), scalar(3.716478651072783)},
      {"cond nuc", la::cond(A3(), "nuc"), scalar(10.060204288224469)},
      {"cond inf", la::cond(A3(), kInf), scalar(4.003802281368822)},
      {"cond -inf", la::cond(A3(), -kInf), scalar(1.2509505703422055)},
      {"cond 1", la::cond(A3(), 1), scalar(4.596958174904943)},
      {"cond -1", la::cond(A3(), -1), scalar(1.7452471482889735)},
      {"cond of a tall matrix", la::cond(M43()), scalar(55.43125295450666)},
      {"cond -2 of a tall matrix", la::cond(M43(), -2), scalar(0.01804036435583941)},
      {"cond 1 of a singular batch", la::cond(batch, 1), tensor_of({kInf, 1.0})},
      {"cond fro of a singular matrix", la::cond(Singular3(), "fro"), scalar(kInf)},
      // Closed form (PyTorch 1.13 prints 1.765e16 for the singular matrix here, not
      // inf as for the other orders): cond_nuc(2 I) = 6 * 1.5.
      {"cond nuc of a singular batch", la::cond(batch, "nuc"), tensor_of({kInf, 9.0})},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(value_mismatch(c.got, c.want, 1e-13) == "");
  }
}

TEST_CASE("linalg: empty matrices") {
  // PyTorch: det of a 0x0 matrix is 1, slogdet (1, 0), inv/cholesky/eigh give empty results.
  Tensor E = gd::zeros({0, 0}, gd::kFloat64);
  CHECK(la::det(E).item<double>() == 1.0);
  CHECK(std::get<0>(la::slogdet(E)).item<double>() == 1.0);
  CHECK(std::get<1>(la::slogdet(E)).item<double>() == 0.0);
  CHECK(la::inv(gd::zeros({2, 0, 0}, gd::kFloat64)).sizes() == gd::IntArrayRef({2, 0, 0}));
  CHECK(la::cholesky(E).sizes() == gd::IntArrayRef({0, 0}));
  CHECK(std::get<1>(la::eigh(E)).sizes() == gd::IntArrayRef({0, 0}));
  CHECK(la::det(gd::zeros({0, 3, 3}, gd::kFloat64)).sizes() == gd::IntArrayRef({0}));
}

TEST_CASE("linalg: errors use PyTorch's messages") {
  Tensor A34 = gd::zeros({3, 4}, gd::kFloat64);
  Tensor I2 = gd::eye(2, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor not_pd = tensor_of({1, 2, 2, 1}, {2, 2});
  Tensor batch_singular = gd::stack({eye3(), Singular3()});
  Tensor ints = gd::ones({3, 3}, gd::kInt64);
  Tensor vec = gd::ones({3}, gd::kFloat64);
  struct Case {
    std::string got, want;
  };
  // Texts from PyTorch 1.13 (python3 -c "import torch; torch.linalg.inv(torch.zeros(3, 4))", ...).
  const Case cases[] = {
      {error_of([&] { la::inv(A34); }),
       "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices"},
      {error_of([&] { la::det(A34); }),
       "linalg.det: A must be batches of square matrices, but they are 3 by 4 matrices"},
      {error_of([&] { la::slogdet(A34); }),
       "linalg.slogdet: A must be batches of square matrices, but they are 3 by 4 matrices"},
      {error_of([&] { la::cholesky(A34); }),
       "linalg.cholesky: A must be batches of square matrices, but they are 3 by 4 matrices"},
      {error_of([&] { la::eigh(A34); }),
       "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices"},
      {error_of([&] { la::inv(vec); }), "linalg.inv: The input tensor A must have at least 2 dimensions."},
      {error_of([&] { la::svd(vec); }), "linalg.svd: The input tensor A must have at least 2 dimensions."},
      {error_of([&] { la::qr(vec); }), "linalg.qr: The input tensor A must have at least 2 dimensions."},
      {error_of([&] { la::inv(Singular3()); }),
       "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
       "singular."},
      {error_of([&] { la::inv(batch_singular); }),
       "linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion could not be completed because "
       "the input matrix is singular."},
      // PyTorch factorizes a row-major A as A^T and other layouts as A: the zero pivot follows.
      {error_of([&] { la::inv(Singular3().mT().contiguous().mT()); }),
       "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because the input matrix is "
       "singular."},
      {error_of([&] { la::inv(Singular3().mT()); }),
       "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
       "singular."},
      {error_of([&] {
         la::inv(tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}));
       }),
       "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because the input matrix is "
       "singular."},
      {error_of([&] { la::solve(Singular3(), vec); }),
       "torch.linalg.solve: The solver failed because the input matrix is singular."},
      {error_of([&] { la::solve(batch_singular, vec); }),
       "torch.linalg.solve: (Batch element 1): The solver failed because the input matrix is singular."},
      {error_of([&] { la::cholesky(not_pd); }),
       "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
       "leading minor of order 2 is not positive-definite)."},
      {error_of([&] {
         la::cholesky(gd::stack({I2, not_pd}));
       }),
       "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
       "positive-definite (the leading minor of order 2 is not positive-definite)."},
      {error_of([&] { la::solve(I2, gd::ones({2}, gd::kFloat32)); }),
       "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of type Float instead"},
      {error_of([&] { la::solve(I2.to(gd::kFloat32), gd::ones({2}, gd::kInt64)); }),
       "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Long instead"},
      {error_of([&] { la::solve(I2, gd::ones({3}, gd::kFloat64)); }),
       "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)"},
      {error_of([&] {
         la::solve(I2, gd::ones({3, 4}, gd::kFloat64));
       }),
       "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x4)"},
      {error_of([&] {
         la::solve(I2, gd::ones({2, 3}, gd::kFloat64), false);
       }),
       "linalg.solve: Incompatible shapes of A and B for the equation XA = B (2x2 and 2x3)"},
      {error_of([&] { la::solve(I2, gd::ones({}, gd::kFloat64)); }),
       "linalg.solve: The input tensor B must have at least 2 dimensions."},
      {error_of([&] {
         la::solve(gd::ones({2, 2}, gd::kInt64), gd::ones({2}, gd::kFloat32));
       }),
       "linalg.solve: Expected a floating point or complex tensor as input. Got Long"},
      {error_of([&] { la::det(ints); }), "linalg.det: Expected a floating point or complex tensor as input. Got Long"},
      {error_of([&] { la::inv(ints); }), "linalg.inv: Expected a floating point or complex tensor as input. Got Long"},
      {error_of([&] { la::eigh(ints); }), "\"linalg_eigh_cpu\" not implemented for 'Long'"},
      {error_of([&] { la::svdvals(ints); }),
       "linalg.svd: Expected a floating point or complex tensor as input. Got Long"},
      {error_of([&] { la::matrix_norm(ints); }),
       "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long"},
      {error_of([&] { la::qr(eye3(), "foo"); }),
       "qr received unrecognized mode 'foo' but expected one of 'reduced' (default), 'r', or 'complete'"},
      {error_of([&] { la::eigh(eye3(), "X"); }), "Expected UPLO argument to be 'L' or 'U', but got X"},
      {error_of([&] { la::matrix_norm(eye3(), 3); }), "linalg.matrix_norm: Order 3 not supported."},
      {error_of([&] { la::matrix_norm(eye3(), "foo"); }), "linalg.matrix_norm: Order foo not supported."},
      {error_of([&] {
         la::matrix_norm(eye3(), "fro", {0, 0});
       }),
       "linalg.matrix_norm: dims must be different. Got (0, 0)"},
      {error_of([&] {
         la::matrix_norm(eye3(), "fro", {0, 1, 2});
       }),
       "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"},
      {error_of([&] {
         la::matrix_norm(eye3(), "fro", {0, 2});
       }),
       "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
      {error_of([&] { la::cond(eye3(), 3); }), "linalg.cond got an invalid norm type: 3"},
      {error_of([&] {
         la::cond(gd::ones({2, 3}, gd::kFloat64), 1);
       }),
       "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices"},
      {error_of([&] { la::cond(vec); }), "linalg.cond: The input tensor must have at least 2 dimensions."},
      {error_of([&] {
         la::svd(gd::full({3, 3}, std::nan(""), gd::kFloat64));
       }),
       "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values."},
  };
  for (const auto& c : cases) CHECK(c.got == c.want);
}

TEST_CASE("linalg: backward special cases") {
  // det at a rank-2 matrix: the gradient is the cofactor matrix (closed form:
  // cof_ij = (-1)^(i+j) times the minor), computed without NaN.
  Tensor A = Singular3().requires_grad_();
  la::det(A).backward();
  CHECK(value_mismatch(A.grad(), tensor_of({4, 4, -4, -2, -2, 2, 0, 0, 0}, {3, 3}), 0, 1e-13) == "");
  // In a batch with a singular matrix, every matrix still gets its cofactors.
  Tensor Ab = gd::stack({Singular3(), A3()}).requires_grad_();
  la::det(Ab).sum().backward();
  Tensor cof_A3 = la::det(A3()) * la::inv(A3()).mT();
  CHECK(value_mismatch(Ab.grad().select(0, 1), cof_A3, 1e-12) == "");
  CHECK(value_mismatch(Ab.grad().select(0, 0), tensor_of({4, 4, -4, -2, -2, 2, 0, 0, 0}, {3, 3}), 0, 1e-13) == "");

  // slogdet's sign carries no gradient; logabsdet's is inv(A)^T.
  Tensor B = A3().requires_grad_();
  auto [sign, logabs] = la::slogdet(B);
  CHECK_FALSE(sign.requires_grad());
  logabs.backward();
  CHECK(value_mismatch(B.grad(), la::inv(A3()).mT(), 1e-14) == "");

  // qr is forward only: backward through it is a clear error.
  Tensor C = M43().requires_grad_();
  auto [Q, R] = la::qr(C);
  CHECK(error_of([&] { R.sum().backward(); }).find("the derivative for 'linalg.qr' is not implemented") == 0);
  CHECK(error_of([&] { Q.sum().backward(); }).find("the derivative for 'linalg.qr' is not implemented") == 0);
  // The nuclear norm's gradient is U Vh (closed form), also for the spectral norm u1 v1^T.
  auto [U, S, Vh] = la::svd(M43(), false);
  la::matrix_norm(C, "nuc").backward();
  CHECK(value_mismatch(C.grad(), U.matmul(Vh), 0, 1e-13) == "");
  Tensor C2 = M43().requires_grad_();
  la::matrix_norm(C2, 2).backward();
  CHECK(value_mismatch(C2.grad(), U.narrow(-1, 0, 1).matmul(Vh.narrow(-2, 0, 1)), 0, 1e-13) == "");
  // svdvals of a matrix with repeated singular values: the gradient stays finite
  // (d sum(s) / dA = U Vh = I for A = 2 I).
  Tensor I2 = (eye3() * 2).requires_grad_();
  la::svdvals(I2).sum().backward();
  CHECK(value_mismatch(I2.grad(), eye3(), 0, 1e-14) == "");
  // The norms built from elementwise ops are differentiable: d|M|_F = M / |M|_F.
  Tensor D = M43().requires_grad_();
  la::matrix_norm(D).backward();
  CHECK(value_mismatch(D.grad(), M43() / 17.578395831246947, 1e-13) == "");
  // Outputs of forward-only ops on inputs without grad do not require grad.
  CHECK_FALSE(std::get<0>(la::qr(M43())).requires_grad());
}

TEST_CASE("linalg: eigh gradient of a gauge-invariant loss, against finite differences") {
  // sum_i f(w_i) v_i v_i^T does not depend on the eigenvectors' signs.
  auto fn = [](const V& x) {
    Tensor A = x[0] + x[0].mT();
    auto [w, Vecs] = la::eigh(A);
    return V{(Vecs * w.sin().unsqueeze(-2)).matmul(Vecs.mT())};
  };
  Tensor X =
      (gd::testing::sample({2, 4, 4}, -0.3, 0.3, 61) + gd::arange(4, gd::TensorOptions().dtype(gd::kFloat64)) * 3.0 *
                                                           gd::eye(4, gd::TensorOptions().dtype(gd::kFloat64)))
          .detach()
          .requires_grad_();
  CHECK(gd::autograd::gradcheck(fn, {X}));
  CHECK(gd::autograd::gradgradcheck(fn, {X}));
}
