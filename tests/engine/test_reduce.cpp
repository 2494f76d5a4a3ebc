// Reductions: sum over outer and inner dims at once, prod, max/min/amax/amin, max(dim)/min(dim),
// argmax/argmin, var/std, norm and logsumexp. Values against PyTorch 1.13;
// gradients against PyTorch and float64 finite differences (gradcheck, gradgradcheck).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/dims.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;

namespace {

constexpr double NAN_ = std::numeric_limits<double>::quiet_NaN();
constexpr double INF = std::numeric_limits<double>::infinity();

gd::Tensor make(std::vector<double> values, std::vector<int64_t> shape, gd::ScalarType dtype = gd::kFloat64) {
  return gd::from_blob(values.data(), shape, gd::TensorOptions().dtype(gd::kFloat64)).clone().to(dtype);
}

// "" when t has `shape` and `expected` values (NaN matches NaN), else what differs.
std::string mismatch(const gd::Tensor& t, std::vector<double> expected, std::vector<int64_t> shape,
                     double tol = 1e-12) {
  if (!(t.sizes() == gd::IntArrayRef(shape)))
    return fmt::format("shape {} != {}", gd::shape_to_string(t.sizes()), gd::shape_to_string(shape));
  gd::Tensor c = t.detach().to(gd::kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  for (size_t i = 0; i < expected.size(); ++i) {
    double a = p[i], e = expected[i];
    bool same = (std::isnan(a) && std::isnan(e)) || a == e || std::abs(a - e) <= tol * std::max(1.0, std::abs(e));
    if (!same) return fmt::format("element {}: {} != {}", i, a, e);
  }
  if (static_cast<int64_t>(expected.size()) != c.numel()) return "wrong number of elements";
  return "";
}

// A: 2x3 without ties or zeros; At: the same values as a transposed (non-contiguous) view.
gd::Tensor A() { return make({1.5, -2.0, 3.0, 0.5, 4.0, -1.0}, {2, 3}); }
gd::Tensor At() { return make({1.5, 0.5, -2.0, 4.0, 3.0, -1.0}, {3, 2}).t(); }
// B: 3x4 with ties and a NaN at flat index 5.
gd::Tensor B() { return make({3, 1, 3, -1, 2, NAN_, 5, 2, -4, -4, 0, 7}, {3, 4}); }

using UnaryFn = std::function<gd::Tensor(const gd::Tensor&)>;

// gradcheck and gradgradcheck of f at x (made a leaf that requires grad).
void check_derivatives(const UnaryFn& f, gd::Tensor x) {
  x.requires_grad_();
  gd::autograd::TensorFunction fn = [f](const std::vector<gd::Tensor>& in) { return std::vector<gd::Tensor>{f(in[0])}; };
  CHECK(gd::autograd::gradcheck(fn, {x}));
  CHECK(gd::autograd::gradgradcheck(fn, {x}));
}

// Gradient of sum(f(x) * w) for w = 1, 2, 3, ... over f(x)'s elements.
gd::Tensor weighted_grad(const UnaryFn& f, gd::Tensor x) {
  x.requires_grad_();
  gd::Tensor y = f(x);
  gd::Tensor w = gd::arange(1, y.numel() + 1, 1, gd::TensorOptions().dtype(gd::kFloat64)).reshape(y.sizes());
  return gd::autograd::grad({y}, {x}, {w})[0];
}

}  // namespace

// ---------------------------------------------------------------- prod

TEST_CASE("prod values match PyTorch") {
  // python3 -c "import torch; A = torch.tensor([[1.5,-2.,3.],[.5,4.,-1.]], dtype=torch.float64); print(A.prod(), A.prod(0), ...)"
  CHECK(mismatch(A().prod(), {18.0}, {}) == "");
  CHECK(mismatch(A().prod(0), {0.75, -8.0, -3.0}, {3}) == "");
  CHECK(mismatch(A().prod(1, true), {-9.0, -2.0}, {2, 1}) == "");
  CHECK(mismatch(A().prod(-1), {-9.0, -2.0}, {2}) == "");
  CHECK(mismatch(At().prod(1), {-9.0, -2.0}, {2}) == "");
  CHECK(mismatch(gd::prod(A().to(gd::kFloat32), gd::kFloat64), {18.0}, {}) == "");
  CHECK(gd::prod(A().to(gd::kFloat32), gd::kFloat64).dtype() == gd::kFloat64);
  CHECK(mismatch(make({3.0}, {}).prod(0), {3.0}, {}) == "");           // 0-dim: itself
  CHECK(mismatch(gd::zeros({0}).prod(), {1.0}, {}) == "");             // empty product
  CHECK(mismatch(gd::zeros({2, 0}).prod(1), {1.0, 1.0}, {2}) == "");
}

TEST_CASE("prod of integers and bools is int64, wrapping like PyTorch") {
  auto ints = make({2, -3, 4, 5, 1, -2}, {2, 3}, gd::kInt32);
  // torch.tensor([[2,-3,4],[5,1,-2]], dtype=torch.int32).prod() -> tensor(240) (int64)
  CHECK(mismatch(ints.prod(), {240}, {}) == "");
  CHECK(ints.prod().dtype() == gd::kInt64);
  CHECK(mismatch(ints.prod(1), {-24, -10}, {2}) == "");
  CHECK(ints.prod(1).dtype() == gd::kInt64);
  CHECK(make({1, 1}, {2}, gd::kBool).prod().dtype() == gd::kInt64);
  CHECK(make({1, 1}, {2}, gd::kBool).prod().item<int64_t>() == 1);
  // torch.tensor([2**40, 2**40]).prod() -> tensor(0): 2^80 mod 2^64
  CHECK(make({1099511627776.0, 1099511627776.0}, {2}, gd::kInt64).prod().item<int64_t>() == 0);
  // sum of integers is int64 too (torch: tensor(7), tensor([7, -2, 2]))
  CHECK(ints.sum().dtype() == gd::kInt64);
  CHECK(mismatch(ints.sum(), {7}, {}) == "");
  CHECK(mismatch(ints.sum({0}), {7, -2, 2}, {3}) == "");
}

TEST_CASE("prod gradient at zeros matches PyTorch") {
  // python3 -c "x = torch.tensor([[2.,0.,3.],[4.,5.,-1.]], dtype=torch.float64, requires_grad=True); x.prod().backward(); print(x.grad)"
  auto one_zero = make({2, 0, 3, 4, 5, -1}, {2, 3});
  CHECK(mismatch(weighted_grad([](auto& x) { return x.prod(); }, one_zero), {0, -120, 0, 0, 0, 0}, {2, 3}) == "");
  auto two_zeros = make({2, 0, 3, 4, 0, -1}, {2, 3});
  CHECK(mismatch(weighted_grad([](auto& x) { return x.prod(); }, two_zeros), {0, 0, 0, 0, 0, 0}, {2, 3}) == "");
  // x.prod(1) with ones as the weights: rows with one zero, two zeros, none
  auto rows = make({2, 0, 3, 0, 0, -1, 1.5, 2, -2}, {3, 3});
  rows.requires_grad_();
  auto g = gd::autograd::grad({rows.prod(1)}, {rows}, {gd::ones({3}, gd::kFloat64)})[0];
  CHECK(mismatch(g, {0, 6, 0, 0, 0, 0, -4, -3, 3}, {3, 3}) == "");
}

TEST_CASE("prod derivatives (gradcheck and gradgradcheck)") {
  struct Case {
    std::string name;
    UnaryFn f;
    gd::Tensor x;
  };
  auto all = [](const gd::Tensor& x) { return x.prod(); };
  auto dim1 = [](const gd::Tensor& x) { return x.prod(1); };
  auto dim0k = [](const gd::Tensor& x) { return x.prod(0, true); };
  std::vector<Case> cases = {
      {"all", all, A()},
      {"all transposed", all, At()},
      {"dim 1", dim1, A()},
      {"dim 0 keepdim transposed", dim0k, At()},
      {"0-dim", all, make({-1.7}, {})},
      {"0-dim zero", all, make({0.0}, {})},
      {"all one zero", all, make({2, 0, 3, 4, 5, -1}, {2, 3})},
      {"all two zeros", all, make({2, 0, 3, 4, 0, -1}, {2, 3})},
      {"all three zeros", all, make({0, 0, 3, 4, 0, -1}, {2, 3})},
      {"dim 1 zeros per row", dim1, make({2, 0, 3, 0, 0, -1, 1.5, 2, -2, 0, 0, 0}, {4, 3})},
      {"dim 0 zeros transposed", dim0k, make({2, 0, 3, 0, 0, -1, 1.5, 2, -2}, {3, 3}).t()},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.f, c.x);
  }
}

