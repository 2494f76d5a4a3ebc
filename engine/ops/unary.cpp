// Unary math (exp, log, tanh, sigmoid, relu, erf, ...), the fused tanh/sigmoid
// backward ops, the composite activations (gelu, silu, square), and the
// in-place forms. Floating math runs through the vectorized kernels.
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "engine/autograd/function.h"
#include "engine/autograd/multi_output.h"
#include "engine/functions.h"
#include "engine/memory_format.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/inplace.h"
#include "kernels/elementwise.h"
#include "kernels/unary.h"

namespace gradiens {

namespace {

using kernels::UnaryMath;
using cuda_seam::device_of;

// Applies a vectorized math function; integer inputs compute in float32 as in
// PyTorch, and so do float16/bfloat16 (rounded once per result). As PyTorch's
// TensorIterator, a dense input in any order of its dims (channels_last,
// transposed) is walked in memory order and its strides go to the output;
// other inputs are made contiguous first.
Tensor float_math(const Tensor& x, UnaryMath op, std::string_view name) {
  Tensor xc = x.is_floating_point() ? x : x.to(get_default_dtype());
  if (!is_non_overlapping_and_dense(xc.sizes(), xc.strides())) xc = xc.contiguous();
  Tensor out = empty_strided(xc.sizes(), xc.strides(), xc.options());
  (void)name;  // every floating dtype has the vectorized kernels
  kernels::unary_math(op, out.dtype(), xc.data_ptr(), out.data_ptr(), out.numel(), device_of(out));
  return out;
}

// Floating inputs take the vectorized path; integer inputs a typed scalar loop.
Tensor numeric_math(const Tensor& x, UnaryMath op, std::string_view name) {
  if (x.is_floating_point()) return float_math(x, op, name);
  Tensor out = empty(x.sizes(), x.options());
  kernels::integer_math(op, x.dtype(), cuda_seam::buffer_of(out), cuda_seam::buffer_of(x), out.sizes(), device_of(out),
                        name);
  return out;
}

struct Neg {
  static constexpr std::string_view name = "NegBackward0";
  static Tensor forward(Ctx&, const Tensor& x) {
    GD_CHECK(x.dtype() != kBool, "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                 "to invert a mask, use the `~` or `logical_not()` operator instead.");
    return numeric_math(x, UnaryMath::Neg, "neg");
  }
  static GradList backward(Ctx&, const Tensor& g) { return {-g}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&) { return -t[0]; }
};

struct Exp {
  static constexpr std::string_view name = "ExpBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Exp, "exp");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * ctx.saved(0)}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return t[0] * y; }
};

struct Log {
  static constexpr std::string_view name = "LogBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return float_math(x, UnaryMath::Log, "log");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g / ctx.saved(0)}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return t[0] / x; }
};

struct Log1p {
  static constexpr std::string_view name = "Log1PBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return float_math(x, UnaryMath::Log1p, "log1p");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g / (ctx.saved(0) + 1)}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return t[0] / (x + 1); }
};

struct Expm1 {
  static constexpr std::string_view name = "Expm1Backward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Expm1, "expm1");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * (ctx.saved(0) + 1)}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return t[0] * (y + 1); }
};

struct Sqrt {
  static constexpr std::string_view name = "SqrtBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Sqrt, "sqrt");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g / (ctx.saved(0) * 2)}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return t[0] / (y * 2); }
};

struct Rsqrt {
  static constexpr std::string_view name = "RsqrtBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Rsqrt, "rsqrt");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * pow(ctx.saved(0), 3) * -0.5}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return t[0] * pow(y, 3) * -0.5; }
};

struct Abs {
  static constexpr std::string_view name = "AbsBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return numeric_math(x, UnaryMath::Abs, "abs");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * sign(ctx.saved(0))}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return t[0] * sign(x); }
};

struct Sign {
  static constexpr std::string_view name = "SignBackward0";
  static Tensor forward(Ctx&, const Tensor& x) {
    return numeric_math(x, UnaryMath::Sign, "sign");
  }
  static GradList backward(Ctx&, const Tensor& g) { return {zeros_like(g)}; }
  static Tensor jvp(const Tensor& y, const GradList&, const Tensor&) { return zeros_like(y); }
};

// floor, ceil, round and trunc: piecewise constant, so their gradient is zero
// (as PyTorch's); an integer tensor comes back as a copy, as in PyTorch.
template <UnaryMath kOp>
struct Rounding {
  static constexpr std::string_view op = kOp == UnaryMath::Floor  ? "floor"
                                         : kOp == UnaryMath::Ceil ? "ceil"
                                         : kOp == UnaryMath::Round ? "round"
                                                                   : "trunc";
  static constexpr std::string_view name = kOp == UnaryMath::Floor  ? "FloorBackward0"
                                           : kOp == UnaryMath::Ceil ? "CeilBackward0"
                                           : kOp == UnaryMath::Round ? "RoundBackward0"
                                                                     : "TruncBackward0";
  static Tensor forward(Ctx&, const Tensor& x) {
    GD_CHECK(x.dtype() != kBool, fmt::format("\"{}\" not implemented for 'Bool'", op));
    if (!x.is_floating_point()) return x.clone();
    return float_math(x, kOp, op);
  }
  static GradList backward(Ctx&, const Tensor& g) { return {zeros_like(g)}; }
  static Tensor jvp(const Tensor& y, const GradList&, const Tensor&) { return zeros_like(y); }
};

struct Reciprocal {
  static constexpr std::string_view name = "ReciprocalBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Reciprocal, "reciprocal");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor y = ctx.saved(0);
    return {-g * y * y};
  }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return -t[0] * y * y; }
};

struct Sin {
  static constexpr std::string_view name = "SinBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return float_math(x, UnaryMath::Sin, "sin");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * cos(ctx.saved(0))}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return t[0] * cos(x); }
};

struct Cos {
  static constexpr std::string_view name = "CosBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return float_math(x, UnaryMath::Cos, "cos");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {-g * sin(ctx.saved(0))}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return -t[0] * sin(x); }
};

struct Tan {
  static constexpr std::string_view name = "TanBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Tan, "tan");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor y = ctx.saved(0);
    return {g * (y * y + 1)};
  }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return t[0] * (y * y + 1); }
};

