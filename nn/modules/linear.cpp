// Linear: the affine layer with PyTorch's default initialization.
#include "nn/modules/linear.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : Module("Linear"), options(options_) {
  GD_CHECK(options.in_features_ >= 0 && options.out_features_ >= 0,
           fmt::format("Linear: in_features and out_features must be non-negative, got {} and {}",
                       options.in_features_, options.out_features_));
  weight = register_parameter("weight", empty({options.out_features_, options.in_features_}));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_features_}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  NoGradGuard no_grad;
  // kaiming_uniform_(a = sqrt(5)) gives gain sqrt(2 / (1 + 5)) and bound gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in).
  double bound = options.in_features_ > 0 ? 1.0 / std::sqrt(static_cast<double>(options.in_features_)) : 0.0;
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

// matmul's own check gives PyTorch's message for a wrong in_features
// ("mat1 and mat2 shapes cannot be multiplied (4x6 and 5x3)").
Tensor LinearImpl::forward(const Tensor& input) {
  Tensor y = input.matmul(weight.t());
  return bias.defined() ? y + bias : y;
}

std::string LinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", options.in_features_, options.out_features_,
                     bias.defined() ? "True" : "False");
}

}  // namespace gradiens::nn
