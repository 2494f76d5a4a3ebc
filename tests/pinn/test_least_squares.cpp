// The Taylor engine under an output transform against the nested engine, and
// the weighted residuals of pinn/least_squares.h: ||rho||^2 is the total
// loss, 2 J^T rho its gradient by backward, J's columns central differences
// of rho, under causal weights and a PDE parameter; what it refuses.
#include <cmath>
#include <numbers>

#include <doctest/doctest.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "kernels/error.h"
#include "pinn/least_squares.h"
#include "pinn/problem.h"
#include "tests/pinn/pinn_test_util.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

namespace {

using gp::testing::kF64;
using gp::testing::max_error;
using gp::testing::tanh_mlp;

// u = sin(pi x0) x1 + x0 (1 - x0) x1^2 y + 0.1 y^2 sin(x1): nonlinear in y and
// mixing x and y, so every term of the chain rule counts.
gd::Tensor transform(const gd::Tensor& x, const gd::Tensor& y) {
  const gd::Tensor a = x.narrow(1, 0, 1), t = x.narrow(1, 1, 1);
  return gd::sin(std::numbers::pi * a) * t + a * (1 - a) * t * t * y + 0.1 * y * y * gd::sin(t);
}

// Burgers on [-1, 1] x [0, 1] with an unknown viscosity, causal slices on the
// PDE and a weighted boundary term.
gp::Problem burgers(gd::Tensor* nu_out) {
  gp::Problem problem(std::make_shared<gp::GeometryXTime>(gp::Interval(-1, 1), 0.0, 1.0));
  gd::Tensor nu = problem.add_parameter("nu", 0.05);
  *nu_out = nu;
  gp::DerivativeNeeds needs{{{0}, {1}, {0, 0}}, false, {}};
  problem.add(std::make_shared<gp::OperatorCondition>(
      "pde", gp::PointSpec::interior(60), needs,
      [nu](gp::Solution& s) { return s.d(1) + s.u() * s.d(0) - nu * s.d({0, 0}); }));
  auto sine = [](const gd::Tensor& x) { return -gd::sin(std::numbers::pi * x.narrow(1, 0, 1)); };
  problem.add(std::make_shared<gp::DirichletBC>("bc", gp::PointSpec::boundary(12), sine), 2.0);
  problem.add(std::make_shared<gp::InitialCondition>("ic", gp::PointSpec::initial(12), sine));
  problem.set_causal("pde", {4, 1.0});
  gd::Generator generator(5);
  problem.sample(generator);
  return problem;
}

}  // namespace

TEST_CASE("least squares: the Taylor engine under an output transform equals the nested engine") {
  gd::nn::Sequential net = tanh_mlp(2, 6, 1, 31);
  gd::nn::AnyModule module(net);
  gd::Generator generator(8);
  const gd::Tensor x = gd::rand({15, 2}, generator, kF64);
  gp::DerivativeNeeds needs{{{0}, {1}, {0, 0}, {1, 1}}, true, {1.0, 0.5}};
  gp::Solution taylor(module, x, needs, gp::Engine::kTaylor, transform);
  gp::Solution nested(module, x, needs, gp::Engine::kNested, transform);
  CHECK(taylor.engine() == gp::Engine::kTaylor);
  gp::testing::check_same_second_order(taylor, nested);
  CHECK(nested.laplacian().abs().max().item<double>() > 0.1);  // not trivially zero
  // The parameters' gradients of a loss on them agree too.
  const std::vector<gd::Tensor> params = net->parameters();
  auto loss = [&](gp::Solution& s) { return (s.laplacian().square() + s.d(1).square() + s.u()).sum(); };
  const auto g_taylor = gd::autograd::grad({loss(taylor)}, params);
  const auto g_nested = gd::autograd::grad({loss(nested)}, params);
  for (size_t i = 0; i < params.size(); ++i) CHECK(max_error(g_taylor[i], g_nested[i]) < 1e-11);
  // Third order under a transform: auto falls back to nested, and kTaylor says why.
  gp::DerivativeNeeds third{{{0, 0, 0}}, false, {}};
  CHECK(gp::Solution(module, x, third, gp::Engine::kAuto, transform).engine() == gp::Engine::kNested);
  CHECK_THROWS_WITH_AS(gp::Solution(module, x, third, gp::Engine::kTaylor, transform),
                       doctest::Contains("order 3 is needed under an output transform"), gd::Error);
}

