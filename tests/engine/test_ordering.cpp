// Order, cumulative and shape-repeating ops: repeat, tile, repeat_interleave,
// flip, roll, sort, argsort, topk, kthvalue, median, quantile, cumsum, cumprod,
// tril/triu. Values against PyTorch 1.13 literals; derivatives against float64
// finite differences (gradcheck, gradgradcheck) here and in the op sweep
// (op_rows/ordering.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

constexpr double NAN_ = std::numeric_limits<double>::quiet_NaN();

// "" when t has `shape` and `values` (NaN matches NaN), else what differs.
std::string mismatch(const Tensor& t, const std::vector<double>& values, const std::vector<int64_t>& shape,
                     double rtol = 1e-13) {
  return gd::testing::shape_value_mismatch(t, values, shape, rtol, 1e-14);
}

Tensor T(const std::vector<double>& values, const std::vector<int64_t>& shape, gd::ScalarType dtype = gd::kFloat64) {
  return tensor_of(values, shape, dtype);
}
Tensor scalar(double value) { return gd::testing::scalar_of(value); }
Tensor I(const std::vector<double>& values, const std::vector<int64_t>& shape = {}) {
  return tensor_of(values, shape, gd::kInt64);
}

// torch.tensor([[1.5,-2.,3.],[.5,4.,-1.]], dtype=torch.float64)
Tensor A() { return T({1.5, -2, 3, 0.5, 4, -1}, {2, 3}); }
// The same values as a transposed (non-contiguous) view.
Tensor At() { return T({1.5, 0.5, -2, 4, 3, -1}, {3, 2}).t(); }
// Ties and NaNs: torch.tensor([[3.,1.,nan,2.],[1.,3.,0.,1.],[2.,2.,-1.,nan]], dtype=torch.float64)
Tensor S() { return T({3, 1, NAN_, 2, 1, 3, 0, 1, 2, 2, -1, NAN_}, {3, 4}); }
// torch.arange(12., dtype=torch.float64).reshape(3, 4)
Tensor B() { return gd::arange(0, 12, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape({3, 4}); }

using UnaryFn = std::function<Tensor(const Tensor&)>;

// Gradient of sum(f(x) * w) for w = 1, 2, 3, ... over f(x)'s elements.
Tensor weighted_grad(const UnaryFn& f, Tensor x, bool create_graph = false) {
  x = x.detach().requires_grad_();
  Tensor y = f(x);
  Tensor w = gd::arange(1, y.numel() + 1, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape(y.sizes());
  return gd::autograd::grad({y}, {x}, {w}, std::nullopt, create_graph)[0];
}

// Gradient of sum(g * g) where g is weighted_grad: exercises second derivatives.
Tensor second_order_grad(const UnaryFn& f, Tensor x) {
  x = x.detach().requires_grad_();
  Tensor y = f(x);
  Tensor w = gd::arange(1, y.numel() + 1, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape(y.sizes());
  Tensor first = gd::autograd::grad({y}, {x}, {w}, std::nullopt, true)[0];
  return gd::autograd::grad({(first * first).sum()}, {x})[0];
}

void check_derivatives(const UnaryFn& f, const Tensor& x0) {
  Tensor x = x0.detach().requires_grad_();
  gd::autograd::TensorFunction fn = [f](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; };
  CHECK(gd::autograd::gradcheck(fn, {x}));
  CHECK(gd::autograd::gradgradcheck(fn, {x}));
}

}  // namespace

// ---------------------------------------------------------------- repeat, tile, repeat_interleave

TEST_CASE("repeat and tile match PyTorch") {
  // python3 -c "import torch; A = torch.tensor([[1.5,-2.,3.],[.5,4.,-1.]], dtype=torch.float64); print(A.repeat(2,1), ...)"
  CHECK(mismatch(A().repeat({2, 1}), {1.5, -2, 3, 0.5, 4, -1, 1.5, -2, 3, 0.5, 4, -1}, {4, 3}) == "");
  CHECK(mismatch(At().repeat({2, 1}), {1.5, -2, 3, 0.5, 4, -1, 1.5, -2, 3, 0.5, 4, -1}, {4, 3}) == "");
  CHECK(mismatch(A().repeat({2, 1, 2}),
                 {1.5, -2, 3, 1.5, -2, 3, 0.5, 4, -1, 0.5, 4, -1, 1.5, -2, 3, 1.5, -2, 3, 0.5, 4, -1, 0.5, 4, -1},
                 {2, 2, 6}) == "");
  CHECK(mismatch(scalar(7).repeat({2, 3}), {7, 7, 7, 7, 7, 7}, {2, 3}) == "");
  CHECK(mismatch(scalar(7).repeat({}), {7}, {}) == "");
  CHECK(mismatch(A().tile({2}), {1.5, -2, 3, 1.5, -2, 3, 0.5, 4, -1, 0.5, 4, -1}, {2, 6}) == "");
  CHECK(mismatch(gd::tile(A(), {2, 1, 1}), {1.5, -2, 3, 0.5, 4, -1, 1.5, -2, 3, 0.5, 4, -1}, {2, 2, 3}) == "");
  CHECK(mismatch(A().repeat({0, 1}), {}, {0, 3}) == "");
  CHECK(I({1, 2}, {2}).repeat({2}).dtype() == gd::kInt64);
}

TEST_CASE("repeat, tile and repeat_interleave return new tensors") {
  Tensor x = A();
  Tensor r = x.repeat({1, 1});
  r.fill_(0);
  Tensor t = x.tile({1});
  t.fill_(0);
  Tensor i = x.repeat_interleave(1, 0);
  i.fill_(0);
  CHECK(mismatch(x, {1.5, -2, 3, 0.5, 4, -1}, {2, 3}) == "");
}

TEST_CASE("repeat_interleave with a count and with per-element counts") {
  // python3 -c "... print(A.repeat_interleave(2), A.repeat_interleave(3, -1), A.repeat_interleave(torch.tensor([1,0,2]), 1))"
  CHECK(mismatch(A().repeat_interleave(2), {1.5, 1.5, -2, -2, 3, 3, 0.5, 0.5, 4, 4, -1, -1}, {12}) == "");
  CHECK(mismatch(A().repeat_interleave(2, 0), {1.5, -2, 3, 1.5, -2, 3, 0.5, 4, -1, 0.5, 4, -1}, {4, 3}) == "");
  CHECK(mismatch(gd::repeat_interleave(At(), 3, -1),
                 {1.5, 1.5, 1.5, -2, -2, -2, 3, 3, 3, 0.5, 0.5, 0.5, 4, 4, 4, -1, -1, -1}, {2, 9}) == "");
  CHECK(mismatch(scalar(3).repeat_interleave(2), {3, 3}, {2}) == "");
  CHECK(mismatch(A().repeat_interleave(I({1, 0, 2}), 1), {1.5, 3, 3, 0.5, -1, -1}, {2, 3}) == "");
  CHECK(mismatch(A().repeat_interleave(I({2}), 0), {1.5, -2, 3, 1.5, -2, 3, 0.5, 4, -1, 0.5, 4, -1}, {4, 3}) == "");
  CHECK(mismatch(A().repeat_interleave(I({1, 2, 0, 1, 1, 0})), {1.5, -2, -2, 0.5, 4}, {5}) == "");
  CHECK(mismatch(A().repeat_interleave(tensor_of({1, 0, 2}, {3}, gd::kInt32), -1), {1.5, 3, 3, 0.5, -1, -1}, {2, 3}) ==
        "");
  CHECK(mismatch(A().repeat_interleave(I({0, 0, 0, 0, 0, 0})), {}, {0}) == "");
}

TEST_CASE("repeat, tile and repeat_interleave errors use PyTorch's messages") {
  CHECK(error_of([] { A().repeat({2}); }) ==
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  CHECK(error_of([] { T({1, 2, 3, 4, 5, 6}, {6}).repeat({-1}); }) ==
        "Trying to create tensor with negative dimension -6: [-6]");
  CHECK(error_of([] { A().repeat_interleave(-1); }) == "repeats can not be negative");
  CHECK(error_of([] { A().repeat_interleave(I({1, 2})); }) == "repeats must have the same size as input along dim");
  CHECK(error_of([] { A().repeat_interleave(I({1}, {1, 1})); }) == "repeats must be 0-dim or 1-dim tensor");
  CHECK(error_of([] { A().repeat_interleave(I({1, 1, 1, 1, 1, -1})); }) == "repeats can not be negative");
  CHECK(error_of([] { A().repeat_interleave(T({1, 1, 1, 1, 1, 1}, {6}, gd::kFloat32)); }) ==
        "\"repeat_interleave_cpu\" not implemented for 'Float'");
  CHECK(error_of([] { scalar(3).repeat_interleave(2, 0); }) == "Dimension specified as 0 but tensor has no dimensions");
  CHECK(error_of([] { A().repeat_interleave(2, 2); }) ==
        "repeat_interleave: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("repeat, tile and repeat_interleave gradients sum over the copies") {
  // torch: x = A.requires_grad_(); (x.repeat(2,1,2) * torch.arange(1., 25.).reshape(2,2,6)).sum().backward()
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.repeat({2, 1, 2}); }, A()), {34, 38, 42, 58, 62, 66},
                 {2, 3}) == "");
  // torch: A.repeat_interleave(torch.tensor([1,0,2]), 1) weighted by 1..6 -> [[1,0,5],[4,0,11]]
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.repeat_interleave(I({1, 0, 2}), 1); }, A()),
                 {1, 0, 5, 4, 0, 11}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.repeat_interleave(2); }, At()), {3, 7, 11, 15, 19, 23},
                 {2, 3}) == "");
}

