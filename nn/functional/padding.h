// F::pad: modes "constant", "reflect", "replicate" and "circular" (also
// spelled torch::kConstant, ...), as PyTorch's F.pad.
#pragma once

#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/functional/options.h"

namespace gradiens::nn {

namespace functional {

// pad: (before, after) pairs starting from the last dim, as PyTorch's F.pad.
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  GRADIENS_ARG(std::vector<int64_t>, pad);
  GRADIENS_ARG(std::string, mode) = "constant";
  GRADIENS_ARG(double, value) = 0;
};

// Differentiable to any order (cat, narrow and index_select). "constant" pads
// any number of trailing dims and crops them where a padding is negative; the
// other modes pad the last 1, 2 or 3 dims of a 2-D/3-D, 3-D/4-D or 4-D/5-D input.
Tensor pad(const Tensor& input, const PadFuncOptions& options);

}  // namespace functional

}  // namespace gradiens::nn
