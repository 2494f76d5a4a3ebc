// nn::functional activations: leaky_relu, elu and logsigmoid as ops whose
// backward is an op too (Note [Activations at zero]); the rest compositions of
// those and of the engine's ops, whose derivatives come from the ops they use.
#include "nn/functional/activation.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/autograd/function.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"
#include "kernels/scalar_type.h"
#include "nn/functional/linear.h"

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

// log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|))), finite for any finite x.
// Its own op because the composition's gradient is wrong at x = 0: relu and
// abs both take slope 0 there, which gives 0 instead of sigmoid(0) = 1/2.
struct LogSigmoid {
  static constexpr std::string_view name = "LogSigmoidBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return -(gradiens::relu(-x) + log1p(exp(-abs(x))));
  }
  static GradList backward(Ctx& ctx, const Tensor& g) { return {g * sigmoid(-ctx.saved(0))}; }
};

// x where lo < x < hi, else the constant clamp(x, lo, hi): the gradient is 0 at
// the bounds and beyond, as PyTorch's hardtanh_backward (clamp's would pass it
// at the bounds).
Tensor clamp_open(const Tensor& x, double lo, double hi) {
  return where((x > lo) & (x < hi), x, clamp(x.detach(), lo, hi));
}

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

Tensor selu(const Tensor& input, const SELUFuncOptions& options) {
  // SELU's constants (Klambauer et al. 2017), as PyTorch's.
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  check_floating(input, "elu");
  auto f = [&](const Tensor& x) { return elu(x, alpha) * scale; };
  return options.inplace() ? write_into(input, f) : f(input);
}

Tensor celu(const Tensor& input, const CELUFuncOptions& options) {
  const double alpha = options.alpha();
  GD_CHECK(alpha != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  check_floating(input, "elu");
  // PyTorch's celu is elu with input scale 1 / alpha and output scale alpha.
  auto f = [&](const Tensor& x) { return elu(x * (1.0 / alpha), 1.0) * alpha; };
  return options.inplace() ? write_into(input, f) : f(input);
}

Tensor glu(const Tensor& input, const GLUFuncOptions& options) {
  GD_CHECK(input.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t dim = wrap_dim(options.dim(), input.dim());
  const int64_t n = input.size(dim);
  GD_CHECK(n % 2 == 0, fmt::format("Halving dimension must be even, but dimension {} is size {}", dim, n));
  check_floating(input, "glu");
  return input.narrow(dim, 0, n / 2) * sigmoid(input.narrow(dim, n / 2, n / 2));
}

Tensor gelu(const Tensor& input, const GELUFuncOptions& options) { return gradiens::gelu(input, options.approximate()); }

Tensor silu(const Tensor& input) {
  check_floating(input, "silu");
  return gradiens::silu(input);
}

Tensor mish(const Tensor& input) {
  check_floating(input, "mish");
  return input * tanh(gradiens::softplus(input));
}

Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options) {
  check_floating(input, "hardshrink");
  const double l = options.lambda();
  return where((input >= -l) & (input <= l), 0.0, input);
}

Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options) {
  const double l = options.lambda();
  GD_CHECK(l >= 0, fmt::format("lambda must be greater or equal to 0, but found to be {}.", l));
  check_floating(input, "softshrink");
  return where(input > l, input - l, where(input < -l, input + l, 0.0));
}

Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options) {
  auto f = [&](const Tensor& x) { return clamp_open(x, options.min_val(), options.max_val()); };
  return options.inplace() ? write_into(input, f) : f(input);
}

Tensor relu(const Tensor& input, const ReLUFuncOptions& options) {
  if (!options.inplace()) return gradiens::relu(input);
  return write_into(input, [](const Tensor& x) { return gradiens::relu(x); });
}

Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options) {
  return hardtanh(input, HardtanhFuncOptions().min_val(0).max_val(6).inplace(options.inplace()));
}

Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options) {
  const double lower = options.lower(), upper = options.upper();
  GD_CHECK(lower <= upper, "Lower bound should be less than or equal to the upper bound");
  check_floating(input, "leaky_relu");
  if (!options.training()) {
    LeakyReLUFuncOptions leaky((lower + upper) / 2);
    return leaky_relu(input, leaky.inplace(options.inplace()));
  }
  // Each x <= 0 gets its own slope from U(lower, upper), a constant factor
  // (PyTorch's noise tensor), so the gradient is that slope.
  Tensor noise;
  {
    NoGradGuard no_grad;
    Tensor slopes = empty_like(input).uniform_(lower, upper);
    noise = where(input.detach() <= 0, slopes, 1.0);
  }
  auto f = [&](const Tensor& x) { return x * noise; };
  return options.inplace() ? write_into(input, f) : f(input);
}