// ---------------------------------------------------------------- max / min / amax / amin

TEST_CASE("max, min, amax, amin values: NaN propagates, keepdim, negative and multiple dims") {
  // python3 -c "B = torch.tensor([[3.,1.,3.,-1.],[2.,nan,5.,2.],[-4.,-4.,0.,7.]]); print(B.max(), B.amax(1), ...)"
  CHECK(mismatch(B().max(), {NAN_}, {}) == "");
  CHECK(mismatch(B().min(), {NAN_}, {}) == "");
  CHECK(mismatch(B().amax({1}), {3, NAN_, 7}, {3}) == "");
  CHECK(mismatch(B().amin({1}), {-1, NAN_, -4}, {3}) == "");
  CHECK(mismatch(B().amax({0}, true), {3, NAN_, 5, 7}, {1, 4}) == "");
  CHECK(mismatch(B().amin({-2}), {-4, NAN_, 0, -1}, {4}) == "");
  CHECK(mismatch(B().amax({0, 1}), {NAN_}, {}) == "");
  CHECK(mismatch(B().amax({-1, 0}, true), {NAN_}, {1, 1}) == "");
  CHECK(mismatch(A().max(), {4.0}, {}) == "");
  CHECK(mismatch(A().min(), {-2.0}, {}) == "");
  CHECK(mismatch(A().amax({0}), {1.5, 4.0, 3.0}, {3}) == "");
  CHECK(mismatch(At().amin({0}), {0.5, -2.0, -1.0}, {3}) == "");
  CHECK(mismatch(make({3.0}, {}).amax({0}), {3.0}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}).amax({0}), {}, {0}) == "");  // nothing to reduce into
}

