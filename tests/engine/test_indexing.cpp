// Indexing along a dim: gather, scatter_add and masked_fill. Values and error
// messages against PyTorch 1.13; gradients against PyTorch and float64 finite
// differences (gradcheck, gradgradcheck).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/dims.h"
#include "gradiens.h"

namespace gd = gradiens;

namespace {

gd::Tensor make(std::vector<double> values, std::vector<int64_t> shape, gd::ScalarType dtype = gd::kFloat64) {
  return gd::from_blob(values.data(), shape, gd::TensorOptions().dtype(gd::kFloat64)).clone().to(dtype);
}
gd::Tensor indices(std::vector<double> values, std::vector<int64_t> shape) { return make(values, shape, gd::kInt64); }

// "" when t has `shape` and exactly the `expected` values, else what differs.
std::string mismatch(const gd::Tensor& t, std::vector<double> expected, std::vector<int64_t> shape) {
  if (!(t.sizes() == gd::IntArrayRef(shape)))
    return fmt::format("shape {} != {}", gd::shape_to_string(t.sizes()), gd::shape_to_string(shape));
  gd::Tensor c = t.detach().to(gd::kFloat64).contiguous();
  if (static_cast<int64_t>(expected.size()) != c.numel()) return "wrong number of elements";
  const double* p = c.data_ptr<double>();
  for (size_t i = 0; i < expected.size(); ++i)
    if (p[i] != expected[i]) return fmt::format("element {}: {} != {}", i, p[i], expected[i]);
  return "";
}

// X = [[1, 2, 3], [4, 5, 6]]; Xt holds the same values as a transposed (non-contiguous) view.
gd::Tensor X() { return make({1, 2, 3, 4, 5, 6}, {2, 3}); }
gd::Tensor Xt() { return make({1, 4, 2, 5, 3, 6}, {3, 2}).t(); }
gd::Tensor I1() { return indices({2, 0, 2, 1, 1, 1, 0, 0}, {2, 4}); }  // larger than X along dim 1, with repeats
gd::Tensor Src() { return make({10, 20, 30, 40, 50, 60, 70, 80}, {2, 4}); }

using Fn = gd::autograd::TensorFunction;

void check_derivatives(const Fn& fn, const std::vector<gd::Tensor>& inputs) {
  CHECK(gd::autograd::gradcheck(fn, inputs));
  CHECK(gd::autograd::gradgradcheck(fn, inputs));
}

}  // namespace

TEST_CASE("gather values match PyTorch") {
  // python3 -c "X = torch.tensor([[1.,2.,3.],[4.,5.,6.]]); i1 = torch.tensor([[2,0,2,1],[1,1,0,0]]); print(X.gather(1, i1), ...)"
  CHECK(mismatch(X().gather(1, I1()), {3, 1, 3, 2, 5, 5, 4, 4}, {2, 4}) == "");
  CHECK(mismatch(Xt().gather(1, I1()), {3, 1, 3, 2, 5, 5, 4, 4}, {2, 4}) == "");
  CHECK(mismatch(X().gather(1, indices({2, 1, 0, 1, 2, 0, 1, 0}, {4, 2}).t()), {3, 1, 3, 2, 5, 5, 4, 4}, {2, 4}) == "");
  CHECK(mismatch(gd::gather(X(), 0, indices({1, 0, 1, 0, 0, 1, 1, 1, 0}, {3, 3})), {4, 2, 6, 1, 2, 6, 4, 5, 3}, {3, 3}) ==
        "");
  CHECK(mismatch(X().gather(-1, indices({1, 2}, {2, 1})), {2, 6}, {2, 1}) == "");  // smaller than X: fine
  // X.t().gather(0, torch.tensor([[1, 2], [0, 0]]))
  CHECK(mismatch(X().t().gather(0, indices({1, 2, 0, 0}, {2, 2})), {2, 6, 1, 4}, {2, 2}) == "");
  CHECK(mismatch(make({7, 8, 9, 10}, {2, 2}, gd::kInt64).gather(1, indices({1, 1, 0, 1}, {2, 2})), {8, 8, 9, 10}, {2, 2}) ==
        "");
  CHECK(make({7, 8, 9, 10}, {2, 2}, gd::kInt32).gather(1, indices({1, 1, 0, 1}, {2, 2})).dtype() == gd::kInt32);
  // 0-dim acts as one element: torch.tensor(5.).gather(0, torch.tensor([0, 0])) -> [5., 5.]
  CHECK(mismatch(make({5}, {}).gather(0, indices({0}, {})), {5}, {}) == "");
  CHECK(mismatch(make({5}, {}).gather(0, indices({0, 0}, {2})), {5, 5}, {2}) == "");
  CHECK(mismatch(make({4, 5}, {2}).gather(0, indices({1}, {})), {5}, {}) == "");
  // an empty index needs no shape match: X.gather(1, torch.zeros(3, 0, dtype=torch.long))
  CHECK(mismatch(X().gather(1, gd::zeros({3, 0}, gd::kInt64)), {}, {3, 0}) == "");
}