struct Tanh {
  static constexpr std::string_view name = "TanhBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Tanh, "tanh");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {tanh_backward(g, ctx.saved(0))}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return tanh_backward(t[0], y); }
};

struct Sigmoid {
  static constexpr std::string_view name = "SigmoidBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = float_math(x, UnaryMath::Sigmoid, "sigmoid");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {sigmoid_backward(g, ctx.saved(0))}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return sigmoid_backward(t[0], y); }
};

struct Relu {
  static constexpr std::string_view name = "ReluBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    Tensor y = numeric_math(x, UnaryMath::Relu, "relu");
    ctx.save_for_backward(y);
    return y;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {threshold_backward(g, ctx.saved(0), 0)}; }
  static Tensor jvp(const Tensor& y, const GradList& t, const Tensor&) { return threshold_backward(t[0], y, 0); }
};

struct Erf {
  static constexpr std::string_view name = "ErfBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return float_math(x, UnaryMath::Erf, "erf");
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor x = ctx.saved(0);
    return {g * exp(-(x * x)) * (2.0 / std::sqrt(std::numbers::pi))};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x) { return t[0] * exp(-(x * x)) * (2.0 / std::sqrt(std::numbers::pi)); }
};

// softplus(x) = log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
struct Softplus {
  static constexpr std::string_view name = "SoftplusBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, Scalar beta, Scalar threshold) {
    ctx.save_for_backward(x);
    ctx.scalar = beta;
    ctx.real = threshold.to_double();
    Tensor out = empty(x.sizes(), x.options());
    kernels::softplus(x.dtype(), cuda_seam::buffer_of(out), cuda_seam::buffer_of(x), out.sizes(),
                      cuda_seam::number_of(beta), cuda_seam::number_of(threshold), device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    Tensor x = ctx.saved(0);
    Tensor z = x * ctx.scalar;
    return {where(z > Scalar(ctx.real), g, g * sigmoid(z))};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& x, Scalar beta, Scalar threshold) {
    Tensor z = x * beta;
    return where(z > threshold, t[0], t[0] * sigmoid(z));
  }
};

