// index_fill/index_copy, scatter_reduce and unique/unique_consecutive: values
// from PyTorch 1.13.1 (python3-torch), each case run there, and PyTorch's
// error messages; gradients from PyTorch 1.13.1 too where they have cases
// (ties, zeros), and by gradcheck/gradgradcheck (the sweep's rows, in
// op_rows/index_ops.cpp, which PyTorch 1.13.1 passes on the same ops). The
// few literals PyTorch 1.13.1 does not give are marked where they stand, with
// what it gives instead.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

using V = std::vector<Tensor>;

Tensor f64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape); }
Tensor i64(std::vector<double> v, std::vector<int64_t> shape = {}) { return tensor_of(v, shape, gd::kInt64); }
Tensor arange12() { return gd::arange(12, gd::kFloat64).reshape({3, 4}); }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// ---- index_fill ----

TEST_CASE("index_fill: slices set to a value, negative indices from the end") {
  CHECK(shape_value_mismatch(arange12().index_fill(1, i64({0, -1}), -1.0), {-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1},
                             {3, 4}) == "");
  CHECK(shape_value_mismatch(arange12().index_fill(0, i64({1}), 7), {0, 1, 2, 3, 7, 7, 7, 7, 8, 9, 10, 11}, {3, 4}) ==
        "");
  // A 0-dim index, a transposed self, a 0-dim value tensor.
  Tensor t = arange12().t();
  CHECK(shape_value_mismatch(
            t.index_fill(0, gd::scalar_tensor(int64_t{2}, gd::kInt64), gd::scalar_tensor(0.5, gd::kFloat64)),
            {0, 4, 8, 1, 5, 9, 0.5, 0.5, 0.5, 3, 7, 11}, {4, 3}) == "");
  // An integer tensor filled with 2.5 holds 2; a 0-dim self; an empty index changes nothing.
  CHECK(shape_value_mismatch(i64({1, 2, 3}).index_fill(0, i64({0}), 2.5), {2, 2, 3}, {3}) == "");
  CHECK(shape_value_mismatch(gd::scalar_tensor(4.0, gd::kFloat64).index_fill(0, i64({0}), 1), {1}, {}) == "");
  CHECK(value_mismatch(arange12().index_fill(1, gd::empty({0}, gd::kInt64), 1), arange12()) == "");
  // In place, and repeated indices.
  Tensor y = arange12();
  y.index_fill_(1, i64({1, 1}), 0);
  CHECK(shape_value_mismatch(y, {0, 0, 2, 3, 4, 0, 6, 7, 8, 0, 10, 11}, {3, 4}) == "");
}

TEST_CASE("index_fill: PyTorch's errors") {
  Tensor x = arange12();
  CHECK(error_of([&] { x.index_fill(0, i64({0}).to(gd::kInt32), 1); }) ==
        "index_fill_(): Expected dtype int64 for index.");
  CHECK(error_of([&] { x.index_fill(0, i64({0}, {1, 1}), 1); }) == "Index has to be a vector/scalar");
  CHECK(error_of([&] {
          x.index_fill(0, i64({0}), f64({1, 2}));
        }) == "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).");
  CHECK(error_of([&] { x.index_fill(1, i64({1, 4}), 1); }) == "index 4 is out of bounds for dimension 1 with size 4");
  CHECK(error_of([&] { x.index_fill(1, i64({-5}), 1); }) == "index -5 is out of bounds for dimension 1 with size 4");
  CHECK(error_of([&] { x.index_fill(2, i64({0}), 1); }) != "");
}

TEST_CASE("index_fill: the value tensor's gradient sums the filled slices once each") {
  Tensor v = gd::scalar_tensor(0.5, gd::kFloat64).requires_grad_();
  Tensor x = arange12().requires_grad_();
  Tensor y = x.index_fill(1, i64({0, 2, 0, -2}), v);  // columns 0 and 2 (-2 is 2)
  auto g = gd::autograd::grad({(y * arange12()).sum()}, {x, v});
  // d/dv: the weights at columns 0 and 2: 0+4+8 + 2+6+10 = 30. Not PyTorch's: its value gradient,
  // grad.index_select(dim, unique(index)).sum(), raises on the negative index in PyTorch 1.13.1
  // ("INDICES element is out of DATA bounds, id=-2 axis_dim=4"; 2.x has the same formula). With
  // the index {0, 2, 0, 2} PyTorch 1.13.1 gives 30 and the same gradient for x.
  CHECK(g[1].item<double>() == doctest::Approx(30.0));
  CHECK(shape_value_mismatch(g[0], {0, 1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11}, {3, 4}) == "");
}

