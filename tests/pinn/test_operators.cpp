// The nested reverse-mode operators against closed forms, their own
// derivatives against finite differences (gradcheck), and their errors.
#include <doctest/doctest.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "pinn/operators.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;

namespace {

double max_error(const gd::Tensor& a, const gd::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("operators: grad, partial, laplacian and divergence equal their closed forms") {
  gd::Generator generator(1);
  gd::Tensor x = gd::rand({16, 3}, generator, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  gd::Tensor x0 = x.narrow(1, 0, 1), x1 = x.narrow(1, 1, 1), x2 = x.narrow(1, 2, 1);
  // u = sin(x0) x1^2 + x2^3, and a second column 2 x0 x1.
  gd::Tensor u = gd::cat({gd::sin(x0) * x1 * x1 + x2 * x2 * x2, 2 * x0 * x1}, 1);
  gd::Tensor s = gd::sin(x0.detach()), c = gd::cos(x0.detach()), y = x1.detach(), z = x2.detach();
  CHECK(max_error(gp::grad(u, x), gd::cat({c * y * y, 2 * s * y, 3 * z * z}, 1)) < 1e-14);
  CHECK(max_error(gp::grad(u, x, 1), gd::cat({2 * y, 2 * x0.detach(), gd::zeros_like(z)}, 1)) < 1e-14);
  CHECK(max_error(gp::partial(u, x, {0, 0}), -s * y * y) < 1e-14);
  CHECK(max_error(gp::partial(u, x, {0, 1}), 2 * c * y) < 1e-14);
  CHECK(max_error(gp::partial(u, x, {0, 0, 1}), -2 * s * y) < 1e-14);
  CHECK(max_error(gp::partial(u, x, {2, 2, 2}), gd::full_like(z, 6.0)) < 1e-14);
  CHECK(max_error(gp::partial(u, x, {}), u.narrow(1, 0, 1).detach()) == 0);
  // A derivative that vanishes: d^2(2 x0 x1)/dx2^2 = 0, and beyond.
  CHECK(max_error(gp::partial(u, x, {2, 2, 2}, 1), gd::zeros_like(z)) == 0);
  CHECK(max_error(gp::laplacian(u, x), -s * y * y + 2 * s + 6 * z) < 1e-14);
  // v = (x0^2, x0 x1, sin x2): div v = 2 x0 + x0 + cos x2.
  gd::Tensor v = gd::cat({x0 * x0, x0 * x1, gd::sin(x2)}, 1);
  CHECK(max_error(gp::divergence(v, x), 3 * x0.detach() + gd::cos(z)) < 1e-14);
}

TEST_CASE("operators: a residual built from them trains (gradcheck in the weights)") {
  // u = tanh(x W) a, the Laplacian's derivative with respect to W and a
  // against float64 finite differences.
  gd::Generator generator(2);
  auto options = gd::TensorOptions().dtype(gd::kFloat64);
  gd::Tensor x = gd::rand({5, 2}, generator, options);
  gd::Tensor w = gd::randn({2, 4}, generator, options).requires_grad_();
  gd::Tensor a = gd::randn({4, 1}, generator, options).requires_grad_();
  auto residual = [&](const std::vector<gd::Tensor>& inputs) {
    gd::Tensor points = x.detach().requires_grad_();
    gd::Tensor u = gd::matmul(gd::tanh(gd::matmul(points, inputs[0])), inputs[1]);
    return std::vector<gd::Tensor>{gp::laplacian(u, points) + gp::partial(u, points, {0, 1})};
  };
  CHECK(gd::autograd::gradcheck(residual, {w, a}));
  CHECK(gd::autograd::gradgradcheck(residual, {w, a}));
}

TEST_CASE("operators: bad input is an error naming the operator") {
  gd::Tensor x = gd::rand({4, 2}, gd::TensorOptions().dtype(gd::kFloat64));
  gd::Tensor u = x.sum({1}, true);
  CHECK_THROWS_WITH(gp::laplacian(u, x), "pinn::laplacian: x does not require grad, so u cannot be differentiated by it");
  x.requires_grad_();
  gd::Tensor v = x * 2;
  CHECK_THROWS_WITH(gp::grad(v, x, 2), "pinn::grad: component 2 is out of range for u with 2 columns");
  CHECK_THROWS_WITH(gp::partial(v, x, {3}), "pinn::partial: coordinate 3 is out of range for x with 2 columns");
  CHECK_THROWS_WITH(gp::divergence(v.narrow(1, 0, 1), x),
                    "pinn::divergence: v must have one column per coordinate of x (2), got 1");
  CHECK_THROWS_WITH(gp::grad(v.narrow(0, 0, 3), x), "pinn::grad: u must be [N, m] with N = 4 (x's rows), got [3, 2]");
}
