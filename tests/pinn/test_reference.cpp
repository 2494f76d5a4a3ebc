// The reference solutions (pinn/reference/): Burgers by Cole-Hopf quadrature against
// high-precision values, its conditions and the PDE; Allen-Cahn by ETDRK4 against the
// closed forms of its linear and pointwise limits, under refinement, and the PDE; the
// point and grid read-outs, the CSV writer and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "engine/functions.h"
#include "engine/generator.h"
#include "pinn/reference/allen_cahn.h"
#include "pinn/reference/burgers.h"
#include "pinn/reference/common.h"

namespace gd = gradiens;
namespace gp = gradiens::pinn;
using gp::AllenCahnOptions;
using gp::AllenCahnReference;
using gp::BurgersExact;

namespace {

constexpr double kPi = std::numbers::pi;

double max_abs(const gd::Tensor& t) { return t.abs().max().item<double>(); }

// The [N, 2] float64 tensor of rows (x[i], t[i]).
gd::Tensor points_of(const std::vector<double>& x, const std::vector<double>& t) {
  gd::Tensor points = gd::empty({static_cast<int64_t>(x.size()), 2}, gd::TensorOptions().dtype(gd::kFloat64));
  double* data = points.data_ptr<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    data[2 * i] = x[i];
    data[2 * i + 1] = t[i];
  }
  return points;
}

// ---- Allen-Cahn closed forms ----

// The Fourier cosine coefficients of x^2 cos(pi x) on [-1, 1]:
// x^2 cos(pi x) = c_0 + 2 sum_{k >= 1} c_k cos(pi k x), c_k = (1/2) int x^2 cos(pi x) cos(pi k x) dx,
// from the antiderivative of x^2 cos(a x), x^2 sin(ax)/a + 2x cos(ax)/a^2 - 2 sin(ax)/a^3.
double cosine_coefficient(int64_t k) {
  auto moment = [](int64_t m) {  // int_{-1}^{1} x^2 cos(pi m x) dx
    if (m == 0) return 2.0 / 3.0;
    const double a = kPi * static_cast<double>(m);
    auto antiderivative = [a](double x) {
      return x * x * std::sin(a * x) / a + 2 * x * std::cos(a * x) / (a * a) - 2 * std::sin(a * x) / (a * a * a);
    };
    return antiderivative(1.0) - antiderivative(-1.0);
  };
  return (moment(k + 1) + moment(std::abs(k - 1))) / 4;
}

// The heat equation u_t = nu u_xx from x^2 cos(pi x): each mode decays as
// exp(-nu (pi k)^2 t). Summed until the terms are below 1e-20 (or 10^6 of them).
double heat_solution(double nu, double t, double x) {
  double u = cosine_coefficient(0);
  for (int64_t k = 1; k < 1000000; ++k) {
    const double decay = std::exp(-nu * (kPi * k) * (kPi * k) * t);
    u += 2 * cosine_coefficient(k) * decay * std::cos(kPi * k * x);
    if (decay / (static_cast<double>(k) * k) < 1e-20) break;
  }
  return u;
}

// The logistic-type ODE u' = r (u - u^3): u(t) = u0 e^{rt} / sqrt(1 + u0^2 (e^{2rt} - 1)).
double reaction_solution(double r, double t, double u0) {
  return u0 * std::exp(r * t) / std::sqrt(1 + u0 * u0 * (std::exp(2 * r * t) - 1));
}

// The default solution, solved once for all the tests that read it.
const AllenCahnReference& default_allen_cahn() {
  static const AllenCahnReference reference;
  return reference;
}

// The AC.mat grid without its t = 0 row (where every solution returns the initial
// condition exactly).
std::vector<double> positive_reference_t() {
  std::vector<double> t = gp::allen_cahn_reference_t();
  t.erase(t.begin());
  return t;
}

}  // namespace

// ---- Burgers ----

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
  gp::GaussHermiteRule rule = gp::gauss_hermite(20);
  REQUIRE(rule.nodes.size() == 20);
  for (size_t i = 0; i < 10; ++i) {
    CAPTURE(i);
    CHECK(std::abs(rule.nodes[10 + i] - nodes[i]) <= 1e-13 * std::abs(nodes[i]));
    CHECK(std::abs(rule.log_weights[10 + i] - log_weights[i]) <= 1e-13 * std::abs(log_weights[i]));
    CHECK(rule.nodes[i] == -rule.nodes[19 - i]);
    CHECK(rule.log_weights[i] == rule.log_weights[19 - i]);
  }
}

