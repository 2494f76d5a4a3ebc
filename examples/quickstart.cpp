// Quick start: fits u(x) = sin(pi x) on [-1, 1] with a small float64 tanh
// network, then prints u, du/dx and d2u/dx2 (from nested autograd::grad with
// create_graph) next to their closed forms.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "gradiens.h"

namespace gd = gradiens;

int main() {
  auto start = std::chrono::steady_clock::now();
  gd::manual_seed(0);
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const double pi = std::numbers::pi;

  // A 1-32-32-1 tanh network with Xavier-scaled weights.
  std::vector<int64_t> widths{1, 32, 32, 1};
  std::vector<gd::Tensor> params;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    double scale = std::sqrt(2.0 / static_cast<double>(widths[i] + widths[i + 1]));
    params.push_back((gd::randn({widths[i], widths[i + 1]}, f64) * scale).requires_grad_());
    params.push_back(gd::zeros({widths[i + 1]}, f64.requires_grad(true)));
  }
  auto net = [&](const gd::Tensor& x) {
    gd::Tensor h = x;
    for (size_t i = 0; i < params.size(); i += 2) {
      h = gd::matmul(h, params[i]) + params[i + 1];
      if (i + 2 < params.size()) h = gd::tanh(h);
    }
    return h;
  };

  gd::Tensor x = gd::linspace(-1, 1, 128, f64).reshape({-1, 1});
  gd::Tensor target = gd::sin(x * pi);

  // Adam, written out: the optimizers arrive with gradiens::optim.
  std::vector<gd::Tensor> m, v;
  for (auto& p : params) {
    m.push_back(gd::zeros_like(p));
    v.push_back(gd::zeros_like(p));
  }
  const double base_lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double first_loss = 0, loss_value = 0;
  const int steps = 8000;
  for (int step = 1; step <= steps; ++step) {
    for (auto& p : params) p.set_grad(gd::Tensor());
    gd::Tensor loss = (net(x) - target).square().mean();
    loss.backward();
    loss_value = loss.item<double>();
    if (step == 1) first_loss = loss_value;
    gd::NoGradGuard no_grad;
    // Cosine decay from base_lr to 1% of it.
    const double lr = base_lr * (0.01 + 0.99 * 0.5 * (1 + std::cos(pi * step / steps)));
    for (size_t i = 0; i < params.size(); ++i) {
      gd::Tensor g = params[i].grad();
      m[i].mul_(beta1).add_(g, 1 - beta1);
      v[i].mul_(beta2).add_(g * g, 1 - beta2);
      gd::Tensor m_hat = m[i] / (1 - std::pow(beta1, step));
      gd::Tensor v_hat = v[i] / (1 - std::pow(beta2, step));
      params[i].sub_(m_hat / (gd::sqrt(v_hat) + eps) * lr);
    }
  }
  std::printf("loss: %.3e after 1 step, %.3e after %d steps\n", first_loss, loss_value, steps);

  // Derivatives at a few points: u_x by one grad with create_graph, u_xx by a second.
  gd::Tensor xs = gd::linspace(-0.75, 0.75, 4, f64).reshape({-1, 1}).requires_grad_();
  gd::Tensor u = net(xs);
  gd::Tensor u_x = gd::autograd::grad({u}, {xs}, {gd::ones_like(u)}, true, true)[0];
  gd::Tensor u_xx = gd::autograd::grad({u_x}, {xs}, {gd::ones_like(u_x)}, true, true)[0];
  std::printf("%8s %12s %12s %12s %12s %12s %12s\n", "x", "u", "sin(pi x)", "u_x", "pi cos", "u_xx",
              "-pi^2 sin");
  double worst_uxx = 0;
  for (int64_t i = 0; i < xs.size(0); ++i) {
    double xi = xs[i][0].item<double>();
    double uxx = u_xx[i][0].item<double>();
    std::printf("%8.3f %12.5f %12.5f %12.5f %12.5f %12.5f %12.5f\n", xi, u[i][0].item<double>(),
                std::sin(pi * xi), u_x[i][0].item<double>(), pi * std::cos(pi * xi), uxx,
                -pi * pi * std::sin(pi * xi));
    worst_uxx = std::max(worst_uxx, std::abs(uxx + pi * pi * std::sin(pi * xi)));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"example\": \"quickstart\", \"final_loss\": %.3e, \"max_abs_err_u_xx\": %.3e, \"seconds\": %.2f}\n",
              loss_value, worst_uxx, seconds);
  return 0;
}