// ---- index_copy ----

TEST_CASE("index_copy: slices replaced by the source's, in index order") {
  Tensor src = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(shape_value_mismatch(gd::zeros({3, 4}, gd::kFloat64).index_copy(1, i64({3, 0}), src),
                             {2, 0, 0, 1, 4, 0, 0, 3, 6, 0, 0, 5}, {3, 4}) == "");
  // Repeated indices: the last write wins (the CPU loop is serial).
  CHECK(shape_value_mismatch(gd::zeros({5}, gd::kFloat64).index_copy(0, i64({1, 1}), f64({2, 3})), {0, 3, 0, 0, 0},
                             {5}) == "");
  // A transposed source, a 0-dim source into a 1-D self, a 0-dim self.
  CHECK(shape_value_mismatch(gd::zeros({2, 3}, gd::kFloat64).index_copy(0, i64({1}), src.t().narrow(0, 1, 1)),
                             {0, 0, 0, 2, 4, 6}, {2, 3}) == "");
  CHECK(shape_value_mismatch(gd::zeros({3}, gd::kFloat64).index_copy(0, i64({2}), gd::scalar_tensor(7.0, gd::kFloat64)),
                             {0, 0, 7}, {3}) == "");
  CHECK(shape_value_mismatch(gd::zeros({}, gd::kFloat64).index_copy(0, i64({0}), gd::scalar_tensor(7.0, gd::kFloat64)),
                             {7}, {}) == "");
  Tensor y = gd::zeros({3, 2}, gd::kInt64);
  y.index_copy_(0, i64({2, 0}), i64({1, 2, 3, 4}, {2, 2}));
  CHECK(shape_value_mismatch(y, {3, 4, 0, 0, 1, 2}, {3, 2}) == "");
}

TEST_CASE("index_copy: PyTorch's errors") {
  Tensor x = gd::zeros({3, 4}, gd::kFloat64);
  CHECK(error_of([&] {
          x.index_copy(0, i64({0}, {1, 1}), gd::ones({1, 4}, gd::kFloat64));
        }) == "index_copy_(): Index should have dimension 1 or 0 (got 2)");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0, 1}), gd::scalar_tensor(1.0, gd::kFloat64));
        }) == "index_copy_(): When source is scalar, index should have one element (got 2)");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0}), gd::ones({1, 4, 1}, gd::kFloat64));
        }) ==
        "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
        "dimensionality (3), destination dimensionality (2)");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0}).to(gd::kInt32), gd::ones({1, 4}, gd::kFloat64));
        }) == "index_copy_(): Expected a long tensor for index, but got Int");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0}), gd::ones({1, 4}, gd::kFloat32));
        }) ==
        "index_copy_(): self and source expected to have the same dtype, but got (self) Double and (source) Float");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0}), gd::ones({1, 5}, gd::kFloat64));
        }) ==
        "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 4 at "
        "dimension 0 and source slice shape: 5 at dimension 0.");
  CHECK(error_of([&] {
          x.index_copy(0, i64({0, 1}), gd::ones({1, 4}, gd::kFloat64));
        }) == "index_copy_(): Number of indices (2) should be equal to source.size(dim) (1)");
  CHECK(error_of([&] {
          x.index_copy(0, i64({3}), gd::ones({1, 4}, gd::kFloat64));
        }) == "index_copy_(): index 3 is out of bounds for dimension 0 with size 3");
}

// ---- scatter_reduce ----

