// The autograd tape and engine (engine/autograd): graph recording, backward and
// grad(), retained and freed graphs, hooks, higher derivatives (tanh''', the
// u_xx of a PINN-style MLP), broadcast and dtype reduction of gradients, and
// very long chains.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/allocator.h"
#include "engine/autograd/node.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {
Tensor leaf(const std::vector<double>& values, const std::vector<int64_t>& sizes = {}) {
  return tensor_of(values, sizes).requires_grad_();
}
}  // namespace

TEST_CASE("requires_grad propagates and is_leaf tells leaves from results") {
  Tensor x = leaf({1, 2, 3});
  Tensor c = tensor_of({4, 5, 6});
  CHECK(x.requires_grad());
  CHECK(x.is_leaf());
  CHECK(x.grad_fn() == nullptr);
  CHECK_FALSE(c.requires_grad());
  CHECK(c.is_leaf());
  Tensor y = x * c;
  CHECK(y.requires_grad());
  CHECK_FALSE(y.is_leaf());
  CHECK(y.grad_fn()->name() == "MulBackward0");
  Tensor z = c * c + 1;
  CHECK_FALSE(z.requires_grad());
  CHECK(z.is_leaf());
  // Non-differentiable results never require grad.
  CHECK_FALSE((x > 1).requires_grad());
  Tensor as_int = x.to(gd::kInt64);
  CHECK_FALSE(as_int.requires_grad());
  CHECK(values_of(as_int) == std::vector<double>{1, 2, 3});
  CHECK_FALSE(gd::sign(x).is_leaf());
  // Factories can make leaves that require grad.
  Tensor w = gd::zeros({2}, gd::TensorOptions().dtype(gd::kFloat64).requires_grad(true));
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  // requires_grad_(false) only on leaves; only floating tensors may require grad.
  CHECK(error_of([&] { y.requires_grad_(false); }) ==
        "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
        "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  CHECK(error_of([] { gd::arange(3).requires_grad_(); }) ==
        "Only Tensors of floating point and complex dtype can require gradients (got int64)");
  x.requires_grad_(false);
  CHECK_FALSE((x * c).requires_grad());
}

TEST_CASE("gradients accumulate across backward calls") {
  Tensor x = leaf({1, 2, 3});
  CHECK_FALSE(x.grad().defined());
  (x * x).sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{2, 4, 6});
  // A second graph adds into the same .grad.
  (x * 3).sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{5, 7, 9});
  // grad() shares the gradient's storage: zero_() clears it in place.
  x.grad().zero_();
  CHECK(values_of(x.grad()) == std::vector<double>{0, 0, 0});
  (x * 2).sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{2, 2, 2});
  // set_grad replaces it; an undefined tensor removes it (set_to_none).
  x.set_grad(Tensor());
  CHECK_FALSE(x.grad().defined());
  CHECK(error_of([&] { x.set_grad(gd::zeros({2}, gd::kFloat64)); }) ==
        "assigned grad has data of a different size: [2] vs [3]");
}

TEST_CASE("backward(gradient) on non-scalar outputs") {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = x * x;
  y.backward(tensor_of({1, 0.5, -1, 2}, {2, 2}));
  // d(x^2)/dx * g = 2 x g
  CHECK(values_of(x.grad()) == std::vector<double>{2, 2, -6, 16});
  CHECK(error_of([&] { (x * 2).backward(tensor_of({1, 2})); }) ==
        "Mismatch in shape: grad_output[0] has a shape of [2] and output[0] has a shape of [2, 2].");
  // A single-element non-0-dim output needs no gradient argument.
  Tensor s = leaf({3});
  (s * s).backward();
  CHECK(values_of(s.grad()) == std::vector<double>{6});
}

