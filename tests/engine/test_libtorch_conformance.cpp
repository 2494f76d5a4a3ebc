// Behaviours an outside suite (libtorch's own C++ API tests) found differing
// from libtorch: indexing spellings and messages, contiguity of empty tensors,
// views taken without grad mode, to(options), hooks, detach_ on views, module
// ownership, and Linear's addmm node. Expected values are PyTorch 1.13's
// (python3, noted beside each) or libtorch's test expectations.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/autograd/node.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::None;
using gd::indexing::Slice;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {
std::vector<int64_t> shape(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }
}  // namespace

TEST_CASE("index: the string \"...\" is Ellipsis, as in libtorch") {
  const Tensor x = gd::zeros({2, 3, 4, 5});
  CHECK(shape(x.index({"...", None})) == std::vector<int64_t>{2, 3, 4, 5, 1});  // x[..., None].shape
  CHECK(shape(x.index({0, "...", 1})) == std::vector<int64_t>{3, 4});
  CHECK(error_of([&] { x.index({"..x"}); }) == "Expected \"...\" to represent an ellipsis index, but got \"..x\"");
}

TEST_CASE("index: an empty index list is an error, and out-of-range messages name the tensor's own dim") {
  Tensor x = gd::zeros({2, 3, 4, 5});
  CHECK(error_of([&] { x.index({}); }) == "Passing an empty index list to Tensor::index() is not valid syntax");
  CHECK(error_of([&] { x.index_put_({}, 1.0); }) ==
        "Passing an empty index list to Tensor::index_put_() is not valid syntax");
  // python3: torch.zeros(2, 3, 4, 5)[0, 7] and friends raise IndexError with these texts.
  CHECK(error_of([&] { x.index({0, 7}); }) == "index 7 is out of bounds for dimension 1 with size 3");
  CHECK(error_of([&] { x.index({7}); }) == "index 7 is out of bounds for dimension 0 with size 2");
  CHECK(error_of([&] { x.index({0, Slice(), 9}); }) == "index 9 is out of bounds for dimension 2 with size 4");
  CHECK(error_of([&] { x.index({"...", -6}); }) == "index -6 is out of bounds for dimension 3 with size 5");
  CHECK(error_of([&] { x.index({None, 1, None, 3}); }) == "index 3 is out of bounds for dimension 1 with size 3");
  CHECK(shape(x.index({-2, -3, -4, -5})).empty());  // negative indices in range still work
}

TEST_CASE("every empty tensor is contiguous, whatever its strides") {
  // python3: torch.empty(0, 3).t().is_contiguous() and torch.empty(2, 0, 3).transpose(0, 2).is_contiguous() are True.
  CHECK(gd::empty({0, 3}).t().is_contiguous());
  CHECK(gd::empty({2, 0, 3}).transpose(0, 2).is_contiguous());
  CHECK_FALSE(gd::empty({2, 3}).t().is_contiguous());
}

TEST_CASE("a view taken with grad mode off of a tensor that requires grad requires grad") {
  // python3: x = torch.ones(2, 3, requires_grad=True); with torch.no_grad(): v = x.view(3, 2)
  // -> v.requires_grad True, v.is_leaf True, v.grad_fn None; (v * 2).sum().backward() leaves x.grad None.
  Tensor x = gd::ones({2, 3}).requires_grad_();
  Tensor v;
  {
    gd::NoGradGuard no_grad;
    v = x.view({3, 2});
  }
  CHECK(v.requires_grad());
  CHECK(v.is_leaf());
  CHECK(v.grad_fn() == nullptr);
  (v * 2).sum().backward();
  CHECK_FALSE(x.grad().defined());
  // A view of a tensor that does not require grad does not.
  Tensor plain;
  {
    gd::NoGradGuard no_grad;
    plain = gd::ones({4}).view({2, 2});
  }
  CHECK_FALSE(plain.requires_grad());
  CHECK_FALSE(x.detach().requires_grad());
}

