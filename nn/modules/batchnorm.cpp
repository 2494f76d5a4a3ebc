// BatchNorm1d/2d/3d: registration, the running-statistics bookkeeping of
// PyTorch's _BatchNorm.forward, and printing.
#include "nn/modules/batchnorm.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/modules/activation.h"  // detail::python_float

namespace gradiens::nn {

BatchNormImplBase::BatchNormImplBase(std::string name, const BatchNormOptions& options_)
    : Module(std::move(name)), options(options_) {
  GD_CHECK(options.num_features_ >= 0,
           fmt::format("{}: num_features must be non-negative, got {}", this->name(), options.num_features_));
  // Registered even when undefined, as PyTorch registers None, so the slots keep their order.
  weight = register_parameter("weight", options.affine_ ? empty({options.num_features_}) : Tensor(), options.affine_);
  bias = register_parameter("bias", options.affine_ ? empty({options.num_features_}) : Tensor(), options.affine_);
  const bool track = options.track_running_stats_;
  running_mean = register_buffer("running_mean", track ? zeros({options.num_features_}) : Tensor());
  running_var = register_buffer("running_var", track ? ones({options.num_features_}) : Tensor());
  num_batches_tracked = register_buffer("num_batches_tracked", track ? zeros({}, kInt64) : Tensor());
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats_) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (!options.affine_) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  check_input_dim(input);
  // As PyTorch's _BatchNorm.forward: the batch is counted before normalizing,
  // and momentum=None averages over every batch counted so far.
  double factor = options.momentum_.value_or(0.0);
  if (is_training() && options.track_running_stats_ && num_batches_tracked.defined()) {
    {
      NoGradGuard no_grad;
      num_batches_tracked.add_(1);
    }
    if (!options.momentum_) factor = 1.0 / num_batches_tracked.item<double>();
  }
  const bool use_batch_stats = is_training() || (!running_mean.defined() && !running_var.defined());
  const bool pass_running = !is_training() || options.track_running_stats_;
  return batch_norm(input, pass_running ? running_mean : Tensor(), pass_running ? running_var : Tensor(), weight,
                    bias, use_batch_stats, factor, options.eps_);
}

std::string BatchNormImplBase::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", options.num_features_,
                     detail::python_float(options.eps_),
                     options.momentum_ ? detail::python_float(*options.momentum_) : "None",
                     options.affine_ ? "True" : "False", options.track_running_stats_ ? "True" : "False");
}

void BatchNormImplBase::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::" << name() << "(" << options.num_features_ << ", eps=" << detail::libtorch_float(options.eps_)
         << ", momentum=" << (options.momentum_ ? detail::libtorch_float(*options.momentum_) : "None")
         << ", affine=" << (options.affine_ ? "true" : "false")
         << ", track_running_stats=" << (options.track_running_stats_ ? "true" : "false") << ")";
}

void BatchNorm1dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() == 2 || input.dim() == 3,
           fmt::format("expected 2D or 3D input (got {}D input)", input.dim()));
}

void BatchNorm2dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() == 4, fmt::format("expected 4D input (got {}D input)", input.dim()));
}

void BatchNorm3dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() == 5, fmt::format("expected 5D input (got {}D input)", input.dim()));
}

}  // namespace gradiens::nn
