// Tests of the Burgers exact solution (examples/burgers_exact.h): the Gauss-Hermite
// rule, the initial and boundary conditions, symmetry, convergence and the PDE itself.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "engine/functions.h"
#include "tests/engine/op_registry.h"

// test_optim is built from tests/ sources only, so the exact solution (a source of
// the examples) is compiled into this test here.
#include "examples/burgers_exact.h"

namespace gd = gradiens;
using gd::pinn::BurgersExact;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {
constexpr double kPi = std::numbers::pi;
}

TEST_CASE("gauss_hermite: nodes and weights of the 20-point rule") {
  // numpy.polynomial.hermite.hermgauss(20): the ten positive nodes and log(weights)
  // (print([repr(float(v)) for v in z[10:]]), [repr(float(math.log(v))) for v in w[10:]]).
  const std::vector<double> nodes = {0.24534070830090124, 0.7374737285453944, 1.234076215395323,  1.7385377121165861,
                                     2.2549740020892757,  2.7888060584281305, 3.3478545673832163, 3.944764040115625,
                                     4.603682449550744,   5.387480890011233};
  const std::vector<double> log_weights = {-0.771663103561278,  -1.2494043462169606, -2.2162495558158204,
                                           -3.696487486437811,  -5.7310180150103465, -8.384680785210533,
                                           -11.761059124310268, -16.03553055416687,  -21.54439617471693,
                                           -29.131876568256427};
  gd::pinn::GaussHermiteRule rule = gd::pinn::gauss_hermite(20);
  REQUIRE(rule.nodes.size() == 20);
  std::vector<double> upper_nodes(rule.nodes.begin() + 10, rule.nodes.end());
  std::vector<double> upper_log_weights(rule.log_weights.begin() + 10, rule.log_weights.end());
  CHECK(value_mismatch(upper_nodes, nodes, 1e-13, 0) == "");
  CHECK(value_mismatch(upper_log_weights, log_weights, 1e-13, 0) == "");
  for (size_t i = 0; i < 10; ++i) {
    CHECK(rule.nodes[i] == -rule.nodes[19 - i]);
    CHECK(rule.log_weights[i] == rule.log_weights[19 - i]);
  }
}

TEST_CASE("gauss_hermite: exact for polynomials up to degree 2n - 1") {
  // integral of z^(2k) e^(-z^2) = Gamma(k + 1/2); odd moments vanish. Rules of odd and
  // even size, and one large enough that its outer weights underflow (kept as logs).
  for (int n : {1, 7, 20, 101, 200, 400, 700}) {
    CAPTURE(n);
    gd::pinn::GaussHermiteRule rule = gd::pinn::gauss_hermite(n);
    // Newton found n distinct roots (none twice): strictly increasing nodes.
    CHECK(std::adjacent_find(rule.nodes.begin(), rule.nodes.end(), std::greater_equal<double>()) == rule.nodes.end());
    for (int degree = 0; degree <= std::min(2 * n - 1, 24); ++degree) {
      CAPTURE(degree);
      double sum = 0;
      for (size_t i = 0; i < rule.nodes.size(); ++i)
        sum += std::exp(rule.log_weights[i]) * std::pow(rule.nodes[i], degree);
      const double want = degree % 2 == 1 ? 0.0 : std::tgamma(degree / 2 + 0.5);
      // Odd moments cancel between +z and -z: compare to the size of the terms.
      const double scale = std::tgamma((degree + 1) / 2.0);
      CHECK(std::abs(sum - want) <= 1e-13 * scale);
    }
  }
}

TEST_CASE("gauss_hermite: node counts outside [1, 700] are errors") {
  CHECK(error_of([] { gd::pinn::gauss_hermite(0); }) ==
        "gauss_hermite: the number of nodes must be in [1, 700], got 0");
  CHECK(error_of([] { gd::pinn::gauss_hermite(701); }) ==
        "gauss_hermite: the number of nodes must be in [1, 700], got 701");
}

TEST_CASE("BurgersExact: values against high-precision quadrature") {
  // mpmath 1.2.1, mp.dps = 40: u = -quad(sin(pi y) g) / quad(g) with g(z) = exp(-z^2 -
  // cos(pi y) / (2 pi nu)), y = x - sqrt(4 nu t) z, nu = 0.01/pi, over z in [-16, 16]
  // split at 129 points (the same digits with dps = 50 and [-20, 20] split at 401).
  struct Case {
    double t, x, u;
  };
  const Case cases[] = {
      {0.25, 0.3, -0.9827241174291002877625686},   {0.5, -0.7, 0.3623522630405044759804589},
      {0.75, 0.05, -0.8379392966432375493887045},  {0.99, 0.01, -0.6002029104067548823701609},
      {0.99, -0.5, 0.378996289763718370059641},    {0.1, 0.9, -0.2368798850392219287361846},
      {0.6, -0.0123, 0.9068794984319722829342866}, {0.01, 0.5, -0.999193709461934238021907},
      {0.99, 0.0001, -0.008511104494336283895160152},
  };
  BurgersExact exact;
  for (const Case& c : cases) {
    CAPTURE(c.t);
    CAPTURE(c.x);
    CHECK(value_mismatch({exact(c.t, c.x)}, {c.u}, 1e-12, 1e-14) == "");
  }
}

