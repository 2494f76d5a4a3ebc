// Tests of sparse COO tensors (engine/ops/sparse.cpp): coalesce and to_dense
// against PyTorch 1.13, sparse.mm against dense matmul, gradients, and errors
// (the op sweep's rows are in op_rows/sparse.cpp).
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/sparse.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"
#include "tests/engine/op_rows/sparse_example.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::shape_value_mismatch;
using gd::testing::sparse_example_indices;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;
using V = std::vector<Tensor>;

namespace {

Tensor long_of(const std::vector<double>& values, const std::vector<int64_t>& sizes) {
  return tensor_of(values, sizes, gd::kInt64);
}

// The 3x4 example of op_rows/sparse_example.h.
Tensor example_values() { return tensor_of({1.5, -2., 0.25, 4., 3., -1., 7.}); }
Tensor example() { return gd::sparse_coo_tensor(sparse_example_indices(), example_values(), {3, 4}); }

}  // namespace

TEST_CASE("sparse_coo_tensor: coalesce sums duplicates and sorts row-major (PyTorch 1.13)") {
  Tensor s = example();
  CHECK(gd::is_sparse(s));
  CHECK(!gd::is_sparse(example_values()));
  CHECK(gd::sparse_nnz(s) == 7);
  CHECK(s.sizes() == gd::IntArrayRef{3, 4});
  Tensor c = gd::coalesce(s);
  CHECK(gd::sparse_nnz(c) == 5);
  // .coalesce().indices() / .values()
  CHECK(shape_value_mismatch(gd::sparse_indices(c), {0, 0, 1, 1, 2, 0, 3, 0, 2, 1}, {2, 5}) == "");
  CHECK(shape_value_mismatch(gd::sparse_values(c), {7.0, 2.0, 0.25, -1.0, 4.5}, {5}) == "");
  CHECK(gd::coalesce(c).is_same(c));
}

TEST_CASE("sparse_coo_tensor: 3-D coalesce and to_dense (PyTorch 1.13)") {
  Tensor s = gd::sparse_coo_tensor(long_of({1, 0, 1, 1, 0, 1, 0, 0, 2, 2, 1, 2}, {3, 4}), tensor_of({1, 2, 3, 4}),
                                   {2, 2, 3});
  Tensor c = gd::coalesce(s);
  CHECK(shape_value_mismatch(gd::sparse_indices(c), {0, 1, 1, 1, 0, 0, 2, 1, 2}, {3, 3}) == "");
  CHECK(shape_value_mismatch(gd::sparse_values(c), {2, 3, 5}, {3}) == "");
  std::vector<double> dense = {0, 0, 0, 0, 0, 2, 0, 3, 5, 0, 0, 0};
  CHECK(shape_value_mismatch(gd::to_dense(s), dense, {2, 2, 3}) == "");
  CHECK(shape_value_mismatch(gd::to_dense(c), dense, {2, 2, 3}) == "");
}

TEST_CASE("to_dense of the 3x4 example (PyTorch 1.13), and of an empty sparse tensor") {
  CHECK(shape_value_mismatch(gd::to_dense(example()), {7, 0, 0, 2, 0.25, 0, -1, 0, 0, 4.5, 0, 0}, {3, 4}) == "");
  Tensor empty = gd::sparse_coo_tensor(gd::zeros({2, 0}, gd::TensorOptions().dtype(gd::kInt64)),
                                       gd::zeros({0}, gd::TensorOptions().dtype(gd::kFloat64)), {2, 3});
  CHECK(shape_value_mismatch(gd::to_dense(empty), std::vector<double>(6, 0.0), {2, 3}) == "");
  Tensor dense = gd::ones({3, 2}, gd::TensorOptions().dtype(gd::kFloat64));
  CHECK(shape_value_mismatch(gd::sparse::mm(empty, dense), std::vector<double>(4, 0.0), {2, 2}) == "");
}