TEST_CASE("gauss_hermite: exact for polynomials up to degree 2n - 1") {
  // integral of z^(2k) e^(-z^2) = Gamma(k + 1/2); odd moments vanish. Rules of odd and
  // even size, and one large enough that its outer weights underflow (kept as logs).
  for (int n : {1, 7, 20, 101, 200, 400, 700}) {
    CAPTURE(n);
    gp::GaussHermiteRule rule = gp::gauss_hermite(n);
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
  CHECK_THROWS_WITH(gp::gauss_hermite(0), "gauss_hermite: the number of nodes must be in [1, 700], got 0");
  CHECK_THROWS_WITH(gp::gauss_hermite(701), "gauss_hermite: the number of nodes must be in [1, 700], got 701");
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
    CHECK(std::abs(exact(c.t, c.x) - c.u) <= 1e-14 + 1e-12 * std::abs(c.u));
  }
}

TEST_CASE("BurgersExact: initial condition, boundaries and odd symmetry on the reference grid") {
  BurgersExact exact;
  const std::vector<double> xs = gp::burgers_reference_x(), ts = gp::burgers_reference_t();
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
  const std::vector<double> all_x = gp::burgers_reference_x(), all_t = gp::burgers_reference_t();
  for (size_t j = 0; j < all_x.size(); j += 2) xs.push_back(all_x[j]);
  for (size_t i = 0; i < all_t.size(); i += 3) ts.push_back(all_t[i]);
  gd::Tensor coarse = BurgersExact(BurgersExact::kRaissiViscosity, 60).on_grid(ts, xs);
  gd::Tensor standard = BurgersExact().on_grid(ts, xs);
  gd::Tensor fine = BurgersExact(BurgersExact::kRaissiViscosity, 400).on_grid(ts, xs);
  CHECK(standard.sizes() == gd::IntArrayRef{static_cast<int64_t>(ts.size()), static_cast<int64_t>(xs.size())});
  CHECK(max_abs(standard - fine) < 1e-10);
  // ...and the bound tells a converged rule from one that is not: 60 nodes are off by
  // ~1e-9 near the shock (80 by ~1e-13, 100 by rounding only).
  CHECK(max_abs(coarse - fine) > 1e-10);
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

TEST_CASE("BurgersExact: on_points equals the pointwise solution, as [N, 1]") {
  BurgersExact exact;
  const std::vector<double> xs = {-1.0, -0.25, 0.0, 0.003, 0.8, 1.0}, ts = {0.0, 0.5, 0.99, 0.3, 0.7, 0.2};
  gd::Tensor u = exact.on_points(points_of(xs, ts));
  REQUIRE(u.sizes() == gd::IntArrayRef{6, 1});
  CHECK(u.dtype() == gd::kFloat64);
  for (size_t i = 0; i < xs.size(); ++i) CHECK(u[static_cast<int64_t>(i)][0].item<double>() == exact(ts[i], xs[i]));
  // float32 points are read as float64.
  gd::Tensor single = exact.on_points(points_of(xs, ts).to(gd::kFloat32));
  CHECK(single.dtype() == gd::kFloat64);
  CHECK(single[1][0].item<double>() == exact(0.5f, -0.25f));
  CHECK(exact.on_points(gd::empty({0, 2}, gd::TensorOptions().dtype(gd::kFloat64))).sizes() ==
        gd::IntArrayRef{0, 1});
}

TEST_CASE("BurgersExact: bad arguments are errors") {
  CHECK_THROWS_WITH(BurgersExact(0.0), "BurgersExact: the viscosity must be positive and finite, got 0");
  BurgersExact exact;
  CHECK_THROWS_WITH(exact(-0.1, 0.5), "BurgersExact: needs t >= 0 and finite t and x, got t = -0.1, x = 0.5");
  CHECK_THROWS_WITH(exact(0.5, std::nan("")), "BurgersExact: needs t >= 0 and finite t and x, got t = 0.5, x = nan");
  CHECK_THROWS_WITH(exact.on_points(gd::zeros({4, 3}, gd::TensorOptions().dtype(gd::kFloat64))),
                    "BurgersExact: points must be [N, 2] (columns x, t), got [4, 3]");
  CHECK_THROWS_WITH(exact.on_points(gd::zeros({4}, gd::TensorOptions().dtype(gd::kFloat64))),
                    "BurgersExact: points must be [N, 2] (columns x, t), got [4]");
  CHECK_THROWS_WITH(exact.on_points(gd::zeros({4, 2}, gd::TensorOptions().dtype(gd::kInt64))),
                    "BurgersExact: points must be a floating-point tensor");
  CHECK_THROWS_WITH(exact.on_points(points_of({0.5}, {-1.0})),
                    "BurgersExact: needs t >= 0 and finite t and x, got t = -1, x = 0.5");
}

// ---- Allen-Cahn ----

TEST_CASE("AllenCahnReference: with no reaction it is the heat equation's Fourier series") {
  // Each Fourier mode of x^2 cos(pi x) decays as exp(-nu (pi k)^2 t). ETDRK4 is exact
  // for a linear problem, so at the snapshots (here every step of 0.01) what is left
  // is rounding and the series beyond the kept modes, exp(-nu (pi modes / 2)^2 t) small.
  struct Case {
    double nu;
    int64_t modes;
  };
  for (const Case& c : {Case{1e-4, 4096}, Case{0.01, 1024}, Case{0.3, 64}}) {
    CAPTURE(c.nu);
    AllenCahnReference heat(AllenCahnOptions{.diffusion = c.nu, .reaction = 0.0, .modes = c.modes, .steps = 100});
    double worst = 0;
    for (double t : {0.01, 0.05, 0.5, 0.77, 1.0})
      for (double x : {-1.0, -0.9, -0.5, -0.123, 0.0, 0.3, 0.75, 0.999})
        worst = std::max(worst, std::abs(heat(t, x) - heat_solution(c.nu, t, x)));
    CHECK(worst < 1e-13);
  }
  // Between snapshots the Hermite interpolant adds (H^6 / 46080) |u^(6)|. With the
  // default steps the snapshots near t = 0 are close enough for the kink's fast modes.
  AllenCahnReference heat(AllenCahnOptions{.reaction = 0.0});
  double worst = 0;
  for (double t : {0.0123, 0.1234, 0.5678})
    for (double x : {-1.0, -0.5, -0.123, 0.0, 0.75})
      worst = std::max(worst, std::abs(heat(t, x) - heat_solution(1e-4, t, x)));
  CHECK(worst < 1e-12);
}

TEST_CASE("AllenCahnReference: with no diffusion each grid point follows u' = r (u - u^3)") {
  // With L = 0 ETDRK4 is the classical fourth-order Runge-Kutta method at each grid
  // point, started from the truncated Fourier series of the initial condition (see
  // Note [Allen-Cahn initial spectrum]); the ODE has a closed form. Its error must
  // fall 16-fold when the step halves.
  const int64_t modes = 64;
  std::vector<double> xs(modes), starts(modes);
  for (int64_t j = 0; j < modes; ++j) {
    const double x = -1.0 + 2.0 * static_cast<double>(j) / modes;
    xs[static_cast<size_t>(j)] = x;
    double u0 = cosine_coefficient(0);
    for (int64_t k = 1; k < modes / 2; ++k) u0 += 2 * cosine_coefficient(k) * std::cos(kPi * k * x);
    starts[static_cast<size_t>(j)] = u0;
  }
  auto worst_error = [&](int64_t steps) {
    AllenCahnReference pointwise(AllenCahnOptions{.diffusion = 0.0, .modes = modes, .steps = steps});
    double worst = 0;
    for (double t : {0.3, 1.0}) {
      gd::Tensor u = pointwise.on_grid({t}, xs);
      for (int64_t j = 0; j < modes; ++j)
        worst = std::max(worst, std::abs(u[0][j].item<double>() -
                                         reaction_solution(5.0, t, starts[static_cast<size_t>(j)])));
    }
    return worst;
  };
  const double coarse = worst_error(100), fine = worst_error(200), finest = worst_error(1000);
  INFO("u' = 5 (u - u^3): errors ", coarse, " (100 steps), ", fine, " (200), ", finest, " (1000)");
  CHECK(coarse / fine > 12);
  CHECK(coarse / fine < 20);
  CHECK(finest < 1e-10);
}

TEST_CASE("AllenCahnReference: converged under refinement on the AC.mat grid") {
  // Doubling the modes and halving the step moves nothing on the grid by 1e-9 (t > 0),
  // nor the t = 1 row by 1e-10, nor points off the grid in x and between snapshots in t.
  const AllenCahnReference& standard = default_allen_cahn();
  AllenCahnReference refined(AllenCahnOptions{.modes = 8192, .steps = 2000});
  const std::vector<double> xs = gp::allen_cahn_reference_x(), ts = positive_reference_t();
  const double grid_change = max_abs(standard.on_grid(ts, xs) - refined.on_grid(ts, xs));
  const double final_change = max_abs(standard.on_grid({1.0}, xs) - refined.on_grid({1.0}, xs));
  gd::Generator generator(7);
  gd::Tensor points = gd::rand({2000, 2}, generator, gd::TensorOptions().dtype(gd::kFloat64));
  points = gd::stack({points.select(1, 0) * 2.0 - 1.0, points.select(1, 1) * 0.99 + 0.01}, 1);
  const double point_change = max_abs(standard.on_points(points) - refined.on_points(points));
  CHECK(grid_change < 1e-9);
  CHECK(final_change < 1e-10);
  CHECK(point_change < 1e-9);
  // The bound tells a resolved solution from one that is not: 512 modes (the
  // resolution of AC.mat) leave the t = 1 interfaces off by more than 1e-7.
  AllenCahnReference coarse(AllenCahnOptions{.modes = 512});
  CHECK(max_abs(coarse.on_grid({1.0}, xs) - refined.on_grid({1.0}, xs)) > 1e-7);
}

TEST_CASE("AllenCahnReference: between snapshots it agrees with a run that ends there") {
  // A run with t_end = t keeps a snapshot at t; the default run interpolates there.
  // The two differ in their steps by under 1%, which moves u by ~1e-12.
  const AllenCahnReference& standard = default_allen_cahn();
  const std::vector<double> xs = gp::allen_cahn_reference_x();
  for (double t : {0.0137, 0.1234, 0.4321}) {
    CAPTURE(t);
    const auto steps = static_cast<int64_t>(std::lround(t * 1000));
    AllenCahnReference ending(AllenCahnOptions{.steps = steps, .t_end = t});
    REQUIRE(ending.snapshot_times().back() == t);
    const double change = max_abs(standard.on_grid({t}, xs) - ending.on_grid({t}, xs));
    CHECK(change < 1e-9);
  }
}

TEST_CASE("AllenCahnReference: symmetric, within the equilibria, exact at t = 0") {
  const AllenCahnReference& reference = default_allen_cahn();
  const std::vector<double> xs = gp::allen_cahn_reference_x(), ts = gp::allen_cahn_reference_t();
  gd::Tensor u = reference.on_grid(ts, xs);
  REQUIRE(u.sizes() == gd::IntArrayRef{201, 512});
  // x^2 cos(pi x) is even and the equation is symmetric under x -> -x: xs[512 - j] == -xs[j].
  double worst_symmetry = 0;
  for (int64_t i = 0; i < 201; ++i)
    for (int64_t j = 1; j < 256; ++j)
      worst_symmetry = std::max(worst_symmetry, std::abs(u[i][j].item<double>() - u[i][512 - j].item<double>()));
  CHECK(worst_symmetry < 1e-13);
  // -1 and 1 are equilibria and u(0, x) lies between them, so u does for all t.
  CHECK(max_abs(u) <= 1 + 1e-12);
  for (int64_t j = 0; j < 512; ++j)
    CHECK(u[0][j].item<double>() == AllenCahnReference::initial_condition(xs[static_cast<size_t>(j)]));
  // The grid's ends: t from 0 to 1 in steps of 0.005, x from -1 in steps of 2/512.
  CHECK(ts.front() == 0.0);
  CHECK(ts.back() == 1.0);
  CHECK(ts[1] == 0.005);
  CHECK(xs.front() == -1.0);
  CHECK(xs[256] == 0.0);
  CHECK(xs.back() == 1.0 - 2.0 / 512);
}

TEST_CASE("AllenCahnReference: satisfies u_t = nu u_xx + r (u - u^3) by finite differences") {
  // Fourth-order central differences: in x with h = 2e-4 (the interfaces are ~6e-3
  // wide), in t with h = 1e-3 across snapshots (the Hermite interpolant is C^2). The
  // points include, at each t, the middle of the steepest interface, where the
  // truncation in x, ~(h / w)^4, leaves a residual of ~3e-8 of the terms (elsewhere 1e-9).
  const AllenCahnReference& reference = default_allen_cahn();
  const double nu = 1e-4, r = 5, hx = 2e-4, ht = 1e-3;
  auto d1 = [](auto f, double h) { return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h); };
  auto d2 = [](auto f, double h) {
    return (-f(2 * h) + 16 * f(h) - 30 * f(0.0) + 16 * f(-h) - f(-2 * h)) / (12 * h * h);
  };
  const std::vector<double> grid_x = gp::allen_cahn_reference_x();
  for (double t : {0.1, 0.3, 0.6, 0.95}) {
    const gd::Tensor row = reference.on_grid({t}, grid_x);
    const double* u_row = row.data_ptr<double>();
    size_t steepest = 0;
    for (size_t j = 0; j + 1 < grid_x.size(); ++j)
      if (std::abs(u_row[j + 1] - u_row[j]) > std::abs(u_row[steepest + 1] - u_row[steepest])) steepest = j;
    const double front = grid_x[steepest] + 1.0 / 512;
    for (double x : {-0.97, -0.6, -0.31, -0.05, 0.0, 0.2, 0.52, 0.88, front}) {
      CAPTURE(t);
      CAPTURE(x);
      const double u = reference(t, x);
      const double u_t = d1([&](double s) { return reference(t + s, x); }, ht);
      const double u_xx = d2([&](double s) { return reference(t, x + s); }, hx);
      const double reaction = r * (u - u * u * u);
      const double residual = u_t - nu * u_xx - reaction;
      const double scale = std::abs(u_t) + std::abs(nu * u_xx) + std::abs(reaction) + 1e-3;
      CHECK(std::abs(residual) < 2e-7 * scale);
    }
  }
}