// ---------------------------------------------------------------- flip, roll

TEST_CASE("flip and roll match PyTorch") {
  // python3 -c "... print(A.flip(0), A.flip(0,1), A.flip(-1)); B = torch.arange(12.).reshape(3,4); print(B.roll(1), ...)"
  CHECK(mismatch(A().flip({0}), {0.5, 4, -1, 1.5, -2, 3}, {2, 3}) == "");
  CHECK(mismatch(gd::flip(A(), {0, 1}), {-1, 4, 0.5, 3, -2, 1.5}, {2, 3}) == "");
  CHECK(mismatch(At().flip({-1}), {3, -2, 1.5, -1, 4, 0.5}, {2, 3}) == "");
  CHECK(mismatch(A().flip({}), {1.5, -2, 3, 0.5, 4, -1}, {2, 3}) == "");
  CHECK(mismatch(scalar(3).flip({0}), {3}, {}) == "");
  CHECK(mismatch(I({1, 2, 3}, {3}).flip({0}), {3, 2, 1}, {3}) == "");
  CHECK(mismatch(B().roll({1}), {11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {3, 4}) == "");
  CHECK(mismatch(B().roll({-1}, {0}), {4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3}, {3, 4}) == "");
  CHECK(mismatch(gd::roll(B(), {5, -3}, {1, 0}), {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}, {3, 4}) == "");
  CHECK(mismatch(B().t().roll({1}, {-1}), {8, 0, 4, 9, 1, 5, 10, 2, 6, 11, 3, 7}, {4, 3}) == "");
  CHECK(mismatch(B().roll({4}, {1}), gd::testing::values_of(B()), {3, 4}) == "");
  CHECK(mismatch(scalar(3).roll({1}), {3}, {}) == "");
  CHECK(mismatch(gd::zeros({0, 3}).roll({1}, {0}), {}, {0, 3}) == "");
}

TEST_CASE("flip and roll errors use PyTorch's messages") {
  CHECK(error_of([] { A().flip({0, 0}); }) == "dim 0 appears multiple times in the list of dims");
  CHECK(error_of([] { A().flip({-2, 0}); }) == "dim 0 appears multiple times in the list of dims");
  CHECK(error_of([] { A().flip({2}); }) == "flip: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK(error_of([] { B().roll({1, 2}, {0}); }) == "shifts and dimensions must align. shifts: 2, dims:1");
  CHECK(error_of([] { B().roll({1, 2}); }) == "shifts and dimensions must align. shifts: 2, dims:0");
  CHECK(error_of([] { B().roll({}); }) == "`shifts` required");
  CHECK(error_of([] { scalar(3).roll({1}, {0}); }) == "Dimension specified as 0 but tensor has no dimensions");
}

TEST_CASE("flip and roll gradients move back") {
  // The gradient of a permutation is the inverse permutation of the weights.
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.flip({0, 1}); }, A()), {6, 5, 4, 3, 2, 1}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.roll({1}, {1}); }, A()), {2, 3, 1, 5, 6, 4}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.roll({-2}); }, A()), {5, 6, 1, 2, 3, 4}, {2, 3}) == "");
}

