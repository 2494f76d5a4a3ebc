// Activation modules over the engine's elementwise ops: ReLU, Tanh, Sigmoid,
// GELU (exact or tanh), SiLU, Softplus.
#pragma once

#include <string>

#include "engine/functions.h"
#include "nn/module.h"

namespace gradiens::nn {

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input) { return relu(input); }
};
GRADIENS_MODULE(ReLU);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input) { return tanh(input); }
};
GRADIENS_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) { return sigmoid(input); }
};
GRADIENS_MODULE(Sigmoid);

class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& input) { return silu(input); }
};
GRADIENS_MODULE(SiLU);

// approximate: "none" (the erf form) or "tanh".
class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none") : Module("GELU"), approximate(std::move(approximate)) {
    gelu(zeros({1}), this->approximate);  // rejects an unknown approximation at construction
  }
  Tensor forward(const Tensor& input) { return gelu(input, approximate); }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
  std::string approximate;
};
GRADIENS_MODULE(GELU);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(double beta = 1.0, double threshold = 20.0)
      : Module("Softplus"), beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& input) { return softplus(input, beta, threshold); }
  std::string extra_repr() const override;
  double beta, threshold;
};
GRADIENS_MODULE(Softplus);

}  // namespace gradiens::nn
