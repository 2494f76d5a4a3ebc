// libtorch's autograd API as its own C++ tests use it: the gradient slot
// (mutable_grad), view creation meta and its in-place errors, inference
// tensors in normal mode, version-counter access, backward(inputs=...) with
// non-leaf inputs, anomaly mode's history warnings, custom-function helpers
// (TensorList arguments, IndexRange, UndefinedGrad, mark_dirty), out= forms and
// warn-always mode. Messages and values are PyTorch 1.13's (python3, noted
// beside each) or libtorch's documented rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::autograd::AutogradContext;
using gd::autograd::CreationMeta;
using gd::autograd::variable_list;
using gd::testing::error_of;
using gd::testing::value_mismatch;

namespace {

// Collects the warnings raised while it is alive.
struct WarningCapture : gd::WarningHandler {
  WarningCapture() : previous(gd::Warning::get_warning_handler()) { gd::Warning::set_warning_handler(this); }
  ~WarningCapture() override { gd::Warning::set_warning_handler(previous); }
  void process(const gd::SourceLocation&, const std::string& msg, bool) override { messages.push_back(msg); }
  bool any_contains(const std::string& text) const {
    for (const std::string& m : messages)
      if (m.find(text) != std::string::npos) return true;
    return false;
  }
  gd::WarningHandler* previous;
  std::vector<std::string> messages;
};

Tensor f64(std::vector<double> values) { return gd::tensor(values, gd::TensorOptions().dtype(gd::kFloat64)); }

CreationMeta creation_meta_of(const Tensor& t) {
  auto* meta = static_cast<gd::autograd::DifferentiableViewMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
  REQUIRE(meta != nullptr);
  REQUIRE(meta->has_bw_view());
  return meta->get_creation_meta();
}

// python3 (torch 1.13): the messages of handle_view_on_rebase.
const std::string kNoGradDirect =
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).";
const std::string kInferenceDirect =
    "A view was created in inference mode and is being modified inplace in normal mode. Given that this use case is "
    "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace "
    "either both inside the inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).";
const std::string kNoGradIndirect =
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
    "inplace to be tracked) or both outside (if you want the inplace to be tracked).";

}  // namespace

