// BatchNorm1d, BatchNorm2d and BatchNorm3d over the engine's batch_norm: batch statistics
// in training (updating the running ones), running statistics in evaluation.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "nn/functional/options.h"
#include "nn/module.h"

namespace gradiens::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit as libtorch's
  GRADIENS_ARG(int64_t, num_features);
  GRADIENS_ARG(double, eps) = 1e-5;
  // nullopt: a cumulative moving average (running stat = mean of all batches
  // so far), as PyTorch's momentum=None.
  GRADIENS_ARG(std::optional<double>, momentum) = 0.1;
  GRADIENS_ARG(bool, affine) = true;
  GRADIENS_ARG(bool, track_running_stats) = true;
};

// What BatchNorm1d, 2d and 3d share; they differ in the input dims they accept.
//
// Registered as PyTorch's: parameters weight (ones) and bias (zeros) when
// affine; buffers running_mean (zeros), running_var (ones) and the int64
// scalar num_batches_tracked when track_running_stats, so state_dict keys and
// order match PyTorch's. In training each forward counts the batch, normalizes
// with the batch mean and biased variance and moves the running mean and the
// running unbiased variance toward them; in evaluation it normalizes with the
// running statistics. Without track_running_stats it always uses the batch's.
class BatchNormImplBase : public Module {
 public:
  Tensor forward(const Tensor& input);
  // running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  // reset_running_stats, then weight = 1 and bias = 0.
  void reset_parameters();
  std::string extra_repr() const override;
  // libtorch's form: torch::nn::BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true).
  void pretty_print(std::ostream& stream) const;

  BatchNormOptions options;
  Tensor weight, bias;                                        // undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined without track_running_stats

 protected:
  BatchNormImplBase(std::string name, const BatchNormOptions& options);
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Over (N, C) or (N, C, L) input.
class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(BatchNorm1d);
using BatchNorm1dOptions = BatchNormOptions;

// Over (N, C, H, W) input.
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(BatchNorm2d);
using BatchNorm2dOptions = BatchNormOptions;

// Over (N, C, D, H, W) input.
class BatchNorm3dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm3dImpl(int64_t num_features) : BatchNorm3dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm3dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm3d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(BatchNorm3d);
using BatchNorm3dOptions = BatchNormOptions;

}  // namespace gradiens::nn
