// The activation modules' construction checks and printing: extra_repr as
// PyTorch's print(module), pretty_print as libtorch's.
#include "nn/modules/activation.h"

#include <fmt/format.h>

#include <ostream>
#include <sstream>

#include "engine/autograd/grad_mode.h"
#include "kernels/error.h"
#include "nn/init.h"

namespace gradiens::nn {

namespace detail {

std::string python_float(double value) {
  // fmt's shortest form already switches to exponents where Python does
  // (1e-05, 1e+16); Python also marks an integral value as a float.
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

std::string libtorch_float(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace detail

namespace {
using detail::libtorch_float;
using detail::python_float;

// PyTorch's ", inplace=True" / libtorch's ", inplace=true", or nothing.
std::string python_inplace(bool inplace, bool first = false) {
  return inplace ? (first ? "inplace=True" : ", inplace=True") : "";
}
std::string libtorch_inplace(bool inplace, bool first = false) {
  return inplace ? (first ? "inplace=true" : ", inplace=true") : "";
}
}  // namespace

ReLUImpl::ReLUImpl(const ReLUOptions& options) : Module("ReLU"), options(options) {}
std::string ReLUImpl::extra_repr() const { return python_inplace(options.inplace(), true); }
void ReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ReLU(" << libtorch_inplace(options.inplace(), true) << ")";
}

ReLU6Impl::ReLU6Impl(const ReLU6Options& options) : Module("ReLU6"), options(options) {}
std::string ReLU6Impl::extra_repr() const { return python_inplace(options.inplace(), true); }
void ReLU6Impl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ReLU6(" << libtorch_inplace(options.inplace(), true) << ")";
}

LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& options) : Module("LeakyReLU"), options(options) {}
std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + python_float(options.negative_slope()) + python_inplace(options.inplace());
}
void LeakyReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LeakyReLU(negative_slope=" << libtorch_float(options.negative_slope())
         << libtorch_inplace(options.inplace()) << ")";
}

ELUImpl::ELUImpl(const ELUOptions& options) : Module("ELU"), options(options) {}
std::string ELUImpl::extra_repr() const {
  return "alpha=" + python_float(options.alpha()) + python_inplace(options.inplace());
}
void ELUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ELU(alpha=" << libtorch_float(options.alpha()) << libtorch_inplace(options.inplace()) << ")";
}

SELUImpl::SELUImpl(const SELUOptions& options) : Module("SELU"), options(options) {}
std::string SELUImpl::extra_repr() const { return python_inplace(options.inplace(), true); }
void SELUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::SELU(" << libtorch_inplace(options.inplace(), true) << ")";
}

CELUImpl::CELUImpl(const CELUOptions& options) : Module("CELU"), options(options) {}
std::string CELUImpl::extra_repr() const {
  return "alpha=" + python_float(options.alpha()) + python_inplace(options.inplace());
}
void CELUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CELU(alpha=" << libtorch_float(options.alpha()) << libtorch_inplace(options.inplace()) << ")";
}

GLUImpl::GLUImpl(const GLUOptions& options) : Module("GLU"), options(options) {}
std::string GLUImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
void GLUImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::GLU(dim=" << options.dim() << ")"; }

HardshrinkImpl::HardshrinkImpl(const HardshrinkOptions& options) : Module("Hardshrink"), options(options) {}
std::string HardshrinkImpl::extra_repr() const { return python_float(options.lambda()); }
void HardshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Hardshrink(" << libtorch_float(options.lambda()) << ")";
}

SoftshrinkImpl::SoftshrinkImpl(const SoftshrinkOptions& options) : Module("Softshrink"), options(options) {}
std::string SoftshrinkImpl::extra_repr() const { return python_float(options.lambda()); }
void SoftshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Softshrink(" << libtorch_float(options.lambda()) << ")";
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : Module("Hardtanh"), options(options) { reset(); }
void HardtanhImpl::reset() {
  GD_CHECK(options.max_val() > options.min_val(), "max_val must be greater than min_val");
}
std::string HardtanhImpl::extra_repr() const {
  return "min_val=" + python_float(options.min_val()) + ", max_val=" + python_float(options.max_val()) +
         python_inplace(options.inplace());
}
void HardtanhImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Hardtanh(min_val=" << libtorch_float(options.min_val())
         << ", max_val=" << libtorch_float(options.max_val()) << libtorch_inplace(options.inplace()) << ")";
}

