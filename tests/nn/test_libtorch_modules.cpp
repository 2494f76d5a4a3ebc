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

namespace {
// A user's Cloneable module, as libtorch's tests write one: everything is
// registered in reset(), which the constructor calls.
struct TwoLayerImpl : gd::nn::Cloneable<TwoLayerImpl> {
  TwoLayerImpl() { reset(); }
  void reset() override {
    first = register_module("first", gd::nn::Linear(3, 4));
    second = register_module("second", gd::nn::Linear(4, 2));
    scale = register_parameter("scale", gd::ones({2}));
    count = register_buffer("count", gd::zeros({1}, gd::kInt64));
  }
  Tensor forward(const Tensor& x) { return second(first(x).tanh()) * scale; }
  gd::nn::Linear first{nullptr}, second{nullptr};
  Tensor scale, count;
};
GRADIENS_MODULE(TwoLayer);

bool same_values(gd::nn::Module& a, gd::nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].key() != pb[i].key() || !gd::equal(pa[i].value(), pb[i].value()) ||
        pa[i].value().data_ptr() == pb[i].value().data_ptr())
      return false;
  return true;
}
}  // namespace

TEST_CASE("clone(): a deep copy with the same values in new tensors, as libtorch's Cloneable") {
  gd::manual_seed(1);
  TwoLayer original;
  original->count.fill_(7);
  original->eval();
  auto copy = std::dynamic_pointer_cast<TwoLayerImpl>(original->clone());
  REQUIRE(copy != nullptr);
  CHECK(same_values(*original, *copy));
  CHECK(!copy->is_training());
  // The members of the copy are its own registered tensors and submodules.
  CHECK(copy->first.get() == copy->named_children()["first"].get());
  CHECK(copy->first->weight.data_ptr() == copy->named_parameters()["first.weight"].data_ptr());
  CHECK(copy->count.item<int64_t>() == 7);
  CHECK(copy->scale.requires_grad());
  copy->first->weight.detach().fill_(0);
  CHECK(original->first->weight.abs().sum().item<double>() > 0);
  const Tensor x = gd::testing::sample({5, 3}, -1, 1, 2).to(gd::kFloat32);
  CHECK(value_mismatch(original->forward(x), TwoLayer(copy)->forward(x), 0, 0) != "");

  // Built-in layers and containers clone too.
  gd::nn::Linear linear(3, 2);
  auto linear_copy = std::dynamic_pointer_cast<gd::nn::LinearImpl>(linear->clone());
  CHECK(same_values(*linear, *linear_copy));
  gd::nn::Sequential sequential(gd::nn::Linear(2, 3), gd::nn::Functional(gd::relu), gd::nn::Linear(3, 1));
  auto sequential_copy = std::dynamic_pointer_cast<gd::nn::SequentialImpl>(sequential->clone());
  REQUIRE(sequential_copy != nullptr);
  CHECK(sequential_copy->size() == 3);
  CHECK(same_values(*sequential, *sequential_copy));
  const Tensor y = gd::testing::sample({4, 2}, -1, 1, 3).to(gd::kFloat32);
  CHECK(value_mismatch(sequential->forward(y), sequential_copy->forward(y), 0, 0) == "");

  // Any layer built through its holder clones, buffers included.
  gd::nn::BatchNorm2d norm(3);
  norm->running_mean.fill_(0.25);
  auto norm_copy = std::dynamic_pointer_cast<gd::nn::BatchNorm2dImpl>(norm->clone());
  REQUIRE(norm_copy != nullptr);
  CHECK(norm_copy->running_mean.data_ptr() != norm->running_mean.data_ptr());
  CHECK(value_mismatch(norm_copy->running_mean, gd::full({3}, 0.25), 0, 0) == "");
  gd::nn::Conv1d conv(gd::nn::Conv1dOptions(2, 4, 3).bias(false));
  auto conv_copy = std::dynamic_pointer_cast<gd::nn::Conv1dImpl>(conv->clone());
  REQUIRE(conv_copy != nullptr);
  CHECK(same_values(*conv, *conv_copy));
  CHECK(!conv_copy->bias.defined());
}

