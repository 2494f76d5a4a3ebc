// First checks of the tensor core and the tape: values against closed forms.
#include <doctest/doctest.h>

#include <cmath>

#include "gradiens.h"

namespace gd = gradiens;

TEST_CASE("mul-add chain and backward") {
  auto x = gd::ones({1}, gd::kFloat64).requires_grad_();
  auto y = x;
  for (int i = 0; i < 3; ++i) y = y * 2.0 + 1.0;
  y.sum().backward();
  CHECK(y.item<double>() == doctest::Approx(15.0));
  CHECK(x.grad().item<double>() == doctest::Approx(8.0));
}

TEST_CASE("tanh derivatives through create_graph") {
  auto x = gd::full({1}, 0.3, gd::kFloat64).requires_grad_();
  auto y = gd::tanh(x);
  auto d1 = gd::autograd::grad({y}, {x}, {}, true, true)[0];
  auto d2 = gd::autograd::grad({d1}, {x}, {}, true, true)[0];
  auto d3 = gd::autograd::grad({d2}, {x}, {}, true, false)[0];
  double t = std::tanh(0.3);
  CHECK(d1.item<double>() == doctest::Approx(1 - t * t));
  CHECK(d2.item<double>() == doctest::Approx(-2 * t * (1 - t * t)));
  CHECK(d3.item<double>() == doctest::Approx((1 - t * t) * (6 * t * t - 2)));
}