// scatter_reduce is a beta API in PyTorch 1.13.1 (it warns so); its values here are 1.13.1's.
TEST_CASE("scatter_reduce: every reduction, with and without self") {
  Tensor self = f64({1, 2, 3, 4}), index = i64({0, 1, 0, 1, 2, 1}), src = f64({5, 6, 7, 8, 9, 10});
  struct Row {
    const char* reduce;
    std::vector<double> with_self, without_self;
  };
  for (const Row& row : std::vector<Row>{{"sum", {13, 26, 12, 4}, {12, 24, 9, 4}},
                                         {"prod", {35, 960, 27, 4}, {35, 480, 9, 4}},
                                         {"mean", {13.0 / 3, 6.5, 6, 4}, {6, 8, 9, 4}},
                                         {"amax", {7, 10, 9, 4}, {7, 10, 9, 4}},
                                         {"amin", {1, 2, 3, 4}, {5, 6, 9, 4}}}) {
    INFO(row.reduce);
    CHECK(shape_value_mismatch(self.scatter_reduce(0, index, src, row.reduce), row.with_self, {4}) == "");
    CHECK(shape_value_mismatch(self.scatter_reduce(0, index, src, row.reduce, false), row.without_self, {4}) == "");
  }
  // Along dim 1 of a 2-D self; elements nobody scatters to keep self's value.
  Tensor index2 = i64({0, 0, 2, 1, 1, 1}, {2, 3}), src2 = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(shape_value_mismatch(gd::zeros({2, 3}, gd::kFloat64).scatter_reduce(1, index2, src2, "amax", false),
                             {2, 0, 3, 0, 6, 0}, {2, 3}) == "");
  // src larger than index: only index's part is read.
  CHECK(shape_value_mismatch(gd::zeros({2}, gd::kFloat64).scatter_reduce(0, i64({1}), f64({5, 9}), "sum"), {0, 5},
                             {2}) == "");
  // NaN propagates through amax and amin.
  CHECK(shape_value_mismatch(f64({0, 0}).scatter_reduce(0, i64({0, 0}), f64({kNaN, 1}), "amax"), {kNaN, 0}, {2}) == "");
  CHECK(shape_value_mismatch(f64({kNaN, 0}).scatter_reduce(0, i64({0}), f64({1}), "amin"), {kNaN, 0}, {2}) == "");
  // Integer means round toward minus infinity.
  CHECK(shape_value_mismatch(i64({5, 6, 7}).scatter_reduce(0, i64({0, 0, 1}), i64({1, 2, 3}), "mean"), {2, 4, 7},
                             {3}) == "");
  CHECK(shape_value_mismatch(i64({-5, 6, 7}).scatter_reduce(0, i64({0, 0, 1}), i64({1, 2, 3}), "mean"), {-1, 4, 7},
                             {3}) == "");
  CHECK(shape_value_mismatch(i64({1, 2}).scatter_reduce(0, i64({1, 1}), i64({-3, 5}), "amin", false), {1, -3}, {2}) ==
        "");
  // In place; an empty index.
  Tensor y = f64({1, 2});
  y.scatter_reduce_(0, i64({1, 1}), f64({3, 4}), "prod");
  CHECK(shape_value_mismatch(y, {1, 24}, {2}) == "");
  CHECK(value_mismatch(self.scatter_reduce(0, gd::empty({0}, gd::kInt64), src, "amax"), self) == "");
}

// PyTorch 1.13.1 gives the last two messages as they are here. The first is PyTorch 2.x's; 1.13.1
// ends it "or amin." without the name. For the next two, PyTorch (1.13.1 and 2.x alike) says
// "scatter(): Expected dtype int64 for index" and "scatter(): Expected self.dtype to be equal to
// src.dtype": these say scatter_reduce().
TEST_CASE("scatter_reduce: PyTorch's errors") {
  Tensor x = gd::zeros({3}, gd::kFloat64);
  CHECK(error_of([&] { x.scatter_reduce(0, i64({0}), f64({1}), "max"); }) ==
        "reduce argument must be either sum, prod, mean, amax or amin, got max");
  CHECK(error_of([&] { x.scatter_reduce(0, i64({0}).to(gd::kInt32), f64({1}), "sum"); }) ==
        "scatter_reduce(): Expected dtype int64 for index");
  CHECK(error_of([&] { x.scatter_reduce(0, i64({0}), f64({1}).to(gd::kFloat32), "sum"); }) ==
        "scatter_reduce(): Expected self.dtype to be equal to src.dtype");
  CHECK(error_of([&] { x.scatter_reduce(0, i64({3}), f64({1}), "amax"); }) ==
        "index 3 is out of bounds for dimension 0 with size 3");
  CHECK(error_of([&] {
          x.scatter_reduce(0, i64({0}, {1, 1}), f64({1}, {1, 1}), "sum");
        }) == "Index tensor must have the same number of dimensions as self tensor");
}

