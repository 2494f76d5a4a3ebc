// Differentiable expressions (GiNaC-parsed, evaluated as tensor ops) against
// the same formulas in C++ and their closed-form derivatives, gradcheck and
// gradgradcheck, the errors; and a hard constraint built on one, whose
// solution meets its boundary and initial values exactly.
#include <cmath>
#include <numbers>

#include <doctest/doctest.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "pinn/solution.h"
#include "pinn/tensor_expression.h"
#include "pinn_test_util.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;
using gp::testing::kF64;
using gp::testing::max_error;

namespace {

constexpr double kPi = std::numbers::pi;

// Columns x, t in (0.1, 0.9) and y in (-1, 1), float64 [n, 1] each.
std::vector<gd::Tensor> columns(int64_t n, uint64_t seed) {
  gd::Generator generator(seed);
  gd::Tensor x = gd::rand({n, 1}, generator, kF64) * 0.8 + 0.1;
  gd::Tensor t = gd::rand({n, 1}, generator, kF64) * 0.8 + 0.1;
  gd::Tensor y = gd::rand({n, 1}, generator, kF64) * 2 - 1;
  return {x, t, y};
}

}  // namespace

TEST_CASE("tensor expression: values as the formula in C++, at every point") {
  const std::vector<gd::Tensor> v = columns(64, 1);
  struct Case {
    const char* text;
    double (*formula)(double x, double t, double y);
  };
  const Case cases[] = {
      {"sin(pi*x)+sin(4*pi*x)/2 + x*(1-x)*t^2*y",
       [](double x, double t, double y) { return std::sin(kPi * x) + std::sin(4 * kPi * x) / 2 + x * (1 - x) * t * t * y; }},
      {"exp(-t)*cos(2*pi*x) - y^3", [](double x, double t, double y) { return std::exp(-t) * std::cos(2 * kPi * x) - y * y * y; }},
      {"sqrt(x) + 1/(t+1) + x^(-0.5) + 2^y + x^t - 1e-3*y",
       [](double x, double t, double y) { return std::sqrt(x) + 1 / (t + 1) + 1 / std::sqrt(x) + std::pow(2.0, y) + std::pow(x, t) - 1e-3 * y; }},
      {"log(1+x) + abs(y) + tanh(y) + sinh(t) + cosh(t) + tan(x)",
       [](double x, double t, double y) {
         return std::log(1 + x) + std::abs(y) + std::tanh(y) + std::sinh(t) + std::cosh(t) + std::tan(x);
       }},
      {"e^x - pi*t/e", [](double x, double t, double) { return std::exp(x) - kPi * t / std::numbers::e; }},
      {"(x-t)*(x+t) - y*x*t*0.25", [](double x, double t, double y) { return (x - t) * (x + t) - y * x * t * 0.25; }},
  };
  for (const Case& c : cases) {
    const std::string text = c.text;
    CAPTURE(text);
    gp::TensorExpression expression(c.text, {"x", "t", "y"});
    gd::Tensor value = expression.evaluate(v);
    REQUIRE(value.sizes() == gd::IntArrayRef({64, 1}));
    double worst = 0;
    for (int64_t i = 0; i < 64; ++i) {
      const double expected = c.formula(v[0][i][0].item<double>(), v[1][i][0].item<double>(), v[2][i][0].item<double>());
      worst = std::max(worst, std::abs(value[i][0].item<double>() - expected) / std::max(1.0, std::abs(expected)));
    }
    CHECK(worst < 1e-14);
  }
  gp::TensorExpression constant("2*pi + e", {"x", "t", "y"});
  gd::Tensor c = constant.evaluate(v);
  CHECK(c.sizes() == gd::IntArrayRef({64, 1}));
  CHECK(max_error(c, gd::full({64, 1}, 2 * kPi + std::numbers::e, kF64)) < 1e-15);
  gp::TensorExpression hard("sin(pi*x) + x*(1-x)*y", {"x", "t", "y"});
  CHECK(hard.uses("x"));
  CHECK(hard.uses("y"));
  CHECK_FALSE(hard.uses("t"));
  CHECK_FALSE(hard.uses("q"));
  // float32 values stay float32.
  CHECK(hard.evaluate({v[0].to(gd::kFloat32), v[1].to(gd::kFloat32), v[2].to(gd::kFloat32)}).scalar_type() ==
        gd::kFloat32);
}