TEST_CASE("to(options) refuses options that set requires_grad to true, as libtorch") {
  // libtorch's TensorTest.ToOptionsWithRequiresGrad.
  Tensor x = gd::empty({3, 4}, gd::requires_grad());
  CHECK(x.to(gd::kFloat64).requires_grad());
  CHECK(error_of([&] { x.to(gd::TensorOptions().requires_grad(true)); }) ==
        "to(options) expects unset requires_grad flag, but got options.requires_grad set as true");
  CHECK_FALSE(gd::empty({2}).to(gd::TensorOptions().requires_grad(false)).requires_grad());  // false is accepted
  CHECK(gd::empty({2}).to(gd::TensorOptions().dtype(gd::kFloat64)).dtype() == gd::kFloat64);
}

TEST_CASE("remove_hook with a handle the tensor never gave is an error") {
  Tensor x = gd::ones({2}).requires_grad_();
  const unsigned handle = x.register_hook([](const Tensor& g) { return g * 2; });
  x.remove_hook(handle);
  x.remove_hook(handle);  // removing it again is harmless, as in libtorch
  CHECK(error_of([&] { x.remove_hook(handle + 1000); }) ==
        fmt::format("Invalid index, no hook at position {}", handle + 1000));
  CHECK(error_of([&] { gd::ones({2}).remove_hook(0); }) == "Invalid index, no hook at position 0");
  (x * 3).sum().backward();
  CHECK(value_mismatch(x.grad(), gd::full({2}, 3.0)) == "");  // the removed hook did not double it
}

TEST_CASE("detach_ on a view is an error, as in PyTorch") {
  const std::string message = error_of([] {
    Tensor y = gd::ones({4}).requires_grad_() * 1;
    Tensor v = y.view({2, 2});
    v.detach_();
  });
  CHECK(message.rfind("Can't detach views in-place. Use detach() instead.", 0) == 0);
  Tensor y = gd::ones({4}).requires_grad_() * 1;
  y.detach_();
  CHECK_FALSE(y.requires_grad());
  CHECK(y.is_leaf());
}

TEST_CASE("a module not held by a shared_ptr gives an Error, not std::bad_weak_ptr") {
  gd::nn::LinearImpl on_stack(3, 2);
  CHECK(error_of([&] { on_stack.modules(); }).rfind(
            "It looks like you attempted to retrieve your top-level module as a shared_ptr", 0) == 0);
  CHECK(on_stack.modules(/*include_self=*/false).empty());
  CHECK(on_stack.parameters().size() == 2);
}

