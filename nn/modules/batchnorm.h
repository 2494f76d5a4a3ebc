// BatchNorm1d and BatchNorm2d over the engine's batch_norm: batch statistics
// in training (updating the running ones), running statistics in evaluation.
#pragma once

#include <optional>
#include <string>

#include "nn/module.h"

namespace gradiens::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  BatchNormOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  // nullopt: a cumulative moving average (running stat = mean of all batches
  // so far), as PyTorch's momentum=None.
  BatchNormOptions& momentum(std::optional<double> v) {
    momentum_ = v;
    return *this;
  }
  BatchNormOptions& affine(bool v) {
    affine_ = v;
    return *this;
  }
  BatchNormOptions& track_running_stats(bool v) {
    track_running_stats_ = v;
    return *this;
  }
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};

// What BatchNorm1d and BatchNorm2d share; they differ in the input dims they accept.
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

// Over (N, C, H, W) input.
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GRADIENS_MODULE(BatchNorm2d);

}  // namespace gradiens::nn