// Whether every tensor is contiguous, float32/float64 and shaped like the first,
// so a fused loop can walk them by one flat index.
bool same_dense_layout(std::initializer_list<Tensor> tensors) {
  const Tensor& first = *tensors.begin();
  for (const Tensor& t : tensors) {
    if (!t.defined() || !t.is_contiguous() || t.dtype() != first.dtype() || !(t.sizes() == first.sizes()) ||
        (t.dtype() != kFloat32 && t.dtype() != kFloat64) || t.device() != first.device())
      return false;
  }
  return true;
}

// A fused backward's `count` outputs, each shaped like `like`: the sum the
// engine offers for that input (Note [Accumulating in place]), whose bit the
// kernel's `accumulate` mask then sets, or a new tensor.
GradList outputs_or_accumulation_targets(const Ctx& ctx, size_t count, const Tensor& like, uint32_t& accumulate) {
  GradList outputs;
  accumulate = 0;
  for (size_t k = 0; k < count; ++k) {
    Tensor target = ctx.accumulation_target(k, like);
    if (target.defined()) accumulate |= uint32_t{1} << k;
    outputs.push_back(target.defined() ? std::move(target) : empty(like.sizes(), like.options()));
  }
  return outputs;
}

// s * a * b * c in one pass: tanh's second derivative (gg * grad * y * -2) would
// otherwise take three passes and two temporaries over every hidden activation
// of a PINN. Its gradient with respect to each factor is the same product with
// that factor replaced by the incoming gradient, so it is differentiable to any
// order through itself.
struct ScaledProduct3 {
  static constexpr std::string_view name = "ScaledProduct3Backward";
  static Tensor forward(Ctx& ctx, const Tensor& a, const Tensor& b, const Tensor& c, double scale) {
    ctx.save_for_backward(a, b, c);
    ctx.real = scale;
    const bool fused = a.sizes() == b.sizes() && a.sizes() == c.sizes() && a.dtype() == b.dtype() &&
                       a.dtype() == c.dtype() && (a.dtype() == kFloat32 || a.dtype() == kFloat64);
    if (!fused) {
      NoGradGuard guard;
      return a * b * c * scale;
    }
    Tensor out = empty(a.sizes(), a.options());
    // The dense kernel; strided or broadcast operands are made dense first (same rounding).
    Tensor ac = a.contiguous(), bc = b.contiguous(), cc = c.contiguous();
    kernels::scaled_product(out.dtype(), ac.data_ptr(), bc.data_ptr(), cc.data_ptr(), scale, out.data_ptr(),
                            out.numel(), device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    const std::array<Tensor, 3> saved = ctx.saved<3>();
    const Tensor &a = saved[0], &b = saved[1], &c = saved[2];  // named references: lambdas capture them
    const double s = ctx.real;
    if (!GradMode::is_enabled() && ctx.needs_input_grad(0) && ctx.needs_input_grad(1) && ctx.needs_input_grad(2) &&
        same_dense_layout({g, a, b, c})) {
      // Nothing records: the three products in one pass over g, a, b and c, with
      // the same rounding as the three calls below, each added into its offered sum.
      uint32_t accumulate = 0;
      GradList grads = outputs_or_accumulation_targets(ctx, 3, g, accumulate);
      kernels::scaled_product_backward(g.dtype(), g.data_ptr(), a.data_ptr(), b.data_ptr(), c.data_ptr(), s,
                                       grads[0].data_ptr(), grads[1].data_ptr(), grads[2].data_ptr(), g.numel(),
                                       device_of(g), accumulate);
      return grads;
    }
    return {ctx.needs_input_grad(0) ? scaled_product(g, b, c, s) : Tensor(),
            ctx.needs_input_grad(1) ? scaled_product(a, g, c, s) : Tensor(),
            ctx.needs_input_grad(2) ? scaled_product(a, b, g, s) : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& a, const Tensor& b, const Tensor& c,
                    double scale) {
    return add_tangents(add_tangents(t[0].defined() ? scaled_product(t[0], b, c, scale) : Tensor(),
                                     t[1].defined() ? scaled_product(a, t[1], c, scale) : Tensor()),
                        t[2].defined() ? scaled_product(a, b, t[2], scale) : Tensor());
  }
};

// Note [Tanh's second derivative as one node]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Differentiating tanh_backward(grad, y) with create_graph (a PINN's second
// derivatives) gives gg (1 - y^2) for grad and -2 gg grad y for y. Recorded as
// tanh_backward and scaled_product, they take two passes over gg and y, and the
// final backward two more (their backwards), each adding into the same sums. On
// the CPU they are one op with two outputs instead: one pass for both, and one
// for the three gradients of the pair, each term rounded as the separate ops
// round it. Under create_graph its backward records those ops, so every further
// derivative stays available.
struct TanhBackwardBackwardOp {
  static constexpr std::string_view name = "TanhBackwardBackwardBackward0";
  static std::array<Tensor, 2> forward(Ctx& ctx, const Tensor& gg, const Tensor& grad, const Tensor& y) {
    ctx.save_for_backward(gg, grad, y);
    Tensor d_grad = empty(y.sizes(), y.options()), d_y = empty(y.sizes(), y.options());
    kernels::tanh_backward_backward(y.dtype(), gg.data_ptr(), grad.data_ptr(), y.data_ptr(), d_grad.data_ptr(),
                                    d_y.data_ptr(), y.numel(), device_of(y));
    return {d_grad, d_y};
  }
  static GradList backward(Ctx& ctx, const GradList& grads) {
    const std::array<Tensor, 3> saved = ctx.saved<3>();
    const Tensor &gg = saved[0], &grad = saved[1], &y = saved[2];
    const Tensor &g_first = grads[0], &g_second = grads[1];
    if (!GradMode::is_enabled() && ctx.needs_input_grad(0) && ctx.needs_input_grad(1) && ctx.needs_input_grad(2) &&
        same_dense_layout({g_first, g_second, gg, grad, y})) {
      uint32_t accumulate = 0;
      GradList out = outputs_or_accumulation_targets(ctx, 3, y, accumulate);
      kernels::tanh_backward_backward_backward(y.dtype(), g_first.data_ptr(), g_second.data_ptr(), gg.data_ptr(),
                                               grad.data_ptr(), y.data_ptr(), out[0].data_ptr(), out[1].data_ptr(),
                                               out[2].data_ptr(), y.numel(), device_of(y), accumulate);
      return out;
    }
    GradList out(3);
    if (ctx.needs_input_grad(0))
      out[0] = add_tangents(g_first.defined() ? tanh_backward(g_first, y) : Tensor(),
                            g_second.defined() ? scaled_product(g_second, grad, y, -2.0) : Tensor());
    if (ctx.needs_input_grad(1) && g_second.defined()) out[1] = scaled_product(gg, g_second, y, -2.0);
    if (ctx.needs_input_grad(2))
      out[2] = add_tangents(g_first.defined() ? scaled_product(g_first, gg, y, -2.0) : Tensor(),
                            g_second.defined() ? scaled_product(gg, grad, g_second, -2.0) : Tensor());
    return out;
  }
};

// Fused tanh backward: grad * (1 - y^2), itself differentiable.
struct TanhBackwardOp {
  static constexpr std::string_view name = "TanhBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, const Tensor& y) {
    ctx.save_for_backward(grad, y);
    if (!(grad.sizes() == y.sizes()) || grad.dtype() != y.dtype() || !grad.is_floating_point()) {
      NoGradGuard guard;
      return grad * (1 - y * y);
    }
    Tensor gc = grad.contiguous(), yc = y.contiguous();
    Tensor out = empty(y.sizes(), y.options());
    kernels::tanh_backward(out.dtype(), gc.data_ptr(), yc.data_ptr(), out.data_ptr(), out.numel(), device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    const std::array<Tensor, 2> saved = ctx.saved<2>();
    const Tensor &grad = saved[0], &y = saved[1];  // named references: lambdas capture them
    if (!GradMode::is_enabled() && ctx.needs_input_grad(0) && ctx.needs_input_grad(1) &&
        same_dense_layout({gg, grad, y})) {
      // Nothing records: both gradients in one pass over gg, grad and y, with the
      // same rounding as the two ops below, each added into its offered sum.
      uint32_t accumulate = 0;
      GradList grads = outputs_or_accumulation_targets(ctx, 2, y, accumulate);
      kernels::tanh_backward_backward(y.dtype(), gg.data_ptr(), grad.data_ptr(), y.data_ptr(), grads[0].data_ptr(),
                                      grads[1].data_ptr(), y.numel(), device_of(y), accumulate);
      return grads;
    }
    const bool dual = detail::forward_ad_enabled() &&
                      (detail::has_tangent(gg) || detail::has_tangent(grad) || detail::has_tangent(y));
    if (ctx.needs_input_grad(0) && ctx.needs_input_grad(1) && y.is_cpu() && !dual &&
        same_dense_layout({gg, grad, y})) {
      const std::array<Tensor, 2> both = apply_multi<TanhBackwardBackwardOp>(gg, grad, y);
      return {both[0], both[1]};  // Note [Tanh's second derivative as one node]
    }
    return {ctx.needs_input_grad(0) ? tanh_backward(gg, y) : Tensor(),
            ctx.needs_input_grad(1) ? scaled_product(gg, grad, y, -2.0) : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& grad, const Tensor& y) {
    return add_tangents(t[0].defined() ? tanh_backward(t[0], y) : Tensor(),
                        t[1].defined() ? scaled_product(t[1], grad, y, -2.0) : Tensor());
  }
};

// Whether every tensor is float32/float64 on one device, shaped and strided like the
// first and dense (contiguous, channels_last or any other order of the dims), so a
// fused loop can walk their memory by one flat index and write an output strided alike.
bool same_dense_memory(std::initializer_list<Tensor> tensors) {
  const Tensor& first = *tensors.begin();
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.dtype() != first.dtype() || (t.dtype() != kFloat32 && t.dtype() != kFloat64) ||
        t.device() != first.device() || !(t.sizes() == first.sizes()) || !(t.strides() == first.strides()))
      return false;
  }
  return is_non_overlapping_and_dense(first.sizes(), first.strides());
}

// ReLU's backward, PyTorch's threshold_backward: grad where self > threshold, 0
// elsewhere (a NaN self passes grad). One pass, in the operands' own memory
// order, instead of a comparison and a select. Linear in grad, so its backward
// is itself with gg; self (a step function's argument) gets no gradient.
struct ThresholdBackwardOp {
  static constexpr std::string_view name = "ThresholdBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, const Tensor& self, Scalar threshold) {
    ctx.save_for_backward(self);
    ctx.scalar = threshold;
    if (!same_dense_memory({grad, self})) {
      NoGradGuard guard;
      return where(self <= threshold, 0.0, grad);
    }
    Tensor out = empty_strided(self.sizes(), self.strides(), self.options());
    kernels::threshold_backward(out.dtype(), grad.data_ptr(), self.data_ptr(), cuda_seam::number_of(threshold),
                                out.data_ptr(), out.numel(), device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    return {ctx.needs_input_grad(0) ? threshold_backward(gg, ctx.saved(0), ctx.scalar) : Tensor(), Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&, const Tensor& self, Scalar threshold) {
    return t[0].defined() ? threshold_backward(t[0], self, threshold) : Tensor();
  }
};

// Fused sigmoid backward: grad * y * (1 - y), itself differentiable.
struct SigmoidBackwardOp {
  static constexpr std::string_view name = "SigmoidBackwardBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& grad, const Tensor& y) {
    ctx.save_for_backward(grad, y);
    if (!(grad.sizes() == y.sizes()) || grad.dtype() != y.dtype() || !grad.is_floating_point()) {
      NoGradGuard guard;
      return grad * y * (1 - y);
    }
    Tensor gc = grad.contiguous(), yc = y.contiguous();
    Tensor out = empty(y.sizes(), y.options());
    kernels::sigmoid_backward(out.dtype(), gc.data_ptr(), yc.data_ptr(), out.data_ptr(), out.numel(), device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& gg) {
    auto [grad, y] = ctx.saved<2>();
    return {ctx.needs_input_grad(0) ? sigmoid_backward(gg, y) : Tensor(),
            ctx.needs_input_grad(1) ? gg * grad * (1 - y * 2.0) : Tensor()};
  }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor& grad, const Tensor& y) {
    return add_tangents(t[0].defined() ? sigmoid_backward(t[0], y) : Tensor(),
                        t[1].defined() ? t[1] * grad * (1 - y * 2.0) : Tensor());
  }
};

}  // namespace

