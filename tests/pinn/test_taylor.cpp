// The Taylor-mode engine against the nested one: values, gradients and
// Laplacians to 1e-12 in float64, the same parameter gradients of a loss
// built on them, derivatives of its outputs by gradcheck, and its errors.
#include <doctest/doctest.h>

#include "engine/autograd/autograd.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/conv.h"
#include "nn/modules/linear.h"
#include "pinn/operators.h"
#include "pinn/taylor.h"

namespace gp = gradiens::pinn;
namespace gd = gradiens;
namespace nn = gradiens::nn;

namespace {

nn::Sequential make_mlp() {
  gd::manual_seed(7);
  nn::Sequential net(nn::Linear(3, 12), nn::Tanh(), nn::Linear(12, 10), nn::SiLU(),
                     nn::Sequential(nn::Linear(10, 8), nn::Sigmoid(), nn::Identity()), nn::Linear(8, 2));
  net->to(gd::kFloat64);
  return net;
}

double max_error(const gd::Tensor& a, const gd::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("taylor: value, gradient and Laplacian equal the nested engine's to 1e-12") {
  nn::Sequential net = make_mlp();
  CHECK(gp::taylor_supported(*net));
  gd::Generator generator(3);
  gd::Tensor x = gd::randn({32, 3}, generator, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  gp::TaylorOutputs taylor = gp::taylor_forward(*net, x);
  gd::Tensor u = net->forward(x);
  CHECK(max_error(taylor.value, u) < 1e-12);
  for (int64_t component = 0; component < 2; ++component) {
    CAPTURE(component);
    CHECK(max_error(taylor.gradient.select(1, component), gp::grad(u, x, component)) < 1e-12);
    CHECK(max_error(taylor.laplacian.narrow(1, component, 1), gp::laplacian(u, x, component)) < 1e-12);
  }
}

TEST_CASE("taylor: training through it gives the nested engine's parameter gradients") {
  nn::Sequential net = make_mlp();
  gd::Generator generator(4);
  gd::Tensor x = gd::randn({16, 3}, generator, gd::TensorOptions().dtype(gd::kFloat64));
  auto parameter_grads = [&](bool taylor) {
    net->zero_grad();
    gd::Tensor points = x.detach().requires_grad_();
    gd::Tensor lap = taylor ? gp::taylor_forward(*net, points).laplacian.narrow(1, 0, 1)
                            : gp::laplacian(net->forward(points), points);
    (lap + gd::sin(points.narrow(1, 0, 1))).square().mean().backward();
    std::vector<gd::Tensor> grads;
    // The last bias does not reach a Laplacian: no gradient (taken as zero).
    for (const gd::Tensor& p : net->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : gd::zeros_like(p));
    return grads;
  };
  auto nested = parameter_grads(false), taylor = parameter_grads(true);
  REQUIRE(nested.size() == taylor.size());
  for (size_t i = 0; i < nested.size(); ++i) CHECK(max_error(nested[i], taylor[i]) < 1e-12);
}

TEST_CASE("taylor: its outputs differentiate further (gradcheck and gradgradcheck in x)") {
  nn::Sequential net = make_mlp();
  gd::Generator generator(5);
  gd::Tensor x = gd::randn({4, 3}, generator, gd::TensorOptions().dtype(gd::kFloat64)).requires_grad_();
  auto outputs = [&](const std::vector<gd::Tensor>& inputs) {
    gp::TaylorOutputs t = gp::taylor_forward(*net, inputs[0]);
    return std::vector<gd::Tensor>{t.laplacian, t.gradient};
  };
  CHECK(gd::autograd::gradcheck(outputs, {x}));
  CHECK(gd::autograd::gradgradcheck(outputs, {x}));
}

TEST_CASE("taylor: networks it cannot carry") {
  nn::Sequential conv(nn::Conv2d(1, 2, 3), nn::Tanh());
  CHECK(!gp::taylor_supported(*conv));
  CHECK_THROWS_WITH(gp::taylor_forward(*conv, gd::zeros({2, 3}, gd::kFloat64)),
                    "pinn::taylor_forward: a Conv2d layer is not an elementwise activation or Linear (the Taylor engine "
                    "takes MLPs; use the nested operators of pinn/operators.h)");
}