TEST_CASE("max/min/amax keep integer and bool dtypes") {
  auto ints = make({2, -3, 4, 5, 1, -2}, {2, 3}, gd::kInt32);
  CHECK(ints.amax().dtype() == gd::kInt32);
  CHECK(ints.amax().item<int64_t>() == 5);
  CHECK(ints.min().item<int64_t>() == -3);
  auto bools = make({0, 1, 0, 0}, {2, 2}, gd::kBool);
  // torch: B.max() -> True, B.amin(1) -> [False, False]
  CHECK(bools.max().dtype() == gd::kBool);
  CHECK(bools.max().item<bool>());
  CHECK(mismatch(bools.amin({1}), {0, 0}, {2}) == "");
}

TEST_CASE("max/min/amax/amin gradients split evenly among ties (PyTorch's values)") {
  // python3 -c "T = torch.tensor([[3.,1.,3.],[2.,2.,2.]], dtype=torch.float64, requires_grad=True);
  //   y = T.amax(1); print(torch.autograd.grad(y, T, torch.arange(1., y.numel()+1).reshape(y.shape)))"
  auto T = [] { return make({3, 1, 3, 2, 2, 2}, {2, 3}); };
  CHECK(mismatch(weighted_grad([](auto& x) { return x.max(); }, T()), {0.5, 0, 0.5, 0, 0, 0}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return x.min(); }, T()), {0, 1, 0, 0, 0, 0}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return x.amax({1}); }, T()), {0.5, 0, 0.5, 2.0 / 3, 2.0 / 3, 2.0 / 3},
                 {2, 3}, 1e-15) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return x.amin({0}); }, T()), {0, 2, 0, 1, 0, 3}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return x.amax({0, 1}, true); }, T()), {0.5, 0, 0.5, 0, 0, 0}, {2, 3}) ==
        "");
  // max() with NaNs: the NaNs share the gradient (torch: [0, .5, 0, .5])
  CHECK(mismatch(weighted_grad([](auto& x) { return x.max(); }, make({1, NAN_, 3, NAN_}, {4})), {0, 0.5, 0, 0.5},
                 {4}) == "");
}

TEST_CASE("max/min/amax derivatives (gradcheck and gradgradcheck)") {
  struct Case {
    std::string name;
    UnaryFn f;
    gd::Tensor x;
  };
  std::vector<Case> cases = {
      {"max", [](auto& x) { return x.max(); }, A()},
      {"min transposed", [](auto& x) { return x.min(); }, At()},
      {"amax 1", [](auto& x) { return x.amax({1}); }, A()},
      {"amin -1 keepdim transposed", [](auto& x) { return x.amin({-1}, true); }, At()},
      {"amax all", [](auto& x) { return x.amax({0, 1}); }, At()},
      {"amax 0-dim", [](auto& x) { return x.amax(); }, make({0.3}, {})},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.f, c.x);
  }
}

// ---------------------------------------------------------------- max(dim) / min(dim), argmax / argmin

