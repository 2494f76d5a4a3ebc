// leaky_relu and elu, each an op whose backward is an op too, so that their
// higher derivatives are PyTorch's (Note [Activations at zero]).
#include "nn/functional/activation.h"

#include <fmt/format.h>

#include <string_view>

#include "engine/autograd/function.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "kernels/scalar_type.h"

namespace gradiens::nn::functional {

namespace {

// PyTorch's dispatch error for an integer or bool input: "elu_cpu" not implemented for 'Long'.
void check_floating(const Tensor& input, std::string_view kernel) {
  if (input.is_floating_point()) return;
  std::string_view type = legacy_tensor_type_name(input.dtype());
  type.remove_suffix(std::string_view("Tensor").size());
  throw Error(fmt::format("\"{}_{}\" not implemented for '{}'", kernel, input.is_cuda() ? "cuda" : "cpu", type));
}

// The in-place form: computed out of place on a clone (so nothing the graph
// saved is the tensor being overwritten), then written back with copy_.
template <class F>
Tensor write_into(const Tensor& input, F&& f) {
  Tensor out = f(input.clone());
  Tensor self = input;
  self.copy_(out);
  return input;
}

// Note [Activations at zero]
// PyTorch's elu_backward takes the x <= 0 branch, so the first derivative at 0
// is alpha, while its double backward masks with x < 0, so the second
// derivative at 0 is 0; a where() composite would give alpha for both. For
// leaky_relu a composite would have the right values, but its first
// derivative would be a constant cut off from x, so differentiating it again
// would fail where PyTorch gives zeros. exp is always taken of min(x, 0), so an
// unselected branch never turns a large positive x into inf * 0 = NaN.

struct LeakyReluBackward {
  static constexpr std::string_view name = "LeakyReluBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, const Tensor& input, double negative_slope) {
    ctx.save_for_backward(input);
    ctx.real = negative_slope;
    return where(input > 0, grad, grad * negative_slope);
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [input] = ctx.saved<1>();
    return {ctx.needs_input_grad(0) ? leaky_relu_backward(gg, input, ctx.real) : Tensor(),
            ctx.needs_input_grad(1) ? zeros_like(input) : Tensor()};
  }
};

struct LeakyRelu {
  static constexpr std::string_view name = "LeakyReluBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, double negative_slope) {
    ctx.save_for_backward(input);
    ctx.real = negative_slope;
    return where(input > 0, input, input * negative_slope);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [input] = ctx.saved<1>();
    return {leaky_relu_backward(g, input, ctx.real)};
  }
  static Tensor jvp(const Tensor&, const GradList& tangents, const Tensor& input, double negative_slope) {
    return tangents[0].defined() ? leaky_relu_backward(tangents[0], input, negative_slope) : Tensor();
  }
};

struct EluBackward {
  static constexpr std::string_view name = "EluBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, const Tensor& input, double alpha) {
    ctx.save_for_backward(grad, input);
    ctx.real = alpha;
    return where(input > 0, grad, grad * exp(input.clamp_max(0)) * alpha);
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [grad, input] = ctx.saved<2>();
    const double alpha = ctx.real;
    Tensor d_grad = ctx.needs_input_grad(0) ? elu_backward(gg, input, alpha) : Tensor();
    Tensor d_input =
        ctx.needs_input_grad(1) ? where(input < 0, gg * grad * exp(input.clamp_max(0)) * alpha, 0.0) : Tensor();
    return {d_grad, d_input};
  }
};

struct Elu {
  static constexpr std::string_view name = "EluBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& input, double alpha) {
    ctx.save_for_backward(input);
    ctx.real = alpha;
    return where(input > 0, input, expm1(input.clamp_max(0)) * alpha);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [input] = ctx.saved<1>();
    return {elu_backward(g, input, ctx.real)};
  }
  static Tensor jvp(const Tensor&, const GradList& tangents, const Tensor& input, double alpha) {
    return tangents[0].defined() ? elu_backward(tangents[0], input, alpha) : Tensor();
  }
};

}  // namespace

Tensor leaky_relu(const Tensor& input, double negative_slope) {
  check_floating(input, "leaky_relu");
  return apply<LeakyRelu>(input, negative_slope);
}

Tensor leaky_relu_backward(const Tensor& grad, const Tensor& input, double negative_slope) {
  return apply<LeakyReluBackward>(grad, input, negative_slope);
}

Tensor elu(const Tensor& input, double alpha) {
  check_floating(input, "elu");
  return apply<Elu>(input, alpha);
}

Tensor elu_backward(const Tensor& grad, const Tensor& input, double alpha) {
  return apply<EluBackward>(grad, input, alpha);
}

Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options) {
  if (!options.inplace_) return leaky_relu(input, options.negative_slope_);
  check_floating(input, "leaky_relu");
  return write_into(input, [&](const Tensor& x) { return leaky_relu(x, options.negative_slope_); });
}

Tensor elu(const Tensor& input, const ELUFuncOptions& options) {
  if (!options.inplace_) return elu(input, options.alpha_);
  check_floating(input, "elu");
  return write_into(input, [&](const Tensor& x) { return elu(x, options.alpha_); });
}

}  // namespace gradiens::nn::functional