TEST_CASE("BurgersExact: initial condition, boundaries and odd symmetry on the reference grid") {
  BurgersExact exact;
  const std::vector<double> xs = gd::pinn::burgers_reference_x(), ts = gd::pinn::burgers_reference_t();
  REQUIRE(xs.size() == 256);
  REQUIRE(ts.size() == 100);
  CHECK(xs.front() == -1.0);
  CHECK(xs.back() == 1.0);
  CHECK(ts.back() == doctest::Approx(0.99).epsilon(1e-15));
  for (double x : xs) CHECK(exact(0.0, x) == -std::sin(kPi * x));
  double worst_boundary = 0, worst_symmetry = 0;
  for (double t : ts) {
    worst_boundary = std::max({worst_boundary, std::abs(exact(t, -1.0)), std::abs(exact(t, 1.0))});
    // The grid is symmetric: xs[255 - j] == -xs[j].
    for (size_t j = 0; j < 128; j += 5)
      worst_symmetry = std::max(worst_symmetry, std::abs(exact(t, xs[255 - j]) + exact(t, xs[j])));
  }
  CHECK(worst_boundary < 1e-13);
  CHECK(worst_symmetry < 1e-13);
}

TEST_CASE("BurgersExact: doubling the nodes changes the reference grid by less than 1e-10") {
  // Every 2nd x and 3rd t of the grid keeps the late-time shock rows (t = 0.99) and the
  // points around x = 0, where the integrand is most sharply peaked.
  std::vector<double> xs, ts;
  const std::vector<double> all_x = gd::pinn::burgers_reference_x(), all_t = gd::pinn::burgers_reference_t();
  for (size_t j = 0; j < all_x.size(); j += 2) xs.push_back(all_x[j]);
  for (size_t i = 0; i < all_t.size(); i += 3) ts.push_back(all_t[i]);
  gd::Tensor coarse = BurgersExact(BurgersExact::kRaissiViscosity, 60).on_grid(ts, xs);
  gd::Tensor standard = BurgersExact().on_grid(ts, xs);
  gd::Tensor fine = BurgersExact(BurgersExact::kRaissiViscosity, 400).on_grid(ts, xs);
  CHECK(standard.sizes() == gd::IntArrayRef{static_cast<int64_t>(ts.size()), static_cast<int64_t>(xs.size())});
  const double standard_vs_fine = (standard - fine).abs().max().item<double>();
  CHECK(standard_vs_fine < 1e-10);
  // ...and the bound tells a converged rule from one that is not: 60 nodes are off by
  // ~1e-9 near the shock (80 by ~1e-13, 100 by rounding only).
  const double coarse_vs_fine = (coarse - fine).abs().max().item<double>();
  CHECK(coarse_vs_fine > 1e-10);
}

TEST_CASE("BurgersExact: satisfies u_t + u u_x = nu u_xx by finite differences") {
  // Fourth-order central differences, h = 5e-5: truncation ~(h / w)^4 relative with w
  // ~ 3e-3 the width of the front, rounding ~1e-16 / h^2 in u_xx; the points include
  // the front (t = 0.5, x = -0.003: |u_x| ~ 100), where the residual is still ~1e-9 of
  // its terms.
  BurgersExact exact;
  const double nu = exact.viscosity(), h = 5e-5;
  struct Point {
    double t, x;
  };
  const Point points[] = {{0.2, 0.5},     {0.4, -0.3}, {0.5, -0.02}, {0.5, -0.003},
                          {0.99, 0.0005}, {0.7, 0.8},  {0.9, 0.15},  {0.3, -0.95}};
  for (const Point& p : points) {
    CAPTURE(p.t);
    CAPTURE(p.x);
    auto d1 = [&](auto f) { return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h); };
    auto d2 = [&](auto f) { return (-f(2 * h) + 16 * f(h) - 30 * f(0.0) + 16 * f(-h) - f(-2 * h)) / (12 * h * h); };
    const double u = exact(p.t, p.x);
    const double u_t = d1([&](double s) { return exact(p.t + s, p.x); });
    const double u_x = d1([&](double s) { return exact(p.t, p.x + s); });
    const double u_xx = d2([&](double s) { return exact(p.t, p.x + s); });
    const double residual = u_t + u * u_x - nu * u_xx;
    const double scale = std::abs(u_t) + std::abs(u * u_x) + std::abs(nu * u_xx);
    CHECK(std::abs(residual) < 1e-7 * scale);
  }
}

TEST_CASE("BurgersExact: bad arguments are errors") {
  CHECK(error_of([] { BurgersExact exact(0.0); }) ==
        "BurgersExact: the viscosity must be positive and finite, got 0");
  BurgersExact exact;
  CHECK(error_of([&] { exact(-0.1, 0.5); }) ==
        "BurgersExact: needs t >= 0 and finite t and x, got t = -0.1, x = 0.5");
  CHECK(error_of([&] { exact(0.5, std::nan("")); }) ==
        "BurgersExact: needs t >= 0 and finite t and x, got t = 0.5, x = nan");
}