TEST_CASE("AllenCahnReference: points, grids and single values agree") {
  const AllenCahnReference& reference = default_allen_cahn();
  // Grid nodes (read from the inverse transform), points off them (the Fourier
  // series), repeated times and x outside [-1, 1) (periodic).
  const std::vector<double> xs = {-1.0, 0.5, std::nextafter(0.5, 1.0), -0.123, 0.9, 1.0, 2.5, -0.123, 3.0};
  const std::vector<double> ts = {0.5, 0.5, 0.5, 0.2, 0.2, 0.0, 0.73, 0.73, 1.0};
  gd::Tensor u = reference.on_points(points_of(xs, ts));
  REQUIRE(u.sizes() == gd::IntArrayRef{9, 1});
  for (size_t i = 0; i < xs.size(); ++i) {
    CAPTURE(i);
    CHECK(u[static_cast<int64_t>(i)][0].item<double>() == reference(ts[i], xs[i]));
    CHECK(u[static_cast<int64_t>(i)][0].item<double>() == reference.on_grid({ts[i]}, {xs[i]})[0][0].item<double>());
  }
  // The node read-out and the series agree: x = 0.5 against the next double up.
  CHECK(std::abs(u[1][0].item<double>() - u[2][0].item<double>()) < 1e-13);
  // Periodic in x: 2.5 is 0.5, 3 is -1.
  CHECK(std::abs(u[6][0].item<double>() - reference(0.73, 0.5)) < 1e-13);
  CHECK(u[8][0].item<double>() == reference(1.0, -1.0));
  CHECK(u[5][0].item<double>() == AllenCahnReference::initial_condition(1.0));
  // Snapshots start at 0 and end at t_end; near t = 0 they are one step (1e-3)
  // apart, later at most 0.04 / r = 8e-3.
  const std::vector<double>& times = reference.snapshot_times();
  CHECK(times.front() == 0.0);
  CHECK(times.back() == 1.0);
  CHECK(times[1] == doctest::Approx(1e-3).epsilon(1e-12));
  double widest = 0;
  for (size_t i = 1; i < times.size(); ++i) widest = std::max(widest, times[i] - times[i - 1]);
  CHECK(widest == doctest::Approx(8e-3).epsilon(1e-9));
}

