// Forward-mode AD with dual tensors: levels, make_dual/unpack_dual and their
// errors, tangents against closed forms, autograd::jvp against the reverse-mode
// tools, forward-over-reverse, and in-place ops on dual tensors. Every op's
// tangent is checked against finite differences in test_op_sweep.cpp.
#include <doctest/doctest.h>

#include <cmath>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace fwAD = gradiens::autograd::forward_ad;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::value_mismatch;

TEST_CASE("forward AD: make_dual needs an open level, and levels do not nest") {
  Tensor x = sample({3}, -1, 1, 1);
  CHECK(error_of([&] { fwAD::make_dual(x, gd::ones_like(x)); }) ==
        "Trying to create a dual Tensor for forward AD but no level exists, make sure to open a "
        "forward_ad::DualLevel first.");
  fwAD::DualLevel level;
  CHECK(error_of([] { fwAD::DualLevel nested; }) == "Nested forward mode AD is not supported at the moment");
}

TEST_CASE("forward AD: make_dual checks the primal and the tangent (PyTorch's messages)") {
  fwAD::DualLevel level;
  Tensor x = sample({3}, -1, 1, 1);
  CHECK(error_of([&] { fwAD::make_dual(x, gd::ones({4}, gd::kFloat64)); }) ==
        "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not "
        "supported. Tensor is of size [3] while the given forward gradient is of size [4].");
  CHECK(error_of([&] { fwAD::make_dual(x, gd::arange(3)); }) ==
        "Expected tangent to be floating point or complex, but got: int64");
  CHECK(error_of([&] { fwAD::make_dual(gd::arange(3), gd::ones({3})); }) ==
        "Expected primal to be floating point or complex, but got: int64");
  Tensor d = fwAD::make_dual(x, gd::ones_like(x));
  CHECK(error_of([&] { fwAD::make_dual(d, gd::ones_like(x)); }) ==
        "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level is not "
        "supported.");
  // A float32 tangent on a float64 primal is converted, as in PyTorch.
  Tensor e = fwAD::make_dual(x, gd::ones({3}, gd::kFloat32));
  CHECK(fwAD::unpack_dual(e).tangent.dtype() == gd::kFloat64);
}

TEST_CASE("forward AD: unpack_dual, and closing the level removes tangents") {
  Tensor x = sample({2, 3}, -1, 1, 2), v = sample({2, 3}, -1, 1, 3);
  Tensor d, y;
  {
    fwAD::DualLevel level;
    d = fwAD::make_dual(x, v);
    auto [primal, tangent] = fwAD::unpack_dual(d);
    CHECK(value_mismatch(primal, x) == "");
    CHECK(tangent.is_same(v));
    CHECK_FALSE(fwAD::unpack_dual(primal).tangent.defined());  // the primal view carries none
    CHECK_FALSE(fwAD::unpack_dual(x).tangent.defined());       // nor does the tensor it came from
    y = d * 2.0;
    CHECK(fwAD::unpack_dual(y).tangent.defined());
    // An integer result has no tangent.
    CHECK_FALSE(fwAD::unpack_dual(d.argmax()).tangent.defined());
    // A piecewise-constant op has a zero tangent (PyTorch: sign's tangent is zeros).
    CHECK(value_mismatch(fwAD::unpack_dual(d.sign()).tangent, gd::zeros_like(x)) == "");
  }
  CHECK_FALSE(fwAD::unpack_dual(d).tangent.defined());
  CHECK_FALSE(fwAD::unpack_dual(y).tangent.defined());
  // A new level starts clean.
  fwAD::DualLevel again;
  CHECK_FALSE(fwAD::unpack_dual(d).tangent.defined());
}

