// Tests of optim::LevenbergMarquardt: a linear least-squares problem against
// its closed-form solution, Rosenbrock's residuals to their minimum, rejected
// steps leaving the parameters exactly where they were, the damping rule,
// state_dict and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"
#include "optim/levenberg_marquardt.h"

namespace gd = gradiens;
namespace optim = gradiens::optim;
using gd::Tensor;

namespace {

const gd::TensorOptions kF64 = gd::TensorOptions().dtype(gd::kFloat64);

double at(const Tensor& t, int64_t i) { return t.reshape({-1})[i].item<double>(); }

// Rosenbrock as residuals: r = (10 (y - x^2), 1 - x), ||r||^2 = 100 (y - x^2)^2 + (1 - x)^2.
optim::LeastSquares rosenbrock(const Tensor& p, bool jacobian) {
  const double x = at(p, 0), y = at(p, 1);
  optim::LeastSquares out;
  out.residuals = gd::tensor({10 * (y - x * x), 1 - x}, kF64);
  if (jacobian) out.jacobian = gd::tensor({-20 * x, 10.0, -1.0, 0.0}, kF64).reshape({2, 2});
  return out;
}

}  // namespace

TEST_CASE("levenberg-marquardt: a linear problem lands on the normal equations' solution") {
  // r = A p - b with A = [[1, 0], [0, 1], [1, 1]], b = [1, 2, 4]: A^T A = [[2, 1], [1, 2]],
  // A^T b = [5, 6], so p* = [4/3, 7/3] (by hand).
  Tensor p = gd::zeros({2}, kF64).requires_grad_();
  const Tensor A = gd::tensor({1.0, 0.0, 0.0, 1.0, 1.0, 1.0}, kF64).reshape({3, 2});
  const Tensor b = gd::tensor({1.0, 2.0, 4.0}, kF64);
  optim::LevenbergMarquardt lm({p}, optim::LevenbergMarquardtOptions().damping(1e-12));
  auto closure = [&](bool jacobian) {
    gd::NoGradGuard no_grad;
    return optim::LeastSquares{gd::matmul(A, p) - b, jacobian ? A : Tensor()};
  };
  const double first = lm.step(closure).item<double>();
  CHECK(first == doctest::Approx(1 + 4 + 16).epsilon(1e-15));  // ||b||^2 at p = 0
  CHECK(at(p, 0) == doctest::Approx(4.0 / 3).epsilon(1e-10));
  CHECK(at(p, 1) == doctest::Approx(7.0 / 3).epsilon(1e-10));
  // A residual no parameter moves (a zero row of J, e.g. a condition met by a
  // hard constraint) counts in the loss and changes nothing else.
  Tensor p2 = gd::zeros({2}, kF64).requires_grad_();
  const Tensor A2 = gd::cat({A, gd::zeros({1, 2}, kF64)}, 0);
  const Tensor b2 = gd::tensor({1.0, 2.0, 4.0, 5.0}, kF64);
  optim::LevenbergMarquardt lm2({p2}, optim::LevenbergMarquardtOptions().damping(1e-12));
  const double first2 = lm2.step([&](bool jacobian) {
    gd::NoGradGuard no_grad;
    return optim::LeastSquares{gd::matmul(A2, p2) - b2, jacobian ? A2 : Tensor()};
  }).item<double>();
  CHECK(first2 == doctest::Approx(1 + 4 + 16 + 25).epsilon(1e-15));
  CHECK(at(p2, 0) == at(p, 0));
  CHECK(at(p2, 1) == at(p, 1));
  // Fewer residuals than parameters: the step goes through J J^T and reaches an exact fit.
  Tensor q = gd::zeros({3}, kF64).requires_grad_();
  const Tensor wide = gd::tensor({1.0, 2.0, 3.0, 0.0, 1.0, 1.0}, kF64).reshape({2, 3});
  const Tensor target = gd::tensor({6.0, 2.0}, kF64);
  optim::LevenbergMarquardt under({q}, optim::LevenbergMarquardtOptions().damping(1e-12));
  for (int i = 0; i < 3; ++i)
    under.step([&](bool jacobian) {
      gd::NoGradGuard no_grad;
      return optim::LeastSquares{gd::matmul(wide, q) - target, jacobian ? wide : Tensor()};
    });
  CHECK((gd::matmul(wide, q) - target).abs().max().item<double>() < 1e-9);
}

