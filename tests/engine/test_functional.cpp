// Tests for autograd::functional (jacobian, hessian, vjp, jvp, vhp, hvp):
// closed forms, the Hessian of a tanh MLP, create_graph and strict mode.
#include <doctest/doctest.h>

#include <vector>

#include "engine/autograd/functional.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace F = gradiens::autograd::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {

constexpr double kRtol = 1e-12, kAtol = 1e-13;

std::string mismatch(const Tensor& got, const Tensor& want) { return value_mismatch(got, want, kRtol, kAtol); }

// diag(v) for a 1-D v.
Tensor diag(const Tensor& v) { return gd::eye(v.numel(), gd::kFloat64) * v.unsqueeze(0); }

// A small tanh MLP u(x) = w2 . tanh(W1 x + b1) + b2, of x [3], from matmul and tanh.
struct Mlp {
  Tensor w1 = sample({4, 3}, -1, 1, 11), b1 = sample({4}, -0.5, 0.5, 12), w2 = sample({4}, -1, 1, 13);
  Tensor b2 = gd::scalar_tensor(0.25, gd::kFloat64);
  Tensor operator()(const Tensor& x) const { return gd::matmul(gd::tanh(gd::matmul(w1, x) + b1), w2) + b2; }
  // Closed form: H = W1^T diag(w2 * tanh''(z)) W1 with tanh'' = -2 t (1 - t^2).
  Tensor hessian(const Tensor& x) const {
    Tensor t = gd::tanh(gd::matmul(w1, x) + b1);
    Tensor curvature = w2 * (t * (1 - t * t)) * -2.0;
    return gd::matmul(w1.t(), diag(curvature).matmul(w1));
  }
};

}  // namespace

TEST_CASE("functional::jacobian of one tensor against closed forms") {
  Tensor x = tensor_of({0.5, -1.5, 2.0});
  Tensor a = tensor_of({1, 2, 3, -4, 5, -6}, {2, 3});
  Tensor w = sample({3, 2}, -1, 1, 3);
  Tensor m = sample({2, 3}, -1, 1, 4);
  // clang-format off
  CHECK(mismatch(F::jacobian([](const Tensor& v) { return v * v; }, x), diag(x * 2.0)) == "");                   // d(x^2) = diag(2x)
  CHECK(mismatch(F::jacobian([&](const Tensor& v) { return gd::matmul(a, v); }, x), a) == "");                     // d(Ax) = A
  CHECK(mismatch(F::jacobian([](const Tensor& v) { return (v * v * v).sum(); }, x), x * x * 3.0) == "");          // scalar out: the gradient
  CHECK(mismatch(F::jacobian([](const Tensor& v) { return gd::sin(v); }, gd::scalar_tensor(0.3, gd::kFloat64)), gd::cos(gd::scalar_tensor(0.3, gd::kFloat64))) == "");  // 0-dim in and out
  CHECK(mismatch(F::jacobian([](const Tensor& v) { return v; }, x), gd::eye(3, gd::kFloat64)) == "");             // identity
  CHECK(mismatch(F::jacobian([](const Tensor&) { return gd::ones({2}, gd::kFloat64); }, x), gd::zeros({2, 3}, gd::kFloat64)) == "");  // independent output: zeros
  // clang-format on
  // A matrix function: d(MW)_{ij} / dM_{kl} = delta_ik W_lj, shape [2, 2] + [2, 3].
  Tensor jac = F::jacobian([&](const Tensor& v) { return gd::matmul(v, w); }, m);
  Tensor want = gd::zeros({2, 2, 2, 3}, gd::kFloat64);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t l = 0; l < 3; ++l) want.index({i, j, i, l}).fill_(w.index({l, j}).item<double>());
  CHECK(mismatch(jac, want) == "");
  // float32 inputs give a float32 Jacobian; vectorize gives the same numbers.
  Tensor jf = F::jacobian([](const Tensor& v) { return v * v; }, x.to(gd::kFloat32));
  CHECK(jf.dtype() == gd::kFloat32);
  CHECK(mismatch(jf, diag(x * 2.0)) == "");
  CHECK(gd::equal(F::jacobian([&](const Tensor& v) { return gd::tanh(gd::matmul(a, v)); }, x, false, false, true),
                  F::jacobian([&](const Tensor& v) { return gd::tanh(gd::matmul(a, v)); }, x)));
}