TEST_CASE("sparse.mm matches PyTorch and the dense matmul") {
  // d = torch.arange(8, dtype=torch.float64).reshape(4, 2) * 0.5 - 1; torch.sparse.mm(s, d)
  Tensor d = tensor_of({-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5}, {4, 2});
  CHECK(shape_value_mismatch(gd::sparse::mm(example(), d), {-3.0, 1.5, -1.25, -1.625, 0.0, 2.25}, {3, 2}) == "");
  CHECK(value_mismatch(gd::sparse::mm(example(), d.t().contiguous().t()), gd::matmul(gd::to_dense(example()), d)) ==
        "");
  // A larger random pattern, so rows are split across threads where there are several.
  const int64_t m = 300, k = 200, n = 5, nnz = 3000;
  std::vector<double> idx(2 * nnz);
  for (int64_t i = 0; i < nnz; ++i) {
    idx[static_cast<size_t>(i)] = static_cast<double>((i * 7919) % m);
    idx[static_cast<size_t>(nnz + i)] = static_cast<double>((i * 104729 + 13) % k);
  }
  Tensor big = gd::sparse_coo_tensor(long_of(idx, {2, nnz}), sample({nnz}, -1, 1, 3), {m, k});
  Tensor dense = sample({k, n}, -1, 1, 4);
  CHECK(value_mismatch(gd::sparse::mm(big, dense), gd::matmul(gd::to_dense(big), dense), 1e-12, 1e-12) == "");
  Tensor big32 = gd::sparse_coo_tensor(long_of(idx, {2, nnz}), sample({nnz}, -1, 1, 3, gd::kFloat32), {m, k});
  Tensor dense32 = sample({k, n}, -1, 1, 4, gd::kFloat32);
  CHECK(value_mismatch(gd::sparse::mm(big32, dense32), gd::matmul(gd::to_dense(big32), dense32), 1e-5, 1e-5) == "");
}

TEST_CASE("sparse.mm gradients: values and the dense operand") {
  Tensor idx = sparse_example_indices();
  auto f = [idx](const V& x) { return V{gd::sparse::mm(gd::sparse_coo_tensor(idx, x[0], {3, 4}), x[1])}; };
  V inputs = {example_values().requires_grad_(), sample({4, 2}, -1, 1, 7).requires_grad_()};
  CHECK(gd::autograd::gradcheck(f, inputs));
  CHECK(gd::autograd::gradgradcheck(f, inputs));
  // Closed form: d/dv_k of sum(S @ D) is the sum of D's row col_k (duplicates each get it).
  Tensor values = example_values().requires_grad_();
  Tensor dense = tensor_of({-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5}, {4, 2}).requires_grad_();
  gd::sparse::mm(gd::sparse_coo_tensor(idx, values, {3, 4}), dense).sum().backward();
  CHECK(shape_value_mismatch(values.grad(), {0.5, 4.5, -1.5, 4.5, 0.5, 2.5, -1.5}, {7}) == "");
  // Column sums of the dense matrix S^T @ ones(3, 2): S's column sums, per output column.
  CHECK(shape_value_mismatch(dense.grad(), {7.25, 7.25, 4.5, 4.5, -1, -1, 2, 2}, {4, 2}) == "");
  // to_dense and coalesce pass gradients to the values too.
  auto g = [idx](const V& x) { return V{gd::to_dense(gd::coalesce(gd::sparse_coo_tensor(idx, x[0], {3, 4})))}; };
  CHECK(gd::autograd::gradcheck(g, {example_values().requires_grad_()}));
}