Tensor neg(const Tensor& x) { return apply<Neg>(x); }
Tensor exp(const Tensor& x) { return apply<Exp>(x); }
Tensor log(const Tensor& x) { return apply<Log>(x); }
Tensor log1p(const Tensor& x) { return apply<Log1p>(x); }
Tensor expm1(const Tensor& x) { return apply<Expm1>(x); }
Tensor sqrt(const Tensor& x) { return apply<Sqrt>(x); }
Tensor rsqrt(const Tensor& x) { return apply<Rsqrt>(x); }
Tensor abs(const Tensor& x) { return apply<Abs>(x); }
Tensor sign(const Tensor& x) { return apply<Sign>(x); }
Tensor reciprocal(const Tensor& x) { return apply<Reciprocal>(x); }
Tensor floor(const Tensor& x) { return apply<Rounding<UnaryMath::Floor>>(x); }
Tensor ceil(const Tensor& x) { return apply<Rounding<UnaryMath::Ceil>>(x); }
Tensor round(const Tensor& x) { return apply<Rounding<UnaryMath::Round>>(x); }
Tensor trunc(const Tensor& x) { return apply<Rounding<UnaryMath::Trunc>>(x); }
// PyTorch's round_decimals: x scaled by 10^decimals (divided for negative
// decimals) in x's dtype, rounded halves to even, and scaled back.
Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return round(x);
  GD_CHECK(x.is_floating_point(),
           fmt::format("\"round_decimals_cpu\" not implemented for '{}'", c10_type_name(x.dtype())));
  const double scale = std::pow(10.0, static_cast<double>(decimals > 0 ? decimals : -decimals));
  return decimals > 0 ? round(x * scale) / scale : round(x / scale) * scale;
}
// x - trunc(x), with x's gradient passing unchanged (trunc's is zero).
Tensor frac(const Tensor& x) {
  GD_CHECK(x.is_floating_point(), fmt::format("\"frac_cpu\" not implemented for '{}'", c10_type_name(x.dtype())));
  return x - trunc(x);
}
Tensor square(const Tensor& x) { return pow(x, 2); }
Tensor sin(const Tensor& x) { return apply<Sin>(x); }
Tensor cos(const Tensor& x) { return apply<Cos>(x); }
Tensor tan(const Tensor& x) { return apply<Tan>(x); }
Tensor tanh(const Tensor& x) { return apply<Tanh>(x); }
Tensor sigmoid(const Tensor& x) { return apply<Sigmoid>(x); }
Tensor relu(const Tensor& x) { return apply<Relu>(x); }
Tensor erf(const Tensor& x) { return apply<Erf>(x); }
Tensor softplus(const Tensor& x, Scalar beta, Scalar threshold) { return apply<Softplus>(x, beta, threshold); }
Tensor tanh_backward(const Tensor& grad, const Tensor& y) { return apply<TanhBackwardOp>(grad, y); }
Tensor scaled_product(const Tensor& a, const Tensor& b, const Tensor& c, double scale) {
  return apply<ScaledProduct3>(a, b, c, scale);
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y) { return apply<SigmoidBackwardOp>(grad, y); }
Tensor threshold_backward(const Tensor& grad, const Tensor& self, Scalar threshold) {
  return apply<ThresholdBackwardOp>(grad, self, threshold);
}

