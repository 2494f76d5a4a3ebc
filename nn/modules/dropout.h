// Dropout: zeroes elements with probability p in training and scales the rest
// by 1 / (1 - p); the identity in evaluation mode.
#pragma once

#include <string>

#include "nn/module.h"

namespace gradiens::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  DropoutOptions& p(double v) {
    p_ = v;
    return *this;
  }
  DropoutOptions& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  double p_;
  bool inplace_ = false;
};

class DropoutImpl : public Module {
 public:
  // p outside [0, 1] is PyTorch's error, raised here rather than at the first forward.
  explicit DropoutImpl(const DropoutOptions& options = {});
  // The mask comes from the default generator (manual_seed fixes it). With
  // inplace, input is multiplied in place and returned, as in PyTorch.
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  DropoutOptions options;
};
GRADIENS_MODULE(Dropout);

}  // namespace gradiens::nn
