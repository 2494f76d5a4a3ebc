// Linear (y = x W^T + b, PyTorch's default initialization) and Identity.
#pragma once

#include "nn/module.h"

namespace gradiens::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit LinearImpl(const LinearOptions& options);

  // Re-draws weight and bias as PyTorch's reset_parameters: kaiming_uniform_
  // with a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in)) for both.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined without bias
};
GRADIENS_MODULE(Linear);

// Returns its input: a placeholder layer (e.g. an optional block switched off).
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) { return input; }
};
GRADIENS_MODULE(Identity);

}  // namespace gradiens::nn
