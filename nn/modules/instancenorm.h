// InstanceNorm1d/2d/3d over nn::functional::instance_norm: each sample's
// channels normalized over their spatial dims.
#pragma once

#include <iosfwd>
#include <string>

#include "nn/functional/options.h"
#include "nn/module.h"

namespace gradiens::nn {

// PyTorch's defaults: no affine transform and no running statistics.
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, num_features);
  GRADIENS_ARG(double, eps) = 1e-5;
  GRADIENS_ARG(double, momentum) = 0.1;
  GRADIENS_ARG(bool, affine) = false;
  GRADIENS_ARG(bool, track_running_stats) = false;
};

// Registered as PyTorch's _InstanceNorm: parameters weight (ones) and bias
// (zeros) when affine; buffers running_mean, running_var and
// num_batches_tracked when track_running_stats. A forward uses each sample's
// statistics in training or without running statistics, the running ones
// otherwise, and (in training, with running statistics) moves them toward the
// batch's average.
class InstanceNormImplBase : public Module {
 public:
  Tensor forward(const Tensor& input);
  // running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  // reset_running_stats, then weight = 1 and bias = 0.
  void reset_parameters();
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;

  InstanceNormOptions options;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 protected:
  InstanceNormImplBase(std::string name, const InstanceNormOptions& options);
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Over (N, C, L) input.
class InstanceNorm1dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm1dImpl(int64_t num_features) : InstanceNorm1dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm1dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm1d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(InstanceNorm1d);
using InstanceNorm1dOptions = InstanceNormOptions;

// Over (N, C, H, W) input.
class InstanceNorm2dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm2dImpl(int64_t num_features) : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm2d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(InstanceNorm2d);
using InstanceNorm2dOptions = InstanceNormOptions;

// Over (N, C, D, H, W) input.
class InstanceNorm3dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm3dImpl(int64_t num_features) : InstanceNorm3dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm3dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm3d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(InstanceNorm3d);
using InstanceNorm3dOptions = InstanceNormOptions;

}  // namespace gradiens::nn
