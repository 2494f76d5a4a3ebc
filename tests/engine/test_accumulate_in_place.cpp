// Note [Accumulating in place] (engine/autograd/engine.cpp): gradients that a
// fused kernel or a GEMM adds into the sum the engine offers equal the sums of
// separate adds, against closed forms, the recorded (create_graph) formulas
// and float64 finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "gradiens.h"

namespace gd = gradiens;
using gd::Tensor;

namespace {

const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);

// max |a - b| / max(1, max |b|).
double scaled_error(const Tensor& a, const Tensor& b) {
  const double scale = std::max(1.0, b.abs().max().item<double>());
  return (a - b).abs().max().item<double>() / scale;
}

// A PINN-style loss of a 2-32-32-1 tanh MLP at 256 points: the value, the
// gradient in x and one second derivative, so its backward runs tanh's second
// and third derivatives (TanhBackwardBackward0, ScaledProduct3) and Mm/Addmm
// input gradients into [256, 32] buffers with several contributions each.
Tensor nested_loss(const std::vector<Tensor>& params, const Tensor& x) {
  const Tensor h1 = gd::tanh(gd::addmm(params[1], x, params[0].t()));
  const Tensor h2 = gd::tanh(gd::addmm(params[3], h1, params[2].t()));
  const Tensor u = h2.mm(params[4].t());
  const Tensor g = gd::autograd::grad({u}, {x}, {gd::ones_like(u)}, true, true)[0];
  const Tensor g_xx = gd::autograd::grad({g.select(1, 0).sum()}, {x}, {}, true, true)[0];
  return g_xx.select(1, 0).square().sum() + (g * g).sum() + u.square().sum();
}

}  // namespace

TEST_CASE("accumulating in place: a nested-grad MLP's parameter gradients equal the recorded formulas' and "
          "finite differences") {
  gd::manual_seed(7);
  std::vector<Tensor> params{gd::randn({32, 2}, f64) * 0.8, gd::randn({32}, f64) * 0.1,
                             gd::randn({32, 32}, f64) * 0.25, gd::randn({32}, f64) * 0.1,
                             gd::randn({1, 32}, f64) * 0.3};
  for (Tensor& p : params) p.requires_grad_();
  const Tensor x = (gd::rand({256, 2}, f64) * 2 - 1).requires_grad_();

  // Without create_graph the fused kernels and GEMMs add into the offered sums.
  const std::vector<Tensor> fused = gd::autograd::grad({nested_loss(params, x)}, params);
  // With it, nothing is offered, and the differentiable formulas run.
  const std::vector<Tensor> recorded =
      gd::autograd::grad({nested_loss(params, x)}, params, {}, /*retain_graph=*/true, /*create_graph=*/true);
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i);
    CHECK(scaled_error(fused[i], recorded[i]) < 1e-12);
  }

  // The derivative along a random direction by central differences.
  std::vector<Tensor> direction;
  for (const Tensor& p : params) direction.push_back(gd::randn(p.sizes(), f64));
  double projected = 0;
  for (size_t i = 0; i < params.size(); ++i) projected += (fused[i] * direction[i]).sum().item<double>();
  auto loss_at = [&](double step) {
    std::vector<Tensor> moved;
    for (size_t i = 0; i < params.size(); ++i)
      moved.push_back((params[i].detach() + step * direction[i]).requires_grad_());
    return nested_loss(moved, x).item<double>();
  };
  const double h = 1e-5;
  const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
  CHECK(std::abs(numeric - projected) <= 1e-6 * std::max(1.0, std::abs(projected)));
}

TEST_CASE("accumulating in place: a GEMM adds into the sum, and a gradient sent twice is added twice") {
  // t = tanh(x) [64, 64] gets 1 twice from t + t, then ones @ W^T from the
  // product, which MmBackward0 adds into that sum with beta = 1:
  // d loss / dx = (1 - t^2) (2 + sum_k W[j, k]) in column j.
  gd::manual_seed(3);
  const Tensor x = gd::randn({64, 64}, f64).requires_grad_();
  const Tensor w = gd::randn({64, 64}, f64).requires_grad_();
  const Tensor t = gd::tanh(x);
  Tensor seen;
  t.register_hook([&seen](const Tensor& g) {
    seen = g.clone();
    return Tensor();
  });
  const Tensor loss = t.mm(w).sum() + (t + t).sum();
  loss.backward();
  const Tensor t_values = gd::tanh(x.detach());
  const Tensor upstream = 2 + w.detach().sum({1}).unsqueeze(0);  // [1, 64], one value per column j
  CHECK(scaled_error(seen, upstream.expand({64, 64})) < 1e-13);
  CHECK(scaled_error(x.grad(), (1 - t_values * t_values) * upstream) < 1e-13);
  // W's gradient, t^T @ ones: column sums of t in every column.
  CHECK(scaled_error(w.grad(), t_values.sum({0}).unsqueeze(1).expand({64, 64})) < 1e-12);
}

