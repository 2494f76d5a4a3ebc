// nn::functional activations (libtorch's F:: forms) and their options structs,
// named and defaulted as libtorch's (ELUOptions, HardtanhOptions, ...; the
// functional spellings ELUFuncOptions, ... are the same types).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

struct LeakyReLUOptions {
  LeakyReLUOptions(double negative_slope = 0.01) : negative_slope_(negative_slope) {}
  GRADIENS_ARG(double, negative_slope);
  GRADIENS_ARG(bool, inplace) = false;
};

struct ELUOptions {
  ELUOptions(double alpha = 1.0) : alpha_(alpha) {}
  GRADIENS_ARG(double, alpha);
  GRADIENS_ARG(bool, inplace) = false;
};

struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(bool, inplace);
};

struct CELUOptions {
  GRADIENS_ARG(double, alpha) = 1.0;
  GRADIENS_ARG(bool, inplace) = false;
};

// The dim split in halves: glu(a|b) = a * sigmoid(b).
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, dim);
};

// approximate: "none" (the erf form) or "tanh".
struct GELUOptions {
  GRADIENS_ARG(std::string, approximate) = "none";
};

struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(double, lambda);
};

struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(double, lambda);
};

struct HardtanhOptions {
  GRADIENS_ARG(double, min_val) = -1.0;
  GRADIENS_ARG(double, max_val) = 1.0;
  GRADIENS_ARG(bool, inplace) = false;
};

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(bool, inplace);
};

struct ReLU6Options {
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(bool, inplace);
};

// The slope of a negative input is drawn from U(lower, upper) in training and
// is (lower + upper) / 2 otherwise.
struct RReLUOptions {
  GRADIENS_ARG(double, lower) = 1.0 / 8.0;
  GRADIENS_ARG(double, upper) = 1.0 / 3.0;
  GRADIENS_ARG(bool, inplace) = false;
};

struct SoftplusOptions {
  GRADIENS_ARG(double, beta) = 1.0;
  GRADIENS_ARG(double, threshold) = 20.0;
};

// x where x > threshold, value elsewhere.
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  GRADIENS_ARG(double, threshold);
  GRADIENS_ARG(double, value);
  GRADIENS_ARG(bool, inplace) = false;
};

// num_parameters: 1 (one slope shared) or the input's channel count; init: their value.
struct PReLUOptions {
  GRADIENS_ARG(int64_t, num_parameters) = 1;
  GRADIENS_ARG(double, init) = 0.25;
};

// libtorch's: the dim is required (PyTorch's implicit dim=None is deprecated).
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, so Softmax(1) works
  GRADIENS_ARG(int64_t, dim);
};
struct SoftminOptions {
  SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, so Softmin(1) works
  GRADIENS_ARG(int64_t, dim);
};
struct LogSoftmaxOptions {
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, so LogSoftmax(1) works
  GRADIENS_ARG(int64_t, dim);
};

// Attention over num_heads heads of embed_dim / num_heads features each; kdim
// and vdim (default embed_dim) are the key's and value's feature counts.
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  GRADIENS_ARG(int64_t, embed_dim);
  GRADIENS_ARG(int64_t, num_heads);
  GRADIENS_ARG(double, dropout) = 0.0;
  GRADIENS_ARG(bool, bias) = true;
  GRADIENS_ARG(bool, add_bias_kv) = false;
  GRADIENS_ARG(bool, add_zero_attn) = false;
  GRADIENS_ARG(int64_t, kdim);
  GRADIENS_ARG(int64_t, vdim);
};

namespace functional {

using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using GLUFuncOptions = GLUOptions;
using GELUFuncOptions = GELUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SoftplusFuncOptions = SoftplusOptions;
using ThresholdFuncOptions = ThresholdOptions;

// The functional softmaxes also take the dtype the input is converted to first.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, dim);
  GRADIENS_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
struct SoftminFuncOptions {
  SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, dim);
  GRADIENS_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
struct LogSoftmaxFuncOptions {
  LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, dim);
  GRADIENS_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};

// RReLUOptions plus whether the slopes are random (training).
struct RReLUFuncOptions {
  GRADIENS_ARG(double, lower) = 1.0 / 8.0;
  GRADIENS_ARG(double, upper) = 1.0 / 3.0;
  GRADIENS_ARG(bool, training) = false;
  GRADIENS_ARG(bool, inplace) = false;
};

// tau: the temperature; hard: one-hot samples whose gradient is the soft sample's.
struct GumbelSoftmaxFuncOptions {
  GRADIENS_ARG(double, tau) = 1.0;
  GRADIENS_ARG(bool, hard) = false;
  GRADIENS_ARG(int, dim) = -1;
};