TEST_CASE("retain_graph keeps saved tensors for a second backward") {
  Tensor x = leaf({0.5, -1});
  Tensor y = gd::tanh(x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  double t0 = std::tanh(0.5), t1 = std::tanh(-1.0);
  CHECK(value_mismatch(values_of(x.grad()), {2 * (1 - t0 * t0), 2 * (1 - t1 * t1)}) == "");
  // The second call did not retain: a third one finds the saved output freed.
  CHECK(error_of([&] { y.backward(); }).find("Trying to backward through the graph a second time") == 0);
  // Ops without saved tensors can be run again (as in PyTorch).
  Tensor z = (x * 2.0 + 1.0).sum();
  z.backward();
  z.backward();
}

TEST_CASE("autograd::grad: grad_outputs, allow_unused, create_graph") {
  Tensor x = leaf({1, 2, 3});
  Tensor w = leaf({0.5, 0.5, 0.5});
  Tensor unused = leaf({7});
  Tensor y = x * x * w;
  auto g = gd::autograd::grad({y}, {x, w}, {tensor_of({1, 2, 3})});
  CHECK(values_of(g[0]) == std::vector<double>{1, 4, 9});  // 2 x w * go
  CHECK(values_of(g[1]) == std::vector<double>{1, 8, 27});  // x^2 * go
  // grad() returns gradients instead of accumulating them.
  CHECK_FALSE(x.grad().defined());
  CHECK_FALSE(g[0].requires_grad());
  CHECK(error_of([&] { gd::autograd::grad({(x * w).sum()}, {x, unused}); }) ==
        "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this "
        "is the desired behavior.");
  auto partial = gd::autograd::grad({(x * w).sum()}, {x, unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  CHECK(partial[0].defined());
  CHECK_FALSE(partial[1].defined());
  CHECK(error_of([&] { gd::autograd::grad({(x * w).sum()}, {tensor_of({1})}); }) ==
        "One of the differentiated Tensors does not require grad");
  // create_graph: the gradient is itself differentiable. d/dx sum(x^3) = 3x^2; d/dx sum(3x^2) = 6x.
  Tensor cube = (x * x * x).sum();
  Tensor d1 = gd::autograd::grad({cube}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  CHECK(d1.requires_grad());
  CHECK(values_of(d1) == std::vector<double>{3, 12, 27});
  Tensor d2 = gd::autograd::grad({d1.sum()}, {x})[0];
  CHECK(values_of(d2) == std::vector<double>{6, 12, 18});
  // Several outputs: their gradients add.
  auto both = gd::autograd::grad({(x * 2).sum(), (x * x).sum()}, {x});
  CHECK(values_of(both[0]) == std::vector<double>{4, 6, 8});
  // An intermediate as input: d sum(h^2) / dh = 2h, and nothing reaches the leaves.
  Tensor h = x * 3;
  CHECK(values_of(gd::autograd::grad({(h * h).sum()}, {h})[0]) == std::vector<double>{6, 12, 18});
  CHECK_FALSE(x.grad().defined());
  // An output with respect to itself is the seed.
  CHECK(values_of(gd::autograd::grad({h}, {h}, {tensor_of({1, 2, 3})})[0]) == std::vector<double>{1, 2, 3});
}

// Note [Unneeded outputs]: grad() with respect to x skips the gradients of the
// other leaves (a Linear's weight and bias) in every node it runs, so nothing is
// sent to them (their hooks stay silent) and, under create_graph, the returned
// gradient's graph holds no such branches; the values, and the derivatives of
// the result with respect to the weights, are unchanged.
TEST_CASE("autograd::grad computes only the gradients that lead to its inputs") {
  Tensor x = sample({6, 3}, -1, 1, 61).requires_grad_();
  Tensor w = sample({4, 3}, -1, 1, 62).requires_grad_(), b = sample({4}, -1, 1, 63).requires_grad_();
  int weight_hook_calls = 0, bias_hook_calls = 0;
  w.register_hook([&](const Tensor&) { ++weight_hook_calls; });
  b.register_hook([&](const Tensor&) { ++bias_hook_calls; });
  Tensor y = gd::tanh(x.matmul(w.t()) + b);
  Tensor g = gd::autograd::grad({y}, {x}, {gd::ones_like(y)}, true, /*create_graph=*/true)[0];
  CHECK(weight_hook_calls == 0);
  CHECK(bias_hook_calls == 0);
  // The closed form: dy/dx summed over outputs = (1 - y^2) W.
  Tensor want = (1 - y.detach() * y.detach()).matmul(w.detach());
  CHECK(value_mismatch(g, want, 1e-14, 1e-15) == "");
  // The whole backward still reaches every leaf.
  (g * g).sum().backward();
  CHECK(weight_hook_calls == 1);
  CHECK(bias_hook_calls == 1);
  CHECK(w.grad().defined());
  CHECK(b.grad().defined());
  // Second order with respect to the weights, through the pruned graph, against gradcheck.
  auto second = [&](const std::vector<Tensor>& p) {
    Tensor xx = x.detach().requires_grad_();
    Tensor yy = gd::tanh(xx.matmul(p[0].t()) + p[1]);
    Tensor gx = gd::autograd::grad({yy}, {xx}, {gd::ones_like(yy)}, true, true)[0];
    return std::vector<Tensor>{(gx * gx).sum()};
  };
  CHECK(gd::autograd::gradcheck(second, {w.detach().requires_grad_(), b.detach().requires_grad_()}));
}

TEST_CASE("autograd::backward with inputs accumulates only into those leaves") {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  gd::autograd::backward({(a * b).sum()}, {}, std::nullopt, false, {a});
  CHECK(values_of(a.grad()) == std::vector<double>{3, 4});
  CHECK_FALSE(b.grad().defined());
}

TEST_CASE("NoGradGuard and AutoGradMode") {
  Tensor x = leaf({1, 2});
  CHECK(gd::GradMode::is_enabled());
  {
    gd::NoGradGuard guard;
    CHECK_FALSE(gd::GradMode::is_enabled());
    Tensor y = x * 2;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    {
      gd::AutoGradMode enable(true);
      CHECK((x * 2).requires_grad());
    }
    CHECK_FALSE(gd::GradMode::is_enabled());
    // In-place on a leaf that requires grad is allowed without recording (optimizer steps).
    x.sub_(tensor_of({0.5, 0.5}));
  }
  CHECK(gd::GradMode::is_enabled());
  CHECK(values_of(x) == std::vector<double>{0.5, 1.5});
  CHECK(x._version() == 1);
  CHECK(x.is_leaf());
  CHECK((x * 2).requires_grad());
}

TEST_CASE("detach and detach_") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 3;
  Tensor d = y.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.data_ptr() == y.data_ptr());
  // Gradient stops at the detached value: d(d * x)/dx = d.
  (d * x).sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{3, 6});
  Tensor z = x * 2;
  z.detach_();
  CHECK_FALSE(z.requires_grad());
  CHECK(z.is_leaf());
  CHECK(z.grad_fn() == nullptr);
  CHECK(values_of(z) == std::vector<double>{2, 4});
}

TEST_CASE("retain_grad keeps the gradient of a non-leaf") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  Tensor z = x * 3;
  y.retain_grad();
  CHECK(y.retains_grad());
  CHECK_FALSE(z.retains_grad());
  (y * y + z).sum().backward();
  CHECK(values_of(y.grad()) == std::vector<double>{4, 8});  // 2y
  CHECK_FALSE(z.grad().defined());
  CHECK(values_of(x.grad()) == std::vector<double>{11, 19});  // d(4x^2 + 3x)/dx = 8x + 3
  // On a leaf retain_grad is a no-op; on a tensor without grad it is an error.
  x.retain_grad();
  CHECK(error_of([] { tensor_of({1}).retain_grad(); }) == "can't retain_grad on Tensor that has requires_grad=False");
}