TEST_CASE("addmm and Linear's node match PyTorch") {
  // python3, float64: torch.addmm(b, a, m, beta=0.5, alpha=2) and its backward with seed g.
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  Tensor b = gd::tensor({0.5, -1.0, 2.0}, f64).requires_grad_();
  Tensor a = gd::tensor({{1., 2.}, {3., -4.}}, f64).requires_grad_();
  Tensor m = gd::tensor({{0.5, 1., -1.5}, {2., 0.25, 1.}}, f64).requires_grad_();
  Tensor y = gd::addmm(b, a, m, 0.5, 2);
  CHECK(y.grad_fn()->name() == "AddmmBackward0");
  CHECK(value_mismatch(y, gd::tensor({{9.25, 2.5, 2.0}, {-12.75, 3.5, -16.0}}, f64)) == "");
  y.backward(gd::tensor({{1., 2., 3.}, {-1., 0.5, 2.}}, f64));
  CHECK(value_mismatch(b.grad(), gd::tensor({0.0, 1.25, 2.5}, f64)) == "");
  CHECK(value_mismatch(a.grad(), gd::tensor({{-4.0, 11.0}, {-6.0, 0.25}}, f64)) == "");
  CHECK(value_mismatch(m.grad(), gd::tensor({{-4.0, 7.0, 18.0}, {12.0, 4.0, -4.0}}, f64)) == "");
  // beta = 0 ignores self, NaN included: torch.addmm(nan_bias, a, m, beta=0).
  const Tensor nan_bias = gd::full({3}, std::numeric_limits<double>::quiet_NaN(), f64);
  CHECK(value_mismatch(gd::addmm(nan_bias, a.detach(), m.detach(), 0),
                       gd::tensor({{4.5, 1.5, 0.5}, {-6.5, 2.0, -8.5}}, f64)) == "");
  // python3: nn.Linear(3, 2) on [4, 3], [4, 1, 3] and [3] inputs: AddmmBackward0,
  // ViewBackward0, AddBackward0; without a bias MmBackward0.
  gd::nn::Linear linear(3, 2);
  CHECK(linear->forward(gd::ones({4, 3})).grad_fn()->name() == "AddmmBackward0");
  CHECK(linear->forward(gd::ones({4, 1, 3})).grad_fn()->name() == "ViewBackward0");
  CHECK(linear->forward(gd::ones({3})).grad_fn()->name() == "AddBackward0");
  gd::nn::Linear no_bias(gd::nn::LinearOptions(3, 2).bias(false));
  CHECK(no_bias->forward(gd::ones({4, 3})).grad_fn()->name() == "MmBackward0");
  // The folded 3-D path gives what the 2-D one gives, row by row.
  const Tensor x3 = gd::testing::sample({4, 2, 3}, -1, 1, 5, gd::kFloat32);
  CHECK(value_mismatch(linear->forward(x3), linear->forward(x3.reshape({8, 3})).reshape({4, 2, 2})) == "");
}

TEST_CASE("libtorch's Tensor spellings: allclose, T, trace, multiply, is_signed, data, std/var overloads") {
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const Tensor x = gd::tensor({{1., 2., 4.}, {3., 5., 9.}}, f64);
  CHECK(x.allclose(x + 1e-9));
  CHECK_FALSE(x.allclose(x + 1e-3));
  CHECK(shape(gd::ones({2, 3, 4}).T()) == std::vector<int64_t>{4, 3, 2});  // python3: torch.ones(2, 3, 4).T.shape
  CHECK(shape(gd::ones({3}).T()) == std::vector<int64_t>{3});
  CHECK(value_mismatch(x.T(), x.t()) == "");
  // python3: torch.trace(torch.arange(9).view(3, 3)) is tensor(12) (int64); of arange(6.).view(2, 3), 4.
  const Tensor int_trace = gd::arange(9).view({3, 3}).trace();
  CHECK(int_trace.dtype() == gd::kInt64);
  CHECK(int_trace.item<int64_t>() == 12);
  CHECK(gd::trace(gd::arange(6, f64).view({2, 3})).item<double>() == 4.0);
  CHECK(error_of([] { gd::trace(gd::ones({2, 2, 2})); }) == "trace: expected a matrix, but got tensor with dim 3");
  CHECK(value_mismatch(gd::multiply(x, x), x * x) == "");
  CHECK(value_mismatch(x.multiply(2), x * 2) == "");
  CHECK(x.is_signed());
  CHECK_FALSE(gd::ones({1}, gd::kUInt8).is_signed());
  CHECK_FALSE(gd::ones({1}, gd::kBool).is_signed());
  const Tensor leaf = gd::ones({2}).requires_grad_();
  CHECK_FALSE(leaf.data().requires_grad());
  CHECK(leaf.data().data_ptr() == leaf.data_ptr());
  // python3 (float64): x.std(unbiased=False) 2.581988897471611, x.std() 2.8284271247461903,
  // x.var(1, True, True) [[2.333...], [9.333...]], x.std(0, True), x.var(0, False).
  // libtorch's x.std(0) is over dim 0, unbiased (gh-40287); x.std(false) over every element.
  CHECK(value_mismatch(x.std(0), gd::tensor({1.4142135623730951, 2.1213203435596424, 3.5355339059327378}, f64)) == "");
  CHECK(value_mismatch(gd::var(x, 0, false), gd::tensor({1.0, 2.25, 6.25}, f64)) == "");
  CHECK(std::get<0>(gd::var_mean(x, 1)).sizes() == gd::IntArrayRef{2});
  CHECK(x.std(false).item<double>() == doctest::Approx(2.581988897471611).epsilon(1e-14));
  CHECK(value_mismatch(gd::clone(x), x) == "");
  CHECK(x.std(true).item<double>() == doctest::Approx(2.8284271247461903).epsilon(1e-14));
  CHECK(gd::std(x, false).item<double>() == doctest::Approx(2.581988897471611).epsilon(1e-14));
  CHECK(value_mismatch(x.var({1}, true, true), gd::tensor({{2.333333333333333}, {9.333333333333332}}, f64)) == "");
  CHECK(value_mismatch(x.std({0}, true), gd::tensor({1.4142135623730951, 2.1213203435596424, 3.5355339059327378}, f64)) ==
        "");
  CHECK(value_mismatch(gd::var(x, {0}, false), gd::tensor({1.0, 2.25, 6.25}, f64)) == "");
}