TEST_CASE("forward AD: tangents of elementwise, reduction and matmul ops match closed forms") {
  fwAD::DualLevel level;
  Tensor x = sample({3, 4}, -1, 1, 4), v = sample({3, 4}, -1, 1, 5);
  Tensor d = fwAD::make_dual(x, v);
  // (sin x e^x)' = (cos x + sin x) e^x
  Tensor t = fwAD::unpack_dual(d.sin() * d.exp()).tangent;
  CHECK(value_mismatch(t, (x.cos() + x.sin()) * x.exp() * v, 1e-14, 1e-15) == "");
  // tanh and the fused tanh backward: (1 - tanh^2 x) v
  t = fwAD::unpack_dual(d.tanh()).tangent;
  CHECK(value_mismatch(t, (1 - x.tanh().square()) * v, 1e-14, 1e-15) == "");
  // sum over a dim and mean: linear, so the tangent is the same reduction of v
  CHECK(value_mismatch(fwAD::unpack_dual(d.sum({1})).tangent, v.sum({1})) == "");
  CHECK(value_mismatch(fwAD::unpack_dual(d.mean()).tangent, v.mean()) == "");
  // x / y with both dual: (v y - x w) / y^2
  Tensor y = sample({3, 4}, 1, 2, 6), w = sample({3, 4}, -1, 1, 7);
  Tensor dy = fwAD::make_dual(y, w);
  CHECK(value_mismatch(fwAD::unpack_dual(d / dy).tangent, (v * y - x * w) / (y * y), 1e-13, 1e-14) == "");
  // matmul: d(A B) = dA B + A dB
  Tensor b = sample({4, 2}, -1, 1, 8), db = sample({4, 2}, -1, 1, 9);
  Tensor prod = fwAD::unpack_dual(d.matmul(fwAD::make_dual(b, db))).tangent;
  CHECK(value_mismatch(prod, v.matmul(b) + x.matmul(db), 1e-14, 1e-15) == "");
  // broadcasting: a (3,1) dual plus a (1,4) plain tensor gives a (3,4) tangent
  Tensor col = sample({3, 1}, -1, 1, 10), dcol = sample({3, 1}, -1, 1, 11);
  Tensor s = fwAD::unpack_dual(fwAD::make_dual(col, dcol) + sample({1, 4}, -1, 1, 12)).tangent;
  CHECK(s.sizes() == gd::IntArrayRef({3, 4}));
  CHECK(value_mismatch(s, dcol.expand({3, 4})) == "");
  // softmax has no jvp formula: the double-backward fallback gives s * (v - sum(s v))
  Tensor sm = x.softmax(1);
  Tensor expected = sm * (v - (sm * v).sum({1}, true));
  CHECK(value_mismatch(fwAD::unpack_dual(d.softmax(1)).tangent, expected, 1e-13, 1e-15) == "");
  // views: a transposed slice of the dual carries the same view of the tangent
  Tensor view_t = fwAD::unpack_dual(d.t().select(0, 2)).tangent;
  CHECK(value_mismatch(view_t, v.t().select(0, 2)) == "");
}

TEST_CASE("forward AD: autograd::jvp equals the column of the Jacobian and functional::jvp") {
  // A small tanh MLP, R^3 -> R^2.
  Tensor w1 = sample({5, 3}, -1, 1, 20), b1 = sample({5}, -1, 1, 21), w2 = sample({2, 5}, -1, 1, 22);
  auto mlp = [&](const Tensor& x) { return (x.matmul(w1.t()) + b1).tanh().matmul(w2.t()); };
  Tensor x = sample({3}, -1, 1, 23), v = sample({3}, -1, 1, 24);
  auto [out, tangent] = gd::autograd::jvp(mlp, x, v);
  CHECK(value_mismatch(out, mlp(x)) == "");
  Tensor jac = gd::autograd::functional::jacobian(mlp, x);  // (2, 3), reverse mode
  CHECK(value_mismatch(tangent, jac.matmul(v), 1e-13, 1e-15) == "");
  auto [out2, tangent2] = gd::autograd::functional::jvp(mlp, x, v);  // double-backward trick
  CHECK(value_mismatch(tangent, tangent2, 1e-13, 1e-15) == "");
  // Several primals and outputs; an output that ignores the primals gets a zero tangent.
  auto two = [](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{xs[0] * xs[1], gd::ones({2}, gd::kFloat64)};
  };
  Tensor a = sample({2}, -1, 1, 25), b = sample({2}, -1, 1, 26), ta = sample({2}, -1, 1, 27),
         tb = sample({2}, -1, 1, 28);
  auto [outs, tans] = gd::autograd::jvp(two, {a, b}, {ta, tb});
  CHECK(value_mismatch(tans[0], ta * b + a * tb) == "");
  CHECK(value_mismatch(tans[1], gd::zeros({2}, gd::kFloat64)) == "");
  CHECK(error_of([&] { gd::autograd::jvp(two, {a, b}, {ta}); }) ==
        "jvp: expected one tangent per primal, got 2 primals and 1 tangents");
}