TEST_CASE("least squares: ||rho||^2 is the total loss, 2 J^T rho its gradient, J central differences of rho") {
  gd::Tensor nu;
  gp::Problem problem = burgers(&nu);
  gd::nn::Sequential net = tanh_mlp(2, 5, 1, 32);
  gd::nn::AnyModule module(net);
  std::vector<gd::Tensor> params = net->parameters();
  params.push_back(nu);
  for (const bool hard : {false, true}) {
    CAPTURE(hard);
    if (hard) problem.set_output_transform(transform);
    const gp::Losses losses = problem.losses(module);
    const gp::WeightedResiduals found = gp::weighted_residuals(problem, module, params, /*jacobian=*/true);
    REQUIRE(found.residuals.size(0) == 60 + 12 + 12);
    REQUIRE(found.jacobian.sizes() == std::vector<int64_t>{84, 2 * 5 + 5 + 5 * 5 + 5 + 5 + 1 + 1});
    CHECK(found.residuals.dot(found.residuals).item<double>() ==
          doctest::Approx(losses.total.item<double>()).epsilon(1e-13));
    REQUIRE(found.names == losses.names);
    for (size_t i = 0; i < losses.values.size(); ++i)
      CHECK(found.values[i].item<double>() == doctest::Approx(losses.values[i].item<double>()).epsilon(1e-13));
    const auto gradients = gd::autograd::grad({losses.total}, params);
    const gd::Tensor flat_gradient = gd::cat([&] {
      std::vector<gd::Tensor> parts;
      for (const gd::Tensor& g : gradients) parts.push_back(g.reshape({-1}));
      return parts;
    }(), 0);
    const gd::Tensor from_jacobian = 2 * gd::matmul(found.jacobian.t(), found.residuals);
    CHECK(max_error(from_jacobian, flat_gradient) < 1e-12 * (1 + flat_gradient.abs().max().item<double>()));
    // Columns of a first-layer weight, a hidden bias, the last layer and nu by central differences.
    const double h = 1e-6;
    const std::vector<std::pair<size_t, int64_t>> probes = {{0, 3}, {3, 2}, {4, 4}, {6, 0}};
    int64_t offset_of[7] = {0};
    for (size_t i = 1; i < 7; ++i) offset_of[i] = offset_of[i - 1] + params[i - 1].numel();
    for (const auto& [which, element] : probes) {
      CAPTURE(which);
      gd::Tensor flat = params[which].detach().reshape({-1});
      const double saved = flat[element].item<double>();
      auto residuals_at = [&](double value) {
        {
          gd::NoGradGuard no_grad;
          flat[element].fill_(value);
        }
        return gp::weighted_residuals(problem, module, params, false).residuals;
      };
      // The causal weights must stay those of the unperturbed point, as in one optimizer step.
      problem.hold_causal_weights(true);
      gp::weighted_residuals(problem, module, params, false);
      const gd::Tensor difference = (residuals_at(saved + h) - residuals_at(saved - h)) / (2 * h);
      problem.hold_causal_weights(false);
      residuals_at(saved);
      const gd::Tensor column = found.jacobian.select(1, offset_of[which] + element);
      CHECK(column.abs().max().item<double>() > 1e-3);
      CHECK(max_error(column, difference) < 1e-7 * (1 + column.abs().max().item<double>()));
    }
  }
}

TEST_CASE("least squares: what needs the nested engine or pairs points is refused, saying why") {
  gd::Tensor nu;
  gp::Problem problem = burgers(&nu);
  gd::nn::Sequential net = tanh_mlp(2, 5, 1, 33);
  gd::nn::AnyModule module(net);
  std::string why;
  CHECK(gp::least_squares_supported(problem, module, &why));
  problem.set_engine(gp::Engine::kNested);
  CHECK_FALSE(gp::least_squares_supported(problem, module, &why));
  CHECK(why.find("nested engine") != std::string::npos);
  CHECK_THROWS_WITH_AS(gp::weighted_residuals(problem, module, net->parameters(), true),
                       doctest::Contains("per-sample Jacobians need the Taylor engine"), gd::Error);
  problem.set_engine(gp::Engine::kAuto);
  problem.add(std::make_shared<gp::PeriodicBC>("periodic", gp::PointSpec::initial(8), 0, -1.0, 1.0));
  gd::Generator generator(6);
  problem.sample(generator);
  CHECK_FALSE(gp::least_squares_supported(problem, module, &why));
  CHECK(why.find("periodic") != std::string::npos);
  CHECK_THROWS_WITH_AS(gp::weighted_residuals(problem, module, net->parameters(), true),
                       doctest::Contains("pair points"), gd::Error);
}