// The arguments of multi_head_attention_forward beyond query, key and value,
// as libtorch's: the projections (in_proj_* or, with use_separate_proj_weight,
// q/k/v_proj_weight), the optional key/value biases, masks and static keys.
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads, Tensor in_proj_weight,
                                       Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn,
                                       double dropout_p, Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  GRADIENS_ARG(int64_t, embed_dim_to_check);
  GRADIENS_ARG(int64_t, num_heads);
  GRADIENS_ARG(Tensor, in_proj_weight);
  GRADIENS_ARG(Tensor, in_proj_bias);
  GRADIENS_ARG(Tensor, bias_k);
  GRADIENS_ARG(Tensor, bias_v);
  GRADIENS_ARG(bool, add_zero_attn);
  GRADIENS_ARG(double, dropout_p);
  GRADIENS_ARG(Tensor, out_proj_weight);
  GRADIENS_ARG(Tensor, out_proj_bias);
  GRADIENS_ARG(bool, training) = true;
  GRADIENS_ARG(Tensor, key_padding_mask);
  GRADIENS_ARG(bool, need_weights) = true;
  GRADIENS_ARG(Tensor, attn_mask);
  GRADIENS_ARG(bool, use_separate_proj_weight) = false;
  GRADIENS_ARG(Tensor, q_proj_weight);
  GRADIENS_ARG(Tensor, k_proj_weight);
  GRADIENS_ARG(Tensor, v_proj_weight);
  GRADIENS_ARG(Tensor, static_k);
  GRADIENS_ARG(Tensor, static_v);
};

// Every activation below is differentiable to any order; the composites'
// derivatives at their kinks are PyTorch's (Note [Activations at zero]). With
// inplace, the result is written into `input` and `input` is returned; as in
// PyTorch that is an error on a leaf that requires grad.

// x for x > 0, negative_slope * x otherwise; the derivative at 0 is
// negative_slope, as PyTorch's.
Tensor leaky_relu(const Tensor& input, double negative_slope = 0.01);
// x for x > 0, alpha * (exp(x) - 1) otherwise (computed with expm1, so small
// negative x keep their digits). As PyTorch: the first derivative at 0 is
// alpha (the x <= 0 side), the second is 0 there (the x < 0 side).
Tensor elu(const Tensor& input, double alpha = 1.0);
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options);
Tensor elu(const Tensor& input, const ELUFuncOptions& options);
// scale * elu(x, alpha) with SELU's constants.
Tensor selu(const Tensor& input, const SELUFuncOptions& options = {});
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha = 0 is an error.
Tensor celu(const Tensor& input, const CELUFuncOptions& options = {});
Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});
Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {});
Tensor silu(const Tensor& input);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& input);
// x where |x| > lambda, else 0.
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});
// x - lambda above lambda, x + lambda below -lambda, else 0.
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});
// clamp(x, min_val, max_val), whose gradient is 0 at the two bounds (PyTorch's).
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options = {});
Tensor relu(const Tensor& input, const ReLUFuncOptions& options = {});
// hardtanh(x, 0, 6).
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options = {});
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options = {});
// log(sigmoid(x)), finite for any finite x; its own op (the gradient at 0 is 1/2).
Tensor logsigmoid(const Tensor& input);
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
// softmax(-x).
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
// Samples from the Gumbel-softmax distribution over `dim` (default generator).
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});
// x for x > 0, weight * x otherwise; weight holds 1 or C (input's dim 1) slopes.
Tensor prelu(const Tensor& input, const Tensor& weight);
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {});
// x / (1 + |x|).
Tensor softsign(const Tensor& input);
// x - tanh(x).
Tensor tanhshrink(const Tensor& input);
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options);
// relu6(x + 3) / 6 and x * relu6(x + 3) / 6, with PyTorch's gradients at +-3.
Tensor hardsigmoid(const Tensor& input);
Tensor hardswish(const Tensor& input);

// Multi-head attention of query (L, N, E) over key (S, N, kdim) and value
// (S, N, vdim): the output (L, N, E) and, with need_weights, the attention
// weights averaged over the heads (N, L, S). attn_mask (L, S) or (N * heads,
// L, S) is added (float) or masks with -inf (bool); key_padding_mask (N, S)
// masks keys. A composition of linear, bmm and softmax: derivatives of any order.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options);

// The gradient of leaky_relu given its output gradient and input: grad for
// x > 0, grad * negative_slope otherwise. An op with its own backward.
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& input, double negative_slope);
// The gradient of elu given its output gradient and input: grad for x > 0,
// grad * alpha * exp(x) otherwise. An op with its own backward.
Tensor elu_backward(const Tensor& grad, const Tensor& input, double alpha);

}  // namespace functional
}  // namespace gradiens::nn