TEST_CASE("max(dim)/min(dim) values and int64 indices: first of ties, first NaN") {
  // python3 -c "B = ...; print(B.max(1), B.min(1), B.max(0, keepdim=True), B.min(-2))"
  auto [v1, i1] = B().max(1);
  CHECK(mismatch(v1, {3, NAN_, 7}, {3}) == "");
  CHECK(mismatch(i1, {0, 1, 3}, {3}) == "");
  CHECK(i1.dtype() == gd::kInt64);
  auto [v2, i2] = B().min(1);
  CHECK(mismatch(v2, {-1, NAN_, -4}, {3}) == "");
  CHECK(mismatch(i2, {3, 1, 0}, {3}) == "");
  auto [v3, i3] = B().max(0, true);
  CHECK(mismatch(v3, {3, NAN_, 5, 7}, {1, 4}) == "");
  CHECK(mismatch(i3, {0, 1, 1, 2}, {1, 4}) == "");
  auto [v4, i4] = gd::min(B(), -2);
  CHECK(mismatch(v4, {-4, NAN_, 0, -1}, {4}) == "");
  CHECK(mismatch(i4, {2, 1, 2, 0}, {4}) == "");
  auto [v5, i5] = At().max(0);
  CHECK(mismatch(v5, {1.5, 4, 3}, {3}) == "");
  CHECK(mismatch(i5, {0, 1, 0}, {3}) == "");
  auto [v6, i6] = make({3.0}, {}).max(-1);  // 0-dim: itself, index 0
  CHECK(mismatch(v6, {3.0}, {}) == "");
  CHECK(mismatch(i6, {0}, {}) == "");
  // int32 values keep their dtype: torch.tensor([[2,-3,4],[5,1,-2]], dtype=torch.int32).max(0)
  auto [v7, i7] = make({2, -3, 4, 5, 1, -2}, {2, 3}, gd::kInt32).max(0);
  CHECK(v7.dtype() == gd::kInt32);
  CHECK(mismatch(v7, {5, 1, 4}, {3}) == "");
  CHECK(mismatch(i7, {1, 1, 0}, {3}) == "");
  auto [v8, i8] = make({0, 1, 0, 0}, {2, 2}, gd::kBool).max(1);
  CHECK(mismatch(v8, {1, 0}, {2}) == "");
  CHECK(mismatch(i8, {1, 0}, {2}) == "");
  auto [v9, i9] = gd::zeros({2, 0}).max(0);  // a non-empty reduced dim over an empty tensor
  CHECK(mismatch(v9, {}, {0}) == "");
  CHECK(mismatch(i9, {}, {0}) == "");
}

TEST_CASE("max(dim)/min(dim) gradient reaches the returned index only") {
  // python3 -c "T = ...; y = T.max(1)[0]; print(torch.autograd.grad(y, T, torch.tensor([1., 2.])))"
  auto T = [] { return make({3, 1, 3, 2, 2, 2}, {2, 3}); };
  CHECK(mismatch(weighted_grad([](auto& x) { return std::get<0>(x.max(1)); }, T()), {1, 0, 0, 2, 0, 0}, {2, 3}) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return std::get<0>(x.min(0)); }, T()), {0, 2, 0, 1, 0, 3}, {2, 3}) == "");
  // NaN: the gradient goes to the first NaN (torch: [0, 1, 0, 0])
  CHECK(mismatch(weighted_grad([](auto& x) { return std::get<0>(x.max(0)); }, make({1, NAN_, 3, NAN_}, {4})),
                 {0, 1, 0, 0}, {4}) == "");
  struct Case {
    std::string name;
    UnaryFn f;
    gd::Tensor x;
  };
  std::vector<Case> cases = {
      {"max 1", [](auto& x) { return std::get<0>(x.max(1)); }, A()},
      {"min 0 keepdim", [](auto& x) { return std::get<0>(x.min(0, true)); }, A()},
      {"max -1 transposed", [](auto& x) { return std::get<0>(x.max(-1)); }, At()},
      {"min 0-dim", [](auto& x) { return std::get<0>(x.min(0)); }, make({0.3}, {})},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.f, c.x);
  }
  // The values come with the indices from one kernel; the nodes have PyTorch's names.
  gd::Tensor x = A().requires_grad_();
  CHECK(std::get<0>(x.max(1)).grad_fn()->name() == "MaxBackward0");
  CHECK(std::get<0>(x.min(0, true)).grad_fn()->name() == "MinBackward0");
}

TEST_CASE("argmax/argmin: first occurrence, flattened without dim, keepdim shapes") {
  // python3 -c "B = ...; print(B.argmax(), B.argmin(), B.argmax(1), B.argmin(1), B.argmax(0, keepdim=True))"
  CHECK(mismatch(B().argmax(), {5}, {}) == "");  // the NaN
  CHECK(mismatch(B().argmin(), {5}, {}) == "");
  CHECK(mismatch(B().argmax(1), {0, 1, 3}, {3}) == "");
  CHECK(mismatch(B().argmin(1), {3, 1, 0}, {3}) == "");
  CHECK(mismatch(B().argmax(0, true), {0, 1, 1, 2}, {1, 4}) == "");
  CHECK(mismatch(B().argmin(-1), {3, 1, 0}, {3}) == "");
  CHECK(mismatch(A().argmax(), {4}, {}) == "");
  CHECK(mismatch(A().argmin(), {1}, {}) == "");
  CHECK(mismatch(At().argmax(1), {2, 1}, {2}) == "");
  CHECK(mismatch(A().argmax(std::nullopt, true), {4}, {1, 1}) == "");  // torch: shape [1, 1]
  CHECK(mismatch(make({3, 1, 3, 1}, {4}).argmax(), {0}, {}) == "");
  CHECK(mismatch(make({3, 1, 3, 1}, {4}).argmin(), {1}, {}) == "");
  CHECK(mismatch(make({3.0}, {}).argmax(0), {0}, {}) == "");
  CHECK(mismatch(make({3.0}, {}).argmin(), {0}, {}) == "");
  auto ints = make({2, -3, 4, 5, 1, -2}, {2, 3}, gd::kInt32);
  CHECK(mismatch(ints.argmax(), {3}, {}) == "");
  CHECK(mismatch(ints.argmin(1), {1, 2}, {2}) == "");
  CHECK(ints.argmax().dtype() == gd::kInt64);
  CHECK_THROWS_AS(make({0, 1}, {2}, gd::kBool).argmax(), gd::Error);  // torch: "argmax_cpu" not implemented for 'Bool'
}