TEST_CASE("scatter_reduce backward: ties share the gradient, zeros in a product") {
  {  // amax: 5 is reached by self and two src values at target 0.
    Tensor self = f64({5, 0}).requires_grad_(), src = f64({5, 5, -1}).requires_grad_();
    auto g = gd::autograd::grad({self.scatter_reduce(0, i64({0, 0, 1}), src, "amax").sum()}, {self, src});
    CHECK(value_mismatch(g[0], f64({1.0 / 3, 1})) == "");
    CHECK(value_mismatch(g[1], f64({1.0 / 3, 1.0 / 3, 0})) == "");
  }
  {  // prod: one zero at target 0 (its gradient is the product of the others), two at target 1.
    Tensor self = f64({2, 3}).requires_grad_(), src = f64({0, 4, 0, 0}).requires_grad_();
    auto g = gd::autograd::grad({self.scatter_reduce(0, i64({0, 0, 1, 1}), src, "prod").sum()}, {self, src});
    CHECK(value_mismatch(g[0], f64({0, 0})) == "");
    CHECK(value_mismatch(g[1], f64({8, 0, 0, 0})) == "");
  }
  {  // prod with a zero in self.
    Tensor self = f64({0, 3}).requires_grad_(), src = f64({4}).requires_grad_();
    auto g = gd::autograd::grad({self.scatter_reduce(0, i64({0}), src, "prod").sum()}, {self, src});
    CHECK(value_mismatch(g[0], f64({4, 1})) == "");
    CHECK(value_mismatch(g[1], f64({0})) == "");
  }
  {  // mean without self: the scattered-to elements of self get nothing.
    Tensor self = f64({1, 2, 3}).requires_grad_(), src = f64({4, 5, 6}).requires_grad_();
    auto g = gd::autograd::grad({self.scatter_reduce(0, i64({0, 0, 2}), src, "mean", false).sum()}, {self, src});
    CHECK(value_mismatch(g[0], f64({0, 1, 0})) == "");
    CHECK(value_mismatch(g[1], f64({0.5, 0.5, 1})) == "");
  }
}

// ---- unique ----

TEST_CASE("unique: sorted values, inverse and counts") {
  auto [values, inverse, counts] = gd::_unique2(i64({3, 1, 3, 2, 1}), true, true, true);
  CHECK(shape_value_mismatch(values, {1, 2, 3}, {3}) == "");
  CHECK(inverse.dtype() == gd::kInt64);
  CHECK(shape_value_mismatch(inverse, {2, 0, 2, 1, 0}, {5}) == "");
  CHECK(shape_value_mismatch(counts, {2, 1, 2}, {3}) == "");
  // Not asked for: empty tensors; the inverse has the input's shape.
  auto [v2, i2, c2] = gd::unique(f64({3, 1, 3, 2}, {2, 2}));
  CHECK(shape_value_mismatch(v2, {1, 2, 3}, {3}) == "");
  CHECK(i2.numel() == 0);
  CHECK(c2.numel() == 0);
  auto [v3, i3] = gd::_unique(f64({3, 1, 3, 2}, {2, 2}), true, true);
  CHECK(shape_value_mismatch(i3, {2, 0, 2, 1}, {2, 2}) == "");
  // NaN is never equal to itself: each NaN is its own value, after the numbers. Not PyTorch
  // 1.13.1's: its CPU unique mishandles NaN (values {1, nan, nan, 3}, inverse {3, 0, 0, 0}, counts
  // {1, 0, 0, 1}), a known bug of that release (PyTorch issue 94106).
  auto [v4, i4, c4] = gd::_unique2(f64({3, kNaN, 1, kNaN}), true, true, true);
  CHECK(shape_value_mismatch(v4, {1, 3, kNaN, kNaN}, {4}) == "");
  CHECK(shape_value_mismatch(i4, {1, 2, 0, 3}, {4}) == "");
  CHECK(shape_value_mismatch(c4, {1, 1, 1, 1}, {4}) == "");
  // Empty, 0-dim and bool inputs.
  auto [v5, i5, c5] = gd::_unique2(gd::empty({0}, gd::kFloat64), true, true, true);
  CHECK(v5.sizes() == gd::IntArrayRef{0});
  CHECK(i5.sizes() == gd::IntArrayRef{0});
  CHECK(c5.sizes() == gd::IntArrayRef{0});
  auto [v6, i6, c6] = gd::_unique2(gd::scalar_tensor(3.0, gd::kFloat64), true, true, true);
  CHECK(shape_value_mismatch(v6, {3}, {1}) == "");
  CHECK(shape_value_mismatch(i6, {0}, {}) == "");
  CHECK(shape_value_mismatch(c6, {1}, {1}) == "");
  auto [v7, i7, c7] = gd::_unique2(tensor_of({1, 0, 1}, {}, gd::kBool), true, false, true);
  CHECK(v7.dtype() == gd::kBool);
  CHECK(shape_value_mismatch(v7, {0, 1}, {2}) == "");
  CHECK(shape_value_mismatch(c7, {1, 2}, {2}) == "");
}

