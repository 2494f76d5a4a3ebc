// LayerNorm: registration, forward and printing.
#include "nn/modules/normalization.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/modules/activation.h"  // detail::python_float

namespace gradiens::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_) : Module("LayerNorm"), options(options_) {
  if (options.elementwise_affine_) {
    weight = register_parameter("weight", gradiens::empty(IntArrayRef(options.normalized_shape_)));
    bias = register_parameter("bias", gradiens::empty(IntArrayRef(options.normalized_shape_)));
  } else {
    // PyTorch registers None, keeping the slots.
    register_parameter("weight", Tensor());
    register_parameter("bias", Tensor());
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine_) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape_, weight, bias, options.eps_);
}

std::string LayerNormImpl::extra_repr() const {
  // normalized_shape prints as a Python tuple: (4,) or (3, 4).
  std::string shape = "(";
  for (size_t i = 0; i < options.normalized_shape_.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(options.normalized_shape_[i]);
  shape += options.normalized_shape_.size() == 1 ? ",)" : ")";
  return fmt::format("{}, eps={}, elementwise_affine={}", shape, detail::python_float(options.eps_),
                     options.elementwise_affine_ ? "True" : "False");
}

}  // namespace gradiens::nn
