// Activation modules, libtorch's set (MultiheadAttention included): each holds its options (as libtorch's
// *Options) and calls its nn::functional form. repr() prints as PyTorch's
// print(module); pretty_print() writes libtorch's form
// ("torch::nn::Hardtanh(min_val=-1, max_val=1)").
#pragma once

#include <iosfwd>
#include <string>
#include <tuple>

#include "engine/functions.h"
#include "nn/functional/activation.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"
#include "nn/modules/linear.h"

namespace gradiens::nn {

// An activation without options: forward is `fn`, printed as `Name()`.
#define GRADIENS_PLAIN_ACTIVATION(Name, fn)                                            \
  class Name##Impl : public Module {                                                  \
   public:                                                                            \
    Name##Impl() : Module(#Name) {}                                                   \
    Tensor forward(const Tensor& input) { return fn(input); }                         \
    void pretty_print(std::ostream& stream) const { stream << "torch::nn::" #Name "()"; } \
  };                                                                                  \
  GRADIENS_MODULE(Name)

GRADIENS_PLAIN_ACTIVATION(Tanh, gradiens::tanh);
GRADIENS_PLAIN_ACTIVATION(Sigmoid, gradiens::sigmoid);
GRADIENS_PLAIN_ACTIVATION(SiLU, functional::silu);
GRADIENS_PLAIN_ACTIVATION(Mish, functional::mish);
GRADIENS_PLAIN_ACTIVATION(LogSigmoid, functional::logsigmoid);
GRADIENS_PLAIN_ACTIVATION(Softsign, functional::softsign);
GRADIENS_PLAIN_ACTIVATION(Tanhshrink, functional::tanhshrink);
GRADIENS_PLAIN_ACTIVATION(Hardsigmoid, functional::hardsigmoid);
GRADIENS_PLAIN_ACTIVATION(Hardswish, functional::hardswish);

#undef GRADIENS_PLAIN_ACTIVATION

// An activation with an options struct: forward is functional::fn(input,
// options); extra_repr and pretty_print are written per module in activation.cpp.
#define GRADIENS_OPTIONS_ACTIVATION(Name, Options, fn, default_options)                          \
  class Name##Impl : public Module {                                                            \
   public:                                                                                      \
    explicit Name##Impl(const Options& options = default_options);                              \
    Tensor forward(const Tensor& input) { return functional::fn(input, options); }              \
    std::string extra_repr() const override;                                                    \
    void pretty_print(std::ostream& stream) const;                                              \
    Options options;                                                                            \
  };                                                                                            \
  GRADIENS_MODULE(Name)

GRADIENS_OPTIONS_ACTIVATION(ReLU, ReLUOptions, relu, {});
GRADIENS_OPTIONS_ACTIVATION(ReLU6, ReLU6Options, relu6, {});
GRADIENS_OPTIONS_ACTIVATION(LeakyReLU, LeakyReLUOptions, leaky_relu, {});
GRADIENS_OPTIONS_ACTIVATION(ELU, ELUOptions, elu, {});
GRADIENS_OPTIONS_ACTIVATION(SELU, SELUOptions, selu, {});
GRADIENS_OPTIONS_ACTIVATION(CELU, CELUOptions, celu, {});
GRADIENS_OPTIONS_ACTIVATION(GLU, GLUOptions, glu, {});
GRADIENS_OPTIONS_ACTIVATION(Hardshrink, HardshrinkOptions, hardshrink, {});
GRADIENS_OPTIONS_ACTIVATION(Softshrink, SoftshrinkOptions, softshrink, {});
#undef GRADIENS_OPTIONS_ACTIVATION

// max_val <= min_val is an error at construction and in reset().
class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  // Checks the options again, as libtorch's reset() (there is nothing to register).
  void reset();
  Tensor forward(const Tensor& input) { return functional::hardtanh(input, options); }
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  HardtanhOptions options;
};
GRADIENS_MODULE(Hardtanh);