TEST_CASE("forward AD: forward-over-reverse gives Hessian-vector products") {
  // f(x) = sum(x^3 + sin x): the tangent of f is (3x^2 + cos x) . v, and its
  // gradient with respect to x is H v = (6x - sin x) * v.
  Tensor x = sample({4}, -1, 1, 30).requires_grad_(), v = sample({4}, -1, 1, 31);
  fwAD::DualLevel level;
  Tensor d = fwAD::make_dual(x, v);
  Tensor f = (d.pow(3) + d.sin()).sum();
  Tensor df = fwAD::unpack_dual(f).tangent;
  Tensor xd = x.detach();
  CHECK(value_mismatch(df, ((3 * xd.square() + xd.cos()) * v).sum(), 1e-14, 1e-15) == "");
  REQUIRE(df.requires_grad());
  Tensor hv = gd::autograd::grad({df}, {x})[0];
  CHECK(value_mismatch(hv, (6 * xd - xd.sin()) * v, 1e-13, 1e-15) == "");
  // The hessian of the same function, from reverse-over-reverse, agrees.
  auto fn = [](const Tensor& t) { return (t.pow(3) + t.sin()).sum(); };
  CHECK(value_mismatch(hv, gd::autograd::functional::hessian(fn, xd).matmul(v), 1e-13, 1e-15) == "");
}

TEST_CASE("forward AD: in-place ops carry the tangent") {
  fwAD::DualLevel level;
  Tensor x = sample({3}, -1, 1, 40), v = sample({3}, -1, 1, 41);
  Tensor d = fwAD::make_dual(x.clone(), v);
  d.mul_(2);  // PyTorch: the tangent doubles too
  CHECK(value_mismatch(fwAD::unpack_dual(d).tangent, v * 2.0) == "");
  d.exp_();
  CHECK(value_mismatch(fwAD::unpack_dual(d).tangent, (x * 2.0).exp() * v * 2.0, 1e-14, 1e-15) == "");
  // A plain tensor updated with a dual operand becomes dual.
  Tensor p = sample({3}, -1, 1, 42);
  Tensor w = sample({3}, -1, 1, 43);
  p.add_(fwAD::make_dual(sample({3}, -1, 1, 44), w));
  CHECK(value_mismatch(fwAD::unpack_dual(p).tangent, w) == "");
  // Overwriting a dual tensor with constants zeroes its tangent.
  d.fill_(1.0);
  CHECK(value_mismatch(fwAD::unpack_dual(d).tangent, gd::zeros({3}, gd::kFloat64)) == "");
  // Writing through a view would leave the base's tangent stale: refused.
  Tensor e = fwAD::make_dual(x.clone(), v);
  CHECK(error_of([&] { e.narrow(0, 0, 2).mul_(2); }) ==
        "mul_: in-place operation on a view of a dual tensor is not supported by gradiens's forward-mode AD; apply "
        "it to the base tensor, or clone() the view first");
}