// Composite activations: their derivatives of every order come from the parts.
// float16/bfloat16 run the composite in float32 and round once (Note [Reduced
// floats compute in float32]); the conversions are differentiable.
Tensor silu(const Tensor& x) {
  if (is_reduced_floating_point(x.dtype())) return silu(x.to(kFloat32)).to(x.dtype());
  return x * sigmoid(x);
}
Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (is_reduced_floating_point(x.dtype())) return gelu(x.to(kFloat32), approximate).to(x.dtype());
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return x * 0.5 * (1 + tanh((x + x * x * x * 0.044715) * k));
  }
  GD_CHECK(approximate == "none", "gelu: approximate must be 'none' or 'tanh', got '" + std::string(approximate) + "'");
  return x * 0.5 * (1 + erf(x * (1.0 / std::numbers::sqrt2)));
}

// ---- methods ----
Tensor Tensor::neg() const { return gradiens::neg(*this); }
Tensor Tensor::exp() const { return gradiens::exp(*this); }
Tensor Tensor::log() const { return gradiens::log(*this); }
Tensor Tensor::log1p() const { return gradiens::log1p(*this); }
Tensor Tensor::expm1() const { return gradiens::expm1(*this); }
Tensor Tensor::sqrt() const { return gradiens::sqrt(*this); }
Tensor Tensor::rsqrt() const { return gradiens::rsqrt(*this); }
Tensor Tensor::abs() const { return gradiens::abs(*this); }
Tensor Tensor::sign() const { return gradiens::sign(*this); }
Tensor Tensor::reciprocal() const { return gradiens::reciprocal(*this); }
Tensor Tensor::floor() const { return gradiens::floor(*this); }
Tensor Tensor::ceil() const { return gradiens::ceil(*this); }
Tensor Tensor::round() const { return gradiens::round(*this); }
Tensor Tensor::round(int64_t decimals) const { return gradiens::round(*this, decimals); }
Tensor Tensor::trunc() const { return gradiens::trunc(*this); }
Tensor Tensor::frac() const { return gradiens::frac(*this); }
Tensor Tensor::square() const { return gradiens::square(*this); }
Tensor Tensor::sin() const { return gradiens::sin(*this); }
Tensor Tensor::cos() const { return gradiens::cos(*this); }
Tensor Tensor::tan() const { return gradiens::tan(*this); }
Tensor Tensor::tanh() const { return gradiens::tanh(*this); }
Tensor Tensor::sigmoid() const { return gradiens::sigmoid(*this); }
Tensor Tensor::relu() const { return gradiens::relu(*this); }
Tensor Tensor::gelu(std::string_view approximate) const { return gradiens::gelu(*this, approximate); }
Tensor Tensor::silu() const { return gradiens::silu(*this); }
Tensor Tensor::softplus(Scalar beta, Scalar threshold) const { return gradiens::softplus(*this, beta, threshold); }
Tensor Tensor::erf() const { return gradiens::erf(*this); }