TEST_CASE("functional::jacobian of several tensors: blocks indexed [output][input]") {
  Tensor x = tensor_of({0.5, -1.5}), y = tensor_of({2.0, 3.0});
  // f(x, y) = (x * y, x.sum() + y^2)
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1], in[0].sum() + in[1] * in[1]}; };
  F::Jacobian j = F::jacobian(f, {x, y});
  REQUIRE(j.size() == 2);
  REQUIRE(j[0].size() == 2);
  CHECK(mismatch(j[0][0], diag(y)) == "");
  CHECK(mismatch(j[0][1], diag(x)) == "");
  CHECK(mismatch(j[1][0], gd::ones({2, 2}, gd::kFloat64)) == "");
  CHECK(mismatch(j[1][1], diag(y * 2.0)) == "");
  // One output of several inputs: one block per input. g(x, w) = tanh(x . w).
  Tensor w = tensor_of({0.7, -0.2});
  std::vector<Tensor> g = F::jacobian([](const std::vector<Tensor>& in) { return gd::tanh(gd::dot(in[0], in[1])); }, {x, w});
  Tensor slope = 1 - gd::tanh(gd::dot(x, w)).square();
  CHECK(mismatch(g[0], w * slope) == "");
  CHECK(mismatch(g[1], x * slope) == "");
  // The inputs are left alone: no history, no .grad.
  Tensor leaf = x.clone().requires_grad_();
  F::jacobian([](const Tensor& v) { return v.exp(); }, leaf);
  CHECK_FALSE(leaf.grad().defined());
}

TEST_CASE("functional::jacobian with create_graph is differentiable") {
  Tensor x = tensor_of({0.5, -1.5, 2.0}).requires_grad_();
  Tensor plain = F::jacobian([](const Tensor& v) { return v * v * v; }, x);
  CHECK_FALSE(plain.requires_grad());
  Tensor j = F::jacobian([](const Tensor& v) { return v * v * v; }, x, /*create_graph=*/true);
  CHECK(j.requires_grad());
  CHECK(mismatch(j.detach(), diag(x.detach() * x.detach() * 3.0)) == "");
  // sum J = sum 3 x^2, so its gradient is 6 x.
  Tensor g = gd::autograd::grad({j.sum()}, {x})[0];
  CHECK(mismatch(g, x.detach() * 6.0) == "");
}

TEST_CASE("functional::hessian of a tanh MLP equals its closed form and the jacobian of its gradient") {
  Mlp mlp;
  Tensor x = tensor_of({0.3, -0.8, 0.5});
  Tensor h = F::hessian([&](const Tensor& v) { return mlp(v); }, x);
  CHECK(h.sizes() == gd::IntArrayRef{3, 3});
  CHECK(mismatch(h, mlp.hessian(x)) == "");
  auto gradient = [&](const Tensor& v) {
    return gd::autograd::grad({mlp(v)}, {v}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  };
  CHECK(mismatch(h, F::jacobian(gradient, x)) == "");
  CHECK(mismatch(h, h.t()) == "");
  // With respect to x and W1 at once: the x block is the same, and the mixed
  // blocks are transposes of each other.
  F::Jacobian hh = F::hessian(
      [&](const std::vector<Tensor>& in) {
        Mlp local = mlp;
        local.w1 = in[1];
        return local(in[0]);
      },
      {x, mlp.w1});
  CHECK(hh[0][1].sizes() == gd::IntArrayRef{3, 4, 3});
  CHECK(hh[1][0].sizes() == gd::IntArrayRef{4, 3, 3});
  CHECK(hh[1][1].sizes() == gd::IntArrayRef{4, 3, 4, 3});
  CHECK(mismatch(hh[0][0], h) == "");
  CHECK(mismatch(hh[1][0], hh[0][1].permute({1, 2, 0})) == "");
  // And a closed form: sum(x^3) has Hessian diag(6x).
  CHECK(mismatch(F::hessian([](const Tensor& v) { return (v * v * v).sum(); }, x), diag(x * 6.0)) == "");
}

TEST_CASE("functional::hessian with create_graph gives third derivatives") {
  // f = sum(x^4): H = diag(12 x^2), d(trace H)/dx = 24 x.
  Tensor x = tensor_of({0.5, -1.5}).requires_grad_();
  Tensor h = F::hessian([](const Tensor& v) { return (v * v * v * v).sum(); }, x, /*create_graph=*/true);
  CHECK(mismatch(h.detach(), diag(x.detach().square() * 12.0)) == "");
  Tensor g = gd::autograd::grad({h.diagonal().sum()}, {x})[0];
  CHECK(mismatch(g, x.detach() * 24.0) == "");
}

TEST_CASE("functional::vjp and jvp against closed forms") {
  Tensor a = tensor_of({1, 2, 3, -4, 5, -6}, {2, 3});
  Tensor x = tensor_of({0.5, -1.5, 2.0});
  Tensor u = tensor_of({0.25, -2.0});       // on the output side
  Tensor v = tensor_of({1.0, 0.5, -0.75});  // on the input side
  auto linear = [&](const Tensor& t) { return gd::matmul(a, t); };
  auto [out, vjp] = F::vjp(linear, x, u);
  CHECK(mismatch(out, gd::matmul(a, x)) == "");
  CHECK(mismatch(vjp, gd::matmul(u, a)) == "");                                    // u^T A
  auto [out2, jvp] = F::jvp(linear, x, v);
  CHECK(mismatch(out2, gd::matmul(a, x)) == "");
  CHECK(mismatch(jvp, gd::matmul(a, v)) == "");                                    // A v
  // clang-format off
  CHECK(mismatch(F::jvp([](const Tensor& t) { return gd::sin(t); }, x, v).second, gd::cos(x) * v) == "");
  CHECK(mismatch(F::vjp([](const Tensor& t) { return gd::sin(t); }, x, v).second, gd::cos(x) * v) == "");
  CHECK(mismatch(F::vjp([](const Tensor& t) { return t.square().sum(); }, x).second, x * 2.0) == "");  // scalar output: v may be omitted
  CHECK(mismatch(F::jvp([](const Tensor& t) { return t * 3.0; }, tensor_of({2.0}, {})).second, tensor_of({3.0}, {})) == "");  // 1-element input: v may be omitted
  // clang-format on
  // A nonlinear map: jvp = J v and vjp = u^T J with J from jacobian.
  auto net = [&](const Tensor& t) { return gd::tanh(gd::matmul(a, t) * 0.3); };
  Tensor j = F::jacobian(net, x);
  CHECK(mismatch(F::jvp(net, x, v).second, gd::matmul(j, v)) == "");
  CHECK(mismatch(F::vjp(net, x, u).second, gd::matmul(u, j)) == "");
  // Several inputs and outputs: f(x, y) = (x * y, x + y).
  Tensor y = tensor_of({2.0, 3.0, -1.0}), w = tensor_of({-1.0, 0.5, 2.0});
  auto pair = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1], in[0] + in[1]}; };
  auto [outs, tangents] = F::jvp(pair, {x, y}, {v, w});
  CHECK(mismatch(outs[0], x * y) == "");
  CHECK(mismatch(tangents[0], y * v + x * w) == "");
  CHECK(mismatch(tangents[1], v + w) == "");
  auto [outs2, cotangents] = F::vjp(pair, {x, y}, {v, w});
  CHECK(mismatch(cotangents[0], y * v + w) == "");
  CHECK(mismatch(cotangents[1], x * v + w) == "");
}

