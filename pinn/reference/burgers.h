// The exact solution of the viscous Burgers equation u_t + u u_x = nu u_xx on x in
// [-1, 1], u(0, x) = -sin(pi x), u(t, -1) = u(t, 1) = 0, by the Cole-Hopf transformation
// and Gauss-Hermite quadrature: the reference the Burgers PINN is measured against.
#pragma once

#include <numbers>
#include <vector>

#include "engine/tensor.h"

namespace gradiens::pinn {

// The n-point Gauss-Hermite rule: integral of f(z) exp(-z^2) over the real line
// ~= sum_i exp(log_weights[i]) f(nodes[i]). The weights are kept as logarithms
// because the outer ones underflow (w ~ exp(-z^2), z up to sqrt(2n)). Nodes are
// ascending and symmetric (nodes[n-1-i] == -nodes[i] exactly). 1 <= n <= 700.
struct GaussHermiteRule {
  std::vector<double> nodes;
  std::vector<double> log_weights;
};
GaussHermiteRule gauss_hermite(int n);

// Cole-Hopf: with phi_0(y) = exp(-cos(pi y) / (2 pi nu)) and eta = sqrt(4 nu t) z,
//   u(t, x) = -int sin(pi (x - eta)) phi_0(x - eta) e^{-z^2} dz / int phi_0(x - eta) e^{-z^2} dz,
// both integrals by one Gauss-Hermite rule. For small nu, phi_0 spans e^{+-1/(2 pi nu)}
// (e^{+-50} at nu = 0.01/pi) and the integrand peaks far from z = 0 near the shock, so
// the sums are formed from log-terms with the largest subtracted (log-sum-exp): no
// overflow, and the ratio is unchanged. See Note [Burgers quadrature nodes].
class BurgersExact {
 public:
  static constexpr double kRaissiViscosity = 0.01 / std::numbers::pi;
  static constexpr int kDefaultNodes = 200;

  explicit BurgersExact(double viscosity = kRaissiViscosity, int nodes = kDefaultNodes);

  // u(t, x) for t >= 0 (t = 0 gives the initial condition exactly).
  double operator()(double t, double x) const;
  // u at every (t[i], x[j]): a float64 tensor [t.size(), x.size()].
  Tensor on_grid(const std::vector<double>& t, const std::vector<double>& x) const;
  // u at each row (x, t) of a floating-point [N, 2] tensor: float64 [N, 1], the shape
  // of a network's output on those points.
  Tensor on_points(const Tensor& points) const;

  double viscosity() const { return viscosity_; }
  int nodes() const { return static_cast<int>(rule_.nodes.size()); }

 private:
  double viscosity_;
  GaussHermiteRule rule_;
};

// The grid of Raissi et al.'s burgers_shock data: x at 256 points evenly spaced on
// [-1, 1] (both ends included), t at 100 points 0, 0.01, ..., 0.99.
std::vector<double> burgers_reference_x();
std::vector<double> burgers_reference_t();

}  // namespace gradiens::pinn