// ---- in-place forms: computed out of place, written back (Note [In-place ops and autograd]) ----
namespace {
template <class F>
Tensor& unary_inplace(Tensor& self, std::string_view op, F f) {
  bool record = check_inplace(self, {}, op);
  Tensor result = f(record ? self.clone() : self);
  check_inplace_output(self, self.sizes(), result.dtype(), op);
  return commit_inplace(self, result, record);
}
}  // namespace

Tensor& Tensor::neg_() { return unary_inplace(*this, "neg_", [](const Tensor& t) { return gradiens::neg(t); }); }
Tensor& Tensor::exp_() { return unary_inplace(*this, "exp_", [](const Tensor& t) { return gradiens::exp(t); }); }
Tensor& Tensor::log_() { return unary_inplace(*this, "log_", [](const Tensor& t) { return gradiens::log(t); }); }
Tensor& Tensor::sqrt_() { return unary_inplace(*this, "sqrt_", [](const Tensor& t) { return gradiens::sqrt(t); }); }
Tensor& Tensor::abs_() { return unary_inplace(*this, "abs_", [](const Tensor& t) { return gradiens::abs(t); }); }
Tensor& Tensor::tanh_() { return unary_inplace(*this, "tanh_", [](const Tensor& t) { return gradiens::tanh(t); }); }
Tensor& Tensor::sigmoid_() { return unary_inplace(*this, "sigmoid_", [](const Tensor& t) { return gradiens::sigmoid(t); }); }
Tensor& Tensor::relu_() { return unary_inplace(*this, "relu_", [](const Tensor& t) { return gradiens::relu(t); }); }
Tensor& Tensor::floor_() { return unary_inplace(*this, "floor_", [](const Tensor& t) { return gradiens::floor(t); }); }
Tensor& Tensor::ceil_() { return unary_inplace(*this, "ceil_", [](const Tensor& t) { return gradiens::ceil(t); }); }
Tensor& Tensor::round_() { return unary_inplace(*this, "round_", [](const Tensor& t) { return gradiens::round(t); }); }
Tensor& Tensor::trunc_() { return unary_inplace(*this, "trunc_", [](const Tensor& t) { return gradiens::trunc(t); }); }
Tensor& Tensor::frac_() { return unary_inplace(*this, "frac_", [](const Tensor& t) { return gradiens::frac(t); }); }
Tensor& Tensor::square_() { return unary_inplace(*this, "square_", [](const Tensor& t) { return gradiens::square(t); }); }

}  // namespace gradiens