TEST_CASE("AllenCahnReference: the default solve and the AC.mat grid are quick") {
  // About 0.2 s and 0.04 s in a release build; the bound only catches a solver or
  // read-out gone quadratic (or FFTW planning by measurement), with room for sanitizers.
  const auto started = std::chrono::steady_clock::now();
  AllenCahnReference reference;
  gd::Tensor grid = reference.on_grid(gp::allen_cahn_reference_t(), gp::allen_cahn_reference_x());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(grid.sizes() == gd::IntArrayRef{201, 512});
  CHECK(seconds < 10);
}

TEST_CASE("AllenCahnReference: bad options and points are errors") {
  auto make = [](AllenCahnOptions options) { AllenCahnReference reference(options); };
  CHECK_THROWS_WITH(make({.modes = 0}), "AllenCahnReference: modes must be even and in [4, 4194304], got 0");
  CHECK_THROWS_WITH(make({.modes = 63}), "AllenCahnReference: modes must be even and in [4, 4194304], got 63");
  CHECK_THROWS_WITH(make({.modes = -8}), "AllenCahnReference: modes must be even and in [4, 4194304], got -8");
  CHECK_THROWS_WITH(make({.steps = 0}), "AllenCahnReference: steps must be at least 1, got 0");
  CHECK_THROWS_WITH(make({.diffusion = -1e-4}), "AllenCahnReference: diffusion must be finite and >= 0, got -0.0001");
  CHECK_THROWS_WITH(make({.reaction = std::nan("")}), "AllenCahnReference: reaction must be finite, got nan");
  CHECK_THROWS_WITH(make({.t_end = 0.0}), "AllenCahnReference: t_end must be positive and finite, got 0");
  AllenCahnReference small(AllenCahnOptions{.modes = 16, .steps = 4, .t_end = 0.5});
  CHECK_THROWS_WITH(small(0.75, 0.0),
                    "AllenCahnReference: needs t in [0, 0.5] and a finite x, got t = 0.75, x = 0");
  CHECK_THROWS_WITH(small(-0.1, 0.0),
                    "AllenCahnReference: needs t in [0, 0.5] and a finite x, got t = -0.1, x = 0");
  CHECK_THROWS_WITH(small(0.1, INFINITY),
                    "AllenCahnReference: needs t in [0, 0.5] and a finite x, got t = 0.1, x = inf");
  CHECK_THROWS_WITH(small.on_grid({0.1, 0.6}, {0.0}), "AllenCahnReference: grid times must be in [0, 0.5], got 0.6");
  CHECK_THROWS_WITH(small.on_grid({0.1}, {std::nan("")}), "AllenCahnReference: grid x must be finite, got nan");
  CHECK_THROWS_WITH(small.on_points(gd::zeros({3, 3}, gd::TensorOptions().dtype(gd::kFloat64))),
                    "AllenCahnReference: points must be [N, 2] (columns x, t), got [3, 3]");
  CHECK_THROWS_WITH(small.on_points(gd::zeros({2, 2, 1}, gd::TensorOptions().dtype(gd::kFloat64))),
                    "AllenCahnReference: points must be [N, 2] (columns x, t), got [2, 2, 1]");
  CHECK_THROWS_WITH(small.on_points(gd::zeros({3, 2}, gd::TensorOptions().dtype(gd::kInt32))),
                    "AllenCahnReference: points must be a floating-point tensor");
  CHECK_THROWS_WITH(small.on_points(gd::Tensor()), "AllenCahnReference: the points tensor is undefined");
  CHECK_THROWS_WITH(small.on_points(points_of({0.0, 0.2}, {0.1, 0.51})),
                    "AllenCahnReference: point 1 (x = 0.2, t = 0.51) needs t in [0, 0.5] and a finite x");
}