TEST_CASE("levenberg-marquardt: Rosenbrock's residuals reach (1, 1) from (-1.2, 1)") {
  Tensor p = gd::tensor({-1.2, 1.0}, kF64).requires_grad_();
  optim::LevenbergMarquardt lm({p});
  int steps = 0;
  while (steps < 200 && (std::abs(at(p, 0) - 1) > 1e-12 || std::abs(at(p, 1) - 1) > 1e-12)) {
    lm.step([&](bool jacobian) { return rosenbrock(p, jacobian); });
    ++steps;
  }
  CAPTURE(steps);
  CHECK(steps < 100);
  CHECK(at(p, 0) == doctest::Approx(1).epsilon(1e-12));
  CHECK(at(p, 1) == doctest::Approx(1).epsilon(1e-12));
  const auto* state = dynamic_cast<const optim::LevenbergMarquardtParamState*>(lm.state(p));
  REQUIRE(state != nullptr);
  CHECK(state->step() == steps);
}

TEST_CASE("levenberg-marquardt: rejected steps restore the parameters exactly and raise the damping") {
  Tensor p = gd::tensor({0.1, -0.3}, kF64).requires_grad_();
  const std::vector<double> before = {at(p, 0), at(p, 1)};
  optim::LevenbergMarquardt lm({p}, optim::LevenbergMarquardtOptions().max_attempts(3));
  // The Jacobian points the wrong way: every step raises the loss and is undone.
  auto closure = [&](bool jacobian) {
    gd::NoGradGuard no_grad;
    optim::LeastSquares out{p * 1.0, Tensor()};
    if (jacobian) out.jacobian = -gd::eye(2, kF64);
    return out;
  };
  lm.step(closure);
  CHECK(at(p, 0) == before[0]);
  CHECK(at(p, 1) == before[1]);
  const auto* state = dynamic_cast<const optim::LevenbergMarquardtParamState*>(lm.state(p));
  REQUIRE(state != nullptr);
  CHECK(state->rejected() == 3);
  // mu started at 1e-3 * max diag(J^T J) = 1e-3 and was doubled, then quadrupled, then multiplied by 8.
  CHECK(state->mu() == doctest::Approx(1e-3 * 2 * 4 * 8).epsilon(1e-15));
  CHECK(state->nu() == 16);
}

TEST_CASE("levenberg-marquardt: state_dict carries the damping, so a loaded optimizer continues identically") {
  Tensor a = gd::tensor({-1.2, 1.0}, kF64).requires_grad_(), b = gd::tensor({-1.2, 1.0}, kF64).requires_grad_();
  optim::LevenbergMarquardt first({a});
  for (int i = 0; i < 4; ++i) first.step([&](bool jacobian) { return rosenbrock(a, jacobian); });
  {
    gd::NoGradGuard no_grad;
    b.copy_(a);
  }
  optim::LevenbergMarquardt second({b});
  second.load_state_dict(first.state_dict());
  for (int i = 0; i < 3; ++i) {
    first.step([&](bool jacobian) { return rosenbrock(a, jacobian); });
    second.step([&](bool jacobian) { return rosenbrock(b, jacobian); });
  }
  CHECK(at(a, 0) == at(b, 0));
  CHECK(at(a, 1) == at(b, 1));
  CHECK(first.state_dict() == second.state_dict());
}

TEST_CASE("levenberg-marquardt: errors") {
  Tensor p = gd::tensor({1.0, 2.0}, kF64).requires_grad_();
  optim::LevenbergMarquardt lm({p});
  CHECK_THROWS_WITH_AS(lm.step([] { return Tensor(); }), doctest::Contains("ResidualClosure"), gd::Error);
  CHECK_THROWS_WITH_AS(lm.step([&](bool) { return optim::LeastSquares{gd::zeros({3}, kF64), gd::zeros({3, 3}, kF64)}; }),
                       doctest::Contains("the Jacobian must be [3, 2]"), gd::Error);
  CHECK_THROWS_WITH_AS(optim::LevenbergMarquardt({p}, optim::LevenbergMarquardtOptions().damping(0)),
                       doctest::Contains("damping must be positive"), gd::Error);
  CHECK_THROWS_WITH_AS(optim::LevenbergMarquardt({p}, optim::LevenbergMarquardtOptions().max_attempts(0)),
                       doctest::Contains("max_attempts must be at least 1"), gd::Error);
}