TEST_CASE("libtorch's free functions: where of two numbers, split with sizes, repeat_interleave, quantile") {
  const Tensor c = gd::tensor({true, false, true});
  // python3: torch.where(c, 1.5, 0) is float32 [1.5, 0, 1.5]; of two ints int64; of two bools bool.
  const Tensor w = gd::where(c, 1.5, 0);
  CHECK(w.dtype() == gd::kFloat32);
  CHECK(value_mismatch(w, gd::tensor({1.5f, 0.f, 1.5f})) == "");
  CHECK(gd::where(c, 1, 0).dtype() == gd::kInt64);
  CHECK(gd::where(c, true, false).dtype() == gd::kBool);
  // python3: torch.split(torch.arange(5), [2, 3]) -> [0, 1], [2, 3, 4].
  const std::vector<Tensor> parts = gd::split(gd::arange(5), {2, 3});
  REQUIRE(parts.size() == 2);
  CHECK(value_mismatch(parts[1], gd::tensor({2, 3, 4})) == "");
  CHECK(gd::split_with_sizes(gd::arange(5), {4, 1}).size() == 2);
  // python3: torch.repeat_interleave(torch.tensor([1, 2, 0, 3])) -> [0, 1, 1, 3, 3, 3].
  CHECK(value_mismatch(gd::repeat_interleave(gd::tensor({1, 2, 0, 3})), gd::tensor({0, 1, 1, 3, 3, 3})) == "");
  // python3: torch.repeat_interleave(torch.tensor([[1, 2], [3, 4]]), torch.tensor([1, 2]), dim=0).
  CHECK(value_mismatch(gd::repeat_interleave(gd::tensor({{1, 2}, {3, 4}}), gd::tensor({1, 2}), 0),
                       gd::tensor({{1, 2}, {3, 4}, {3, 4}})) == "");
  CHECK(error_of([] { gd::repeat_interleave(gd::ones({2, 2}, gd::kInt64)); }) ==
        "repeat_interleave only accept 1D vector as repeat");
  // python3 (float64): torch.quantile(torch.tensor([1., 2., 3., 10.]), torch.tensor([0.25, 0.5])) -> [1.75, 2.5].
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  CHECK(value_mismatch(gd::quantile(gd::tensor({1., 2., 3., 10.}, f64), gd::tensor({0.25, 0.5}, f64)),
                       gd::tensor({1.75, 2.5}, f64)) == "");
}