TEST_CASE("clone() of a module that is not Cloneable names the remedy; as<T>() casts or gives nullptr") {
  auto scale = std::make_shared<ScaleImpl>(2.0);
  CHECK(error_of([&] { scale->clone(); }) ==
        "clone() has not been implemented for Scale. Subclass torch::nn::Cloneable<Scale> instead of "
        "torch::nn::Module to inherit the ability to clone.");
  gd::nn::Linear linear(3, 2);
  gd::nn::Module& module = *linear;
  CHECK(module.as<gd::nn::LinearImpl>() == linear.get());
  CHECK(module.as<gd::nn::Linear>() == linear.get());
  CHECK(module.as<gd::nn::FlattenImpl>() == nullptr);
}

TEST_CASE("OrderedDict: front, back, update, key_description and * on items, with libtorch's messages") {
  gd::OrderedDict<std::string, int> dict = {{"a", 1}, {"b", 2}};
  CHECK(dict.front().key() == "a");
  CHECK(*dict.back() == 2);
  gd::OrderedDict<std::string, int> more = {{"c", 3}};
  dict.update(more);
  CHECK(dict.keys() == std::vector<std::string>{"a", "b", "c"});
  CHECK(error_of([&] { dict.update(more); }) == "Key 'c' already defined");
  gd::OrderedDict<std::string, int> empty("Penguin");
  CHECK(empty.key_description() == "Penguin");
  CHECK(error_of([&] { empty.front(); }) == "Called front() on an empty OrderedDict");
  CHECK(error_of([&] { empty.back(); }) == "Called back() on an empty OrderedDict");
}

TEST_CASE("ModuleDict from a list or an OrderedDict, update, at<M>; ModuleList push_back by value and at<M>") {
  std::vector<std::pair<std::string, std::shared_ptr<gd::nn::Module>>> list = {
      {"scale", std::make_shared<ScaleImpl>(2.0)}, {"linear", gd::nn::Linear(2, 2).ptr()}};
  gd::nn::ModuleDict dict(list);
  CHECK(dict->keys() == std::vector<std::string>{"scale", "linear"});
  CHECK(dict->at<ScaleImpl>("scale").factor == 2.0);
  gd::OrderedDict<std::string, std::shared_ptr<gd::nn::Module>> replacement = {
      {"scale", std::make_shared<ScaleImpl>(3.0)}};
  dict->update(replacement);
  CHECK(dict->at<ScaleImpl>("scale").factor == 3.0);
  CHECK(error_of([&] { dict["missing"]; }) == "Submodule 'missing' is not defined");

  gd::nn::ModuleList modules;
  modules->push_back(ScaleImpl(4.0));
  modules->insert(0, std::make_shared<ScaleImpl>(5.0));
  CHECK(modules->at<ScaleImpl>(0).factor == 5.0);
  CHECK(modules->at<ScaleImpl>(1).factor == 4.0);
  CHECK(error_of([&] { modules->at<ScaleImpl>(2); }) == "Index out of range");
}

namespace {
struct AddOne : gd::nn::Module {
  int forward(int value) { return value + 1; }
};
struct Five : gd::nn::Module {
  int forward() { return 5; }
};
}  // namespace

TEST_CASE("Sequential chains modules of any forward signature, as libtorch's AnyModule") {
  gd::nn::Sequential chain(AddOne{}, AddOne{}, AddOne{});
  CHECK(chain->forward<int>(1) == 4);
  gd::nn::Sequential five(Five{});
  CHECK(five->forward<int>() == 5);
  CHECK(error_of([&] { five->forward<float>(); }) == "The type of the return value is int, but you asked for type float");
  CHECK(error_of([&] { chain->forward<int>(1, 2); }) == "AddOne's forward() method expects 1 argument(s), but received 2.");
  gd::nn::Sequential empty;
  CHECK(error_of([&] { empty->forward<int>(); }) == "Cannot call forward() on an empty Sequential");
}