TEST_CASE("gather errors match PyTorch") {
  CHECK_THROWS_WITH_AS(X().gather(1, indices({0, 2, 1, 0}, {2, 2}).to(gd::kInt32)),
                       "gather(): Expected dtype int64 for index", gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(1, indices({0, 2}, {2})),
                       "Index tensor must have the same number of dimensions as input tensor", gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(1, indices({0, 3, 1, 0}, {2, 2})), "index 3 is out of bounds for dimension 1 with size 3",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(1, indices({0, -1, 1, 0}, {2, 2})),
                       "index -1 is out of bounds for dimension 1 with size 3", gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(0, indices({0, 2, 1, 0, 1, 1}, {3, 2})),
                       "index 2 is out of bounds for dimension 0 with size 2", gd::Error);
  CHECK_THROWS_WITH_AS(make({5}, {}).gather(0, indices({1}, {})), "index 1 is out of bounds for dimension 0 with size 1",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(1, indices({0, 2, 1, 0, 0, 0}, {3, 2})),
                       "Size does not match at dimension 0 expected index [3, 2] to be smaller than self [2, 3] apart "
                       "from dimension 1",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().gather(0, indices({0, 1, 1, 1}, {1, 4})),
                       "Size does not match at dimension 1 expected index [1, 4] to be smaller than self [2, 3] apart "
                       "from dimension 0",
                       gd::Error);
  CHECK_THROWS_AS(X().gather(2, I1()), gd::Error);  // dim out of range
}

TEST_CASE("scatter_add values match PyTorch (repeated indices accumulate)") {
  // python3 -c "X = ...; src = torch.tensor([[10.,20.,30.,40.],[50.,60.,70.,80.]]); print(X.scatter_add(1, i1, src), ...)"
  CHECK(mismatch(X().scatter_add(1, I1(), Src()), {21, 42, 43, 154, 115, 6}, {2, 3}) == "");
  CHECK(mismatch(Xt().scatter_add(1, I1(), Src()), {21, 42, 43, 154, 115, 6}, {2, 3}) == "");
  CHECK(mismatch(gd::scatter_add(X(), 0, indices({1, 0, 1, 1, 1, 1}, {2, 3}), Src().narrow(1, 0, 3)),
                 {1, 22, 3, 64, 65, 106}, {2, 3}) == "");
  // src larger than index: only the indexed part is used
  CHECK(mismatch(X().scatter_add(1, indices({2, 0}, {2, 1}), Src()), {1, 2, 13, 54, 5, 6}, {2, 3}) == "");
  // X.t().scatter_add(0, torch.tensor([[2, 2], [0, 1]]), src.t())
  CHECK(mismatch(X().t().scatter_add(0, indices({2, 2, 0, 1}, {2, 2}), Src().t()), {21, 4, 2, 65, 13, 56}, {3, 2}) == "");
  CHECK(mismatch(make({1, 2, 3, 4}, {2, 2}, gd::kInt64)
                     .scatter_add(1, indices({0, 0, 1, 0}, {2, 2}), make({5, 6, 7, 8}, {2, 2}, gd::kInt64)),
                 {12, 2, 11, 11}, {2, 2}) == "");
  // torch.tensor(5.).scatter_add(0, torch.tensor([0, 0]), torch.tensor([2., 3.])) -> 10.
  CHECK(mismatch(make({5}, {}).scatter_add(0, indices({0, 0}, {2}), make({2, 3}, {2})), {10}, {}) == "");
  CHECK(mismatch(make({5}, {}).scatter_add(0, indices({0}, {}), make({2}, {})), {7}, {}) == "");
  CHECK(mismatch(X().scatter_add(1, gd::zeros({0}, gd::kInt64), gd::ones({2, 2}, gd::kFloat64)), {1, 2, 3, 4, 5, 6},
                 {2, 3}) == "");
  CHECK(mismatch(X().scatter_add(1, indices({2, 1, 0, 1, 2, 0, 1, 0}, {4, 2}).t(), Src()), {21, 42, 43, 154, 115, 6},
                 {2, 3}) == "");
  auto x = X();
  x.scatter_add(1, I1(), Src());
  CHECK(mismatch(x, {1, 2, 3, 4, 5, 6}, {2, 3}) == "");  // out of place
}