TEST_CASE("accumulating in place: a sum that a hook still holds is not written into") {
  // s = t + c passes its gradient k (a tensor of its own, which s's hook
  // keeps) on to t as it is, so t's sum so far is that very tensor; the
  // product's gradient, which comes next, must not be added into it.
  gd::manual_seed(5);
  const Tensor x = gd::randn({80, 64}, f64).requires_grad_();
  const Tensor w = gd::randn({64, 64}, f64), c = gd::randn({80, 64}, f64), k = gd::randn({80, 64}, f64);
  const Tensor t = gd::tanh(x);
  const Tensor m = t.mm(w);
  const Tensor s = t + c;
  std::vector<Tensor> kept;
  s.register_hook([&kept](const Tensor& g) {
    kept.push_back(g);  // the gradient itself, not a copy
    return Tensor();
  });
  const Tensor m_sum = m.sum(), s_term = (s * k).sum();  // in this order: s's branch runs backward first
  (m_sum + s_term).backward();
  REQUIRE(kept.size() == 1);
  CHECK((kept[0] - k).abs().max().item<double>() == 0);
  const Tensor t_values = gd::tanh(x.detach());
  CHECK(scaled_error(x.grad(), (1 - t_values * t_values) * (k + w.sum({1}).unsqueeze(0))) < 1e-13);
}

// Note [Tanh's second derivative as one node] (engine/ops/unary.cpp).
TEST_CASE("tanh's second derivative: one node with two outputs, its values in closed form, and its backward "
          "(fused, recorded and one-sided) against the recorded formulas and finite differences") {
  gd::manual_seed(11);
  // 37 x 5: several vectors and a partial one.
  const Tensor x = gd::randn({37, 5}, f64).requires_grad_();
  const Tensor v = gd::randn({37, 5}, f64).requires_grad_();
  const Tensor w = gd::randn({37, 5}, f64).requires_grad_();
  // g = v (1 - y^2) records TanhBackwardBackward0; differentiating it once more
  // with create_graph gives the pair (w (1 - y^2) for v, -2 w v y for y).
  auto second = [](const Tensor& x, const Tensor& v, const Tensor& w) {
    const Tensor g = gd::autograd::grad({gd::tanh(x)}, {x}, {v}, true, true)[0];
    return gd::autograd::grad({g}, {x, v}, {w}, true, true);
  };
  const std::vector<Tensor> h = second(x, v, w);
  REQUIRE(h[1].grad_fn());
  CHECK(h[1].grad_fn()->name() == "TanhBackwardBackwardBackward0");
  CHECK(h[1].output_nr() == 0);
  const Tensor y = gd::tanh(x.detach()), one_minus = 1 - y * y;
  CHECK(scaled_error(h[1], w.detach() * one_minus) < 1e-14);
  // x's gradient is the y output (-2 w v y) through tanh's own backward.
  CHECK(scaled_error(h[0], -2 * w.detach() * v.detach() * y * one_minus) < 1e-14);

  // Both outputs feed the loss: without create_graph the fused kernel runs (adding
  // into the sums the engine offers), with it the recorded formulas.
  const Tensor a = gd::randn({37, 5}, f64), b = gd::randn({37, 5}, f64);
  auto loss = [&] {
    const std::vector<Tensor> hh = second(x, v, w);
    return (hh[0] * a).sum() + (hh[1] * b).sum() + (hh[0] * hh[1]).sum();
  };
  const std::vector<Tensor> fused = gd::autograd::grad({loss()}, {x, v, w});
  const std::vector<Tensor> recorded = gd::autograd::grad({loss()}, {x, v, w}, {}, true, true);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(scaled_error(fused[i], recorded[i]) < 1e-13);
  }

  // Central differences of the pair and of a mix of both, in float64; one output
  // alone sends no gradient to the other (the backward's one-sided branches).
  const Tensor xs = gd::randn({3, 4}, f64).requires_grad_(), vs = gd::randn({3, 4}, f64).requires_grad_(),
               ws = gd::randn({3, 4}, f64).requires_grad_();
  const gd::autograd::TensorFunction pair = [&](const std::vector<Tensor>& in) { return second(in[0], in[1], in[2]); };
  const gd::autograd::TensorFunction mixed = [&](const std::vector<Tensor>& in) {
    const std::vector<Tensor> hh = second(in[0], in[1], in[2]);
    return std::vector<Tensor>{hh[0] * hh[1] + hh[0].sin()};
  };
  CHECK(gd::autograd::gradcheck(pair, {xs, vs, ws}));
  CHECK(gd::autograd::gradcheck(mixed, {xs, vs, ws}));
  CHECK(gd::autograd::gradgradcheck(mixed, {xs, vs, ws}));
}