TEST_CASE("reducing nothing raises PyTorch's errors") {
  auto e = gd::zeros({0});
  auto e2 = gd::zeros({2, 0});
  const char* max_all = "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                        "dim with the 'dim' argument.";
  CHECK_THROWS_WITH_AS(e.max(), max_all, gd::Error);
  CHECK_THROWS_WITH_AS(e.min(), "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                "reduction dim with the 'dim' argument.",
                       gd::Error);
  CHECK_THROWS_WITH_AS(e.amax(), "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                 "reduction dim with the 'dim' argument.",
                       gd::Error);
  CHECK_THROWS_WITH_AS(e.max(0), "max(): Expected reduction dim 0 to have non-zero size.", gd::Error);
  CHECK_THROWS_WITH_AS(e2.min(1), "min(): Expected reduction dim 1 to have non-zero size.", gd::Error);
  CHECK_THROWS_WITH_AS(e2.amax({1}), "amax(): Expected reduction dim 1 to have non-zero size.", gd::Error);
  CHECK_THROWS_WITH_AS(e2.amin({0, 1}), "amin(): Expected reduction dim 1 to have non-zero size.", gd::Error);
  CHECK_THROWS_WITH_AS(e.argmax(), "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
                       gd::Error);
  CHECK_THROWS_WITH_AS(e.argmin(), "argmin(): Expected reduction dim to be specified for input.numel() == 0.",
                       gd::Error);
  CHECK_THROWS_WITH_AS(e2.argmax(1), "argmax(): Expected reduction dim 1 to have non-zero size.", gd::Error);
  CHECK(mismatch(e2.argmax(0), {}, {0}) == "");
  CHECK_THROWS_AS(A().max(2), gd::Error);          // dim out of range
  CHECK_THROWS_AS(A().amax({0, -2}), gd::Error);   // dim repeated
}

// ---------------------------------------------------------------- var / std

TEST_CASE("var and std values with correction, dims and keepdim") {
  // python3 -c "A = ...; print(A.var(), torch.var(A, None, correction=0), torch.var(A, None, correction=2), A.var(0), ...)"
  CHECK(mismatch(A().var(), {5.3}, {}) == "");
  CHECK(mismatch(A().var(std::nullopt, 0), {4.416666666666667}, {}) == "");
  CHECK(mismatch(A().var(std::nullopt, 2), {6.625}, {}) == "");
  CHECK(mismatch(A().var(std::vector<int64_t>{0}), {0.5, 18.0, 8.0}, {3}) == "");
  CHECK(mismatch(A().var(std::vector<int64_t>{1}, 0, true), {4.388888888888889, 4.388888888888889}, {2, 1}) == "");
  CHECK(mismatch(A().var(std::vector<int64_t>{-1}), {6.583333333333334, 6.583333333333334}, {2}) == "");
  CHECK(mismatch(A().var(std::vector<int64_t>{0, 1}, 1, true), {5.3}, {1, 1}) == "");
  CHECK(mismatch(A().var(std::vector<int64_t>{}), {5.3}, {}) == "");  // [] means all dims
  CHECK(mismatch(At().var(std::vector<int64_t>{1}), {6.583333333333334, 6.583333333333334}, {2}) == "");
  CHECK(mismatch(A().std(), {2.3021728866442674}, {}) == "");
  CHECK(mismatch(A().std(std::vector<int64_t>{1}, 0), {2.0949675149960894, 2.0949675149960894}, {2}) == "");
  CHECK(mismatch(A().std(std::vector<int64_t>{0}, 2), {INF, INF, INF}, {3}) == "");  // divisor max(0, 2 - 2)
  CHECK(mismatch(A().var(std::nullopt, 7), {INF}, {}) == "");
  CHECK(mismatch(A().to(gd::kFloat32).var(), {5.3}, {}, 1e-6) == "");
  CHECK(A().to(gd::kFloat32).var().dtype() == gd::kFloat32);
  CHECK(mismatch(make({3.0}, {}).var(), {NAN_}, {}) == "");  // 0/0
  CHECK(mismatch(make({3.0}, {}).var(std::nullopt, 0), {0.0}, {}) == "");
  CHECK(mismatch(gd::zeros({0}).var(), {NAN_}, {}) == "");
  CHECK_THROWS_WITH_AS(make({1, 2, 3}, {3}, gd::kInt64).var(), "std and var only support floating point and complex dtypes",
                       gd::Error);
  CHECK_THROWS_WITH_AS(make({1, 2, 3}, {3}, gd::kInt64).std(), "std and var only support floating point and complex dtypes",
                       gd::Error);
}