TEST_CASE("functional::vhp and hvp against closed forms") {
  // f(x) = x^T A x has Hessian A + A^T.
  Tensor a = tensor_of({1, 2, 0, -3, 5, 1, 4, -2, 2}, {3, 3});
  Tensor x = tensor_of({0.5, -1.5, 2.0}), v = tensor_of({1.0, 0.5, -0.75});
  auto quadratic = [&](const Tensor& t) { return gd::dot(t, gd::matmul(a, t)); };
  Tensor h = a + a.t();
  auto [value, hv] = F::hvp(quadratic, x, v);
  CHECK(mismatch(value, quadratic(x)) == "");
  CHECK(mismatch(hv, gd::matmul(h, v)) == "");
  CHECK(mismatch(F::vhp(quadratic, x, v).second, gd::matmul(v, h)) == "");
  // The MLP: both equal H v with H from hessian.
  Mlp mlp;
  Tensor xm = tensor_of({0.3, -0.8, 0.5});
  Tensor hm = mlp.hessian(xm);
  CHECK(mismatch(F::hvp(mlp, xm, v).second, gd::matmul(hm, v)) == "");
  CHECK(mismatch(F::vhp(mlp, xm, v).second, gd::matmul(v, hm)) == "");
  // Two inputs: f(x, y) = sum(x^2 y); H v = (2y vx + 2x vy, 2x vx).
  Tensor y = tensor_of({2.0, 3.0, -1.0}), w = tensor_of({-1.0, 0.5, 2.0});
  auto f = [](const std::vector<Tensor>& in) { return (in[0] * in[0] * in[1]).sum(); };
  auto [value2, hv2] = F::hvp(f, {x, y}, {v, w});
  CHECK(mismatch(value2, (x * x * y).sum()) == "");
  CHECK(mismatch(hv2[0], y * v * 2.0 + x * w * 2.0) == "");
  CHECK(mismatch(hv2[1], x * v * 2.0) == "");
  auto [value3, vh3] = F::vhp(f, {x, y}, {v, w});
  CHECK(mismatch(vh3[0], hv2[0]) == "");
  CHECK(mismatch(vh3[1], hv2[1]) == "");
}