TEST_CASE("scatter_add errors match PyTorch") {
  CHECK_THROWS_WITH_AS(X().scatter_add(1, I1().to(gd::kInt32), Src()), "scatter(): Expected dtype int64 for index",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, I1(), Src().to(gd::kFloat32)),
                       "scatter(): Expected self.dtype to be equal to src.dtype", gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, indices({0, 2}, {2}), Src()),
                       "Index tensor must have the same number of dimensions as self tensor", gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, indices({0, 2}, {1, 2}), gd::ones({1, 2, 1}, gd::kFloat64)),
                       "Index tensor must have the same number of dimensions as src tensor", gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, indices({0, 2, 1, 0}, {2, 2}), gd::ones({2, 1}, gd::kFloat64)),
                       "Expected index [2, 2] to be smaller than self [2, 3] apart from dimension 1 and to be smaller "
                       "size than src [2, 1]",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, indices({0, 2, 1, 0, 0, 0}, {3, 2}), gd::ones({3, 2}, gd::kFloat64)),
                       "Expected index [3, 2] to be smaller than self [2, 3] apart from dimension 1 and to be smaller "
                       "size than src [3, 2]",
                       gd::Error);
  CHECK_THROWS_WITH_AS(X().scatter_add(1, indices({0, 3, 1, 0}, {2, 2}), X()),
                       "index 3 is out of bounds for dimension 1 with size 3", gd::Error);
}

TEST_CASE("masked_fill values and errors match PyTorch") {
  // python3 -c "X = ...; print(X.masked_fill(torch.tensor([True, False, True]), -1.5), ...)"
  auto row_mask = make({1, 0, 1}, {3}, gd::kBool);
  CHECK(mismatch(X().masked_fill(row_mask, -1.5), {-1.5, 2, -1.5, -1.5, 5, -1.5}, {2, 3}) == "");
  CHECK(mismatch(Xt().masked_fill(row_mask, -1.5), {-1.5, 2, -1.5, -1.5, 5, -1.5}, {2, 3}) == "");
  // the result broadcasts with the mask: torch.zeros(3).masked_fill(torch.tensor([[True], [False]]), 9.)
  CHECK(mismatch(gd::masked_fill(gd::zeros({3}, gd::kFloat64), make({1, 0}, {2, 1}, gd::kBool), 9), {9, 9, 9, 0, 0, 0},
                 {2, 3}) == "");
  // the value takes x's dtype: torch.arange(3).masked_fill(torch.tensor([True, False, True]), 9.7) -> [9, 1, 9]
  auto ints = gd::arange(3).masked_fill(row_mask, 9.7);
  CHECK(ints.dtype() == gd::kInt64);
  CHECK(mismatch(ints, {9, 1, 9}, {3}) == "");
  CHECK(mismatch(make({1}, {}).masked_fill(make({1}, {}, gd::kBool), 9), {9}, {}) == "");
  CHECK_THROWS_WITH_AS(X().masked_fill(make({1, 0, 1}, {3}, gd::kInt64), 9),
                       "masked_fill_ only supports boolean masks, but got mask with dtype Long", gd::Error);
  CHECK_THROWS_WITH_AS(X().masked_fill(make({1, 0}, {2}, gd::kBool), 9),
                       "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
                       gd::Error);
}