TEST_CASE("hooks on leaves and non-leaves") {
  SUBCASE("observing and modifying hooks on a leaf, in registration order") {
    Tensor x = leaf({1, 2});
    Tensor seen;
    x.register_hook([&](const Tensor& g) { seen = g.clone(); });
    unsigned doubling = x.register_hook([](const Tensor& g) { return g * 2; });
    Tensor after;
    x.register_hook([&](const Tensor& g) { after = g.clone(); });
    (x * 3).sum().backward();
    CHECK(values_of(seen) == std::vector<double>{3, 3});
    CHECK(values_of(after) == std::vector<double>{6, 6});
    CHECK(values_of(x.grad()) == std::vector<double>{6, 6});
    x.remove_hook(doubling);
    x.grad().zero_();
    (x * 3).sum().backward();
    CHECK(values_of(x.grad()) == std::vector<double>{3, 3});
  }
  SUBCASE("a modifying hook on a non-leaf changes what flows upstream") {
    Tensor x = leaf({1, 2});
    Tensor y = x * 2;
    y.register_hook([](const Tensor& g) { return g * 10; });
    (y * y).sum().backward();
    CHECK(values_of(x.grad()) == std::vector<double>{80, 160});  // 2 * (2y * 10)
  }
  SUBCASE("a hook sees the total gradient of a tensor used twice") {
    Tensor x = leaf({1, 2});
    Tensor y = x * 2;
    std::vector<Tensor> calls;
    y.register_hook([&](const Tensor& g) { calls.push_back(g.clone()); });
    (y * 3 + y * y).sum().backward();
    REQUIRE(calls.size() == 1);
    CHECK(values_of(calls[0]) == std::vector<double>{7, 11});  // 3 + 2y
  }
  SUBCASE("hooks also apply to autograd::grad") {
    Tensor x = leaf({1, 2});
    x.register_hook([](const Tensor& g) { return g + 1; });
    CHECK(values_of(gd::autograd::grad({(x * 2).sum()}, {x})[0]) == std::vector<double>{3, 3});
  }
  SUBCASE("removed hooks on non-leaves do not run") {
    Tensor x = leaf({1, 2});
    Tensor y = x * 1.0;
    int count = 0;
    unsigned h = y.register_hook([&](const Tensor&) { ++count; });
    y.remove_hook(h);
    y.sum().backward();
    CHECK(count == 0);
    CHECK(error_of([] { tensor_of({1}).register_hook([](const Tensor&) {}); }) ==
          "cannot register a hook on a tensor that doesn't require gradient");
  }
}