Tensor logsigmoid(const Tensor& input) {
  check_floating(input, "log_sigmoid");
  return apply<LogSigmoid>(input);
}

Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return (options.dtype() ? input.to(*options.dtype()) : input).softmax(options.dim());
}

Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  return (-(options.dtype() ? input.to(*options.dtype()) : input)).softmax(options.dim());
}

Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return (options.dtype() ? input.to(*options.dtype()) : input).log_softmax(options.dim());
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options) {
  check_floating(logits, "gumbel_softmax");
  Tensor gumbels;
  {
    NoGradGuard no_grad;
    // -log(E) with E ~ Exp(1) = -log(1 - U); the smallest normal keeps log finite.
    Tensor exponential = -log1p(-rand_like(logits));
    gumbels = -log(exponential.clamp_min(std::numeric_limits<double>::min()));
  }
  Tensor soft = ((logits + gumbels) / options.tau()).softmax(options.dim());
  if (!options.hard()) return soft;
  // The straight-through estimator: the one-hot value, the soft sample's gradient.
  Tensor index = std::get<1>(max(soft.detach(), options.dim(), true));
  Tensor hard = zeros_like(soft).scatter(options.dim(), index, 1.0);
  return hard - soft.detach() + soft;
}

Tensor prelu(const Tensor& input, const Tensor& weight) {
  const int64_t slopes = weight.numel();
  if (slopes != 1) {
    GD_CHECK(input.dim() > 0, "Not allow zero-dim input tensor.");
    const int64_t channels = input.dim() > 1 ? input.size(1) : 1;
    GD_CHECK(channels == slopes, fmt::format("Mismatch of parameter numbers and input channel size. Found parameter "
                                             "numbers = {} and channel size = {}.",
                                             slopes, channels));
  }
  GD_CHECK(weight.dim() <= 1,
           fmt::format("prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = {}", weight.dim()));
  check_floating(input, "prelu");
  Tensor w;
  if (slopes == 1) {
    w = weight.reshape({});
  } else {
    DimVector shape(static_cast<size_t>(input.dim()), 1);
    shape[1] = slopes;
    w = weight.reshape(shape);
  }
  // The derivative at 0 is the slope (PyTorch's x > 0 test).
  return where(input > 0, input, w * input);
}

Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  check_floating(input, "softplus");
  return gradiens::softplus(input, options.beta(), options.threshold());
}

Tensor softsign(const Tensor& input) { return input / (abs(input) + 1); }

Tensor tanhshrink(const Tensor& input) { return input - tanh(input); }

Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options) {
  // x <= threshold selects the value, so NaN passes through, as in PyTorch.
  auto f = [&](const Tensor& x) { return where(x <= options.threshold(), options.value(), x); };
  return options.inplace() ? write_into(input, f) : f(input);
}

Tensor hardsigmoid(const Tensor& input) {
  check_floating(input, "hardsigmoid");
  return clamp_open(input + 3, 0, 6) / 6;
}

Tensor hardswish(const Tensor& input) {
  check_floating(input, "hardswish");
  // PyTorch's gradient is (2x + 3) / 6 on the closed [-3, 3], the quadratic's.
  return where(input < -3, 0.0, where(input <= 3, input * (input + 3) / 6, input));
}

