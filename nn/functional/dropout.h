// nn::functional dropouts with libtorch's options structs: dropout, the
// channel-wise dropout2d/dropout3d, alpha_dropout and feature_alpha_dropout.
// Masks come from the default generator (manual_seed fixes them) and are
// constant factors, so every derivative is the mask's.
#pragma once

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn::functional {

// libtorch's defaults: dropout and its channel forms train by default, the
// alpha forms do not.
struct DropoutFuncOptions {
  GRADIENS_ARG(double, p) = 0.5;
  GRADIENS_ARG(bool, training) = true;
  GRADIENS_ARG(bool, inplace) = false;
};
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;

struct AlphaDropoutFuncOptions {
  GRADIENS_ARG(double, p) = 0.5;
  GRADIENS_ARG(bool, training) = false;
  GRADIENS_ARG(bool, inplace) = false;
};

struct FeatureAlphaDropoutFuncOptions {
  GRADIENS_ARG(double, p) = 0.5;
  GRADIENS_ARG(bool, training) = false;
  GRADIENS_ARG(bool, inplace) = false;
};

// Each element zeroed with probability p, the rest scaled by 1 / (1 - p).
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {});
// Whole channels (dim 1 of an (N, C, ...) input) zeroed with probability p,
// the rest scaled by 1 / (1 - p).
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options = {});
// SELU's dropout: dropped elements take SELU's negative saturation value and
// an affine map restores the mean and variance (Klambauer et al. 2017).
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {});
// alpha_dropout of whole channels.
Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options = {});

namespace detail {
// The same with positional arguments, as libtorch's F::detail forms.
Tensor alpha_dropout(const Tensor& input, double p, bool training, bool inplace);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool training, bool inplace);
}  // namespace detail

}  // namespace gradiens::nn::functional