TEST_CASE("operator<< prints sizes, dtypes and devices as libtorch") {
  std::ostringstream out;
  out << gd::ones({2, 3}).sizes() << ' ' << gd::kFloat32 << ' ' << gd::kInt64 << ' ' << gd::Device("cpu") << ' '
      << gd::Device("cuda:1") << ' ' << gd::IntArrayRef{};
  CHECK(out.str() == "[2, 3] Float Long cpu cuda:1 []");
}

TEST_CASE("set_default_dtype: floating tensors made without a dtype take it") {
  // python3: torch.set_default_dtype(torch.float64), then the dtypes below.
  struct Restore {
    ~Restore() { gd::set_default_dtype(gd::kFloat32); }
  } restore;
  CHECK(gd::get_default_dtype() == gd::kFloat32);
  gd::set_default_dtype(gd::kFloat64);
  CHECK(gd::get_default_dtype() == gd::kFloat64);
  CHECK(gd::ones({2}).dtype() == gd::kFloat64);
  CHECK(gd::tensor({1.5, 2.5}).dtype() == gd::kFloat64);
  CHECK(gd::arange(0.0, 3.0).dtype() == gd::kFloat64);
  CHECK(gd::tensor({1, 2}).dtype() == gd::kInt64);
  CHECK((gd::tensor({1, 2}) / 2).dtype() == gd::kFloat64);
  CHECK(gd::tensor({4}).sqrt().dtype() == gd::kFloat64);
  CHECK((gd::tensor({1, 2}) * 0.5).dtype() == gd::kFloat64);
  CHECK(error_of([] { gd::set_default_dtype(gd::kInt64); }) ==
        "only floating-point types are supported as the default type, got Long");
  CHECK(gd::get_default_dtype() == gd::kFloat64);
}

TEST_CASE("libtorch's dtype names are the same enumerators") {
  CHECK(gd::ScalarType::Float == gd::kFloat32);
  CHECK(gd::ScalarType::Double == gd::kFloat64);
  CHECK(gd::ScalarType::Long == gd::kInt64);
  CHECK(gd::ScalarType::Int == gd::kInt32);
  CHECK(gd::ScalarType::Half == gd::kFloat16);
  CHECK(gd::ScalarType::Byte == gd::kUInt8);
  CHECK(gd::TensorOptions().dtype<double>().dtype() == gd::kFloat64);
  CHECK(gd::dtype<int64_t>().dtype() == gd::kInt64);
}

TEST_CASE("resize_ keeps the storage when it is large enough and grows it otherwise") {
  // python3: x = torch.arange(6.); x.resize_(2, 2) -> [[0, 1], [2, 3]]; x.resize_(3, 3)
  // keeps the first six values 0..5; a tensor that requires grad cannot be resized.
  Tensor x = gd::arange(6.0);
  Tensor alias = x;
  x.resize_({2, 2});
  CHECK(shape(alias) == std::vector<int64_t>{2, 2});
  CHECK(value_mismatch(x, gd::tensor({0.0, 1.0, 2.0, 3.0}).view({2, 2}), 0, 0) == "");
  x.resize_({3, 3});
  CHECK(x.is_contiguous());
  CHECK(value_mismatch(x.view({-1}).slice(0, 0, 6), gd::arange(6.0), 0, 0) == "");
  x.resize_({0});
  CHECK(x.numel() == 0);
  Tensor w = gd::zeros({2}).requires_grad_();
  CHECK(error_of([&] { w.resize_({3}); }) == "cannot resize variables that require grad");
  CHECK(error_of([&] { x.resize_({-1}); }) == "Trying to create tensor with negative dimension -1: [-1]");
  Tensor y = gd::zeros({4});
  y.resize_as_(gd::zeros({2, 2}));
  CHECK(shape(y) == std::vector<int64_t>{2, 2});
}