TEST_CASE("tensor expression: derivatives through autograd equal the closed forms; gradcheck and gradgradcheck") {
  std::vector<gd::Tensor> v = columns(16, 2);
  for (gd::Tensor& column : v) column.requires_grad_(true);
  // u = sin(pi x) + x (1 - x) t^2 y
  gp::TensorExpression u("sin(pi*x) + x*(1-x)*t^2*y", {"x", "t", "y"});
  const std::vector<gd::Tensor> g = gd::autograd::grad({u.evaluate(v).sum()}, v);
  const gd::Tensor &x = v[0], &t = v[1], &y = v[2];
  CHECK(max_error(g[0], kPi * gd::cos(kPi * x) + (1 - 2 * x) * t * t * y) < 1e-14);
  CHECK(max_error(g[1], 2 * x * (1 - x) * t * y) < 1e-14);
  CHECK(max_error(g[2], x * (1 - x) * t * t) < 1e-14);
  auto fn = [&u](const std::vector<gd::Tensor>& inputs) { return std::vector<gd::Tensor>{u.evaluate(inputs)}; };
  std::vector<gd::Tensor> small = columns(4, 3);
  for (gd::Tensor& column : small) column.requires_grad_(true);
  CHECK(gd::autograd::gradcheck(fn, small));
  CHECK(gd::autograd::gradgradcheck(fn, small));
  gp::TensorExpression powers("x^t + 2^y + sqrt(x)/t + cosh(y)*log(x)", {"x", "t", "y"});
  auto fn2 = [&powers](const std::vector<gd::Tensor>& inputs) { return std::vector<gd::Tensor>{powers.evaluate(inputs)}; };
  CHECK(gd::autograd::gradcheck(fn2, small));
  CHECK(gd::autograd::gradgradcheck(fn2, small));
}

TEST_CASE("tensor expression: bad text, names and values are errors quoting the expression") {
  CHECK_THROWS_WITH_AS(gp::TensorExpression("sin(pi*q)", {"x", "t"}), doctest::Contains("sin(pi*q)"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::TensorExpression("sin(pi*q)", {"x", "t"}), doctest::Contains("variables: x, t"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::TensorExpression("sin(pi*q)", {"x", "t"}), doctest::Contains("unknown name q"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::TensorExpression("sin(x", {"x"}), doctest::Contains("sin(x"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::TensorExpression("tgamma(x)", {"x"}), doctest::Contains("not supported"), gd::Error);
  // GiNaC would read these as x^(-(0.5 + t)) and 2*(1 - x); they are refused.
  CHECK_THROWS_WITH_AS(gp::TensorExpression("x^-0.5 + t", {"x", "t"}), doctest::Contains("parentheses"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::TensorExpression("2*-x+1", {"x"}), doctest::Contains("position 3"), gd::Error);
  CHECK_THROWS_AS(gp::TensorExpression("x - -1", {"x"}), gd::Error);
  CHECK_THROWS_AS(gp::TensorExpression("", {"x"}), gd::Error);
  CHECK_THROWS_AS(gp::TensorExpression("x + y", {"x", "x"}), gd::Error);
  CHECK_THROWS_AS(gp::TensorExpression("pi", {"pi"}), gd::Error);
  gp::TensorExpression e("x + t", {"x", "t"});
  CHECK_THROWS_WITH_AS(e.evaluate({gd::zeros({3, 1})}), doctest::Contains("1 values for the 2 variables"), gd::Error);
  CHECK_THROWS_AS(e.evaluate({gd::zeros({3, 1}), gd::Tensor()}), gd::Error);
}

TEST_CASE("tensor expression: a hard constraint meets its boundary and initial values whatever the network") {
  // u = sin(pi x) + x (1 - x) t y(x, t): u(0, t) = u(1, t) = 0 and u(x, 0) = sin(pi x).
  gd::nn::Sequential net = gp::testing::tanh_mlp(2, 8, 1, 4);
  gp::TensorExpression transform("sin(pi*x) + x*(1-x)*t*y", {"x", "t", "y"});
  gp::OutputTransform output = [&transform](const gd::Tensor& x, const gd::Tensor& y) {
    return transform.evaluate({x.narrow(1, 0, 1), x.narrow(1, 1, 1), y});
  };
  gd::Tensor boundary = gd::tensor({0.0, 0.3, 1.0, 0.7, 0.25, 0.0, 0.5, 0.0}, kF64).reshape({4, 2});
  gp::Solution at_boundary(net, boundary, gp::DerivativeNeeds{{{0}, {1}, {0, 0}}, false, {}}, gp::Engine::kAuto, output);
  CHECK(at_boundary.engine() == gp::Engine::kTaylor);  // orders <= 2: the chain rule carries the jet
  gd::Tensor u = at_boundary.u();
  CHECK(std::abs(u[0][0].item<double>()) < 1e-15);
  CHECK(std::abs(u[1][0].item<double>()) < 1e-15);
  CHECK(std::abs(u[2][0].item<double>() - std::sin(kPi * 0.25)) < 1e-15);
  CHECK(std::abs(u[3][0].item<double>() - 1.0) < 1e-15);
  // u_xx from the Solution against the product rule on the network's own derivatives.
  gd::Tensor interior = columns(32, 5)[0].repeat({1, 2}) * gd::tensor({1.0, 0.5}, kF64);
  gp::Solution hard(net, interior, gp::DerivativeNeeds{{{0, 0}}, false, {}}, gp::Engine::kNested, output);
  gp::Solution plain(net, interior, gp::DerivativeNeeds{{{0}, {0, 0}}, false, {}}, gp::Engine::kNested);
  const gd::Tensor x = interior.narrow(1, 0, 1), t = interior.narrow(1, 1, 1);
  const gd::Tensor expected = -kPi * kPi * gd::sin(kPi * x) +
                              t * (-2 * plain.u() + 2 * (1 - 2 * x) * plain.d(0) + x * (1 - x) * plain.d({0, 0}));
  CHECK(max_error(hard.d({0, 0}).detach(), expected.detach()) < 1e-12);
}