TEST_CASE("std gradient at zero variance is 0, as in PyTorch") {
  // python3 -c "c = torch.tensor([2.,2.,2.], dtype=torch.float64, requires_grad=True); c.std().backward(); print(c.grad)"
  CHECK(mismatch(weighted_grad([](auto& x) { return x.std(); }, make({2, 2, 2}, {3})), {0, 0, 0}, {3}) == "");
  CHECK(mismatch(weighted_grad([](auto& x) { return x.var(); }, make({2, 2, 2}, {3})), {0, 0, 0}, {3}) == "");
}

TEST_CASE("var and std derivatives (gradcheck and gradgradcheck)") {
  struct Case {
    std::string name;
    UnaryFn f;
    gd::Tensor x;
  };
  std::vector<Case> cases = {
      {"var", [](auto& x) { return x.var(); }, A()},
      {"var 0 correction 0 transposed", [](auto& x) { return x.var(std::vector<int64_t>{0}, 0); }, At()},
      {"var 1 keepdim correction 2", [](auto& x) { return x.var(std::vector<int64_t>{1}, 2, true); }, A()},
      {"std", [](auto& x) { return x.std(); }, At()},
      {"std -1 correction 0.5", [](auto& x) { return x.std(std::vector<int64_t>{-1}, 0.5); }, A()},
      {"std 0-dim correction 0", [](auto& x) { return x.std(std::nullopt, 0) + x; }, make({1.25}, {})},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    check_derivatives(c.f, c.x);
  }
}

// ---------------------------------------------------------------- norm

TEST_CASE("norm values for every kind of p") {
  // python3 -c "v = torch.tensor([3.,-4.,0.,1.], dtype=torch.float64); A = ...;
  //   for p in [2,1,inf,-inf,0,3,.5,-1,1.5]: print(v.norm(p), A.norm(p, dim=1), A.norm(p, dim=0, keepdim=True), A.norm(p))"
  struct Case {
    double p;
    std::vector<double> v_all, a_dim1, a_dim0_keep, a_all;
  };
  std::vector<Case> cases = {
      {2, {5.0990195135927845}, {3.905124837953327, 4.153311931459037}, {1.5811388300841898, 4.47213595499958, 3.1622776601683795}, {5.70087712549569}},
      {1, {8.0}, {6.5, 5.5}, {2.0, 6.0, 4.0}, {12.0}},
      {INF, {4.0}, {3.0, 4.0}, {1.5, 4.0, 3.0}, {4.0}},
      {-INF, {0.0}, {1.5, 0.5}, {0.5, 2.0, 1.0}, {0.5}},
      {0, {3.0}, {3.0, 3.0}, {2.0, 2.0, 2.0}, {6.0}},
      {3, {4.514357435474001}, {3.372998355852712, 4.023301496486735}, {1.5182944859378311, 4.160167646103808, 3.0365889718756622}, {4.695120936501775}},
      {0.5, {22.392304845413257}, {19.105721787823402, 13.742640687119284}, {3.7320508075688767, 11.65685424949238, 7.464101615137754}, {65.25595847329612}},
      {-1, {0.0}, {0.6666666666666667, 0.3076923076923077}, {0.375, 1.3333333333333333, 0.75}, {0.21052631578947367}},
      {1.5, {5.862917311846354}, {4.598693151933275, 4.439333304765371}, {1.6867526434796318, 4.89452162954295, 3.373505286959263}, {7.174043898763448}},
  };
  auto v = make({3, -4, 0, 1}, {4});
  for (auto& c : cases) {
    CAPTURE(c.p);
    CHECK(mismatch(v.norm(c.p), c.v_all, {}) == "");
    CHECK(mismatch(A().norm(c.p, {1}), c.a_dim1, {2}) == "");
    CHECK(mismatch(At().norm(c.p, {-1}), c.a_dim1, {2}) == "");
    CHECK(mismatch(A().norm(c.p, {0}, true), c.a_dim0_keep, {1, 3}) == "");
    CHECK(mismatch(gd::norm(A(), c.p), c.a_all, {}) == "");
  }
  CHECK(mismatch(A().norm(2, {0, 1}), {5.70087712549569}, {}) == "");
  CHECK(mismatch(A().norm(2, {}), {5.70087712549569}, {}) == "");
  CHECK(mismatch(A().to(gd::kFloat32).norm(), {5.70087712549569}, {}, 1e-6) == "");
  auto with_nan = make({1, NAN_, -5}, {3});  // torch: nan, nan, 3.
  CHECK(mismatch(with_nan.norm(INF), {NAN_}, {}) == "");
  CHECK(mismatch(with_nan.norm(-INF), {NAN_}, {}) == "");
  CHECK(mismatch(with_nan.norm(0), {3}, {}) == "");
  // empty: torch gives 0 for every p here
  CHECK(mismatch(gd::zeros({0}).norm(), {0}, {}) == "");
  CHECK(mismatch(gd::zeros({0}).norm(INF), {0}, {}) == "");
  CHECK(mismatch(gd::zeros({0}).norm(-INF), {0}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}).norm(INF, {1}), {0, 0}, {2}) == "");
  CHECK(mismatch(make({-3.0}, {}).norm(), {3.0}, {}) == "");
  CHECK_THROWS_WITH_AS(make({1, 2}, {2}, gd::kInt64).norm(),
                       "norm(): input dtype should be either floating point or complex. Got Long instead.", gd::Error);
}

