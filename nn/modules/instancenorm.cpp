// InstanceNorm1d/2d/3d: registration, forward over F::instance_norm, printing.
#include "nn/modules/instancenorm.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"
#include "nn/functional/normalization.h"
#include "nn/modules/activation.h"  // detail::python_float, libtorch_float

namespace gradiens::nn {

InstanceNormImplBase::InstanceNormImplBase(std::string name, const InstanceNormOptions& options_)
    : Module(std::move(name)), options(options_) {
  const int64_t n = options.num_features();
  GD_CHECK(n >= 0, fmt::format("{}: num_features must be non-negative, got {}", this->name(), n));
  // Registered even when undefined, as PyTorch registers None.
  weight = register_parameter("weight", options.affine() ? empty({n}) : Tensor(), options.affine());
  bias = register_parameter("bias", options.affine() ? empty({n}) : Tensor(), options.affine());
  const bool track = options.track_running_stats();
  running_mean = register_buffer("running_mean", track ? zeros({n}) : Tensor());
  running_var = register_buffer("running_var", track ? ones({n}) : Tensor());
  num_batches_tracked = register_buffer("num_batches_tracked", track ? zeros({}, kInt64) : Tensor());
  reset_parameters();
}

void InstanceNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void InstanceNormImplBase::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor InstanceNormImplBase::forward(const Tensor& input) {
  check_input_dim(input);
  return functional::instance_norm(input, functional::InstanceNormFuncOptions()
                                              .running_mean(running_mean)
                                              .running_var(running_var)
                                              .weight(weight)
                                              .bias(bias)
                                              .use_input_stats(is_training() || !options.track_running_stats())
                                              .momentum(options.momentum())
                                              .eps(options.eps()));
}

std::string InstanceNormImplBase::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", options.num_features(),
                     detail::python_float(options.eps()), detail::python_float(options.momentum()),
                     options.affine() ? "True" : "False", options.track_running_stats() ? "True" : "False");
}

void InstanceNormImplBase::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::" << name() << "(" << options.num_features() << ", eps=" << detail::libtorch_float(options.eps())
         << ", momentum=" << detail::libtorch_float(options.momentum())
         << ", affine=" << (options.affine() ? "true" : "false")
         << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

// libtorch 1.9's checks (no unbatched input); the 2-D message is libtorch's, spacing included.
void InstanceNorm1dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() != 2,
           "InstanceNorm1d returns 0-filled tensor to 2D tensor.This is because InstanceNorm1d reshapes inputs "
           "to(1, N * C, ...) from (N, C,...) and this makesvariances 0.");
  GD_CHECK(input.dim() == 3, fmt::format("expected 3D input (got {}D input)", input.dim()));
}

void InstanceNorm2dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() == 4, fmt::format("expected 4D input (got {}D input)", input.dim()));
}

void InstanceNorm3dImpl::check_input_dim(const Tensor& input) const {
  GD_CHECK(input.dim() == 5, fmt::format("expected 5D input (got {}D input)", input.dim()));
}

}  // namespace gradiens::nn