TEST_CASE("mutable_grad is the gradient slot itself") {
  Tensor x = f64({1, 2}).requires_grad_();
  CHECK_FALSE(x.grad().defined());
  x.mutable_grad() = f64({5, 6});
  CHECK(value_mismatch(x.grad(), f64({5, 6})) == "");
  (x * x).sum().backward();  // accumulates into the assigned gradient: 5 + 2, 6 + 4
  CHECK(value_mismatch(x.grad(), f64({7, 10})) == "");
  Tensor& slot = x.mutable_grad();
  slot = Tensor();
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("reading .grad of a non-leaf warns as libtorch, unless it retains its grad") {
  Tensor x = f64({1, 2}).requires_grad_();
  Tensor h = x * 3;
  {
    WarningCapture warnings;
    CHECK_FALSE(h.grad().defined());
    CHECK(warnings.any_contains("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."));
  }
  h.retain_grad();
  WarningCapture warnings;
  CHECK_FALSE(h.grad().defined());
  CHECK_FALSE(x.grad().defined());
  CHECK(warnings.messages.empty());
}

TEST_CASE("make_variable gives a new leaf over the same data") {
  Tensor data = f64({1, 2, 3});
  Tensor v = gd::autograd::make_variable(data, /*requires_grad=*/true);
  CHECK(v.requires_grad());
  CHECK(v.is_leaf());
  CHECK(v.data_ptr() == data.data_ptr());
  CHECK_FALSE(data.requires_grad());
  CHECK_FALSE(gd::autograd::make_variable(data).requires_grad());
}

TEST_CASE("a view records how it was made (creation meta), and a view of it keeps that") {
  Tensor a = f64({1, 2, 3, 4}).requires_grad_().clone();
  CHECK(creation_meta_of(a.view({2, 2})) == CreationMeta::DEFAULT);
  Tensor no_grad_view, inference_view;
  {
    gd::NoGradGuard no_grad;
    no_grad_view = a.view({2, 2});
  }
  {
    gd::InferenceMode guard;
    inference_view = a.view({2, 2});
    CHECK_FALSE(inference_view.is_inference());  // a view of a normal tensor stays normal
  }
  CHECK(creation_meta_of(no_grad_view) == CreationMeta::NO_GRAD_MODE);
  CHECK(creation_meta_of(inference_view) == CreationMeta::INFERENCE_MODE);
  // Later views keep it; an inference-mode one is never replaced.
  CHECK(creation_meta_of(no_grad_view.view({4})) == CreationMeta::NO_GRAD_MODE);
  {
    gd::NoGradGuard no_grad;
    CHECK(creation_meta_of(inference_view.view({4})) == CreationMeta::INFERENCE_MODE);
  }
  CHECK(no_grad_view.is_view());
  CHECK(no_grad_view._base().is_same(a));
  CHECK(error_of([&] { a._base(); }) == "Can't get base of non-view Tensor");
  CHECK(a.unsafeGetTensorImpl()->autograd_meta() != nullptr);  // requires grad
  CHECK(f64({1}).unsafeGetTensorImpl()->autograd_meta() == nullptr);
}

TEST_CASE("a no-grad or inference-mode view of a tensor that requires grad cannot be modified in place") {
  Tensor a = f64({1, 2, 3, 4}).requires_grad_().clone();
  Tensor leaf = f64({1, 2, 3, 4}).requires_grad_();
  Tensor no_grad_view, leaf_view, inference_view;
  {
    gd::NoGradGuard no_grad;
    no_grad_view = a.view({2, 2});
    leaf_view = leaf.view({2, 2});
  }
  {
    gd::InferenceMode guard;
    inference_view = a.view({2, 2});
  }
  // python3: with torch.no_grad(): v = a.view(2, 2); then v.mul_(2) raises these.
  CHECK(error_of([&] { no_grad_view.mul_(2); }) == kNoGradDirect);
  CHECK(error_of([&] { leaf_view.mul_(2); }) == kNoGradDirect);  // before the leaf's own error
  CHECK(error_of([&] { inference_view.add_(1); }) == kInferenceDirect);
  {
    gd::NoGradGuard no_grad;
    no_grad_view.mul_(1);  // allowed where it was made
  }
  // A view of a tensor that does not require grad is unaffected.
  Tensor plain = f64({1, 2});
  Tensor plain_view;
  {
    gd::NoGradGuard no_grad;
    plain_view = plain.view({2});
  }
  plain_view.mul_(2);
  CHECK(plain_view.grad_fn() == nullptr);
}

TEST_CASE("a no-grad view whose base was modified in place raises once its history is asked for") {
  Tensor a = f64({1, 2, 3, 4}).requires_grad_().clone();
  Tensor view;
  {
    gd::NoGradGuard no_grad;
    view = a.view({2, 2});
  }
  CHECK(view.grad_fn() == nullptr);  // not modified yet
  a.mul_(2);
  // python3: v.grad_fn, and any op recording v, raise this.
  CHECK(error_of([&] { view.grad_fn(); }) == kNoGradIndirect);
  CHECK(error_of([&] { (view * 2).sum(); }) == kNoGradIndirect);
}

TEST_CASE("a view of an inference tensor is a plain inference tensor") {
  Tensor t;
  {
    gd::InferenceMode guard;
    t = gd::ones({2, 3}).set_requires_grad(true);
    Tensor v = t.view({6});
    CHECK(v.is_inference());
    CHECK_FALSE(v.is_view());
    CHECK_FALSE(v.requires_grad());
  }
  Tensor v = t.view({6});
  CHECK(v.is_inference());
  CHECK_FALSE(v.is_view());
  CHECK(v.is_leaf());
}

TEST_CASE("an op on inference tensors only is not recorded in normal mode; with a normal tensor it is") {
  Tensor c;
  {
    gd::InferenceMode guard;
    c = gd::ones({3}, gd::TensorOptions().dtype(gd::kFloat64)).set_requires_grad(true);
  }
  Tensor square = c * c;  // would save c: allowed, as nothing is recorded
  CHECK_FALSE(square.is_inference());
  CHECK_FALSE(square.requires_grad());
  Tensor s = f64({1, 2, 3}).requires_grad_();
  Tensor sum = c.add(s);  // add saves nothing: recorded, and c gets a gradient
  CHECK(sum.requires_grad());
  sum.backward(gd::ones_like(sum));
  CHECK(value_mismatch(c.grad(), f64({1, 1, 1})) == "");
  CHECK(error_of([&] { c.mul(s); }) ==
        "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor "
        "and use it in autograd.");
}

TEST_CASE("the version counter through unsafeGetTensorImpl(), refused for inference tensors") {
  Tensor c = f64({1, 2});
  const uint32_t v = c.unsafeGetTensorImpl()->version_counter().current_version();
  c.unsafeGetTensorImpl()->bump_version();
  CHECK(c.unsafeGetTensorImpl()->version_counter().current_version() == v + 1);
  CHECK(c._version() == v + 1);
  Tensor t;
  {
    gd::InferenceMode guard;
    t = gd::ones({2});
    t.unsafeGetTensorImpl()->bump_version();  // a no-op inside
  }
  CHECK(error_of([&] { t.unsafeGetTensorImpl()->version_counter().current_version(); }) ==
        "Inference tensors do not track version counter.");
  CHECK(error_of([&] { t.unsafeGetTensorImpl()->bump_version(); })
            .starts_with("Inplace update to inference tensor outside InferenceMode is not allowed."));
}

TEST_CASE("InferenceMode(false) inside InferenceMode turns grad mode back on, as libtorch") {
  gd::InferenceMode guard;
  CHECK_FALSE(gd::GradMode::is_enabled());
  {
    gd::InferenceMode off(false);
    CHECK(gd::GradMode::is_enabled());
    CHECK_FALSE(gd::InferenceMode::is_enabled());
  }
  CHECK_FALSE(gd::GradMode::is_enabled());
}

TEST_CASE("backward(inputs=...) takes a braced list, and a non-leaf input gets its .grad") {
  Tensor x = f64({1, 2, 3}).requires_grad_();
  Tensor y = f64({4, 5, 6}).requires_grad_();
  Tensor z = x * x;
  Tensor w = y * z + x * y + y * y;
  w.backward(gd::ones_like(w), false, false, {x, z});
  // python3: w.backward(torch.ones(3), inputs=[x, z]) gives these; y.grad is None and z retains its grad.
  CHECK(value_mismatch(x.grad(), f64({12, 25, 42})) == "");
  CHECK(value_mismatch(z.grad(), f64({4, 5, 6})) == "");
  CHECK_FALSE(y.grad().defined());
  CHECK(z.retains_grad());
}

TEST_CASE("autograd::grad with no inputs is an error, as libtorch") {
  Tensor x = f64({1}).requires_grad_();
  CHECK(error_of([&] { gd::autograd::grad({x * 2}, {}, {x}); }) == "grad requires non-empty inputs.");
}

TEST_CASE("backward with create_graph warns once, and every time in warn-always mode") {
  // python3: z.backward(torch.ones(5, 5), create_graph=True) warns with this text.
  const std::string text = "Using backward() with create_graph=True will create a reference cycle";
  Tensor x = f64({1, 2}).requires_grad_();
  gd::Warning::WarnAlways always(true);
  for (int i = 0; i < 2; ++i) {
    WarningCapture warnings;
    (x * x).sum().backward({}, std::nullopt, /*create_graph=*/true);
    CHECK(warnings.any_contains(text));
  }
  gd::Warning::WarnAlways once(false);
  WarningCapture warnings;
  (x * x).sum().backward({}, std::nullopt, /*create_graph=*/true);
  (x * x).sum().backward({}, std::nullopt, /*create_graph=*/true);
  CHECK(warnings.messages.size() <= 1);
  x.mutable_grad() = Tensor();  // breaks the cycle the warning is about (x.grad's graph holds x)
}

TEST_CASE("AutoNonVariableTypeMode records nothing and warns that it is deprecated") {
  gd::Warning::WarnAlways always(true);
  WarningCapture warnings;
  Tensor x = f64({1}).requires_grad_();
  gd::AutoNonVariableTypeMode guard;
  CHECK(warnings.any_contains("AutoNonVariableTypeMode is deprecated"));
  CHECK_FALSE((x * 2).requires_grad());
}

namespace {
struct Scale : gd::autograd::Function<Scale> {
  static Tensor forward(AutogradContext* ctx, Tensor v) {
    v.mul_(2);
    ctx->mark_dirty({v});
    return v;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

// f(list) = a + b + a * b for list = {a, b}; the two tensors are two inputs.
struct SumProduct : gd::autograd::Function<SumProduct> {
  static Tensor forward(AutogradContext* ctx, gd::TensorList tensors, bool first_needed, bool second_needed) {
    ctx->save_for_backward({tensors[0], tensors[1]});
    ctx->saved_data["first"] = first_needed;
    ctx->saved_data["second"] = second_needed;
    return tensors[0] + tensors[1] + tensors[0] * tensors[1];
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const gd::autograd::IndexRange first{0, 1}, second{1, 2};
    CHECK(ctx->needs_input_grad({first}) == ctx->saved_data["first"].toBool());
    CHECK(ctx->needs_input_grad({second}) == ctx->saved_data["second"].toBool());
    CHECK(ctx->needs_input_grad({first, second}));
    variable_list saved = ctx->get_saved_variables();
    return {g[0] + g[0] * saved[1], g[0] + g[0] * saved[0], Tensor(), Tensor()};
  }
};

struct Identity : gd::autograd::Function<Identity> {
  static Tensor forward(AutogradContext* ctx, Tensor v, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return v;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    ctx->saved_data["called"] = true;
    ctx->saved_data["defined"] = g[0].defined();
    if (g[0].defined()) CHECK(value_mismatch(g[0], f64({0, 0})) == "");
    return {g[0], Tensor()};
  }
};
}  // namespace

TEST_CASE("mark_dirty bumps the version counter of the modified input") {
  Tensor x = f64({1, 2}).requires_grad_().clone();
  const uint32_t before = x._version();
  Tensor out = Scale::apply(x);
  CHECK(x._version() >= before + 1);
  out.sum().backward();
}

TEST_CASE("a custom function takes a TensorList whose tensors are inputs of their own") {
  Tensor a = f64({1, 2}).requires_grad_();
  Tensor b = f64({3, 4}).requires_grad_();
  std::vector<Tensor> both{a, b};
  Tensor out = SumProduct::apply(gd::TensorList(both), true, true);
  out.sum().backward();
  CHECK(value_mismatch(a.grad(), f64({4, 5})) == "");  // 1 + b
  CHECK(value_mismatch(b.grad(), f64({2, 3})) == "");  // 1 + a
  Tensor only_a = gd::autograd::grad({SumProduct::apply(gd::TensorList(both), true, false).sum()}, {a})[0];
  CHECK(value_mismatch(only_a, f64({4, 5})) == "");
}

TEST_CASE("UndefinedGrad sends undefined gradients back; a custom function sees zeros or undefined") {
  for (bool materialize : {true, false}) {
    Tensor x = f64({1, 2}).requires_grad_();
    Tensor y = Identity::apply(x, materialize);
    Tensor z = gd::autograd::UndefinedGrad().apply({y})[0];
    CHECK(z.grad_fn()->name() == "UndefinedGradBackward");
    CHECK(value_mismatch(z, f64({1, 2})) == "");
    z.sum().backward();
    auto* node = dynamic_cast<gd::autograd::detail::CustomFunctionNodeBase*>(y.grad_fn().get());
    REQUIRE(node != nullptr);
    CHECK(node->ctx.saved_data["called"].toBool());
    CHECK(node->ctx.saved_data["defined"].toBool() == materialize);
  }
}

TEST_CASE("a custom function's backward can run a backward of its own (make_variable, reentrant)") {
  static Tensor y_data = f64({3, 4});
  struct Reenter : gd::autograd::Function<Reenter> {
    static Tensor forward(AutogradContext* ctx, Tensor input) {
      gd::AutoGradMode enable(true);
      Tensor x = gd::autograd::make_variable(input.detach(), true);
      Tensor output = x * gd::autograd::make_variable(y_data, true);
      ctx->saved_data["x"] = x;
      ctx->saved_data["output"] = output;
      return output.detach();
    }
    static variable_list backward(AutogradContext* ctx, variable_list g) {
      {
        gd::AutoGradMode enable(true);
        ctx->saved_data["output"].toTensor().sum().backward();
      }
      return {ctx->saved_data["x"].toTensor().grad() * g[0]};
    }
  };
  Tensor x = f64({1, 2}).requires_grad_();
  Reenter::apply(x).sum().backward();
  CHECK(value_mismatch(x.grad(), y_data) == "");
}

namespace {
// Each backward runs the backward of another call of itself on x - 1, down to 0:
// x nested passes, which past a depth continue on new threads.
struct CountDown : gd::autograd::Function<CountDown> {
  static inline uint64_t newest_node_inside = 0;
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    gd::AutoGradMode enable(true);
    ctx->saved_data["x"] = gd::autograd::make_variable(x.detach(), true) - 1;
    return ctx->saved_data["x"].toTensor().detach();
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor next = ctx->saved_data["x"].toTensor();
    if (gd::is_nonzero(next)) {
      gd::AutoGradMode enable(true);
      Tensor out = apply(next);
      newest_node_inside = std::max(newest_node_inside, out.grad_fn()->sequence_nr());
      out.sum().backward();
    }
    return {g[0] * 2};
  }
};
}  // namespace

TEST_CASE("deeply nested backward passes (reentrant) neither overflow the stack nor lose state") {
  Tensor v = f64({300}).requires_grad_();
  const bool grad_mode = gd::GradMode::is_enabled();
  CountDown::apply(v).sum().backward();
  CHECK(value_mismatch(v.grad(), f64({2})) == "");
  CHECK(gd::GradMode::is_enabled() == grad_mode);
  // A node made after the pass is newer than every node made inside it, on whichever thread.
  CHECK((v * 2).grad_fn()->sequence_nr() > CountDown::newest_node_inside);
}

TEST_CASE("anomaly mode: a failing node warns with its history, check_nan decides whether NaN fails") {
  gd::autograd::DetectAnomalyGuard detect;
  {
    WarningCapture warnings;
    Tensor x = f64({5}).requires_grad_();
    Tensor y = x * x;
    Tensor z = y * y;
    y.add_(1);
    CHECK(error_of([&] { z.backward(); }).find("inplace") != std::string::npos);
    REQUIRE(warnings.messages.size() == 1);
    CHECK(warnings.messages[0].starts_with("Error detected in MulBackward0. Traceback of forward call that caused"));
  }
  // python3 (detect_anomaly): the second derivative of x^1.5 at 0 times 0 is NaN; torch warns for the
  // failing node, then for the node whose backward created it.
  // The history is held weakly: y must still be alive for the second message.
  auto second_derivative = [] {
    Tensor x = f64({0}).requires_grad_();
    Tensor y = x.pow(1.5);
    Tensor g = gd::autograd::grad({y}, {x}, {}, true, true)[0];
    return gd::autograd::grad({g}, {x}, {f64({0})})[0];
  };
  {
    WarningCapture warnings;
    CHECK(error_of(second_derivative).find("returned nan values in its 0th output.") != std::string::npos);
    REQUIRE(warnings.messages.size() == 2);
    CHECK(warnings.messages[0].find("Traceback of forward call that caused the error") != std::string::npos);
    CHECK(warnings.messages[1].find("Previous calculation was induced by PowBackward") != std::string::npos);
  }
  gd::autograd::DetectAnomalyGuard no_nan_check(/*check_nan=*/false);
  CHECK(error_of(second_derivative) == "");
}

TEST_CASE("out= forms write into out, resizing it, and refuse inputs that require grad") {
  Tensor a = f64({2, 3});
  Tensor b = f64({4, 5});
  Tensor out = gd::empty({0}, gd::TensorOptions().dtype(gd::kFloat64));
  // python3: torch.mul(a, b, out=o) and friends.
  CHECK(value_mismatch(gd::mul_out(out, a, b), f64({8, 15})) == "");
  CHECK(value_mismatch(gd::add_out(out, a, b, 2), f64({10, 13})) == "");
  CHECK(value_mismatch(gd::sub_out(out, a, b, 2), f64({-6, -7})) == "");
  CHECK(value_mismatch(gd::div_out(out, a, b), f64({0.5, 0.6})) == "");
  Tensor s = f64({1, 2}).requires_grad_();
  CHECK(error_of([&] { gd::mul_out(out, s, s); }) ==
        "mul(): functions with out=... arguments don't support automatic differentiation, but one of the arguments "
        "requires grad.");
  {
    gd::NoGradGuard no_grad;
    CHECK(value_mismatch(gd::mul_out(out, s, s), f64({1, 4})) == "");
  }
  Tensor inference;
  {
    gd::InferenceMode guard;
    inference = gd::empty({2}, gd::TensorOptions().dtype(gd::kFloat64));
  }
  CHECK(error_of([&] { gd::mul_out(inference, a, b); })
            .starts_with("Inplace update to inference tensor outside InferenceMode is not allowed"));
}

TEST_CASE("is_nonzero: the truth of a one-element tensor") {
  CHECK(gd::is_nonzero(f64({2})));
  CHECK_FALSE(gd::is_nonzero(f64({0})));
  CHECK(error_of([] { gd::is_nonzero(f64({1, 2})); }) ==
        "Boolean value of Tensor with more than one value is ambiguous");
  CHECK(error_of([] { gd::is_nonzero(f64({})); }) == "Boolean value of Tensor with no values is ambiguous");
}

TEST_CASE("OptionalIntArrayRef keeps a single integer rather than borrowing a converted temporary") {
  auto first = [](gd::OptionalIntArrayRef dims) { return dims.value()[0]; };
  CHECK(first(300) == 300);
  CHECK(first({400}) == 400);
  CHECK(first(std::vector<int64_t>{7, 8}) == 7);
  CHECK_FALSE(gd::OptionalIntArrayRef().has_value());
  CHECK_FALSE(gd::OptionalIntArrayRef(std::nullopt).has_value());
}