TEST_CASE("third derivative of tanh matches its closed form") {
  std::vector<double> points = {-2.0, -0.7, 0.0, 0.3, 1.1, 2.5};
  Tensor x = leaf(points);
  Tensor y = gd::tanh(x).sum();
  Tensor d1 = gd::autograd::grad({y}, {x}, {}, std::nullopt, true)[0];
  Tensor d2 = gd::autograd::grad({d1.sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor d3 = gd::autograd::grad({d2.sum()}, {x})[0];
  std::vector<double> want1, want2, want3;
  for (double p : points) {
    double t = std::tanh(p);
    want1.push_back(1 - t * t);
    want2.push_back(-2 * t * (1 - t * t));
    want3.push_back((1 - t * t) * (6 * t * t - 2));
  }
  CHECK(value_mismatch(values_of(d1), want1, 1e-14, 1e-15) == "");
  CHECK(value_mismatch(values_of(d2), want2, 1e-14, 1e-15) == "");
  CHECK(value_mismatch(values_of(d3), want3, 1e-13, 1e-15) == "");
  // The fourth derivative, by gradcheck of the third.
  auto third = [](const std::vector<Tensor>& in) {
    Tensor a = gd::autograd::grad({gd::tanh(in[0]).sum()}, {in[0]}, {}, std::nullopt, true)[0];
    Tensor b = gd::autograd::grad({a.sum()}, {in[0]}, {}, std::nullopt, true)[0];
    return std::vector<Tensor>{gd::autograd::grad({b.sum()}, {in[0]}, {}, std::nullopt, true)[0]};
  };
  CHECK(gd::autograd::gradcheck(third, {leaf(points)}));
}

namespace {

// u(x) = sum_j v_j tanh(w_j x + b_j) + c over a batch x of shape (N, 1), with
// products written as broadcast multiplies and sums.
struct OneLayer {
  Tensor w, b, v, c;
  Tensor operator()(const Tensor& x) const { return (gd::tanh(x * w + b) * v).sum({1}, true) + c; }
};

// Two tanh layers through mm: (N, 1) -> (N, H) -> (N, H) -> (N, 1).
struct TwoLayer {
  Tensor w1, b1, w2, b2, w3, b3;
  Tensor operator()(const Tensor& x) const {
    Tensor h1 = gd::tanh(gd::mm(x, w1) + b1);
    Tensor h2 = gd::tanh(gd::mm(h1, w2) + b2);
    return gd::mm(h2, w3) + b3;
  }
};

// u_x by autograd (create_graph so that it can be differentiated again).
template <class Net>
Tensor u_x(const Net& net, const Tensor& x) {
  Tensor u = net(x);
  return gd::autograd::grad({u}, {x}, {gd::ones_like(u)}, std::nullopt, true)[0];
}

}  // namespace

TEST_CASE("u_xx of tanh MLPs: nested grad(create_graph) against central differences of u_x") {
  const int64_t n = 7, hidden = 5;
  Tensor x = sample({n, 1}, -1.5, 1.5, 41).requires_grad_();
  OneLayer one{sample({1, hidden}, -1, 1, 42), sample({1, hidden}, -0.5, 0.5, 43), sample({1, hidden}, -1, 1, 44),
               sample({1}, -1, 1, 45)};
  TwoLayer two{sample({1, hidden}, -1, 1, 46), sample({hidden}, -0.5, 0.5, 47), sample({hidden, hidden}, -0.8, 0.8, 48),
               sample({hidden}, -0.5, 0.5, 49), sample({hidden, 1}, -1, 1, 50), sample({1}, -1, 1, 51)};
  const double h = 1e-5;
  auto check = [&](auto& net) {
    Tensor ux = u_x(net, x);
    Tensor uxx = gd::autograd::grad({ux}, {x}, {gd::ones_like(ux)}, std::nullopt, true)[0];
    CHECK(uxx.sizes() == x.sizes());
    CHECK(uxx.requires_grad());  // create_graph: a PINN loss on u_xx can be trained
    Tensor xp = (x.detach() + h).requires_grad_(), xm = (x.detach() - h).requires_grad_();
    Tensor central = (u_x(net, xp).detach() - u_x(net, xm).detach()) / (2 * h);
    CHECK(value_mismatch(uxx, central, 1e-6, 1e-8) == "");
    return std::pair{values_of(ux), values_of(uxx)};
  };
  auto [ux1, uxx1] = check(one);
  // The one-layer net in closed form: u_x = sum v w (1 - t^2), u_xx = sum v w^2 (-2 t (1 - t^2)).
  std::vector<double> xs = values_of(x), w = values_of(one.w), b = values_of(one.b), v = values_of(one.v);
  std::vector<double> want_ux, want_uxx;
  for (int64_t i = 0; i < n; ++i) {
    double a = 0, s = 0;
    for (int64_t j = 0; j < hidden; ++j) {
      double t = std::tanh(w[j] * xs[i] + b[j]);
      a += v[j] * w[j] * (1 - t * t);
      s += v[j] * w[j] * w[j] * (-2 * t * (1 - t * t));
    }
    want_ux.push_back(a);
    want_uxx.push_back(s);
  }
  CHECK(value_mismatch(ux1, want_ux, 1e-13, 1e-15) == "");
  CHECK(value_mismatch(uxx1, want_uxx, 1e-13, 1e-15) == "");
  check(two);
  // A PINN-style loss on u_xx trains the weights: its gradient matches gradcheck.
  auto loss = [&](const std::vector<Tensor>& p) {
    OneLayer net{p[0], p[1], p[2], p[3]};
    Tensor xx = x.detach().requires_grad_();
    Tensor ux = u_x(net, xx);
    Tensor uxx = gd::autograd::grad({ux}, {xx}, {gd::ones_like(ux)}, std::nullopt, true)[0];
    return std::vector<Tensor>{(uxx * uxx).mean()};
  };
  CHECK(gd::autograd::gradcheck(loss, {one.w.requires_grad_(), one.b.requires_grad_(), one.v.requires_grad_(),
                                      one.c.requires_grad_()}));
}

TEST_CASE("the engine sums a gradient back to a broadcast input's shape") {
  Tensor a = leaf({1, 2, 3}, {3, 1});
  Tensor b = leaf({10, 20, 30, 40}, {1, 4});
  (a * b).sum().backward();
  CHECK(a.grad().sizes() == gd::IntArrayRef({3, 1}));
  CHECK(b.grad().sizes() == gd::IntArrayRef({1, 4}));
  CHECK(values_of(a.grad()) == std::vector<double>{100, 100, 100});  // sum of b
  CHECK(values_of(b.grad()) == std::vector<double>{6, 6, 6, 6});     // sum of a
  // (3, 1) + (1, 4): each input element reaches 4 (resp. 3) outputs.
  Tensor p = leaf({1, 2, 3}, {3, 1}), q = leaf({1, 2, 3, 4}, {1, 4});
  (p + q).backward(gd::ones({3, 4}, gd::kFloat64));
  CHECK(values_of(p.grad()) == std::vector<double>{4, 4, 4});
  CHECK(values_of(q.grad()) == std::vector<double>{3, 3, 3, 3});
  // Leading dims and a 0-dim operand.
  Tensor vec = leaf({1, 2, 3, 4});
  Tensor m = gd::ones({2, 3, 4}, gd::kFloat64);
  Tensor s_leaf = gd::scalar_tensor(2.0, gd::kFloat64).requires_grad_();
  (m * vec * s_leaf).sum().backward();
  CHECK(vec.grad().sizes() == gd::IntArrayRef({4}));
  CHECK(values_of(vec.grad()) == std::vector<double>{12, 12, 12, 12});
  CHECK(s_leaf.grad().dim() == 0);
  CHECK(values_of(s_leaf.grad()) == std::vector<double>{60});
  // autograd::grad reduces the same way.
  auto g = gd::autograd::grad({(p * q).sum()}, {p, q});
  CHECK(values_of(g[0]) == std::vector<double>{10, 10, 10});
  CHECK(values_of(g[1]) == std::vector<double>{6, 6, 6, 6});
}

TEST_CASE("gradients are cast to each input's dtype") {
  // float32 data times a 0-dim float64 that requires grad: the product is
  // float32, the gradient of the scalar comes back as float64.
  Tensor data = tensor_of({1, 2, 3}, {}, gd::kFloat32);
  Tensor scale = gd::scalar_tensor(2.0, gd::kFloat64).requires_grad_();
  Tensor y = data * scale;
  CHECK(y.dtype() == gd::kFloat32);
  y.sum().backward();
  CHECK(scale.grad().dtype() == gd::kFloat64);
  CHECK(values_of(scale.grad()) == std::vector<double>{6});
  // A float32 leaf used through a float64 copy gets a float32 gradient.
  Tensor w = tensor_of({1, 2}, {}, gd::kFloat32).requires_grad_();
  (w.to(gd::kFloat64) * tensor_of({3, 4})).sum().backward();
  CHECK(w.grad().dtype() == gd::kFloat32);
  CHECK(values_of(w.grad()) == std::vector<double>{3, 4});
}

TEST_CASE("diamond graphs and reuse of one input") {
  Tensor x = leaf({1, 2});
  Tensor a = x * 2, b = x * 3;
  Tensor y = a * b;  // 6 x^2
  y.sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{12, 24});
  // x used many times: x * x * x * x = x^4
  Tensor z = leaf({2});
  (z * z * z * z).backward();
  CHECK(values_of(z.grad()) == std::vector<double>{32});
}

TEST_CASE("create_graph through backward() gives a differentiable .grad") {
  Tensor x = leaf({2});
  Tensor y = x * x * x;
  y.backward(Tensor(), std::nullopt, /*create_graph=*/true);
  CHECK(x.grad().requires_grad());
  CHECK(values_of(x.grad()) == std::vector<double>{12});
  CHECK(values_of(gd::autograd::grad({x.grad().sum()}, {x})[0]) == std::vector<double>{12});  // 6x
}

TEST_CASE("an in-place write to a base reaches views taken before it") {
  // PyTorch 1.13: x = ones(3, requires_grad); y = x * 2; v = y[0]; y.mul_(3); v.backward()
  // gives v == 6 and x.grad == [6, 0, 0].
  Tensor x = gd::ones({3}, gd::kFloat64).requires_grad_();
  Tensor y = x * 2;
  Tensor v = y[0];
  y.mul_(3);
  CHECK(v.item<double>() == 6);
  v.backward();
  CHECK(values_of(x.grad()) == std::vector<double>{6, 0, 0});
  // Views of views too: w = y.t()-like chains.
  Tensor m = gd::ones({2, 2}, gd::kFloat64).requires_grad_();
  Tensor n = m * 1.0;
  Tensor col = n.t()[1];
  n.add_(m);  // n = 2m
  (col * 1.0).sum().backward();
  CHECK(values_of(m.grad()) == std::vector<double>{0, 2, 0, 2});
}

TEST_CASE("anomaly mode names the backward that produced NaN") {
  Tensor x = leaf({0, 1});
  Tensor y = (gd::sqrt(x) * 0.0).sum();  // d sqrt at 0 is inf; times 0 gives NaN
  {
    gd::autograd::DetectAnomalyGuard anomaly;
    Tensor y2 = (gd::sqrt(x) * 0.0).sum();
    CHECK(error_of([&] { y2.backward(); }) ==
          "Function 'SqrtBackward0' returned nan values in its 0th output. The node was created by: SqrtBackward0 "
          "(sequence number " + std::to_string(y2.grad_fn()->next_edge(0).function->next_edge(0).function->sequence_nr()) +
              ") computing DoubleTensor [2] from a leaf DoubleTensor [2]");
  }
  y.backward();  // without the guard NaN flows silently, as in PyTorch
  CHECK(std::isnan(values_of(x.grad())[0]));
}

TEST_CASE("a 100000-op chain: backward and teardown without recursion") {
  const int steps = 100000;
  SUBCASE("scalar ops (nothing saved)") {
    Tensor x = leaf({1});
    Tensor y = x;
    for (int i = 0; i < steps; ++i) y = y * 1.000001 + 0.0;
    y.backward();
    CHECK(values_of(x.grad())[0] == doctest::Approx(std::pow(1.000001, steps)).epsilon(1e-9));
  }
  SUBCASE("ops that save inputs and outputs") {
    Tensor x = leaf({0.1});
    Tensor w = leaf({1.0});
    Tensor y = x;
    for (int i = 0; i < steps; ++i) y = gd::tanh(y) * w;
    y.backward();
    CHECK(std::isfinite(values_of(x.grad())[0]));
    CHECK(values_of(x.grad())[0] > 0);
  }
  SUBCASE("a graph dropped without backward") {
    Tensor x = leaf({0.5});
    Tensor y = x;
    for (int i = 0; i < steps; ++i) y = gd::sin(y) * x;
    y = Tensor();  // frees 200000 nodes
    CHECK(x.is_leaf());
  }
  SUBCASE("create_graph through a long chain") {
    Tensor x = leaf({0.3});
    Tensor y = x;
    for (int i = 0; i < steps / 10; ++i) y = y * 1.0 + x * 0.0;
    Tensor g = gd::autograd::grad({y}, {x}, {}, std::nullopt, true)[0];
    CHECK(values_of(g)[0] == doctest::Approx(1.0));
  }
}

TEST_CASE("hooks and retain_grad across an in-place op") {
  // PyTorch 1.13: y = x * 2; y.retain_grad(); y.mul_(3); (y * y).sum().backward()
  // gives y.grad == [12, 12] (the gradient of the new y) and x.grad == [72, 72].
  Tensor x = gd::ones({2}, gd::kFloat64).requires_grad_();
  Tensor y = x * 2;
  y.retain_grad();
  y.mul_(3);
  (y * y).sum().backward();
  CHECK(values_of(y.grad()) == std::vector<double>{12, 12});
  CHECK(values_of(x.grad()) == std::vector<double>{72, 72});
  // A hook stays with the value it was registered on: y = x * 2; hook(g * 10);
  // y.mul_(3); y.sum().backward() gives x.grad == [60, 60] in PyTorch 1.13.
  Tensor a = gd::ones({2}, gd::kFloat64).requires_grad_();
  Tensor b = a * 2;
  int calls = 0;
  b.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 10;
  });
  b.mul_(3);
  b.sum().backward();
  CHECK(calls == 1);
  CHECK(values_of(a.grad()) == std::vector<double>{60, 60});
}