// ---- CSV ----

TEST_CASE("write_grid_csv: a header and one row per grid point, read back exactly") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "gradiens_test_reference_grid.csv";
  const std::vector<double> ts = {0.0, 0.1}, xs = {-1.0, 1.0 / 3.0, 0.5};
  BurgersExact exact;
  gd::Tensor u = exact.on_grid(ts, xs);
  gp::write_grid_csv(path.string(), ts, xs, u);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "t,x,u");
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  REQUIRE(rows.size() == 6);
  // Row 5 is t = 0.1, x = 0.5: its three fields parse back to the same doubles.
  const std::string& row = rows[5];
  const size_t first = row.find(','), second = row.find(',', first + 1);
  CHECK(std::stod(row.substr(0, first)) == 0.1);
  CHECK(std::stod(row.substr(first + 1, second - first - 1)) == 0.5);
  CHECK(std::stod(row.substr(second + 1)) == u[1][2].item<double>());
  in.close();
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(gp::write_grid_csv(path.string(), ts, {0.0}, u), "write_grid_csv: u must be [2, 1] (t by x)");
  CHECK_THROWS_WITH(gp::write_grid_csv("/nonexistent-directory/u.csv", ts, xs, u),
                    "write_grid_csv: cannot open /nonexistent-directory/u.csv for writing");
}
