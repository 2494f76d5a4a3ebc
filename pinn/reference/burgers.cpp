// The Cole-Hopf solution of Burgers' equation by Gauss-Hermite quadrature (see
// burgers.h), and the reference grid of Raissi et al.'s data.
#include "pinn/reference/burgers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "engine/functions.h"
#include "kernels/error.h"
#include "pinn/reference/common.h"

namespace gradiens::pinn {

namespace {

constexpr double kPi = std::numbers::pi;

// A number as C++ streams print it by default ("0.01", "-1e-05"), for messages.
std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// The orthonormal Hermite functions psi_k(z) = H_k(z) e^{-z^2/2} / sqrt(2^k k! sqrt(pi))
// for k = n - 1 and n, by their three-term recurrence. Unlike the polynomials they stay
// O(1) in the oscillating region, so nothing overflows for n up to ~700 (beyond that
// psi_0 = pi^{-1/4} e^{-z^2/2} underflows at the outer roots).
struct HermitePair {
  double psi_n, psi_n_minus_1;
};
HermitePair hermite_functions(int n, double z) {
  double previous = 0;
  double current = std::pow(kPi, -0.25) * std::exp(-0.5 * z * z);
  for (int k = 1; k <= n; ++k) {
    double next = std::sqrt(2.0 / k) * z * current - std::sqrt((k - 1.0) / k) * previous;
    previous = current;
    current = next;
  }
  return {current, previous};
}

}  // namespace

// Newton's method on psi_n, whose roots are those of H_n, from the asymptotic first
// guesses of Numerical Recipes' gauher (largest root first, each guess extrapolated
// from the roots already found). At a root psi_n' = sqrt(2n) psi_{n-1}, and the
// weight w = 2 / p_n'(z)^2 of the orthonormal polynomial p_n becomes
// e^{-z^2} / (n psi_{n-1}(z)^2), whose logarithm is finite however far out z is.
GaussHermiteRule gauss_hermite(int n) {
  GD_CHECK(n >= 1 && n <= 700, "gauss_hermite: the number of nodes must be in [1, 700], got " + std::to_string(n));
  std::vector<double> roots(static_cast<size_t>(n)), log_weights(static_cast<size_t>(n));
  const int half = (n + 1) / 2;
  double z = 0;
  for (int i = 0; i < half; ++i) {
    const double dn = n;
    if (i == 0) z = std::sqrt(2 * dn + 1) - 1.85575 * std::pow(2 * dn + 1, -1.0 / 6.0);
    else if (i == 1) z -= 1.14 * std::pow(dn, 0.426) / z;
    else if (i == 2) z = 1.86 * z - 0.86 * roots[0];
    else if (i == 3) z = 1.91 * z - 0.91 * roots[1];
    else z = 2 * z - roots[static_cast<size_t>(i - 2)];
    if (n % 2 == 1 && i == half - 1) z = 0;  // the middle root of an odd rule is exactly 0
    HermitePair psi{};
    for (int iteration = 0; iteration < 100; ++iteration) {
      psi = hermite_functions(n, z);
      const double derivative = std::sqrt(2.0 * n) * psi.psi_n_minus_1 - z * psi.psi_n;
      const double step = psi.psi_n / derivative;
      z -= step;
      if (std::abs(step) <= 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(z))) break;
    }
    psi = hermite_functions(n, z);
    roots[static_cast<size_t>(i)] = z;
    log_weights[static_cast<size_t>(i)] =
        -z * z - std::log(static_cast<double>(n)) - 2 * std::log(std::abs(psi.psi_n_minus_1));
  }
  GaussHermiteRule rule;
  rule.nodes.resize(static_cast<size_t>(n));
  rule.log_weights.resize(static_cast<size_t>(n));
  for (int i = 0; i < half; ++i) {
    const auto lo = static_cast<size_t>(i), hi = static_cast<size_t>(n - 1 - i);
    rule.nodes[lo] = -roots[lo];
    rule.nodes[hi] = roots[lo];
    rule.log_weights[lo] = rule.log_weights[hi] = log_weights[lo];
  }
  return rule;
}