TEST_CASE("gather, scatter_add and masked_fill gradients match PyTorch") {
  // python3 -c "x = X.clone().requires_grad_(); w = torch.arange(1., 9.).reshape(2, 4);
  //   print(torch.autograd.grad(x.gather(1, i1), x, w))"
  auto w = gd::arange(1, 9, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape({2, 4});
  auto x = X().requires_grad_();
  CHECK(mismatch(gd::autograd::grad({x.gather(1, I1())}, {x}, {w})[0], {2, 4, 4, 15, 11, 0}, {2, 3}) == "");
  // y = x.scatter_add(1, i1, s); torch.autograd.grad(y, (x, s), [[1.,2.,3.],[4.,5.,6.]])
  auto s = Src().requires_grad_();
  auto gs = gd::autograd::grad({x.scatter_add(1, I1(), s)}, {x, s}, {X()});
  CHECK(mismatch(gs[0], {1, 2, 3, 4, 5, 6}, {2, 3}) == "");
  CHECK(mismatch(gs[1], {3, 1, 3, 2, 5, 5, 4, 4}, {2, 4}) == "");
  // src larger than index: the unused part gets 0 (PyTorch 1.13 raises a shape error instead)
  auto g_big = gd::autograd::grad({x.scatter_add(1, indices({2, 0}, {2, 1}), s)}, {s}, {X()})[0];
  CHECK(mismatch(g_big, {3, 0, 0, 0, 4, 0, 0, 0}, {2, 4}) == "");
  // torch.autograd.grad(x.masked_fill(torch.tensor([True, False, True]), 0.), x, X)
  CHECK(mismatch(gd::autograd::grad({x.masked_fill(make({1, 0, 1}, {3}, gd::kBool), 0)}, {x}, {X()})[0],
                 {0, 2, 0, 0, 5, 0}, {2, 3}) == "");
}

TEST_CASE("gather, scatter_add and masked_fill derivatives (gradcheck and gradgradcheck)") {
  struct Case {
    std::string name;
    Fn fn;
    std::vector<gd::Tensor> inputs;
  };
  auto leaf = [](gd::Tensor t) { return t.requires_grad_(); };
  Fn gather1 = [](const std::vector<gd::Tensor>& in) { return std::vector<gd::Tensor>{in[0].gather(1, I1())}; };
  Fn gather0 = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].gather(0, indices({1, 0, 1, 0, 0, 1, 1, 1, 0}, {3, 3}))};
  };
  Fn gather_scalar = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].gather(0, indices({0, 0, 0}, {3})) * in[0]};
  };
  // squared so that the second derivative is not trivially zero
  Fn scatter1 = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].scatter_add(1, I1(), in[1]).square()};
  };
  Fn scatter_small_index = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].scatter_add(1, indices({2, 0}, {2, 1}), in[1] * in[1])};
  };
  Fn scatter_scalar = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].scatter_add(0, indices({0, 0}, {2}), in[1]).square()};
  };
  Fn masked = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{in[0].masked_fill(make({1, 0, 0, 1, 0, 1}, {2, 3}, gd::kBool), 2.5).square()};
  };
  Fn masked_broadcast = [](const std::vector<gd::Tensor>& in) {
    return std::vector<gd::Tensor>{(in[0].masked_fill(make({1, 0}, {2, 1}, gd::kBool), -1) * in[0]).sum({0})};
  };
  std::vector<Case> cases = {
      {"gather dim 1", gather1, {leaf(X())}},
      {"gather dim 1 transposed", gather1, {leaf(Xt())}},
      {"gather dim 0", gather0, {leaf(X())}},
      {"gather 0-dim", gather_scalar, {leaf(make({0.7}, {}))}},
      {"scatter_add", scatter1, {leaf(X()), leaf(Src())}},
      {"scatter_add transposed", scatter1, {leaf(Xt()), leaf(make({10, 50, 20, 60, 30, 70, 40, 80}, {4, 2}).t())}},
      {"scatter_add src larger than index", scatter_small_index, {leaf(X()), leaf(Src())}},
      {"scatter_add 0-dim", scatter_scalar, {leaf(make({0.5}, {})), leaf(make({2, 3}, {2}))}},
      {"masked_fill", masked, {leaf(X())}},
      {"masked_fill transposed", masked, {leaf(Xt())}},
      {"masked_fill broadcast mask", masked_broadcast, {leaf(make({0.5, -1, 2}, {3}))}},
      {"masked_fill 0-dim", masked, {leaf(make({0.25}, {}))}},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.fn, c.inputs);
  }
}

TEST_CASE("large gather and scatter_add (the parallel path) agree with each other") {
  // x[i][j] = sin(0.37 * (200 i + j)); gathering every column in reverse order and
  // scattering it back must rebuild x exactly.
  auto x = gd::sin(gd::arange(0, 60000, 1, gd::TensorOptions().dtype(gd::kFloat64)) * 0.37).reshape({300, 200});
  auto reversed = (199 - gd::arange(200)).reshape({1, 200}).expand({300, 200}).contiguous();
  auto g = x.gather(1, reversed);
  for (int64_t j : {0, 1, 77, 199}) CHECK(gd::equal(g.select(1, j), x.select(1, 199 - j)));
  CHECK(gd::equal(gd::zeros_like(x).scatter_add(1, reversed, g), x));
  CHECK(gd::equal(x.t().gather(0, reversed.t()), g.t()));
}
