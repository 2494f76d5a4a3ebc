// Custom autograd functions written as libtorch's (autograd::Function<Self>,
// AutogradContext): saved tensors and data, dirty and non-differentiable
// outputs, materialized gradients, needs_input_grad, and their errors. Expected
// gradients are closed forms; second derivatives are checked by gradgradcheck.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::autograd::AutogradContext;
using gd::autograd::variable_list;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {

// libtorch's own example: res = x + mul * y + x * y.
struct MulAdd : gd::autograd::Function<MulAdd> {
  static Tensor forward(AutogradContext* ctx, Tensor x, int64_t mul, Tensor y) {
    ctx->saved_data["mul"] = mul;
    ctx->save_for_backward({x, y});
    return x + mul * y + x * y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const int64_t mul = ctx->saved_data["mul"].toInt();
    const Tensor& g = grads[0];
    return {g + g * saved[1], Tensor(), g * mul + g * saved[0]};
  }
};

// y = x^3, saving its input; backward is differentiable, so create_graph works.
struct Cube : gd::autograd::Function<Cube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * 3 * x * x};
  }
};

// Doubles its input in place.
struct DoubleInPlace : gd::autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0] * 2}; }
};

// Two outputs, the second non-differentiable (a mask), recording what backward received.
struct TwoOutputs : gd::autograd::Function<TwoOutputs> {
  static inline bool materialize = true;
  static inline bool second_grad_defined = false;
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    ctx->set_materialize_grads(materialize);
    Tensor doubled = x * 2, halved = x * 0.5;
    ctx->mark_non_differentiable({halved});
    return {doubled, halved};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    second_grad_defined = grads[1].defined();
    return {grads[0] * 2};
  }
};

// Returns its input unchanged, and says which inputs need a gradient.
struct PassThrough : gd::autograd::Function<PassThrough> {
  static inline std::vector<bool> needs;
  static Tensor forward(AutogradContext*, Tensor x, Tensor) { return x; }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    needs = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return {grads[0], Tensor()};
  }
};

struct TooFewGradients : gd::autograd::Function<TooFewGradients> {
  static Tensor forward(AutogradContext*, Tensor x, Tensor y) { return x * y; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0]}; }
};

}  // namespace

TEST_CASE("a custom function's gradients come from its backward, with saved tensors and saved data") {
  const Tensor x = gd::testing::sample({3, 4}, -1, 1, 1).requires_grad_();
  const Tensor y = gd::testing::sample({3, 4}, -1, 1, 2).requires_grad_();
  Tensor res = MulAdd::apply(x, 2, y);
  CHECK(value_mismatch(res, x + 2 * y + x * y, 1e-12, 1e-12) == "");
  CHECK(res.grad_fn()->name() == "CppNode<(anonymous namespace)::MulAdd>");
  res.sum().backward();
  // d/dx = 1 + y, d/dy = 2 + x.
  CHECK(value_mismatch(x.grad(), y.detach() + 1, 1e-12, 1e-12) == "");
  CHECK(value_mismatch(y.grad(), x.detach() + 2, 1e-12, 1e-12) == "");
  CHECK(error_of([&] { res.sum().backward(); }).starts_with("Trying to backward through the graph a second time"));
}

TEST_CASE("a custom function with a differentiable backward has second derivatives") {
  const Tensor x = gd::testing::sample({5}, -1, 1, 3).requires_grad_();
  CHECK(gd::autograd::gradcheck([](const variable_list& in) { return variable_list{Cube::apply(in[0])}; }, {x}));
  CHECK(gd::autograd::gradgradcheck([](const variable_list& in) { return variable_list{Cube::apply(in[0])}; }, {x}));
  // Without grad mode nothing is recorded.
  gd::NoGradGuard no_grad;
  CHECK(!Cube::apply(x).requires_grad());
}