// Note [Burgers quadrature nodes]
// In z the integrand is exp(-z^2 - cos(pi (x - c z)) / (2 pi nu)), c = sqrt(4 nu t). Its
// mass lies where the exponent is within ~40 of its maximum, i.e. |z| < sqrt(1 / (pi nu)
// + 40), about 11.8 for nu = 0.01/pi; near the shock (x ~ 0, t ~ 1) it is two peaks at
// z ~ +-(1 -+ x) / c ~ +-9 of width ~0.35. The n-point rule reaches |z| ~ sqrt(2n) with
// node spacing ~ pi / sqrt(2n - z^2). Against 400 nodes on the reference grid, 60 nodes
// are off by 9e-10, 80 by 6e-14 and 100 by rounding (4e-15); the default 200 leaves a
// wide margin (tests/pinn/test_reference.cpp). Smaller viscosities need more nodes.
BurgersExact::BurgersExact(double viscosity, int nodes) : viscosity_(viscosity), rule_(gauss_hermite(nodes)) {
  GD_CHECK(viscosity > 0 && std::isfinite(viscosity),
           "BurgersExact: the viscosity must be positive and finite, got " + number_text(viscosity));
}

double BurgersExact::operator()(double t, double x) const {
  GD_CHECK(t >= 0 && std::isfinite(t) && std::isfinite(x),
           "BurgersExact: needs t >= 0 and finite t and x, got t = " + number_text(t) + ", x = " + number_text(x));
  if (t == 0) return -std::sin(kPi * x);
  const double c = std::sqrt(4 * viscosity_ * t);
  const double inv_2_pi_nu = 1 / (2 * kPi * viscosity_);
  const size_t n = rule_.nodes.size();
  // Two passes: the log-terms and their maximum, then the shifted sums.
  thread_local std::vector<double> log_terms, sines;
  log_terms.resize(n);
  sines.resize(n);
  double largest = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    const double angle = kPi * (x - c * rule_.nodes[i]);
    sines[i] = std::sin(angle);
    log_terms[i] = rule_.log_weights[i] - std::cos(angle) * inv_2_pi_nu;
    largest = std::max(largest, log_terms[i]);
  }
  double numerator = 0, denominator = 0;
  for (size_t i = 0; i < n; ++i) {
    const double term = std::exp(log_terms[i] - largest);
    numerator += term * sines[i];
    denominator += term;
  }
  return -numerator / denominator;
}

Tensor BurgersExact::on_grid(const std::vector<double>& t, const std::vector<double>& x) const {
  const auto nt = static_cast<int64_t>(t.size()), nx = static_cast<int64_t>(x.size());
  Tensor u = empty({nt, nx}, TensorOptions().dtype(kFloat64));
  double* out = u.cpu_data_ptr<double>();
  for (int64_t i = 0; i < nt; ++i)
    for (int64_t j = 0; j < nx; ++j) out[i * nx + j] = (*this)(t[static_cast<size_t>(i)], x[static_cast<size_t>(j)]);
  return u;
}

Tensor BurgersExact::on_points(const Tensor& points) const {
  const Tensor xt = reference_points(points, "BurgersExact");
  const int64_t count = xt.size(0);
  const double* data = xt.cpu_data_ptr<double>();
  Tensor u = empty({count, 1}, TensorOptions().dtype(kFloat64));
  double* out = u.cpu_data_ptr<double>();
  for (int64_t i = 0; i < count; ++i) out[i] = (*this)(data[2 * i + 1], data[2 * i]);
  return u;
}

std::vector<double> burgers_reference_x() {
  std::vector<double> x(256);
  // As numpy's linspace: start + i * step, the last point set to the end exactly.
  for (size_t j = 0; j < x.size(); ++j) x[j] = -1.0 + static_cast<double>(j) * (2.0 / 255.0);
  x.back() = 1.0;
  return x;
}

std::vector<double> burgers_reference_t() {
  std::vector<double> t(100);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i) * 0.01;
  return t;
}

}  // namespace gradiens::pinn
