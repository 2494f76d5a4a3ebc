// LayerNorm over the engine's layer_norm: normalization over the trailing
// dims with an elementwise affine transform.
#pragma once

#include <string>
#include <vector>

#include "nn/module.h"

namespace gradiens::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  LayerNormOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  LayerNormOptions& elementwise_affine(bool v) {
    elementwise_affine_ = v;
    return *this;
  }
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
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

  LayerNormOptions options;
  Tensor weight, bias;  // undefined without elementwise_affine
};
GRADIENS_MODULE(LayerNorm);

}  // namespace gradiens::nn