// ---------------------------------------------------------------- sort, argsort

TEST_CASE("sort is stable and puts NaN last (first when descending), as PyTorch") {
  // python3 -c "nan = float('nan'); S = torch.tensor([[3.,1.,nan,2.],[1.,3.,0.,1.],[2.,2.,-1.,nan]]); print(S.sort(1), ...)"
  auto [v1, i1] = S().sort(1);
  CHECK(mismatch(v1, {1, 2, 3, NAN_, 0, 1, 1, 3, -1, 2, 2, NAN_}, {3, 4}) == "");
  CHECK(mismatch(i1, {1, 3, 0, 2, 2, 0, 3, 1, 2, 0, 1, 3}, {3, 4}) == "");
  CHECK(i1.dtype() == gd::kInt64);
  auto [v2, i2] = S().sort(-1, true);
  CHECK(mismatch(v2, {NAN_, 3, 2, 1, 3, 1, 1, 0, NAN_, 2, 2, -1}, {3, 4}) == "");
  CHECK(mismatch(i2, {2, 0, 3, 1, 1, 0, 3, 2, 3, 0, 1, 2}, {3, 4}) == "");
  auto [v3, i3] = gd::sort(S(), 0);
  CHECK(mismatch(v3, {1, 1, -1, 1, 2, 2, 0, 2, 3, 3, NAN_, NAN_}, {3, 4}) == "");
  CHECK(mismatch(i3, {1, 0, 2, 1, 2, 2, 1, 0, 0, 1, 0, 2}, {3, 4}) == "");
  auto [v4, i4] = S().sort(-2, true);
  CHECK(mismatch(v4, {3, 3, NAN_, NAN_, 2, 2, 0, 2, 1, 1, -1, 1}, {3, 4}) == "");
  CHECK(mismatch(i4, {0, 1, 0, 2, 2, 2, 1, 0, 1, 0, 2, 1}, {3, 4}) == "");
  // Transposed input: same as sorting the contiguous S.t().
  auto [v5, i5] = S().t().sort(1);
  CHECK(mismatch(v5, {1, 2, 3, 1, 2, 3, -1, 0, NAN_, 1, 2, NAN_}, {4, 3}) == "");
  CHECK(mismatch(i5, {1, 2, 0, 0, 2, 1, 2, 1, 0, 1, 0, 2}, {4, 3}) == "");
  CHECK(mismatch(gd::argsort(S(), -1, true), {2, 0, 3, 1, 1, 0, 3, 2, 3, 0, 1, 2}, {3, 4}) == "");
  CHECK(mismatch(S().argsort(0), {1, 0, 2, 1, 2, 2, 1, 0, 0, 1, 0, 2}, {3, 4}) == "");
}

