// F::interpolate (modes "nearest", "linear", "bilinear", "bicubic",
// "trilinear", "area"; align_corners; size or scale_factor;
// recompute_scale_factor) with libtorch's InterpolateFuncOptions, and the
// Upsample layer with UpsampleOptions.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/functional/options.h"
#include "nn/module.h"

namespace gradiens::nn {

namespace functional {

// size or scale_factor, one value per spatial dim; mode as PyTorch's string or
// torch::kNearest, torch::kBilinear, ...
struct InterpolateFuncOptions {
  GRADIENS_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GRADIENS_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GRADIENS_ARG(std::string, mode) = "nearest";
  GRADIENS_ARG(std::optional<bool>, align_corners) = std::nullopt;
  GRADIENS_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
};

// As PyTorch's F.interpolate on [N, C, *spatial] with 1 to 3 spatial dims:
// separable (one spatial dim at a time), from index_select, products and sums,
// so differentiable to any order; "area" is adaptive average pooling.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

}  // namespace functional

struct UpsampleOptions {
  GRADIENS_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GRADIENS_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GRADIENS_ARG(std::string, mode) = "nearest";
  GRADIENS_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  UpsampleOptions options;
};
GRADIENS_MODULE(Upsample);

}  // namespace gradiens::nn
