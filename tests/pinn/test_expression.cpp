// muParser expressions against the same formulas in C++, and their errors;
// Fourier-feature embeddings against their definition.
#include <cmath>
#include <numbers>

#include <doctest/doctest.h>

#include "engine/functions.h"
#include "engine/generator.h"
#include "kernels/error.h"
#include "pinn/expression.h"
#include "pinn/fourier.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

TEST_CASE("expression: evaluates at every point as the formula in C++") {
  gd::Generator generator(3);
  gd::Tensor points = gd::rand({257, 2}, generator, gd::TensorOptions().dtype(gd::kFloat64)) * 2 - 1;
  gp::Expression initial("-sin(pi*x)", {"x", "t"});
  gp::Expression decaying("exp(-nu*t)*sin(pi*x) + x^2", {"x", "t"}, {{"nu", 0.25}});
  gd::Tensor a = initial.evaluate(points), b = decaying.evaluate(points);
  REQUIRE(a.sizes() == gd::IntArrayRef({257, 1}));
  const double* p = points.data_ptr<double>();
  double worst_a = 0, worst_b = 0;
  for (int64_t i = 0; i < 257; ++i) {
    const double x = p[2 * i], t = p[2 * i + 1];
    worst_a = std::max(worst_a, std::abs(a[i][0].item<double>() + std::sin(std::numbers::pi * x)));
    worst_b = std::max(worst_b, std::abs(b[i][0].item<double>() -
                                         (std::exp(-0.25 * t) * std::sin(std::numbers::pi * x) + x * x)));
  }
  CHECK(worst_a < 1e-15);
  CHECK(worst_b < 1e-14);
  CHECK(decaying.evaluate(std::vector<double>{0.5, 0.0}) == doctest::Approx(1.25).epsilon(1e-15));
  CHECK(initial.uses("x"));
  CHECK_FALSE(initial.uses("t"));
  // A constant, and float32 points.
  gp::Expression constant("2*e", {"x"});
  CHECK(constant.evaluate(gd::zeros({3, 1})).sum().item<double>() == doctest::Approx(6 * std::numbers::e));
  // Zero points.
  CHECK(initial.evaluate(gd::zeros({0, 2}, gd::TensorOptions().dtype(gd::kFloat64))).size(0) == 0);
}

TEST_CASE("expression: bad expressions and points are errors quoting the expression") {
  CHECK_THROWS_WITH_AS(gp::Expression("sin(pi*q)", {"x", "t"}), doctest::Contains("sin(pi*q)"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::Expression("sin(pi*q)", {"x", "t"}), doctest::Contains("variables: x, t"), gd::Error);
  CHECK_THROWS_WITH_AS(gp::Expression("sin(x", {"x"}), doctest::Contains("position"), gd::Error);
  CHECK_THROWS_AS(gp::Expression("", {"x"}), gd::Error);
  CHECK_THROWS_AS(gp::Expression("x + y", {"x", "x"}), gd::Error);
  gp::Expression e("x + t", {"x", "t"});
  CHECK_THROWS_WITH_AS(e.evaluate(gd::zeros({4, 3}, gd::TensorOptions().dtype(gd::kFloat64))),
                       doctest::Contains("expected points [N, 2]"), gd::Error);
  CHECK_THROWS_AS(e.evaluate(gd::zeros({4, 2}, gd::TensorOptions().dtype(gd::kInt64))), gd::Error);
  CHECK_THROWS_AS(e.evaluate(std::vector<double>{1.0}), gd::Error);
}

TEST_CASE("expression: default coordinate names") {
  CHECK(gp::coordinate_names(1, true) == std::vector<std::string>{"x", "t"});
  CHECK(gp::coordinate_names(3, false) == std::vector<std::string>{"x", "y", "z"});
  CHECK(gp::coordinate_names(5, false) == std::vector<std::string>{"x1", "x2", "x3", "x4", "x5"});
}

TEST_CASE("FourierFeatures: [sin(2 pi x B), cos(2 pi x B)] with a fixed buffer B") {
  gd::manual_seed(7);
  gp::FourierFeatures features(2, 3, 1.5);
  features->to(gd::kFloat64);
  CHECK(features->parameters().empty());
  CHECK(features->named_buffers().size() == 1);
  gd::Tensor x = gd::rand({5, 2}, gd::TensorOptions().dtype(gd::kFloat64));
  gd::Tensor y = features->forward(x);
  REQUIRE(y.sizes() == gd::IntArrayRef({5, 6}));
  const gd::Tensor& b = features->frequencies;
  double worst = 0;
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t k = 0; k < 3; ++k) {
      const double z = 2 * std::numbers::pi * (x[i][0].item<double>() * b[0][k].item<double>() +
                                               x[i][1].item<double>() * b[1][k].item<double>());
      worst = std::max({worst, std::abs(y[i][k].item<double>() - std::sin(z)),
                        std::abs(y[i][k + 3].item<double>() - std::cos(z))});
    }
  CHECK(worst < 1e-13);
  // sigma scales the standard deviation of B (loosely: 6 draws).
  CHECK(b.abs().max().item<double>() < 1.5 * 6);
  CHECK_THROWS_AS(features->forward(gd::rand({5, 3}, gd::TensorOptions().dtype(gd::kFloat64))), gd::Error);
  CHECK_THROWS_AS(gp::FourierFeatures(2, 3, 0.0), gd::Error);
  CHECK_THROWS_AS(gp::FourierFeatures(0, 3, 1.0), gd::Error);
}