std::string ThresholdImpl::extra_repr() const {
  return "threshold=" + python_float(options.threshold()) + ", value=" + python_float(options.value()) +
         python_inplace(options.inplace());
}
void ThresholdImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Threshold(threshold=" << libtorch_float(options.threshold())
         << ", value=" << libtorch_float(options.value()) << libtorch_inplace(options.inplace()) << ")";
}

GELUImpl::GELUImpl(const GELUOptions& options) : Module("GELU"), options(options) {
  gradiens::gelu(zeros({1}), options.approximate());  // rejects an unknown approximation at construction
}
void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::GELU(";
  if (options.approximate() != "none") stream << "approximate=" << options.approximate();
  stream << ")";
}

std::string SoftplusImpl::extra_repr() const {
  return fmt::format("beta={}, threshold={}", options.beta(), options.threshold());
}
void SoftplusImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Softplus(beta=" << libtorch_float(options.beta())
         << ", threshold=" << libtorch_float(options.threshold()) << ")";
}

RReLUImpl::RReLUImpl(const RReLUOptions& options) : Module("RReLU"), options(options) {
  GD_CHECK(options.lower() <= options.upper(), "Lower bound should be less than or equal to the upper bound");
}
Tensor RReLUImpl::forward(const Tensor& input) {
  return functional::rrelu(input, functional::RReLUFuncOptions()
                                      .lower(options.lower())
                                      .upper(options.upper())
                                      .inplace(options.inplace())
                                      .training(is_training()));
}
std::string RReLUImpl::extra_repr() const {
  return "lower=" + python_float(options.lower()) + ", upper=" + python_float(options.upper()) +
         python_inplace(options.inplace());
}
void RReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::RReLU(lower=" << libtorch_float(options.lower())
         << ", upper=" << libtorch_float(options.upper()) << libtorch_inplace(options.inplace()) << ")";
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : Module("PReLU"), options(options) {
  GD_CHECK(options.num_parameters() >= 1,
           fmt::format("PReLU: num_parameters must be positive, got {}", options.num_parameters()));
  weight = register_parameter("weight", empty({options.num_parameters()}));
  reset();
}
void PReLUImpl::reset() {
  NoGradGuard no_grad;
  weight.fill_(options.init());
}
void PReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
}

void SoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Softmax(dim=" << options.dim() << ")";
}
void SoftminImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Softmin(dim=" << options.dim() << ")";
}
void LogSoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LogSoftmax(dim=" << options.dim() << ")";
}

Tensor Softmax2dImpl::forward(const Tensor& input) {
  GD_CHECK(input.dim() == 3 || input.dim() == 4, "Softmax2d requires a 3D or 4D tensor as input");
  return input.softmax(-3);
}
void Softmax2dImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::Softmax2d()"; }

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : Module("MultiheadAttention"), options(options_) {
  const int64_t e = options.embed_dim();
  GD_CHECK(options.num_heads() > 0 && e % options.num_heads() == 0, "embed_dim must be divisible by num_heads");
  head_dim = e / options.num_heads();
  qkv_same_embed_dim = options.kdim() == e && options.vdim() == e;
  // Registered in PyTorch's order, the unused slots as None.
  if (qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
    register_parameter("q_proj_weight", Tensor(), /*requires_grad=*/false);
    register_parameter("k_proj_weight", Tensor(), /*requires_grad=*/false);
    register_parameter("v_proj_weight", Tensor(), /*requires_grad=*/false);
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, options.vdim()}));
    register_parameter("in_proj_weight", Tensor(), /*requires_grad=*/false);
  }
  in_proj_bias = register_parameter("in_proj_bias", options.bias() ? empty({3 * e}) : Tensor());
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  NoGradGuard no_grad;
  if (qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    in_proj_bias.zero_();
    out_proj->bias.zero_();
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask) {
  functional::MultiheadAttentionForwardFuncOptions o(options.embed_dim(), options.num_heads(), in_proj_weight,
                                                     in_proj_bias, bias_k, bias_v, options.add_zero_attn(),
                                                     options.dropout(), out_proj->weight, out_proj->bias);
  o.training(is_training()).key_padding_mask(key_padding_mask).need_weights(need_weights).attn_mask(attn_mask);
  if (!qkv_same_embed_dim)
    o.use_separate_proj_weight(true).q_proj_weight(q_proj_weight).k_proj_weight(k_proj_weight).v_proj_weight(
        v_proj_weight);
  return functional::multi_head_attention_forward(query, key, value, o);
}

void MultiheadAttentionImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::MultiheadAttention"; }

}  // namespace gradiens::nn