TEST_CASE("norm gradients at zeros match PyTorch (0, not NaN)") {
  // python3 -c "z = torch.zeros(3, dtype=torch.float64, requires_grad=True); z.norm().backward(); print(z.grad)"
  CHECK(mismatch(weighted_grad([](auto& x) { return x.norm(); }, gd::zeros({3}, gd::kFloat64)), {0, 0, 0}, {3}) == "");
  // z = torch.tensor([[0.,0.],[3.,-4.]], ...); z.norm(2, dim=1).sum().backward()
  auto rows = make({0, 0, 3, -4}, {2, 2});
  rows.requires_grad_();
  auto g = gd::autograd::grad({rows.norm(2, {1}).sum()}, {rows})[0];
  CHECK(mismatch(g, {0, 0, 0.6, -0.8}, {2, 2}, 1e-15) == "");
  // torch.tensor([0., 2., -2.]).norm(p).backward() for each p
  struct Case {
    double p;
    std::vector<double> grad;
  };
  std::vector<Case> cases = {
      {1, {0, 1, -1}},
      {INF, {0, 0.5, -0.5}},
      {-INF, {0, 0, 0}},
      {3, {0, 0.6299605249474365, -0.6299605249474365}},
      {0.5, {0, 2, -2}},
      {1.5, {0, 0.7937005259840998, -0.7937005259840998}},
      {-1, {0, 0, 0}},
      {0, {0, 0, 0}},  // torch gives no gradient at all (None); the zero gradient
  };
  for (auto& c : cases) {
    CAPTURE(c.p);
    CHECK(mismatch(weighted_grad([&](auto& x) { return x.norm(c.p); }, make({0, 2, -2}, {3})), c.grad, {3}) == "");
  }
  // the second derivative of the 2-norm at the zero vector is finite (0), not NaN
  auto z = gd::zeros({3}, gd::kFloat64).requires_grad_();
  auto g1 = gd::autograd::grad({z.norm()}, {z}, {}, true, true)[0];
  auto g2 = gd::autograd::grad({g1.sum()}, {z})[0];
  CHECK(mismatch(g2, {0, 0, 0}, {3}) == "");
}

TEST_CASE("norm derivatives (gradcheck and gradgradcheck)") {
  auto smooth = make({1.5, -2.0, 3.0, 0.5, 4.0, -1.0}, {2, 3});
  for (double p : {2.0, 1.0, INF, -INF, 3.0, 0.5, -1.0, 1.5, 2.5}) {
    CAPTURE(p);
    check_derivatives([p](auto& x) { return x.norm(p); }, A());
    check_derivatives([p](auto& x) { return x.norm(p, {1}); }, At());
    check_derivatives([p](auto& x) { return x.norm(p, {0}, true); }, smooth.clone());
    check_derivatives([p](auto& x) { return x.norm(p); }, make({-0.7}, {}));
  }
  // exact zeros where the formula is smooth: p = 2 with a zero element, p > 2
  check_derivatives([](auto& x) { return x.norm(2, {1}); }, make({0, 1, -2, 3, 0, 0.5}, {2, 3}));
  check_derivatives([](auto& x) { return x.norm(3, {1}); }, make({0, 1, -2, 3, 0, 0.5}, {2, 3}));
}

// ---------------------------------------------------------------- logsumexp

