// Linear: the affine layer with PyTorch's default initialization; LazyLinear.
#include "nn/modules/linear.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "nn/functional/linear.h"

namespace gradiens::nn {

namespace {

// PyTorch's Linear.reset_parameters: kaiming_uniform_(a = sqrt(5)) gives gain
// sqrt(2 / (1 + 5)) and bound gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in),
// which the bias shares.
void reset_linear_parameters(Tensor& weight, Tensor& bias, int64_t in_features) {
  NoGradGuard no_grad;
  double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

std::string linear_repr(const LinearOptions& options, bool has_bias) {
  return fmt::format("in_features={}, out_features={}, bias={}", options.in_features_, options.out_features_,
                     has_bias ? "True" : "False");
}

}  // namespace

LinearImpl::LinearImpl(const LinearOptions& options_) : Cloneable("Linear"), options(options_) {
  GD_CHECK(options.in_features_ >= 0 && options.out_features_ >= 0,
           fmt::format("Linear: in_features and out_features must be non-negative, got {} and {}",
                       options.in_features_, options.out_features_));
  weight = register_parameter("weight", empty({options.out_features_, options.in_features_}));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_features_}));
  reset_parameters();
}

void LinearImpl::reset_parameters() { reset_linear_parameters(weight, bias, options.in_features_); }

// matmul's own check gives PyTorch's message for a wrong in_features
// ("mat1 and mat2 shapes cannot be multiplied (4x6 and 5x3)").
Tensor LinearImpl::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

std::string LinearImpl::extra_repr() const { return linear_repr(options, bias.defined()); }

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::Linear(in_features={}, out_features={}, bias={})", options.in_features_,
                        options.out_features_, bias.defined());
}

BilinearImpl::BilinearImpl(const BilinearOptions& options_) : Cloneable("Bilinear"), options(options_) {
  GD_CHECK(options.in1_features_ >= 0 && options.in2_features_ >= 0 && options.out_features_ >= 0,
           "Bilinear: the feature sizes must be non-negative");
  weight = register_parameter("weight", empty({options.out_features_, options.in1_features_, options.in2_features_}));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_features_}));
  reset_parameters();
}

void BilinearImpl::reset_parameters() { reset_linear_parameters(weight, bias, options.in1_features_); }

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

std::string BilinearImpl::extra_repr() const {
  return fmt::format("in1_features={}, in2_features={}, out_features={}, bias={}", options.in1_features_,
                     options.in2_features_, options.out_features_, bias.defined() ? "True" : "False");
}

void BilinearImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::Bilinear(in1_features={}, in2_features={}, out_features={}, bias={})",
                        options.in1_features_, options.in2_features_, options.out_features_, bias.defined());
}

void IdentityImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::Identity()"; }

LazyLinearImpl::LazyLinearImpl(int64_t out_features, bool bias)
    : Module("LazyLinear"), options(LinearOptions(0, out_features).bias(bias)) {
  GD_CHECK(out_features >= 0,
           fmt::format("LazyLinear: out_features must be non-negative, got {}", out_features));
}

void LazyLinearImpl::to(ScalarType dtype) {
  Module::to(dtype);
  if (has_uninitialized_params()) pending_options_ = pending_options_.dtype(dtype);
}

void LazyLinearImpl::to(Device device) {
  Module::to(device);
  if (has_uninitialized_params()) pending_options_ = pending_options_.device(device);
}

void LazyLinearImpl::reset_parameters() {
  if (!has_uninitialized_params()) reset_linear_parameters(weight, bias, options.in_features_);
}

void LazyLinearImpl::initialize_parameters(const Tensor& input) {
  // PyTorch reads input.shape[-1], which a 0-dim input does not have.
  GD_CHECK(input.dim() >= 1, "LazyLinear: the input must have at least one dimension to infer in_features from");
  options.in_features_ = input.size(-1);
  weight = register_parameter("weight", empty({options.out_features_, options.in_features_}, pending_options_));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_features_}, pending_options_));
  reset_parameters();
  set_name("Linear");
}

Tensor LazyLinearImpl::forward(const Tensor& input) {
  if (has_uninitialized_params()) initialize_parameters(input);
  Tensor y = input.matmul(weight.t());
  return bias.defined() ? y + bias : y;
}

std::string LazyLinearImpl::extra_repr() const { return linear_repr(options, options.bias_); }

}  // namespace gradiens::nn