TEST_CASE("a backward pass started inside another (reentrant) leaves the outer one intact") {
  // PyTorch 1.13: a = x * 2; y = a * 3; a hook on y computing autograd.grad((a * a).sum(), x,
  // retain_graph=True) under enable_grad prints [8, 8]; the outer backward of (y * y).sum() gives [72, 72].
  Tensor x = gd::ones({2}, gd::kFloat64).requires_grad_();
  Tensor a = x * 2;
  Tensor y = a * 3;
  Tensor inner;
  y.register_hook([&](const Tensor& g) {
    gd::AutoGradMode enable(true);
    inner = gd::autograd::grad({(a * a).sum()}, {x}, {}, /*retain_graph=*/true)[0];
    return g;
  });
  (y * y).sum().backward();
  CHECK(values_of(inner) == std::vector<double>{8, 8});
  CHECK(values_of(x.grad()) == std::vector<double>{72, 72});
  // An error inside the inner pass does not poison later passes.
  Tensor z = x * 5;
  z.register_hook([&](const Tensor& g) {
    gd::AutoGradMode enable(true);
    CHECK_FALSE(error_of([&] { gd::autograd::grad({(a * 1.0).sum()}, {gd::ones({1}, gd::kFloat64).requires_grad_()}); })
                    .empty());
    return g;
  });
  x.grad().zero_();
  (z * a).sum().backward();
  CHECK(values_of(x.grad()) == std::vector<double>{20, 20});  // d(10 x^2)/dx
}

TEST_CASE("dropping graphs returns every byte to the allocator") {
  const int64_t before = gd::cpu_allocator::stats().allocated_bytes;
  {
    Tensor x = sample({16, 3}, -1, 1, 61).requires_grad_();
    Tensor w = sample({3, 8}, -1, 1, 62).requires_grad_();
    for (int step = 0; step < 5; ++step) {
      // A PINN-like step: first derivative with create_graph, then backward through it.
      Tensor u = (gd::tanh(gd::mm(x, w)) * 0.5).sum();
      Tensor du = gd::autograd::grad({u}, {x}, {}, std::nullopt, true)[0];
      ((du * du).mean() + u).backward();
      {
        gd::NoGradGuard no_grad;
        w.sub_(w.grad() * 0.01);
      }
      w.set_grad(Tensor());
      // In-place rebase and a regenerated view.
      Tensor y = x * 2;
      Tensor row = y[0];
      y.exp_();
      row.sum().backward(Tensor(), /*retain_graph=*/true);
    }
  }
  CHECK(gd::cpu_allocator::stats().allocated_bytes == before);
}
