// LayerNorm over the engine's layer_norm (normalization over the trailing
// dims with an elementwise affine transform), GroupNorm and LocalResponseNorm
// over their nn::functional forms.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "nn/functional/normalization.h"
#include "nn/module.h"

namespace gradiens::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  GRADIENS_ARG(std::vector<int64_t>, normalized_shape);
  GRADIENS_ARG(double, eps) = 1e-5;
  GRADIENS_ARG(bool, elementwise_affine) = true;
};

// Normalizes over the trailing dims given by normalized_shape (biased
// variance), then scales by weight (ones) and shifts by bias (zeros), each
// shaped normalized_shape, when elementwise_affine.
class LayerNormImpl : public Module {
 public:
  // LayerNorm(4) normalizes over the last dim of size 4, as PyTorch's int form.
  explicit LayerNormImpl(int64_t normalized_shape) : LayerNormImpl(LayerNormOptions({normalized_shape})) {}
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(const LayerNormOptions& options);

  // weight = 1, bias = 0.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  // torch::nn::LayerNorm([2, 2], eps=1e-05, elementwise_affine=true)
  void pretty_print(std::ostream& stream) const;

  LayerNormOptions options;
  Tensor weight, bias;  // undefined without elementwise_affine
};
GRADIENS_MODULE(LayerNorm);

// num_channels must be divisible by num_groups (checked at construction).
class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  // weight = 1, bias = 0.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;

  GroupNormOptions options;
  Tensor weight, bias;  // undefined without affine
};
GRADIENS_MODULE(GroupNorm);

class LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options) : Module("LocalResponseNorm"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::local_response_norm(input, options); }
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;

  LocalResponseNormOptions options;
};
GRADIENS_MODULE(LocalResponseNorm);

struct CrossMapLRN2dOptions {
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, size);
  GRADIENS_ARG(double, alpha) = 1e-4;
  GRADIENS_ARG(double, beta) = 0.75;
  GRADIENS_ARG(int64_t, k) = 1;
};

// Lua torch's cross-channel LRN on [N, C, H, W]: x / (k + alpha / size * a running sum of squares over nearby
// channels)^beta, the window as PyTorch's forward builds it (see forward). A composite, differentiable to any
// order; its gradient is the exact one of that forward.
class CrossMapLRN2dImpl : public Module {
 public:
  CrossMapLRN2dImpl(int64_t size) : CrossMapLRN2dImpl(CrossMapLRN2dOptions(size)) {}  // NOLINT: as libtorch's
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options) : Module("CrossMapLRN2d"), options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;

  CrossMapLRN2dOptions options;
};
GRADIENS_MODULE(CrossMapLRN2d);

}  // namespace gradiens::nn
