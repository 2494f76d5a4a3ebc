// libtorch's module spellings an outside suite needed: nn::Functional,
// OrderedDict built from a braced list, and Sequential holding a module passed
// by value. Expected values are closed forms (relu, leaky_relu, x W^T + b).
#include <doctest/doctest.h>

#include <string>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace F = gd::nn::functional;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {
// A user-defined module, as a libtorch program writes one.
struct ScaleImpl : gd::nn::Module {
  explicit ScaleImpl(double factor) : Module("Scale"), factor(factor) {}
  Tensor forward(Tensor x) { return x * factor; }
  double factor;
};
}  // namespace

TEST_CASE("nn::Functional wraps a function, binding extra arguments after the input") {
  const Tensor x = gd::tensor({-2.0, -0.5, 0.0, 3.0});
  gd::nn::Functional relu(gd::relu);
  CHECK(value_mismatch(relu(x), gd::tensor({0.0, 0.0, 0.0, 3.0})) == "");
  CHECK(value_mismatch(relu->forward(x), gd::tensor({0.0, 0.0, 0.0, 3.0})) == "");
  // leaky_relu(x, 0.2) = x for x >= 0, 0.2 x below.
  gd::nn::Functional leaky(static_cast<Tensor (*)(const Tensor&, double)>(F::leaky_relu), 0.2);
  CHECK(value_mismatch(leaky(x), gd::tensor({-0.4, -0.1, 0.0, 3.0})) == "");
  gd::nn::Functional twice([](Tensor t) { return t * 2; });
  CHECK(value_mismatch(twice(x), x * 2) == "");
  CHECK(twice->parameters().empty());
  CHECK(error_of([] { gd::nn::Functional(gd::nn::FunctionalImpl::Function()); }) == "Functional: the function is empty");
}

TEST_CASE("Sequential holds Functional and user-defined modules, also passed by value") {
  gd::manual_seed(3);
  gd::nn::Linear linear(3, 2);
  gd::nn::Sequential net(linear, gd::nn::Functional(gd::relu), ScaleImpl(0.5), std::make_shared<ScaleImpl>(4.0));
  CHECK(net->size() == 4);
  const Tensor x = gd::testing::sample({5, 3}, -1, 1, 9, gd::kFloat32);
  const Tensor want = gd::relu(x.matmul(linear->weight.t()) + linear->bias) * 0.5 * 4.0;
  CHECK(value_mismatch(net->forward(x), want, 1e-6, 1e-6) == "");
  CHECK(net->ptr<ScaleImpl>(2)->factor == 0.5);
}

TEST_CASE("OrderedDict from a braced list, in order, a repeated key an error") {
  gd::OrderedDict<std::string, int> dict = {{"a", 1}, {"b", 2}, {"c", 3}};
  CHECK(dict.size() == 3);
  CHECK(dict.keys() == std::vector<std::string>{"a", "b", "c"});
  CHECK(dict["b"] == 2);
  CHECK(error_of([] { gd::OrderedDict<std::string, int> repeated = {{"a", 1}, {"a", 2}}; }) ==
        "Key 'a' already defined");
}