TEST_CASE("sparse errors") {
  Tensor v = example_values();
  Tensor i = sparse_example_indices();
  Tensor d = gd::ones({4, 2}, gd::TensorOptions().dtype(gd::kFloat64));
  struct Case {
    std::string want;
    std::function<void()> f;
  };
  std::vector<Case> cases = {
      {"sparse_coo_tensor: indices must be an int64 tensor, but got Double",
       [&] { gd::sparse_coo_tensor(i.to(gd::kFloat64), v, {3, 4}); }},
      {"indices must be sparse_dim x nnz, but got: [14]", [&] { gd::sparse_coo_tensor(i.reshape({14}), v, {3, 4}); }},
      {"indices and values must have same nnz, but got nnz from indices: 7, nnz from values: 6",
       [&] { gd::sparse_coo_tensor(i, v.narrow(0, 0, 6), {3, 4}); }},
      {"number of dimensions must be sparse_dim (2) + dense_dim (0), but got 3",
       [&] { gd::sparse_coo_tensor(i, v, {3, 4, 2}); }},
      {"size is inconsistent with indices: for dim 1, size is 3 but found index 3",
       [&] { gd::sparse_coo_tensor(i, v, {3, 3}); }},
      {"found negative index -1 for dim 0", [&] { gd::sparse_coo_tensor(long_of({-1, 0}, {1, 2}), v.narrow(0, 0, 2), {3}); }},
      {"sparse_coo_tensor: values must be 1-D (nnz); hybrid sparse tensors are not supported, but got values of shape "
       "[7, 1]",
       [&] { gd::sparse_coo_tensor(i, v.reshape({7, 1}), {3, 4}); }},
      {"Cannot get values on an uncoalesced tensor, please call .coalesce() first",
       [&] { gd::sparse_values(example()); }},
      {"to_dense: expected a sparse COO tensor, but got a dense (strided) tensor", [&] { gd::to_dense(d); }},
      {"sparse.mm: expected a sparse COO tensor, but got a dense (strided) tensor", [&] { gd::sparse::mm(d, d); }},
      {"sparse.mm: expected a 2-D sparse matrix, but got a 1-D sparse tensor",
       [&] { gd::sparse::mm(gd::sparse_coo_tensor(long_of({0}, {1, 1}), v.narrow(0, 0, 1), {3}), d); }},
      {"addmm: matrices expected, got 3D tensor", [&] { gd::sparse::mm(example(), d.reshape({4, 2, 1})); }},
      {"addmm: Argument #3 (dense): Expected dim 0 size 4, got 3", [&] { gd::sparse::mm(example(), d.narrow(0, 0, 3)); }},
      {"sparse.mm: expected scalar type Double but found Float", [&] { gd::sparse::mm(example(), d.to(gd::kFloat32)); }},
      {"sparse.mm: expected a dense tensor for the second argument, but got a sparse tensor",
       [&] { gd::sparse::mm(example(), example()); }},
  };
  for (const auto& c : cases) CHECK(error_of(c.f) == c.want);
}

TEST_CASE("sparse_indices is a copy: writing to it cannot corrupt the tensor") {
  Tensor c = gd::coalesce(example());
  Tensor idx = gd::sparse_indices(c);
  idx.fill_(100);
  CHECK(values_of(gd::sparse_indices(c)) == std::vector<double>{0, 0, 1, 1, 2, 0, 3, 0, 2, 1});
}

TEST_CASE("dense ops on a sparse tensor raise an error instead of reading memory") {
  gd::Tensor indices = gd::tensor({int64_t{0}, int64_t{1}, int64_t{1}, int64_t{0}}).reshape({2, 2});
  gd::Tensor values = gd::tensor({1.0, 2.0}, gd::kFloat64);
  gd::Tensor s = gd::sparse_coo_tensor(indices, values, {2, 2});
  const std::string expected =
      "this tensor has no dense data: it is a sparse COO tensor (or made from one), which dense ops do not support; "
      "use to_dense() or the functions of engine/sparse.h";
  CHECK_THROWS_WITH(gd::exp(s), expected.c_str());
  CHECK_THROWS_WITH(s.detach().sum(), expected.c_str());
  CHECK_THROWS_WITH(s.t().contiguous(), expected.c_str());
}