class ThresholdImpl : public Module {
 public:
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : Module("Threshold"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::threshold(input, options); }
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  ThresholdOptions options;
};
GRADIENS_MODULE(Threshold);

// approximate: "none" (the erf form) or "tanh".
class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none") : GELUImpl(GELUOptions().approximate(std::move(approximate))) {}
  explicit GELUImpl(const GELUOptions& options);
  Tensor forward(const Tensor& input) { return functional::gelu(input, options); }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }
  void pretty_print(std::ostream& stream) const;
  GELUOptions options;
};
GRADIENS_MODULE(GELU);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(double beta = 1.0, double threshold = 20.0)
      : SoftplusImpl(SoftplusOptions().beta(beta).threshold(threshold)) {}
  explicit SoftplusImpl(const SoftplusOptions& options) : Module("Softplus"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::softplus(input, options); }
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  SoftplusOptions options;
};
GRADIENS_MODULE(Softplus);

// Random slopes in training, their mean in evaluation (is_training() decides).
class RReLUImpl : public Module {
 public:
  explicit RReLUImpl(const RReLUOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  RReLUOptions options;
};
GRADIENS_MODULE(RReLU);

// A learnable slope for x < 0: the parameter `weight` of num_parameters
// elements, each init.
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  // weight = init.
  void reset();
  Tensor forward(const Tensor& input) { return functional::prelu(input, weight); }
  std::string extra_repr() const override { return "num_parameters=" + std::to_string(options.num_parameters()); }
  void pretty_print(std::ostream& stream) const;
  PReLUOptions options;
  Tensor weight;
};
GRADIENS_MODULE(PReLU);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  Tensor forward(const Tensor& input) { return input.softmax(options.dim()); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  void pretty_print(std::ostream& stream) const;
  SoftmaxOptions options;
};
GRADIENS_MODULE(Softmax);

class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(const SoftminOptions& options) : Module("Softmin"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::softmin(input, options.dim()); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  void pretty_print(std::ostream& stream) const;
  SoftminOptions options;
};
GRADIENS_MODULE(Softmin);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  Tensor forward(const Tensor& input) { return input.log_softmax(options.dim()); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  void pretty_print(std::ostream& stream) const;
  LogSoftmaxOptions options;
};
GRADIENS_MODULE(LogSoftmax);

// Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.
class Softmax2dImpl : public Module {
 public:
  Softmax2dImpl() : Module("Softmax2d") {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const;
};
GRADIENS_MODULE(Softmax2d);

// Multi-head attention (sequence-first: query (L, N, E)), registered as
// PyTorch's: in_proj_weight (3E, E) or, when kdim or vdim differ from E,
// q_proj_weight, k_proj_weight and v_proj_weight; in_proj_bias (3E) with bias;
// bias_k and bias_v (1, 1, E) with add_bias_kv; the submodule out_proj.
class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  // The attention output (L, N, E) and, with need_weights, the weights averaged
  // over heads (N, L, S); see functional::multi_head_attention_forward.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({3, AnyValue(Tensor())}, {4, AnyValue(true)}, {5, AnyValue(Tensor())})
  // PyTorch's _reset_parameters: xavier_uniform_ projections, zero biases,
  // xavier_normal_ bias_k and bias_v.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const;

  MultiheadAttentionOptions options;
  bool qkv_same_embed_dim;
  int64_t head_dim;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v, q_proj_weight, k_proj_weight, v_proj_weight;
  Linear out_proj{nullptr};
};
GRADIENS_MODULE(MultiheadAttention);

namespace detail {
// A double as Python's repr prints a float in an extra_repr: 0.01, 1.0, 1e-05, inf.
std::string python_float(double value);
// A double as libtorch's pretty_print writes it (an ostream's default: 0.01, 1, 1e-05).
std::string libtorch_float(double value);
}  // namespace detail

}  // namespace gradiens::nn
