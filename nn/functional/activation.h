// nn::functional activations the engine has no op for: leaky_relu and elu, with
// PyTorch's derivatives (also at x == 0) to any order, and their options.
#pragma once

#include "engine/tensor.h"

namespace gradiens::nn {

struct LeakyReLUOptions {
  LeakyReLUOptions(double negative_slope = 0.01) : negative_slope_(negative_slope) {}
  LeakyReLUOptions& negative_slope(double v) {
    negative_slope_ = v;
    return *this;
  }
  LeakyReLUOptions& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  double negative_slope_;
  bool inplace_ = false;
};

struct ELUOptions {
  ELUOptions(double alpha = 1.0) : alpha_(alpha) {}
  ELUOptions& alpha(double v) {
    alpha_ = v;
    return *this;
  }
  ELUOptions& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  double alpha_;
  bool inplace_ = false;
};

namespace functional {

using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;

// x for x > 0, negative_slope * x otherwise; the derivative at 0 is
// negative_slope, as PyTorch's.
Tensor leaky_relu(const Tensor& input, double negative_slope = 0.01);
// x for x > 0, alpha * (exp(x) - 1) otherwise (computed with expm1, so small
// negative x keep their digits). As PyTorch: the first derivative at 0 is
// alpha (the x <= 0 side), the second is 0 there (the x < 0 side).
Tensor elu(const Tensor& input, double alpha = 1.0);

// The libtorch forms. With inplace the result is written into `input` and
// `input` is returned; as in PyTorch, that is an error on a leaf that requires grad.
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options);
Tensor elu(const Tensor& input, const ELUFuncOptions& options);

// The gradient of leaky_relu given its output gradient and input: grad for
// x > 0, grad * negative_slope otherwise. An op with its own backward.
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& input, double negative_slope);
// The gradient of elu given its output gradient and input: grad for x > 0,
// grad * alpha * exp(x) otherwise. An op with its own backward.
Tensor elu_backward(const Tensor& grad, const Tensor& input, double alpha);

}  // namespace functional
}  // namespace gradiens::nn
