// autograd::rebind: a tensor handle re-pointed at another tensor's data and
// graph (how parametrized module weights are computed), gradients through it,
// and graphs recorded before a later rebind keeping the data they saved.
#include <doctest/doctest.h>

#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {
Tensor leaf(const std::vector<double>& values, const std::vector<int64_t>& sizes = {}) {
  return tensor_of(values, sizes).requires_grad_();
}
}  // namespace

TEST_CASE("rebind: every handle sees the new data, and gradients flow through the bound graph") {
  Tensor weight = leaf({9, 9}, {2});  // what a module holds; `alias` is the module's member handle
  Tensor alias = weight;
  Tensor g = leaf({2, 3}, {2});
  Tensor v = leaf({1, -1}, {2});
  Tensor value = g * v;
  gd::autograd::rebind(weight, value);
  CHECK(value_mismatch(alias, tensor_of({2, -3}, {2})) == "");
  CHECK_FALSE(alias.is_leaf());
  CHECK(alias.requires_grad());
  // d/dg sum(w * x) = v * x, d/dv = g * x (closed form).
  Tensor x = tensor_of({5, 7}, {2});
  (alias * x).sum().backward();
  CHECK(value_mismatch(g.grad(), tensor_of({5, -7}, {2})) == "");
  CHECK(value_mismatch(v.grad(), tensor_of({10, 21}, {2})) == "");
}

TEST_CASE("rebind: a graph recorded before a later rebind keeps the data it saved") {
  Tensor weight = leaf({0, 0}, {2});
  Tensor a = leaf({1, 2}, {2});
  gd::autograd::rebind(weight, a * 3.0);  // weight = [3, 6]
  Tensor first = (weight * weight).sum();  // mul saves weight
  gd::autograd::rebind(weight, a * 5.0);   // next "forward": weight = [5, 10]
  Tensor second = weight.sum();
  // d first / d a = 2 * (3a) * 3 = 18 a; d second / d a = 5.
  first.backward();
  CHECK(value_mismatch(a.grad(), tensor_of({18, 36}, {2})) == "");
  a.grad().zero_();
  second.backward();
  CHECK(value_mismatch(a.grad(), tensor_of({5, 5}, {2})) == "");
}

TEST_CASE("rebind: to a leaf that requires grad, gradients reach that leaf") {
  Tensor weight = leaf({0, 0, 0}, {3});
  Tensor original = leaf({1, 2, 3}, {3});
  gd::autograd::rebind(weight, original);
  (weight * weight).sum().backward();
  CHECK(value_mismatch(original.grad(), tensor_of({2, 4, 6}, {3})) == "");
}

TEST_CASE("rebind: shape and dtype follow the value; under no-grad the result is a plain tensor") {
  Tensor weight = leaf({1, 2}, {2});
  Tensor value = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}, gd::kFloat32);
  {
    gd::NoGradGuard no_grad;
    gd::autograd::rebind(weight, value);
  }
  CHECK(weight.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(weight.dtype() == gd::kFloat32);
  CHECK_FALSE(weight.requires_grad());
  CHECK(value_mismatch(weight, value) == "");
  // The storage is shared: a write through the value shows through the handle.
  value.fill_(2.0);
  CHECK(value_mismatch(weight, gd::full({2, 3}, 2.0, gd::kFloat32)) == "");
}
