// Dropout, Dropout2d, Dropout3d, AlphaDropout and FeatureAlphaDropout: their
// nn::functional forms in training, the identity in evaluation mode.
#pragma once

#include <iosfwd>
#include <string>

#include "nn/functional/options.h"
#include "nn/module.h"

namespace gradiens::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(double, p);
  GRADIENS_ARG(bool, inplace) = false;
};
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace detail {
// What the dropout modules share: the options, checked at construction (p
// outside [0, 1] is PyTorch's error, raised here rather than at the first
// forward), and the printing.
class DropoutImplBase : public Module {
 public:
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  DropoutOptions options;

 protected:
  DropoutImplBase(std::string name, const DropoutOptions& options);
};
}  // namespace detail

// Zeroes elements with probability p and scales the rest by 1 / (1 - p). The
// mask comes from the default generator (manual_seed fixes it). With inplace,
// input is multiplied in place and returned, as in PyTorch.
class DropoutImpl : public detail::DropoutImplBase {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {}) : DropoutImplBase("Dropout", options) {}
  Tensor forward(const Tensor& input);
};
GRADIENS_MODULE(Dropout);

// Zeroes whole channels (dim 1) of (N, C, H, W) input.
class Dropout2dImpl : public detail::DropoutImplBase {
 public:
  explicit Dropout2dImpl(const Dropout2dOptions& options = {}) : DropoutImplBase("Dropout2d", options) {}
  Tensor forward(const Tensor& input);
};
GRADIENS_MODULE(Dropout2d);

// Zeroes whole channels (dim 1) of (N, C, D, H, W) input.
class Dropout3dImpl : public detail::DropoutImplBase {
 public:
  explicit Dropout3dImpl(const Dropout3dOptions& options = {}) : DropoutImplBase("Dropout3d", options) {}
  Tensor forward(const Tensor& input);
};
GRADIENS_MODULE(Dropout3d);

// SELU's dropout, keeping zero mean and unit variance.
class AlphaDropoutImpl : public detail::DropoutImplBase {
 public:
  explicit AlphaDropoutImpl(const AlphaDropoutOptions& options = {}) : DropoutImplBase("AlphaDropout", options) {}
  Tensor forward(const Tensor& input);
};
GRADIENS_MODULE(AlphaDropout);

// AlphaDropout of whole channels.
class FeatureAlphaDropoutImpl : public detail::DropoutImplBase {
 public:
  explicit FeatureAlphaDropoutImpl(const FeatureAlphaDropoutOptions& options = {})
      : DropoutImplBase("FeatureAlphaDropout", options) {}
  Tensor forward(const Tensor& input);
};
GRADIENS_MODULE(FeatureAlphaDropout);

}  // namespace gradiens::nn
