// The sweep: gradcheck and gradgradcheck (float64 central differences) of every
// op in the registry, on contiguous, transposed, broadcast and 0-dim inputs.
#include <doctest/doctest.h>

#include <set>

#include "engine/autograd/function.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::testing::differentiable_ops;
using gd::testing::make_variant;
using gd::testing::Variant;

namespace {

constexpr Variant kVariants[] = {gd::testing::kContiguous, gd::testing::kTransposed, gd::testing::kBroadcast,
                                 gd::testing::kZeroDim};

// Runs `check` on every applicable variant of every op; returns how many ran.
template <class Check>
int sweep(Check check) {
  int runs = 0;
  for (const auto& op : differentiable_ops()) {
    for (Variant v : kVariants) {
      if (!(op.variants & v)) continue;
      auto c = make_variant(op, v);
      if (!c) continue;
      std::string label = op.name + " [" + gd::testing::variant_name(v) + "]";
      INFO(label);
      try {
        CHECK(check(*c, op.options));
      } catch (const std::exception& e) {
        FAIL_CHECK(std::string(e.what()));
      }
      ++runs;
    }
  }
  return runs;
}

// An op whose backward is deliberately wrong (2x instead of 3x), to show the
// checks can fail.
struct WrongTriple {
  static constexpr std::string_view name = "WrongTripleBackward";
  static Tensor forward(gd::Ctx&, const Tensor& x) { return x * 3.0; }
  static gd::GradList backward(gd::Ctx&, const Tensor& g) { return {g * 2.0}; }
};

// Right first derivative (x^2 -> 2x), wrong second: its backward is a dead end.
struct FlatSecondDerivative {
  static constexpr std::string_view name = "FlatSecondDerivativeBackward";
  static Tensor forward(gd::Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return x * x;
  }
  static gd::GradList backward(gd::Ctx& ctx, const Tensor& g) {
    Tensor x = ctx.saved(0).detach();
    return {g * x * 2.0};
  }
};

}  // namespace

TEST_CASE("op registry: names are unique and every op has inputs") {
  std::set<std::string> names;
  for (const auto& op : differentiable_ops()) {
    INFO(op.name);
    CHECK(names.insert(op.name).second);
    CHECK(!op.inputs.empty());
    CHECK(op.variants != 0);
  }
  CHECK(differentiable_ops().size() >= 170);
}

TEST_CASE("gradcheck of every op and variant") {
  int runs = sweep([](const gd::testing::VariantCase& c, const gd::autograd::GradcheckOptions& options) {
    return gd::autograd::gradcheck(c.fn, c.inputs, options);
  });
  CHECK(runs >= 600);
}

TEST_CASE("gradgradcheck of every op and variant") {
  int runs = sweep([](const gd::testing::VariantCase& c, const gd::autograd::GradcheckOptions& options) {
    return gd::autograd::gradgradcheck(c.fn, c.inputs, options);
  });
  CHECK(runs >= 600);
}

// Forward mode, both ways an op meets a dual input: while recording (the
// inputs require grad) and under NoGradGuard (tangents only). Ops with a jvp
// formula use it; the others go through the double-backward fallback.
TEST_CASE("forward-mode AD of every op and variant, while recording") {
  int runs = sweep([](const gd::testing::VariantCase& c, gd::autograd::GradcheckOptions options) {
    options.check_forward_ad = true;
    options.check_backward_ad = false;
    return gd::autograd::gradcheck(c.fn, c.inputs, options);
  });
  CHECK(runs >= 600);
}

TEST_CASE("forward-mode AD of every op and variant, without grad mode") {
  int runs = sweep([](const gd::testing::VariantCase& c, gd::autograd::GradcheckOptions options) {
    options.check_forward_ad = true;
    options.check_backward_ad = false;
    auto fn = c.fn;
    auto no_grad_fn = [fn](const std::vector<Tensor>& xs) {
      gd::NoGradGuard no_grad;
      return fn(xs);
    };
    return gd::autograd::gradcheck(no_grad_fn, c.inputs, options);
  });
  CHECK(runs >= 600);
}

TEST_CASE("gradcheck and gradgradcheck reject wrong derivatives") {
  gd::autograd::GradcheckOptions quiet;
  quiet.raise_exception = false;
  Tensor x = gd::testing::sample({2, 3}, -1, 1, 5).requires_grad_();
  auto wrong = [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{gd::apply<WrongTriple>(xs[0])}; };
  CHECK_FALSE(gd::autograd::gradcheck(wrong, {x}, quiet));
  CHECK(gd::testing::error_of([&] { gd::autograd::gradcheck(wrong, {x}); }).find("Jacobian mismatch") == 0);

  auto flat = [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{gd::apply<FlatSecondDerivative>(xs[0])}; };
  CHECK(gd::autograd::gradcheck(flat, {x}, quiet));
  CHECK_FALSE(gd::autograd::gradgradcheck(flat, {x}, quiet));
}

TEST_CASE("gradcheck needs float64 inputs") {
  Tensor x = gd::ones({2}, gd::kFloat32).requires_grad_();
  auto id = [](const std::vector<Tensor>& xs) { return xs; };
  CHECK(gd::testing::error_of([&] { gd::autograd::gradcheck(id, {x}); }) ==
        "gradcheck: input 0 is float32; gradcheck needs float64 inputs for finite differences to be accurate");
}

TEST_CASE("gradcheck refuses inputs whose elements overlap") {
  Tensor x = gd::ones({1, 3}, gd::kFloat64).expand({2, 3}).detach().requires_grad_();
  auto id = [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * 2}; };
  CHECK(gd::testing::error_of([&] { gd::autograd::gradcheck(id, {x}); }) ==
        "gradcheck: input 0 has a dimension with stride 0; gradcheck needs inputs whose elements do not overlap (pass "
        "the unexpanded tensor and expand inside the function)");
}

TEST_CASE("every op on empty inputs returns a result with its gradients, or refuses with gradiens::Error") {
  int ran = 0, refused = 0;
  for (const auto& op : differentiable_ops()) {
    auto inputs = gd::testing::emptied_inputs(op);
    if (!inputs) continue;
    INFO(op.name << " (empty)");
    try {
      const gd::testing::Run r = gd::testing::run_with_gradients(op.fn, *inputs);
      for (size_t i = 0; i < r.grads.size(); ++i)  // every input of the sweep requires grad
        if (r.grads[i].defined()) CHECK(r.grads[i].sizes() == (*inputs)[i].sizes());
      ++ran;
    } catch (const gd::Error&) {
      ++refused;
    }
  }
  MESSAGE(ran << " ops ran on empty inputs, " << refused << " refused");
  CHECK(ran >= 100);
}