TEST_CASE("logsumexp values: stable for large and infinite inputs") {
  // python3 -c "A = ...; print(A.logsumexp(1), A.logsumexp(0, keepdim=True), A.logsumexp((0,1)), A.logsumexp(-1))"
  CHECK(mismatch(A().logsumexp({1}), {3.2069069336734133, 4.036269565124779}, {2}) == "");
  CHECK(mismatch(A().logsumexp({0}, true), {1.8132616875182228, 4.00247568513773, 3.01814992791781}, {1, 3}) == "");
  CHECK(mismatch(A().logsumexp({0, 1}), {4.398358933882533}, {}) == "");
  CHECK(mismatch(A().logsumexp({-1}), {3.2069069336734133, 4.036269565124779}, {2}) == "");
  CHECK(mismatch(At().logsumexp({1}), {3.2069069336734133, 4.036269565124779}, {2}) == "");
  // torch.tensor([[1000.,1000.],[-1000.,-999.]], dtype=torch.float64).logsumexp(1)
  CHECK(mismatch(make({1000, 1000, -1000, -999}, {2, 2}).logsumexp({1}), {1000.6931471805599, -998.6867383124818},
                 {2}) == "");
  CHECK(mismatch(make({-INF, -INF, INF, 1, -INF, 2}, {3, 2}).logsumexp({1}), {-INF, INF, 2}, {3}) == "");
  CHECK(mismatch(make({1, NAN_}, {2}).logsumexp({0}), {NAN_}, {}) == "");
  CHECK(mismatch(make({0.5}, {}).logsumexp({0}), {0.5}, {}) == "");
  CHECK(mismatch(gd::zeros({0}).logsumexp({0}), {-INF}, {}) == "");
  CHECK(mismatch(gd::zeros({2, 0}).logsumexp({1}), {-INF, -INF}, {2}) == "");
  // integers compute in float32: torch.tensor([[1,2],[3,4]]).logsumexp(1)
  auto ints = make({1, 2, 3, 4}, {2, 2}, gd::kInt64).logsumexp({1});
  CHECK(ints.dtype() == gd::kFloat32);
  CHECK(mismatch(ints, {2.3132617473602295, 4.31326150894165}, {2}, 1e-7) == "");
}

TEST_CASE("logsumexp derivatives (gradcheck and gradgradcheck)") {
  check_derivatives([](auto& x) { return x.logsumexp({1}); }, A());
  check_derivatives([](auto& x) { return x.logsumexp({0}, true); }, At());
  check_derivatives([](auto& x) { return x.logsumexp({0, 1}); }, A());
  check_derivatives([](auto& x) { return x.logsumexp({0}); }, make({0.4}, {}));
  check_derivatives([](auto& x) { return x.logsumexp({1}); }, make({700, 701, -700, -702}, {2, 2}));
  // the gradient is the softmax, even with a -inf entry
  auto g = weighted_grad([](auto& x) { return x.logsumexp({0}); }, make({-INF, 0, 0}, {3}));
  CHECK(mismatch(g, {0, 0.5, 0.5}, {3}) == "");
}

TEST_CASE("large reductions (the parallel path) agree with each other") {
  // x[i][j] = sin(0.37 * (200 i + j)): no ties; each kernel checked against another op.
  auto x = gd::sin(gd::arange(0, 60000, 1, gd::TensorOptions().dtype(gd::kFloat64)) * 0.37).reshape({300, 200});
  auto [values, indices] = x.max(1);
  CHECK(gd::equal(values, x.amax({1})));
  CHECK(gd::equal(indices, x.argmax(1)));
  CHECK(gd::equal(x.gather(1, x.argmin(1, true)).squeeze(1), x.amin({1})));
  CHECK(gd::equal(std::get<0>(x.t().min(0)), x.amin({1})));
  auto positive = x * 0.001 + 1;
  CHECK(gd::allclose(positive.prod(1), gd::exp(gd::log(positive).sum({1})), 1e-12, 0));
  CHECK(gd::allclose(x.t().prod(0), x.prod(1), 1e-12, 0));
  CHECK(gd::allclose(x.norm(2, {1}), gd::sqrt((x * x).sum({1})), 1e-12, 0));
  CHECK(gd::allclose(x.norm(INF, {0}), gd::abs(x).amax({0}), 0, 0));
  CHECK(gd::allclose(x.var(std::vector<int64_t>{1}), ((x - x.mean({1}, true)).square()).sum({1}) / 199.0, 1e-12, 0));
}

TEST_CASE("sum over outer and inner dims (a bias gradient) equals the sum of its planes") {
  // [N, C, H, W] summed over {0, 2, 3}: each channel adds N runs of H * W
  // adjacent elements; also through a transposed view, whose runs are not adjacent.
  for (gd::ScalarType dtype : {gd::kFloat32, gd::kFloat64}) {
    CAPTURE(gd::dtype_name(dtype));
    const gd::Tensor x = gd::testing::sample({5, 3, 7, 9}, -1, 1, 3, dtype);
    const std::vector<double> v = gd::testing::values_of(x);
    std::vector<double> want(3, 0.0);
    for (size_t i = 0; i < v.size(); ++i) want[(i / 63) % 3] += v[i];
    const double tol = dtype == gd::kFloat32 ? 1e-5 : 1e-12;
    CHECK(gd::testing::value_mismatch(gd::testing::values_of(x.sum({0, 2, 3})), want, tol) == "");
    CHECK(gd::testing::value_mismatch(gd::testing::values_of(x.transpose(2, 3).sum({0, 2, 3})), want, tol) == "");
    CHECK(gd::testing::value_mismatch(gd::testing::values_of(x.sum({0, 2, 3}, true).flatten()), want, tol) == "");
  }
}