TEST_CASE("random_ draws integers in [from, to), by default up to what the dtype holds exactly") {
  gd::manual_seed(0);
  Tensor a = gd::empty({2000}).random_(3, 7);
  CHECK(a.min().item<double>() == 3);
  CHECK(a.max().item<double>() == 6);
  CHECK(gd::equal(a, a.to(gd::kInt64).to(gd::kFloat32)));  // integers
  Tensor b = gd::empty({2000}, gd::kUInt8).random_();
  CHECK(b.max().item<int64_t>() > 200);  // 2000 draws from [0, 255]
  Tensor c = gd::empty({2000}, gd::kInt64).random_(5);
  CHECK(c.min().item<int64_t>() == 0);
  CHECK(c.max().item<int64_t>() == 4);
  Tensor d = gd::empty({2000}, gd::kFloat32).random_();
  CHECK(d.max().item<double>() <= 16777216.0);  // [0, 2^24]
  CHECK(d.max().item<double>() > 1e6);
  CHECK(error_of([] { gd::empty({2}).random_(5, 5); }) ==
        "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  Tensor r = gd::randint_like(gd::zeros({500}, gd::kFloat64), 10);
  CHECK(r.dtype() == gd::kFloat64);
  CHECK(r.max().item<double>() == 9);
  CHECK(gd::randint_like(gd::zeros({3}, gd::kInt32), 2, 4).min().item<int64_t>() >= 2);
}

TEST_CASE("layout, to(other tensor), arange(start, end, options), backward(inputs)") {
  CHECK(gd::zeros({2}).layout() == gd::kStrided);
  CHECK(!gd::zeros({2}).is_sparse());
  std::ostringstream printed;
  printed << gd::kStrided << ' ' << gd::kSparse;
  CHECK(printed.str() == "Strided Sparse");  // libtorch's operator<< for a Layout
  CHECK(gd::zeros({2}, gd::kInt64).to(gd::zeros({1}, gd::kFloat64)).dtype() == gd::kFloat64);
  CHECK(value_mismatch(gd::arange(1, 4, gd::kFloat64), gd::tensor({1.0, 2.0, 3.0}, gd::kFloat64), 0, 0) == "");
  CHECK(gd::zeros({2}).half().dtype() == gd::kFloat16);
  // python3: a, b = torch.tensor(2., requires_grad=True), torch.tensor(3., requires_grad=True);
  // (a * b).backward(inputs=[a]) -> a.grad == 3, b.grad is None.
  Tensor a = gd::tensor(2.0).requires_grad_(), b = gd::tensor(3.0).requires_grad_();
  (a * b).backward({}, std::nullopt, false, {{a}});
  CHECK(a.grad().item<double>() == 3.0);
  CHECK(!b.grad().defined());
  CHECK(error_of([&] { (a * b).backward({}, std::nullopt, false, std::vector<Tensor>{}); }) ==
        "'inputs' argument to backward() cannot be empty.");
}

TEST_CASE("InferenceMode: no recording, inference tensors, and what they refuse outside it (libtorch's rules)") {
  const Tensor normal = gd::ones({3}, gd::kFloat64);
  const Tensor w = gd::ones({3}, gd::kFloat64).requires_grad_();
  Tensor inference, view_of_normal;
  CHECK(!gd::InferenceMode::is_enabled());
  {
    gd::InferenceMode guard;
    CHECK(gd::InferenceMode::is_enabled());
    CHECK(!gd::GradMode::is_enabled());
    inference = w * 2;
    CHECK(!inference.requires_grad());
    view_of_normal = normal.view({3});
    inference.add_(1);  // allowed inside
    {
      gd::InferenceMode off(false);
      CHECK(!gd::InferenceMode::is_enabled());
      CHECK(!gd::ones({1}).is_inference());
    }
  }
  CHECK(!gd::InferenceMode::is_enabled());
  CHECK(gd::GradMode::is_enabled());
  CHECK(inference.is_inference());
  CHECK(inference.view({3}).is_inference());
  CHECK(!view_of_normal.is_inference());
  CHECK(!normal.is_inference());
  CHECK(value_mismatch(inference, gd::full({3}, 3.0, gd::kFloat64), 0, 0) == "");
  CHECK(error_of([&] { inference.add_(1); }) ==
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
        "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
  CHECK(error_of([&] { inference.requires_grad_(); }) ==
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  CHECK(error_of([&] { inference._version(); }) == "Inference tensors do not track version counter.");
  CHECK(error_of([&] { (w * inference).sum(); }) ==
        "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor "
        "and use it in autograd.");
  // A clone is a normal tensor.
  Tensor copy = inference.clone();
  CHECK(!copy.is_inference());
  (w * copy).sum().backward();
  CHECK(value_mismatch(w.grad(), gd::full({3}, 3.0, gd::kFloat64), 0, 0) == "");
}

TEST_CASE("assigning to a temporary tensor writes into the elements it views; a named tensor rebinds") {
  // python3 (the same effect): x = torch.zeros(2, 3); x[0] = 1.5; x[1] = torch.tensor([1., 2., 3.])
  Tensor x = gd::zeros({2, 3});
  x[0] = 1.5;
  x[1] = gd::tensor({1.0f, 2.0f, 3.0f});
  CHECK(value_mismatch(x, gd::tensor({1.5f, 1.5f, 1.5f, 1.0f, 2.0f, 3.0f}).view({2, 3}), 0, 0) == "");
  Tensor y = x;
  y = gd::ones({1});
  CHECK(x.numel() == 6);  // y was rebound, x untouched
}

TEST_CASE("libtorch's smaller spellings: max/min of two tensors, equal, type_as, tensor_data, Scalar::to*, slice") {
  const Tensor a = gd::tensor({1.0, 5.0}), b = gd::tensor({3.0, 2.0});
  CHECK(value_mismatch(gd::max(a, b), gd::tensor({3.0, 5.0}), 0, 0) == "");
  CHECK(value_mismatch(gd::min(a, b), gd::tensor({1.0, 2.0}), 0, 0) == "");
  CHECK(a.equal(a.clone()));
  CHECK(!a.equal(b));
  CHECK(gd::tensor({1, 2}).type_as(gd::zeros({1}, gd::kFloat64)).dtype() == gd::kFloat64);
  const Tensor w = gd::ones({2}).requires_grad_();
  CHECK(!w.tensor_data().requires_grad());
  CHECK(w.tensor_data().data_ptr() == w.data_ptr());
  const gd::Scalar s = 2.5;
  CHECK(s.toFloat() == 2.5f);
  CHECK(s.toLong() == 2);
  CHECK(s.isFloatingPoint());
  CHECK(gd::Scalar(int64_t{3}).isIntegral(false));
  CHECK(!gd::Scalar(true).isIntegral(false));
  CHECK(gd::Scalar(true).isIntegral(true));
  const std::vector<int64_t> values{4, 5, 6, 7};
  const gd::IntArrayRef all(values);
  CHECK(all.slice(1, 2).vec() == std::vector<int64_t>{5, 6});
  CHECK(all.slice(3).vec() == std::vector<int64_t>{7});
  CHECK(error_of([&] { all.slice(3, 2); }) == "ArrayRef: invalid slice, start + length exceeds the size");
}

TEST_CASE("warnings go to the current handler, which a program may replace") {
  struct Capture : gd::WarningHandler {
    void process(const gd::SourceLocation&, const std::string& msg, bool) override { messages.push_back(msg); }
    std::vector<std::string> messages;
  } capture;
  gd::WarningHandler* previous = gd::Warning::get_warning_handler();
  gd::Warning::set_warning_handler(&capture);
  gd::warn("first");
  gd::Warning::warn({"f", "file.cpp", 3}, "second");
  gd::Warning::set_warning_handler(previous);
  CHECK(capture.messages == std::vector<std::string>{"first", "second"});
  CHECK(gd::Warning::get_warning_handler() == previous);
}