namespace {
std::string sizes_string(IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// A mask with one more (zero, i.e. unmasked) column, for an added key.
Tensor pad_key_column(const Tensor& mask) {
  if (!mask.defined()) return mask;
  DimVector shape = mask.sizes().dims();
  shape.back() = 1;
  return cat({mask, zeros(shape, mask.options())}, -1);
}
}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& o) {
  GD_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3,
           fmt::format("multi_head_attention_forward: expected 3-D query, key and value (L, N, E), but got sizes {}, "
                       "{} and {}",
                       sizes_string(query.sizes()), sizes_string(key.sizes()), sizes_string(value.sizes())));
  const int64_t tgt_len = query.size(0), bsz = query.size(1), embed_dim = query.size(2);
  const int64_t heads = o.num_heads();
  GD_CHECK(embed_dim == o.embed_dim_to_check(),
           fmt::format("was expecting embedding dimension of {}, but got {}", o.embed_dim_to_check(), embed_dim));
  GD_CHECK(key.size(0) == value.size(0) && key.size(1) == value.size(1),
           fmt::format("key shape {} does not match value shape {}", sizes_string(key.sizes()),
                       sizes_string(value.sizes())));
  GD_CHECK(heads > 0 && embed_dim % heads == 0, "embed_dim must be divisible by num_heads");
  const int64_t head_dim = embed_dim / heads;

  // The three input projections: rows [0, E), [E, 2E), [2E, 3E) of in_proj.
  auto bias_part = [&](int64_t part) {
    return o.in_proj_bias().defined() ? o.in_proj_bias().narrow(0, part * embed_dim, embed_dim) : Tensor();
  };
  auto weight_part = [&](int64_t part) { return o.in_proj_weight().narrow(0, part * embed_dim, embed_dim); };
  Tensor q, k, v;
  if (o.use_separate_proj_weight()) {
    q = linear(query, o.q_proj_weight(), bias_part(0));
    k = linear(key, o.k_proj_weight(), bias_part(1));
    v = linear(value, o.v_proj_weight(), bias_part(2));
  } else {
    q = linear(query, weight_part(0), bias_part(0));
    k = linear(key, weight_part(1), bias_part(1));
    v = linear(value, weight_part(2), bias_part(2));
  }
  q = q * (1.0 / std::sqrt(static_cast<double>(head_dim)));

  Tensor attn_mask = o.attn_mask();
  if (attn_mask.defined()) {
    GD_CHECK(attn_mask.is_floating_point() || attn_mask.dtype() == kBool || attn_mask.dtype() == kUInt8,
             fmt::format("Only float, byte, and bool types are supported for attn_mask, not {}",
                         c10_type_name(attn_mask.dtype())));
    if (attn_mask.dtype() == kUInt8) attn_mask = attn_mask.to(kBool);
    if (attn_mask.dim() == 2) {
      GD_CHECK(attn_mask.size(0) == tgt_len && attn_mask.size(1) == key.size(0),
               "The size of the 2D attn_mask is not correct.");
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      GD_CHECK(attn_mask.dim() == 3, fmt::format("attn_mask's dimension {} is not supported", attn_mask.dim()));
      GD_CHECK(attn_mask.size(0) == bsz * heads && attn_mask.size(1) == tgt_len && attn_mask.size(2) == key.size(0),
               "The size of the 3D attn_mask is not correct.");
    }
  }
  Tensor key_padding_mask = o.key_padding_mask();
  if (key_padding_mask.defined() && key_padding_mask.dtype() == kUInt8) key_padding_mask = key_padding_mask.to(kBool);

  if (o.bias_k().defined() && o.bias_v().defined()) {
    GD_CHECK(!o.static_k().defined(), "bias cannot be added to static key.");
    GD_CHECK(!o.static_v().defined(), "bias cannot be added to static value.");
    k = cat({k, o.bias_k().repeat({1, bsz, 1})});
    v = cat({v, o.bias_v().repeat({1, bsz, 1})});
    attn_mask = pad_key_column(attn_mask);
    key_padding_mask = pad_key_column(key_padding_mask);
  } else {
    GD_CHECK(!o.bias_k().defined() && !o.bias_v().defined(), "bias_k and bias_v must be given together");
  }

  // (L, N, E) -> (N * heads, L, head_dim).
  q = q.contiguous().view({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  k = k.contiguous().view({-1, bsz * heads, head_dim}).transpose(0, 1);
  v = v.contiguous().view({-1, bsz * heads, head_dim}).transpose(0, 1);
  if (o.static_k().defined()) {
    GD_CHECK(o.static_k().size(0) == bsz * heads && o.static_k().size(2) == head_dim,
             "static_k must be (N * num_heads, S, head_dim)");
    k = o.static_k();
  }
  if (o.static_v().defined()) {
    GD_CHECK(o.static_v().size(0) == bsz * heads && o.static_v().size(2) == head_dim,
             "static_v must be (N * num_heads, S, head_dim)");
    v = o.static_v();
  }
  if (o.add_zero_attn()) {
    k = cat({k, zeros({k.size(0), 1, k.size(2)}, k.options())}, 1);
    v = cat({v, zeros({v.size(0), 1, v.size(2)}, v.options())}, 1);
    attn_mask = pad_key_column(attn_mask);
    key_padding_mask = pad_key_column(key_padding_mask);
  }
  const int64_t src_len = k.size(1);
  if (key_padding_mask.defined())
    GD_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == bsz && key_padding_mask.size(1) == src_len,
             fmt::format("expecting key_padding_mask shape of ({}, {}), but got {}", bsz, src_len,
                         sizes_string(key_padding_mask.sizes())));

  Tensor weights = bmm(q, k.transpose(1, 2));  // (N * heads, L, S)
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (attn_mask.defined())
    weights = attn_mask.dtype() == kBool ? weights.masked_fill(attn_mask, neg_inf) : weights + attn_mask;
  if (key_padding_mask.defined())
    weights = weights.view({bsz, heads, tgt_len, src_len})
                  .masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), neg_inf)
                  .view({bsz * heads, tgt_len, src_len});
  weights = weights.softmax(-1);
  weights = gradiens::dropout(weights, o.dropout_p(), o.training());

  Tensor out = bmm(weights, v).transpose(0, 1).contiguous().view({tgt_len, bsz, embed_dim});
  out = linear(out, o.out_proj_weight(), o.out_proj_bias());
  if (!o.need_weights()) return {out, Tensor()};
  return {out, weights.view({bsz, heads, tgt_len, src_len}).sum({1}) / static_cast<double>(heads)};
}

}  // namespace gradiens::nn::functional