TEST_CASE("sort of integers, bools, 0-dim and empty tensors") {
  // torch.tensor([3,1,2], dtype=torch.uint8).sort(descending=True) -> [3,2,1], [0,2,1]
  auto [v, i] = tensor_of({3, 1, 2}, {3}, gd::kUInt8).sort(0, true);
  CHECK(v.dtype() == gd::kUInt8);
  CHECK(mismatch(v, {3, 2, 1}, {3}) == "");
  CHECK(mismatch(i, {0, 2, 1}, {3}) == "");
  // torch.tensor([True,False,True]).sort() -> [False,True,True], [1,0,2]
  auto [bv, bi] = tensor_of({1, 0, 1}, {3}, gd::kBool).sort();
  CHECK(mismatch(bv, {0, 1, 1}, {3}) == "");
  CHECK(mismatch(bi, {1, 0, 2}, {3}) == "");
  auto [sv, si] = scalar(3).sort();
  CHECK(mismatch(sv, {3}, {}) == "");
  CHECK(mismatch(si, {0}, {}) == "");
  auto [ev, ei] = gd::zeros({2, 0}).sort(1);
  CHECK(mismatch(ev, {}, {2, 0}) == "");
  CHECK(error_of([] { S().sort(2); }) == "sort: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("sort gradient follows the permutation") {
  // torch: x = torch.tensor([3.,1.,2.,5.,4.], requires_grad=True); (x.sort(descending=True)[0] * torch.arange(1.,6.)).sum().backward() -> [3,5,4,1,2]
  auto sorted_desc = [](const Tensor& x) { return std::get<0>(x.sort(0, true)); };
  CHECK(mismatch(weighted_grad(sorted_desc, T({3, 1, 2, 5, 4}, {5})), {3, 5, 4, 1, 2}, {5}) == "");
}

// ---------------------------------------------------------------- topk, kthvalue

TEST_CASE("topk: largest and smallest, NaN as the largest, ties in stable order") {
  // torch: S.topk(2) -> values [[nan,3],[3,1],[nan,2]]; S.topk(2, largest=False) -> [[1,2],[0,1],[-1,2]]
  auto [v1, i1] = S().topk(2);
  CHECK(mismatch(v1, {NAN_, 3, 3, 1, NAN_, 2}, {3, 2}) == "");
  // PyTorch leaves tie indices unspecified (it gives 3 for the tied 1 in row 1); ours are the stable ones.
  CHECK(mismatch(i1, {2, 0, 1, 0, 3, 0}, {3, 2}) == "");
  auto [v2, i2] = gd::topk(S(), 2, -1, false);
  CHECK(mismatch(v2, {1, 2, 0, 1, -1, 2}, {3, 2}) == "");
  CHECK(mismatch(i2, {1, 3, 2, 0, 2, 0}, {3, 2}) == "");
  // torch: S.topk(1, 0) -> values [[3,3,nan,nan]], indices [[0,1,0,2]]
  auto [v3, i3] = S().topk(1, 0);
  CHECK(mismatch(v3, {3, 3, NAN_, NAN_}, {1, 4}) == "");
  CHECK(mismatch(i3, {0, 1, 0, 2}, {1, 4}) == "");
  // Same as the first k of a stable sort, for every k.
  for (int64_t k = 0; k <= 4; ++k) {
    CAPTURE(k);
    auto [sv, si] = S().sort(1, true);
    auto [tv, ti] = S().topk(k, 1);
    CHECK(mismatch(tv, gd::testing::values_of(sv.narrow(1, 0, k)), {3, k}) == "");
    CHECK(mismatch(ti, gd::testing::values_of(si.narrow(1, 0, k)), {3, k}) == "");
  }
  auto [sv, si] = scalar(3).topk(1);
  CHECK(mismatch(sv, {3}, {}) == "");
  CHECK(mismatch(si, {0}, {}) == "");
  CHECK(mismatch(std::get<0>(I({4, 9, 1}, {3}).topk(2)), {9, 4}, {2}) == "");
}

TEST_CASE("kthvalue: k-th smallest with NaN as the largest, keepdim") {
  // torch: S.kthvalue(2) -> values [2,1,2]; S.kthvalue(3, 0, True) -> values [[3,3,nan,nan]], indices [[0,1,0,2]]
  auto [v1, i1] = S().kthvalue(2);
  CHECK(mismatch(v1, {2, 1, 2}, {3}) == "");
  // PyTorch gives [3, 3, 1]: its tie indices are unspecified; ours are the stable ones.
  CHECK(mismatch(i1, {3, 0, 0}, {3}) == "");
  auto [v2, i2] = gd::kthvalue(S(), 3, 0, true);
  CHECK(mismatch(v2, {3, 3, NAN_, NAN_}, {1, 4}) == "");
  CHECK(mismatch(i2, {0, 1, 0, 2}, {1, 4}) == "");
  // torch.tensor([[1.,nan,3.,nan],[4.,2.,2.,1.]]).kthvalue(4, 1) -> [nan, 4], [3, 0]; kthvalue(1, 1) -> [1, 1], [0, 3]
  Tensor z = T({1, NAN_, 3, NAN_, 4, 2, 2, 1}, {2, 4});
  CHECK(mismatch(std::get<0>(z.kthvalue(4, 1)), {NAN_, 4}, {2}) == "");
  CHECK(mismatch(std::get<1>(z.kthvalue(4, 1)), {3, 0}, {2}) == "");
  CHECK(mismatch(std::get<1>(z.kthvalue(1, 1)), {0, 3}, {2}) == "");
  CHECK(mismatch(std::get<0>(At().kthvalue(1, 0)), {0.5, -2, -1}, {3}) == "");
  CHECK(mismatch(std::get<0>(scalar(3).kthvalue(1)), {3}, {}) == "");
}

TEST_CASE("topk and kthvalue errors use PyTorch's messages") {
  CHECK(error_of([] { S().topk(5); }) == "selected index k out of range");
  CHECK(error_of([] { S().topk(-1); }) == "selected index k out of range");
  CHECK(error_of([] { scalar(3).topk(2); }) == "selected index k out of range");
  CHECK(error_of([] { S().kthvalue(5); }) == "kthvalue(): selected number k out of range for dimension 1");
  CHECK(error_of([] { S().kthvalue(0, 0); }) == "kthvalue(): selected number k out of range for dimension 0");
  CHECK(error_of([] { gd::zeros({3, 0}).kthvalue(1, 1); }) ==
        "kthvalue(): Expected reduction dim 1 to have non-zero size.");
  CHECK(error_of([] { tensor_of({1, 0}, {2}, gd::kBool).topk(1); }) == "topk: not implemented for dtype bool");
}

TEST_CASE("topk and kthvalue gradients reach the selected elements") {
  auto top2 = [](const Tensor& x) { return std::get<0>(x.topk(2, 1)); };
  CHECK(mismatch(weighted_grad(top2, A()), {2, 0, 1, 4, 3, 0}, {2, 3}) == "");
  auto kth = [](const Tensor& x) { return std::get<0>(x.kthvalue(2, 0, true)); };
  CHECK(mismatch(weighted_grad(kth, At()), {1, 0, 3, 0, 2, 0}, {2, 3}) == "");
}

// ---------------------------------------------------------------- median

TEST_CASE("median is the lower median, NaN when a NaN is present, with PyTorch's indices") {
  // torch: S.median() -> nan; S.median(1) -> [nan,1,nan], [2,0,3]; S.median(0) -> [2,2,nan,nan], [2,2,0,2]
  CHECK(mismatch(S().median(), {NAN_}, {}) == "");
  auto [v1, i1] = S().median(1);
  CHECK(mismatch(v1, {NAN_, 1, NAN_}, {3}) == "");
  CHECK(mismatch(i1, {2, 0, 3}, {3}) == "");
  auto [v2, i2] = gd::median(S(), 0);
  CHECK(mismatch(v2, {2, 2, NAN_, NAN_}, {4}) == "");
  CHECK(mismatch(i2, {2, 2, 0, 2}, {4}) == "");
  // torch: M = torch.tensor([[2.,1.,2.,3.,1.,2.],[5.,4.,4.,4.,5.,0.]]); M.median(1) -> [2,4], [0,2]; M.median() -> 2
  Tensor M = T({2, 1, 2, 3, 1, 2, 5, 4, 4, 4, 5, 0}, {2, 6});
  auto [v3, i3] = M.median(1, true);
  CHECK(mismatch(v3, {2, 4}, {2, 1}) == "");
  CHECK(mismatch(i3, {0, 2}, {2, 1}) == "");
  CHECK(mismatch(M.median(), {2}, {}) == "");
  CHECK(mismatch(gd::median(At()), {0.5}, {}) == "");
  CHECK(mismatch(I({3, 1, 2, 2}, {4}).median(), {2}, {}) == "");
  CHECK(mismatch(scalar(3).median(), {3}, {}) == "");
  CHECK(mismatch(gd::zeros({0}, gd::kFloat64).median(), {NAN_}, {}) == "");
  CHECK(mismatch(std::get<0>(gd::zeros({0, 3}).median(1)), {}, {0}) == "");
  CHECK(error_of([] { gd::zeros({3, 0}).median(1); }) == "median(): Expected reduction dim 1 to have non-zero size.");
}

TEST_CASE("median() gradient is split among the elements equal to it, as in PyTorch") {
  // torch: x = torch.tensor([1.,2.,2.,3.], requires_grad=True); x.median().backward() -> [0, .5, .5, 0]
  auto all = [](const Tensor& x) { return x.median(); };
  CHECK(mismatch(weighted_grad(all, T({1, 2, 2, 3}, {4})), {0, 0.5, 0.5, 0}, {4}) == "");
  // torch: x = torch.tensor([1.,nan,2.,nan]) -> [0, .5, 0, .5]
  CHECK(mismatch(weighted_grad(all, T({1, NAN_, 2, NAN_}, {4})), {0, 0.5, 0, 0.5}, {4}) == "");
  auto dim = [](const Tensor& x) { return std::get<0>(x.median(1)); };
  CHECK(mismatch(weighted_grad(dim, T({2, 1, 2, 3, 1, 2, 5, 4, 4, 4, 5, 0}, {2, 6})), {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
                 {2, 6}) == "");
}

// ---------------------------------------------------------------- quantile

TEST_CASE("quantile matches PyTorch for every interpolation") {
  // python3 -c "Q = torch.tensor([[0.5,-1.,3.,2.,7.],[4.,4.,-2.,1.,0.]], dtype=torch.float64);
  //   q = torch.tensor([0.,0.25,0.375,0.5,0.625,1.], dtype=torch.float64); print(Q.quantile(0.4, interpolation=m), Q.quantile(q, dim=1, interpolation=m))"
  Tensor Q = T({0.5, -1, 3, 2, 7, 4, 4, -2, 1, 0}, {2, 5});
  Tensor q = T({0, 0.25, 0.375, 0.5, 0.625, 1}, {6});
  struct Case {
    const char* mode;
    double all;
    std::vector<double> by_row;
  };
  std::vector<Case> cases = {
      {"linear", 0.8, {-1, -2, 0.5, 0, 1.25, 0.5, 2, 1, 2.5, 2.5, 7, 4}},
      {"lower", 0.5, {-1, -2, 0.5, 0, 0.5, 0, 2, 1, 2, 1, 7, 4}},
      {"higher", 1.0, {-1, -2, 0.5, 0, 2, 1, 2, 1, 3, 4, 7, 4}},
      {"midpoint", 0.75, {-1, -2, 0.5, 0, 1.25, 0.5, 2, 1, 2.5, 2.5, 7, 4}},
      {"nearest", 1.0, {-1, -2, 0.5, 0, 2, 1, 2, 1, 2, 1, 7, 4}},  // rank 1.5 -> 2, 2.5 -> 2: half to even
  };
  for (const auto& c : cases) {
    CAPTURE(c.mode);
    CHECK(mismatch(Q.quantile(0.4, std::nullopt, false, c.mode), {c.all}, {}) == "");
    CHECK(mismatch(Q.quantile(q, 1, false, c.mode), c.by_row, {6, 2}) == "");
  }
  // torch: Q.quantile(0.3, dim=0, keepdim=True); Q.quantile(torch.tensor([0.1,0.9]), keepdim=True)
  CHECK(mismatch(Q.quantile(0.3, 0, true), {1.55, 0.49999999999999994, -0.5, 1.3, 2.1}, {1, 5}) == "");
  CHECK(mismatch(Q.t().quantile(0.3, -1, true), {1.55, 0.49999999999999994, -0.5, 1.3, 2.1}, {5, 1}) == "");
  CHECK(mismatch(Q.quantile(T({0.1, 0.9}, {2}), std::nullopt, true), {-1.1, 4.299999999999999}, {2, 1, 1}) == "");
  CHECK(mismatch(Q.quantile(scalar(0.5), 1), {2, 1}, {2}) == "");  // a 0-dim q drops the q dim
  CHECK(mismatch(gd::quantile(scalar(3), 0.3), {3}, {}) == "");
  CHECK(mismatch(gd::quantile(scalar(3), 0.3, 0, true), {3}, {}) == "");
  // A line holding NaN has NaN quantiles: torch: S.quantile(0.5, dim=1) -> [nan, 1, nan]
  CHECK(mismatch(S().quantile(0.5, 1), {NAN_, 1, NAN_}, {3}) == "");
  // float32 computes in float32: torch: Q.float().quantile(torch.tensor([0.1,0.7]), dim=1)
  Tensor r = Q.to(gd::kFloat32).quantile(T({0.1, 0.7}, {2}, gd::kFloat32), 1);
  CHECK(r.dtype() == gd::kFloat32);
  CHECK(mismatch(r, {-0.3999999761581421, -1.2000000476837158, 2.799999952316284, 3.3999998569488525}, {2, 2}) == "");
}

TEST_CASE("quantile errors use PyTorch's messages") {
  Tensor Q = T({0.5, -1, 3, 2}, {4});
  CHECK(error_of([&] { Q.quantile(1.5); }) == "quantile() q must be in the range [0, 1] but got 1.5");
  CHECK(error_of([&] { Q.quantile(-0.1); }) == "quantile() q must be in the range [0, 1] but got -0.1");
  CHECK(error_of([&] { Q.quantile(T({0.5, 1.2}, {2})); }) == "quantile() q values must be in the range [0, 1]");
  CHECK(error_of([&] { Q.quantile(0.5, std::nullopt, false, "foo"); }) ==
        "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo");
  CHECK(error_of([&] { I({1, 2}, {2}).quantile(0.5); }) == "quantile() input tensor must be either float or double dtype");
  CHECK(error_of([&] { Q.quantile(T({0.5}, {1, 1})); }) == "quantile() q must be a scalar or 1D tensor");
  CHECK(error_of([&] { Q.quantile(T({0.5}, {1}, gd::kFloat32)); }) ==
        "quantile() q tensor must be same dtype as the input tensor");
  CHECK(error_of([&] { gd::zeros({0}, gd::kFloat64).quantile(0.5); }) == "quantile() input tensor must be non-empty");
}

TEST_CASE("quantile gradient interpolates between the neighbours") {
  // torch: x = Q.requires_grad_(); (x.quantile(torch.tensor([0.3,0.8]), dim=1) * torch.tensor([[1.,2.],[3.,4.]])).sum().backward()
  Tensor Q = T({0.5, -1, 3, 2, 7, 4, 4, -2, 1, 0}, {2, 5});
  auto f = [](const Tensor& x) { return x.quantile(T({0.3, 0.8}, {2}), 1); };
  CHECK(mismatch(weighted_grad(f, Q), {0.8, 0, 2.4, 0.2, 0.6, 3.2, 0.8, 0, 0.4, 1.6}, {2, 5}, 1e-12) == "");
}

// ---------------------------------------------------------------- cumsum, cumprod

TEST_CASE("cumsum and cumprod match PyTorch") {
  // torch: B.cumsum(1), B.cumsum(0), (B/4+0.5).cumprod(1)
  CHECK(mismatch(B().cumsum(1), {0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38}, {3, 4}) == "");
  CHECK(mismatch(gd::cumsum(B(), -2), {0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21}, {3, 4}) == "");
  CHECK(mismatch(B().t().cumsum(0), {0, 4, 8, 1, 9, 17, 3, 15, 27, 6, 22, 38}, {4, 3}) == "");
  CHECK(mismatch((B() / 4 + 0.5).cumprod(1), {0.5, 0.375, 0.375, 0.46875, 1.5, 2.625, 5.25, 11.8125, 2.5, 6.875, 20.625,
                                             67.03125},
                 {3, 4}) == "");
  CHECK(mismatch(scalar(2).cumsum(0), {2}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}).cumprod(1), {}, {2, 0}) == "");
  // Integers and bools accumulate into int64: torch.tensor([True,True,False]).cumsum(0) -> [1,2,2] (int64)
  CHECK(tensor_of({1, 1, 0}, {3}, gd::kBool).cumsum(0).dtype() == gd::kInt64);
  CHECK(mismatch(tensor_of({1, 1, 0}, {3}, gd::kBool).cumsum(0), {1, 2, 2}, {3}) == "");
  CHECK(tensor_of({1, 2, 3}, {3}, gd::kUInt8).cumprod(0).dtype() == gd::kInt64);
  CHECK(mismatch(tensor_of({1, 2, 3}, {3}, gd::kInt32).cumprod(0), {1, 2, 6}, {3}) == "");
  // float32 accumulates in double, as PyTorch's CPU kernel:
  // torch.tensor([1e8,1.,-1e8,1.]).cumsum(0) -> [1e8, 1e8, 1, 2] (float accumulation would end 0, 1)
  CHECK(mismatch(T({1e8, 1, -1e8, 1}, {4}, gd::kFloat32).cumsum(0), {1e8, 1e8, 1, 2}, {4}) == "");
  CHECK(error_of([] { B().cumsum(2); }) == "cumsum: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("cumprod gradient with zeros matches PyTorch, to second order") {
  // torch: x = torch.tensor([2.,0.,3.,-1.,0.,5.], requires_grad=True); (x.cumprod(0) * torch.arange(1.,7.)).sum().backward()
  auto along0 = [](const Tensor& x) { return x.cumprod(0); };
  auto along1 = [](const Tensor& x) { return x.cumprod(1); };
  Tensor two_zeros = T({2, 0, 3, -1, 0, 5}, {6});
  Tensor one_zero = T({2, -1.5, 3, 0.5, 0, 3}, {2, 3});
  CHECK(mismatch(weighted_grad(along0, two_zeros), {1, -2, 0, 0, 0, 0}, {6}) == "");
  CHECK(mismatch(weighted_grad(along1, one_zero), {-15.5, 22, -9, 4, 11.5, 0}, {2, 3}) == "");
  // g = grad(sum(w * cumprod), x, create_graph=True); (g * g).sum().backward()
  CHECK(mismatch(second_order_grad(along0, two_zeros), {4, -2, 8, -96, 840, 0}, {6}) == "");
  CHECK(mismatch(second_order_grad(along1, one_zero), {565, -449, 403.5, 529, 184, 69}, {2, 3}) == "");
}

TEST_CASE("cumsum and cumprod derivatives, with zeros (gradcheck and gradgradcheck)") {
  struct Case {
    std::string name;
    UnaryFn f;
    Tensor x;
  };
  auto cp0 = [](const Tensor& x) { return x.cumprod(0); };
  auto cp1 = [](const Tensor& x) { return x.cumprod(-1); };
  std::vector<Case> cases = {
      {"cumsum", [](const Tensor& x) { return x.cumsum(1); }, At()},
      {"cumprod no zeros", cp1, At()},
      {"cumprod one zero", cp0, T({2, 0, 3, -1, 0.5}, {5})},
      {"cumprod zero first", cp0, T({0, 2, 3, -1}, {4})},
      {"cumprod zero last", cp0, T({2, 3, -1, 0}, {4})},
      {"cumprod two zeros", cp0, T({2, 0, 3, -1, 0, 5}, {6})},
      {"cumprod three zeros", cp0, T({0, 2, 0, 1.5, 0, 3}, {6})},
      {"cumprod all zeros", cp0, T({0, 0, 0}, {3})},
      {"cumprod zeros per row", cp1, T({2, 0, 3, 0, 0, -1, 1.5, 2, -2, 0, 1, 0}, {4, 3})},
      {"cumprod zeros transposed", cp0, T({2, 0, 3, 0, 0, -1, 1.5, 2, -2}, {3, 3}).t()},
      {"cumprod 0-dim zero", cp0, scalar(0)},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.f, c.x);
  }
}

