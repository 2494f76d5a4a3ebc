// The exact texts of the autograd errors users meet (PyTorch's wording), and the
// in-place rules of Note [In-place ops and autograd]: rebasing history on
// non-leaves, refusing leaves and views.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/autograd/node.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

namespace {
const char* kHint =
    " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "autograd::DetectAnomalyGuard.";
Tensor leaf(std::vector<int64_t> sizes) { return gd::ones(sizes, gd::kFloat64).requires_grad_(); }
}  // namespace

TEST_CASE("golden error texts of the tape") {
  // PyTorch 1.13 for each: str(the RuntimeError) of the same program in Python.
  Tensor x = leaf({3, 4});
  CHECK(error_of([&] { (x * 2).backward(); }) == "grad can be implicitly created only for scalar outputs");
  CHECK(error_of([&] { x.add_(1); }) == "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { x.mul_(x); }) == "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { x.exp_(); }) == "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { x.zero_(); }) == "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { x.copy_(gd::zeros({3, 4}, gd::kFloat64)); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([&] { x.t().view({12}); }) ==
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
        "contiguous subspaces). Use .reshape(...) instead.");
  Tensor z = (gd::tanh(x) * x).sum();
  z.backward();
  CHECK(error_of([&] { z.backward(); }) ==
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you "
        "need to access saved tensors after calling backward.");
  // autograd::grad frees the graph the same way.
  Tensor w = gd::exp(x).sum();
  gd::autograd::grad({w}, {x});
  CHECK(error_of([&] { gd::autograd::grad({w}, {x}); }).find("Trying to backward through the graph a second time") == 0);
  CHECK(error_of([] { gd::ones({2, 4}) + gd::ones({2, 3}); }) ==
        "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1");
  CHECK(error_of([] { gd::ones({3}).sum().backward(); }) ==
        "element 0 of tensors does not require grad and does not have a grad_fn");
  CHECK(error_of([] { gd::ones({3}, gd::kInt64).requires_grad_(); }) ==
        "Only Tensors of floating point and complex dtype can require gradients (got int64)");
  CHECK(error_of([] { gd::ones({2, 3}).sum({2}); }) ==
        "sum: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  CHECK(error_of([] { Tensor().dim(); }) == "the tensor is undefined (default-constructed Tensor)");
}

TEST_CASE("the saved-tensor version check") {
  SUBCASE("a saved output modified in place (the text PyTorch gives)") {
    // PyTorch: "... [torch.DoubleTensor [3, 4]], which is output 0 of TanhBackward0, is at version 1; expected
    // version 0 instead. Hint: ..." (gradiens names the type without "torch." and points to its own guard).
    Tensor x = leaf({3, 4});
    Tensor y = gd::tanh(x);
    y.add_(1);
    CHECK(y._version() == 1);
    CHECK(error_of([&] { y.sum().backward(); }) ==
          std::string("one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [DoubleTensor [3, 4]], which is output 0 of TanhBackward0, is at version 1; "
                      "expected version 0 instead.") +
              kHint);
  }
  SUBCASE("a saved input modified in place, float32") {
    Tensor x = gd::ones({2}, gd::kFloat32).requires_grad_();
    Tensor a = gd::exp(x);
    Tensor b = a * a;
    a.mul_(2);
    a.mul_(2);
    CHECK(error_of([&] { b.sum().backward(); }) ==
          std::string("one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [FloatTensor [2]], which is output 0 of ExpBackward0, is at version 2; expected "
                      "version 0 instead.") +
              kHint);
  }
  SUBCASE("a saved leaf modified under no_grad") {
    Tensor x = leaf({3});
    Tensor y = (x * x).sum();
    {
      gd::NoGradGuard no_grad;
      x.add_(1);
    }
    CHECK(error_of([&] { y.backward(); }) ==
          std::string("one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [DoubleTensor [3]] is at version 1; expected version 0 instead.") +
              kHint);
  }
  SUBCASE("through a view, the shared counter catches the write") {
    Tensor x = leaf({2, 2});
    Tensor y = x * 1.0;
    Tensor s = gd::sigmoid(y);
    {
      gd::NoGradGuard no_grad;
      s.t()[0].fill_(0);
    }
    CHECK(error_of([&] { s.sum().backward(); }).find("[DoubleTensor [2, 2]], which is output 0 of SigmoidBackward0, "
                                                      "is at version 1; expected version 0 instead.") !=
          std::string::npos);
  }
  SUBCASE("writes before the value is saved are fine") {
    Tensor x = leaf({2});
    Tensor y = x * 2;
    y.add_(1);
    Tensor z = gd::tanh(y);  // saves the already-modified y's output
    z.sum().backward();
    double t = std::tanh(3.0);
    CHECK(value_mismatch(values_of(x.grad()), {2 * (1 - t * t), 2 * (1 - t * t)}) == "");
  }
}

TEST_CASE("in-place ops on non-leaves rebase their history") {
  Tensor x = tensor_of({0.5, -0.3}).requires_grad_();
  Tensor y = x * 2;
  uint32_t v0 = y._version();
  y.mul_(3);
  CHECK(y.grad_fn()->name() == "MulBackward1");
  y.exp_();
  CHECK(y.grad_fn()->name() == "ExpBackward0");
  CHECK(y._version() == v0 + 2);
  CHECK_FALSE(y.is_leaf());
  y.sum().backward();
  // y = exp(6x): dy/dx = 6 exp(6x). PyTorch 1.13 gives 2420.5727609564105 at x = 1.
  std::vector<double> want;
  for (double v : {0.5, -0.3}) want.push_back(6 * std::exp(6 * v));
  CHECK(value_mismatch(values_of(x.grad()), want) == "");
  // A longer chain mixing operands: f = (exp(6x) + x)^2, f' = 2 (exp(6x) + x) (6 exp(6x) + 1).
  Tensor a = tensor_of({0.5, -0.3}).requires_grad_();
  Tensor b = a * 2;
  b.mul_(3).exp_().add_(a).pow_(2);
  std::vector<double> fv, fd;
  for (double v : {0.5, -0.3}) {
    double e = std::exp(6 * v);
    fv.push_back((e + v) * (e + v));
    fd.push_back(2 * (e + v) * (6 * e + 1));
  }
  CHECK(value_mismatch(values_of(b), fv) == "");
  b.sum().backward();
  CHECK(value_mismatch(values_of(a.grad()), fd) == "");
  // copy_ into a non-leaf: the gradient goes to the source, none to the old value.
  Tensor p = tensor_of({1, 2}).requires_grad_(), q = tensor_of({3, 4}).requires_grad_();
  Tensor r = p * 5;
  r.copy_(q * q);
  (r * 1.0).sum().backward();
  CHECK(values_of(q.grad()) == std::vector<double>{6, 8});
  CHECK(values_of(p.grad()) == std::vector<double>{0, 0});
  // fill_ keeps requires_grad; the gradient to the old history is zero (PyTorch's FillBackward0).
  Tensor s = tensor_of({1, 2}).requires_grad_();
  Tensor u = s * 2;
  u.fill_(7);
  CHECK(u.requires_grad());
  (u * s).sum().backward();
  CHECK(values_of(s.grad()) == std::vector<double>{7, 7});
  // Operands that require grad turn a tensor without history into a non-leaf.
  Tensor k = gd::zeros({2}, gd::kFloat64);
  k.add_(p);
  CHECK(k.requires_grad());
  CHECK_FALSE(k.is_leaf());
}

TEST_CASE("in-place ops through a view rebase the base's history, as PyTorch's CopySlices") {
  // Note [In-place ops and autograd]. Values from PyTorch 1.13:
  //   x = (torch.arange(12.).reshape(3, 4) / 10).requires_grad_(); w = torch.arange(12.).reshape(3, 4) + 1
  //   y = x * 2; y[0].mul_(2); y.t().add_(1); y.narrow(1, 0, 2).clamp_(0, 2); y.view(12)[5:8].zero_()
  //   y.diagonal().exp_(); (y * w).sum().backward()
  Tensor x = (gd::arange(12, gd::kFloat64).reshape({3, 4}) / 10).requires_grad_();
  Tensor w = gd::arange(12, gd::kFloat64).reshape({3, 4}) + 1;
  Tensor y = x * 2;
  y[0].mul_(2);
  y.t().add_(1);
  y.narrow(1, 0, 2).clamp_(0, 2);
  y.view({12}).narrow(0, 5, 3).zero_();
  y.diagonal().exp_();
  CHECK(y.grad_fn()->name() == "CopySlices");
  CHECK(value_mismatch(values_of(y), {2.718281828459045, 1.4, 1.8, 2.2, 1.8, 1.0, 0.0, 0.0, 2.0, 2.0,
                                      20.085536923187668, 3.2}) == "");
  (y * w).sum().backward();
  CHECK(value_mismatch(values_of(x.grad()), {10.87312731383618, 8.0, 12.0, 16.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                             441.8818123101287, 24.0}) == "");
  // A plain buffer written through views with values that require grad joins the graph (PyTorch 1.13:
  //   y = x * 2; buffer = torch.zeros(3, 4); buffer[0].copy_(y[1]); buffer[2].add_(y[0] * y[2])).
  x.mutable_grad() = Tensor();
  y = x * 2;
  Tensor buffer = gd::zeros({3, 4}, gd::kFloat64);
  buffer[0].copy_(y[1]);
  buffer[2].add_(y[0] * y[2]);
  CHECK(buffer.requires_grad());
  CHECK_FALSE(buffer.is_leaf());
  (buffer * w).sum().backward();
  CHECK(value_mismatch(values_of(x.grad()), {28.8, 36.0, 44.0, 52.800000000000004, 2.0, 4.0, 6.0, 8.0, 0.0, 4.0, 8.8,
                                             14.399999999999999}) == "");
  // A view of a leaf that requires grad: libtorch's own error (python3: x[1].add_(1) raises it).
  CHECK(error_of([&] { x[1].add_(1); }) ==
        "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  // A base that is not contiguous (clone keeps the transposed layout) is refused, and nothing is written.
  Tensor z = (x * 2).t().clone();
  CHECK_FALSE(z.is_contiguous());
  CHECK(error_of([&] { z[0].mul_(2); }) ==
        "mul_: in-place operation on a view of a non-contiguous tensor that is part of an autograd graph is not "
        "supported by gradiens; apply it to the base tensor, or clone() the view first");
  CHECK(values_of(z)[1] == 0.8);
  // Without grad mode, or when nothing requires grad, views take in-place writes without history.
  {
    gd::NoGradGuard no_grad;
    y[0].mul_(2);
  }
  CHECK(values_of(y)[0] == 0);
  CHECK(values_of(y)[1] == 0.4);
  Tensor plain = gd::zeros({3, 4}, gd::kFloat64);
  plain[0].add_(1);
  CHECK(values_of(plain)[0] == 1);
  CHECK_FALSE(plain.requires_grad());
}

TEST_CASE("in-place ops through views pass gradcheck and gradgradcheck") {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 1.5;
    y.narrow(1, 2, 2).mul_(in[0].narrow(1, 0, 2));
    y[1].exp_();
    y.t()[0].add_(in[1]);
    return std::vector<Tensor>{y.pow(2)};
  };
  Tensor a = gd::testing::sample({3, 4}, -1, 1, 5).requires_grad_(),
         b = gd::testing::sample({3}, -1, 1, 6).requires_grad_();
  CHECK(error_of([&] { gd::autograd::gradcheck(fn, {a, b}); }) == "");
  CHECK(error_of([&] { gd::autograd::gradgradcheck(fn, {a, b}); }) == "");
}

TEST_CASE("a shape whose contiguous strides overflow is refused, even without elements") {
  // [0, 2^32, 2^32]: no elements, but the stride of dim 0 would be 2^64.
  CHECK(error_of([] {
          gd::empty({0, int64_t{1} << 32, int64_t{1} << 32});
        }) == "empty: shape [0, 4294967296, 4294967296] is too large: its strides overflow int64");
  CHECK(gd::empty({0, int64_t{1} << 31, int64_t{1} << 31}).numel() == 0);  // 2^62 fits
}
