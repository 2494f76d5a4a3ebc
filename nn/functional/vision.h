// affine_grid and grid_sample (torch.nn.functional's vision functions) for
// 2-D images: the sampling grid of a batch of affine maps, and the input read
// at a grid's points with bilinear or nearest interpolation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn::functional {

// theta [N, 2, 3] and size [N, C, H, W]: the grid [N, H, W, 2] of theta applied to the points (x, y, 1) of the
// normalized output coordinates in [-1, 1] (pixel corners with align_corners, pixel centers without).
// theta [N, 3, 4] with size [N, C, D, H, W] gives [N, D, H, W, 3].
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners = false);

struct GridSampleFuncOptions {
  // "bilinear" or "nearest" (torch::kBilinear, torch::kNearest).
  GRADIENS_ARG(std::string, mode) = "bilinear";
  // Where a point outside the input reads: "zeros", "border" (the nearest edge) or "reflection".
  GRADIENS_ARG(std::string, padding_mode) = "zeros";
  // -1 and 1 are the centers of the corner pixels (true) or their outer edges (false, the default).
  GRADIENS_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

// input [N, C, H, W], grid [N, Ho, Wo, 2] of (x, y) in [-1, 1]: [N, C, Ho, Wo]. Differentiable in input and (for
// bilinear) in grid, as a composite of gather and arithmetic.
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

}  // namespace gradiens::nn::functional
