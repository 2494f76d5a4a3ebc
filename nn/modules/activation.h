// Activation modules: ReLU, Tanh, Sigmoid, GELU (exact or tanh), SiLU,
// Softplus, LeakyReLU, ELU, Softmax and LogSoftmax.
#pragma once

#include <string>

#include "engine/functions.h"
#include "nn/functional/activation.h"
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

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::leaky_relu(input, options); }
  std::string extra_repr() const override;
  LeakyReLUOptions options;
};
GRADIENS_MODULE(LeakyReLU);

class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  Tensor forward(const Tensor& input) { return functional::elu(input, options); }
  std::string extra_repr() const override;
  ELUOptions options;
};
GRADIENS_MODULE(ELU);

// libtorch's SoftmaxOptions: the dim is required (PyTorch's implicit dim=None is deprecated).
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  SoftmaxOptions& dim(int64_t v) {
    dim_ = v;
    return *this;
  }
  int64_t dim_;
};
using LogSoftmaxOptions = SoftmaxOptions;

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  Tensor forward(const Tensor& input) { return softmax(input, options.dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim_); }
  SoftmaxOptions options;
};
GRADIENS_MODULE(Softmax);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("LogSoftmax"), options(options) {}
  Tensor forward(const Tensor& input) { return log_softmax(input, options.dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim_); }
  LogSoftmaxOptions options;
};
GRADIENS_MODULE(LogSoftmax);

namespace detail {
// A double as Python's repr prints a float in an extra_repr: 0.01, 1.0, 1e-05, inf.
std::string python_float(double value);
}  // namespace detail

}  // namespace gradiens::nn
