// The dropouts as PyTorch's _dropout_impl: a Bernoulli mask (per element or
// per channel) drawn without recording, then a product (and for the alpha
// forms a shift) that is recorded.
#include "nn/functional/dropout.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"

namespace gradiens::nn::functional {

namespace {

void check_probability(double p) {
  GD_CHECK(p >= 0 && p <= 1, fmt::format("dropout probability has to be between 0 and 1, but got {}", p));
}

// input * noise (+ shift), or with inplace those applied to input itself
// (recorded as in-place ops, as PyTorch's dropout_).
Tensor apply_noise(const Tensor& input, const Tensor& noise, const Tensor& shift, bool inplace) {
  if (!inplace) return shift.defined() ? input * noise + shift : input * noise;
  Tensor self = input;
  self.mul_(noise);
  if (shift.defined()) self.add_(shift);
  return input;
}

// PyTorch's _dropout_impl for the channel and alpha forms.
Tensor dropout_impl(const Tensor& input, double p, bool training, bool inplace, bool feature, bool alpha) {
  check_probability(p);
  if (p == 0 || !training || input.numel() == 0) return input;
  if (feature)
    GD_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  GD_CHECK(input.is_floating_point(), fmt::format("result type Float can't be cast to the desired output type {}",
                                                  c10_type_name(input.dtype())));
  if (p == 1) return apply_noise(input, zeros({}, input.options()), Tensor(), inplace);
  Tensor noise, shift;
  {
    NoGradGuard no_grad;
    // One draw per element, or per (sample, channel) broadcast over the rest.
    DimVector shape = input.sizes().dims();
    if (feature)
      for (size_t d = 2; d < shape.size(); ++d) shape[d] = 1;
    noise = bernoulli(empty(shape, input.options()), 1 - p);
    if (alpha) {
      // SELU's negative saturation value -scale * alpha, and the affine map a x + b
      // that keeps zero mean and unit variance.
      constexpr double saturation = 1.7580993408473766;
      const double a = 1.0 / std::sqrt((saturation * saturation * p + 1) * (1 - p));
      shift = (noise - 1) * (saturation * a) + saturation * a * p;
      noise.mul_(scalar_tensor(a, noise.options()));
    } else {
      noise.div_(scalar_tensor(1 - p, noise.options()));
    }
  }
  return apply_noise(input, noise, shift, inplace);
}

}  // namespace

Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  check_probability(options.p());
  if (!options.inplace()) return gradiens::dropout(input, options.p(), options.training());
  return dropout_impl(input, options.p(), options.training(), true, false, false);
}

Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options) {
  return dropout_impl(input, options.p(), options.training(), options.inplace(), true, false);
}

Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options) {
  return dropout_impl(input, options.p(), options.training(), options.inplace(), true, false);
}

Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options) {
  return dropout_impl(input, options.p(), options.training(), options.inplace(), false, true);
}

Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options) {
  return dropout_impl(input, options.p(), options.training(), options.inplace(), true, true);
}

namespace detail {

Tensor alpha_dropout(const Tensor& input, double p, bool training, bool inplace) {
  return dropout_impl(input, p, training, inplace, false, true);
}

Tensor feature_alpha_dropout(const Tensor& input, double p, bool training, bool inplace) {
  return dropout_impl(input, p, training, inplace, true, true);
}

}  // namespace detail

}  // namespace gradiens::nn::functional
