// Dropout over the engine's dropout op.
#include "nn/modules/dropout.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/modules/activation.h"

namespace gradiens::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options_) : Module("Dropout"), options(options_) {
  GD_CHECK(options.p_ >= 0 && options.p_ <= 1,
           fmt::format("dropout probability has to be between 0 and 1, but got {}", options.p_));
}

Tensor DropoutImpl::forward(const Tensor& input) {
  if (!options.inplace_ || !is_training() || options.p_ == 0) return dropout(input, options.p_, is_training());
  // The engine's dropout of ones is the scaled mask itself; the in-place
  // multiply then records only the mask, as PyTorch's dropout_ does.
  Tensor mask;
  {
    NoGradGuard no_grad;
    mask = dropout(ones_like(input), options.p_, true);
  }
  Tensor self = input;
  self.mul_(mask);
  return input;
}

std::string DropoutImpl::extra_repr() const {
  return "p=" + detail::python_float(options.p_) + ", inplace=" + (options.inplace_ ? "True" : "False");
}

}  // namespace gradiens::nn
