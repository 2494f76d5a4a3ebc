// UndefinedGrad: a node called in the forward direction that passes copies of
// its inputs on and sends undefined gradients back (libtorch's basic_ops), for
// testing how backward formulas see gradients that never arrived.
#pragma once

#include <string_view>
#include <vector>

#include "engine/autograd/node.h"

namespace gradiens::autograd {

// The backward of UndefinedGrad: an undefined gradient for every input.
class UndefinedGradBackward final : public Node {
 public:
  std::string_view name() const override { return "UndefinedGradBackward"; }
  GradList apply(GradList&& grads) override;
};

// y = UndefinedGrad().apply({x})[0]: a copy of x whose gradient arrives at x's
// history undefined.
struct UndefinedGrad {
  std::vector<Tensor> apply(std::vector<Tensor>&& inputs) const;
};

}  // namespace gradiens::autograd