// ---------------------------------------------------------------- tril, triu

TEST_CASE("tril and triu: diagonal offsets, batches, non-square matrices") {
  // torch: T = torch.arange(1., 25.).reshape(2,3,4); T.tril(), T.triu(1), T.tril(-1), T.triu(-2)
  Tensor X = gd::arange(1, 25, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape({2, 3, 4});
  CHECK(mismatch(X.tril(), {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0, 13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0}, {2, 3, 4}) ==
        "");
  CHECK(mismatch(gd::triu(X, 1), {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12, 0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24},
                 {2, 3, 4}) == "");
  CHECK(mismatch(X.tril(-1), {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0}, {2, 3, 4}) ==
        "");
  CHECK(mismatch(X.triu(-2), gd::testing::values_of(X), {2, 3, 4}) == "");
  CHECK(mismatch(X.tril(-5), std::vector<double>(24, 0.0), {2, 3, 4}) == "");
  // torch.arange(1., 9.).reshape(4,2).tril(-1) -> [[0,0],[3,0],[5,6],[7,8]]
  Tensor tall = gd::arange(1, 9, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape({4, 2});
  CHECK(mismatch(gd::tril(tall, -1), {0, 0, 3, 0, 5, 6, 7, 8}, {4, 2}) == "");
  CHECK(mismatch(tall.t().triu(), {1, 3, 5, 7, 0, 4, 6, 8}, {2, 4}) == "");
  // Integer and bool tensors keep their dtype: torch.ones(2,2,dtype=torch.bool).triu(1) -> [[F,T],[F,F]]
  Tensor ints = I({1, 2, 3, 4}, {2, 2}).tril();
  CHECK(ints.dtype() == gd::kInt64);
  CHECK(mismatch(ints, {1, 0, 3, 4}, {2, 2}) == "");
  CHECK(mismatch(tensor_of({1, 1, 1, 1}, {2, 2}, gd::kBool).triu(1), {0, 1, 0, 0}, {2, 2}) == "");
  CHECK(error_of([] { T({1, 2}, {2}).tril(); }) == "tril: input tensor must have at least 2 dimensions");
  CHECK(error_of([] { scalar(1).triu(); }) == "triu: input tensor must have at least 2 dimensions");
}

TEST_CASE("tril and triu gradients keep the triangle") {
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.triu(); }, A()), {1, 2, 3, 0, 5, 6}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](const Tensor& x) { return x.tril(1); }, At()), {1, 2, 0, 4, 5, 6}, {2, 3}) == "");
}

// ---------------------------------------------------------------- the op sweep

TEST_CASE("the ordering and softmax ops are in the gradcheck sweep") {
  std::vector<std::string> names;
  for (const auto& op : gd::testing::differentiable_ops()) names.push_back(op.name);
  for (const char* name : {"repeat", "tile", "repeat_interleave dim", "flip", "roll dims", "sort", "topk", "kthvalue",
                           "median", "median dim", "quantile", "cumsum", "cumprod", "tril", "triu", "softmax",
                           "log_softmax"}) {
    CAPTURE(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}