TEST_CASE("under InferenceMode a custom function runs unrecorded and may save inference tensors") {
  // libtorch's InferenceMode turns grad mode off, so forward's save_for_backward keeps nothing.
  gd::InferenceMode guard;
  Tensor x = gd::testing::sample({3, 3}, -1, 1, 4).set_requires_grad(true);
  Tensor y = x.clone();
  REQUIRE(y.is_inference());
  Tensor res = MulAdd::apply(x, 2, y);
  CHECK_FALSE(res.requires_grad());
  CHECK(res.is_inference());
  CHECK(value_mismatch(res, x + 2 * y + x * y, 1e-15, 0) == "");
}

TEST_CASE("a saved tensor modified in place after forward is refused in backward") {
  const Tensor x = gd::testing::sample({3}, -1, 1, 4).requires_grad_();
  Tensor input = x * 1;
  Tensor y = Cube::apply(input);
  input.add_(1);
  CHECK(error_of([&] { y.sum().backward(); }).find("has been modified by an inplace operation") != std::string::npos);
}

TEST_CASE("mark_dirty: an input modified in place becomes the function's output") {
  const Tensor x = gd::testing::sample({4}, -1, 1, 5).requires_grad_();
  Tensor a = x * 1;
  Tensor out = DoubleInPlace::apply(a);
  CHECK(out.is_same(a));
  CHECK(a.grad_fn() == out.grad_fn());
  (a * 3).sum().backward();
  CHECK(value_mismatch(x.grad(), gd::full({4}, 6.0, gd::kFloat64), 0, 0) == "");
  const Tensor leaf = gd::zeros({2}, gd::kFloat64).requires_grad_();
  CHECK(error_of([&] { DoubleInPlace::apply(leaf); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("mark_non_differentiable and set_materialize_grads") {
  const Tensor x = gd::testing::sample({3}, -1, 1, 6).requires_grad_();
  for (bool materialize : {true, false}) {
    CAPTURE(materialize);
    TwoOutputs::materialize = materialize;
    x.set_grad(Tensor());
    variable_list out = TwoOutputs::apply(x);
    CHECK(out[0].requires_grad());
    CHECK(!out[1].requires_grad());
    out[0].sum().backward();
    CHECK(TwoOutputs::second_grad_defined == materialize);  // zeros when materialized, else undefined
    CHECK(value_mismatch(x.grad(), gd::full({3}, 2.0, gd::kFloat64), 0, 0) == "");
  }
}

TEST_CASE("an input returned unchanged becomes a new alias; needs_input_grad follows requires_grad") {
  const Tensor x = gd::testing::sample({3}, -1, 1, 7).requires_grad_();
  const Tensor other = gd::zeros({3}, gd::kFloat64);
  Tensor out = PassThrough::apply(x, other);
  CHECK(!out.is_same(x));
  CHECK(x.is_leaf());
  CHECK(out.grad_fn() != nullptr);
  out.sum().backward();
  CHECK(PassThrough::needs == std::vector<bool>{true, false});
  CHECK(value_mismatch(x.grad(), gd::ones({3}, gd::kFloat64), 0, 0) == "");
}

TEST_CASE("a backward returning the wrong number of gradients is an error naming the function") {
  const Tensor x = gd::ones({2}, gd::kFloat64).requires_grad_(), y = gd::ones({2}, gd::kFloat64).requires_grad_();
  Tensor out = TooFewGradients::apply(x, y);
  CHECK(error_of([&] { out.sum().backward(); }) ==
        "function CppNode<(anonymous namespace)::TooFewGradients> returned an incorrect number of gradients "
        "(expected 2, got 1)");
}

TEST_CASE("IValue holds libtorch's kinds and names the kind on a wrong access") {
  gd::IValue i = int64_t{3}, d = 2.5, t = gd::ones({2}), s = "name";
  CHECK(i.toInt() == 3);
  CHECK(d.toDouble() == 2.5);
  CHECK(t.toTensor().numel() == 2);
  CHECK(s.toStringRef() == "name");
  CHECK(gd::IValue().isNone());
  CHECK(error_of([&] { i.toDouble(); }) == "Expected Double but got Int");
  CHECK(error_of([&] { d.toTensor(); }) == "Expected Tensor but got Double");
}