TEST_CASE("functional: create_graph makes vjp, jvp and hvp differentiable") {
  Tensor x = tensor_of({0.5, -1.5, 2.0}).requires_grad_();
  Tensor v = tensor_of({1.0, 0.5, -0.75});
  auto cube = [](const Tensor& t) { return t * t * t; };
  // vjp = 3 x^2 v, so d(sum vjp)/dx = 6 x v; the same for jvp (elementwise J).
  for (bool forward : {false, true}) {
    CAPTURE(forward);
    auto [out, product] = forward ? F::jvp(cube, x, v, true) : F::vjp(cube, x, v, true);
    CHECK(out.requires_grad());
    CHECK(mismatch(gd::autograd::grad({product.sum()}, {x})[0], x.detach() * v * 6.0) == "");
    auto [plain_out, plain] = forward ? F::jvp(cube, x, v) : F::vjp(cube, x, v);
    CHECK_FALSE(plain.requires_grad());
    CHECK_FALSE(plain_out.requires_grad());
  }
  // hvp of sum(x^4) = 12 x^2 v, so d(sum hvp)/dx = 24 x v; the same for vhp.
  auto quartic = [](const Tensor& t) { return (t * t * t * t).sum(); };
  for (bool hessian_first : {false, true}) {
    CAPTURE(hessian_first);
    auto [value, product] = hessian_first ? F::hvp(quartic, x, v, true) : F::vhp(quartic, x, v, true);
    CHECK(mismatch(product.detach(), x.detach().square() * v * 12.0) == "");
    CHECK(mismatch(gd::autograd::grad({product.sum()}, {x})[0], x.detach() * v * 24.0) == "");
  }
}

TEST_CASE("functional: strict mode and argument errors carry PyTorch's messages") {
  Tensor x = tensor_of({0.5, -1.5, 2.0}), y = tensor_of({1.0, 2.0});
  auto constant = [](const Tensor&) { return gd::ones({2}, gd::kFloat64); };
  auto linear = [](const Tensor& t) { return (t * 2.0).sum(); };
  auto uses_first = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; };
  // clang-format off
  CHECK(error_of([&] { F::jacobian(constant, x, false, true); }) == "Output 0 of the user-provided function does not require gradients. The outputs must be computed in a differentiable manner from the input when running in strict mode.");
  CHECK(error_of([&] { F::jacobian(uses_first, {x, y}, false, true); }) == "Output 0 of the user-provided function is independent of input 1. This is not allowed in strict mode.");
  CHECK(error_of([&] { F::jacobian(uses_first, {x, y}); }).empty());
  CHECK(values_of(F::jacobian(uses_first, {x, y})[0][1]) == std::vector<double>(6, 0.0));
  CHECK(error_of([&] { F::jacobian(linear, x, false, true, true); }) == "jacobian: `strict=true` and `vectorize=true` are not supported together. Please either set `strict=false` or `vectorize=false`.");
  CHECK(error_of([&] { F::vjp(uses_first, {x, y}, {x}, false, true); }) == "The output of the user-provided function is independent of input 1. This is not allowed in strict mode.");
  CHECK(error_of([&] { F::hessian(linear, x, false, true); }) == "While computing the hessian, found that the jacobian of the user-provided function with respect to input 0 is independent of the input. This is not allowed in strict mode. You should ensure that your function is twice differentiable and that the jacobian depends on the inputs (this would be violated by a linear function for example).");
  CHECK(values_of(F::hessian(linear, x)) == std::vector<double>(9, 0.0));
  CHECK(error_of([&] { F::hessian([](const Tensor& t) { return t * 2.0; }, x); }) == "The Tensor returned by the function given to hessian should contain a single element");
  CHECK(error_of([&] { F::hvp([](const Tensor& t) { return t * 2.0; }, x, x); }) == "The Tensor returned by the function given to hvp should contain a single element");
  CHECK(error_of([&] { F::vjp([](const Tensor& t) { return t * 2.0; }, x, y); }) == "v has invalid size: should be [3] but got [2].");
  CHECK(error_of([&] { F::vjp([](const Tensor& t) { return t * 2.0; }, x); }) == "The vector v can only be omitted if the user-provided function returns a single Tensor with a single element.");
  CHECK(error_of([&] { F::jvp([](const Tensor& t) { return t * 2.0; }, x); }) == "The vector v can only be omitted if the input to the user-provided function is a single Tensor with a single element.");
  CHECK(error_of([&] { F::jvp(uses_first, {x, y}, {x}); }) == "v is a tuple of invalid length: should be 2 but got 1.");
  CHECK(error_of([&] { F::jvp(uses_first, {x, y}, {x, x}); }) == "Entry 1 in v has invalid size: should be [2] but got [3].");
  CHECK(error_of([&] { F::jvp(uses_first, {x, y}, {x, y}, false, true); }) == "The output of the user-provided function is independent of input 1. This is not allowed in strict mode.");
  CHECK(error_of([&] { F::jacobian(uses_first, {x, Tensor()}); }) == "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the value at index 1 is an undefined Tensor.");
  // clang-format on
}