TEST_CASE("unique_consecutive and unique along a dim") {
  auto [v, i, c] = gd::unique_consecutive(i64({1, 1, 2, 2, 3, 1, 1, 2}), true, true);
  CHECK(shape_value_mismatch(v, {1, 2, 3, 1, 2}, {5}) == "");
  CHECK(shape_value_mismatch(i, {0, 0, 1, 1, 2, 3, 3, 4}, {8}) == "");
  CHECK(shape_value_mismatch(c, {2, 2, 1, 2, 1}, {5}) == "");
  auto [v1, i1, c1] = gd::unique_dim(i64({1, 2, 1, 2, 0, 5}, {3, 2}), 0, true, true, true);
  CHECK(shape_value_mismatch(v1, {0, 5, 1, 2}, {2, 2}) == "");
  CHECK(shape_value_mismatch(i1, {1, 1, 0}, {3}) == "");
  CHECK(shape_value_mismatch(c1, {1, 2}, {2}) == "");
  auto [v2, i2, c2] = gd::unique(f64({1, 0, 1, 2, 5, 2}, {2, 3}), true, true, true, 1);
  CHECK(shape_value_mismatch(v2, {0, 1, 5, 2}, {2, 2}) == "");
  CHECK(shape_value_mismatch(i2, {1, 0, 1}, {3}) == "");
  CHECK(shape_value_mismatch(c2, {1, 2}, {2}) == "");
  // Lexicographic: the first column decides before the second.
  auto [v3, i3, c3] = gd::unique_dim(i64({2, 0, 1, 9, 1, 3, 2, 0}, {4, 2}), 0, true, true, true);
  CHECK(shape_value_mismatch(v3, {1, 3, 1, 9, 2, 0}, {3, 2}) == "");
  CHECK(shape_value_mismatch(i3, {2, 1, 0, 2}, {4}) == "");
  CHECK(shape_value_mismatch(c3, {1, 1, 2}, {3}) == "");
  auto [v4, i4, c4] = gd::unique_consecutive(i64({1, 2, 1, 2, 0, 5}, {3, 2}), true, true, 0);
  CHECK(shape_value_mismatch(v4, {1, 2, 0, 5}, {2, 2}) == "");
  CHECK(shape_value_mismatch(i4, {0, 0, 1}, {3}) == "");
  CHECK(shape_value_mismatch(c4, {2, 1}, {2}) == "");
  auto [v5, i5, c5] = gd::unique_dim(gd::zeros({0, 3}, gd::kFloat64), 0, true, true, true);
  CHECK(v5.sizes() == gd::IntArrayRef{0, 3});
  CHECK(i5.numel() == 0);
  CHECK(c5.numel() == 0);
}
