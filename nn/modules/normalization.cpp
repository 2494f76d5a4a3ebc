// LayerNorm, GroupNorm and LocalResponseNorm: registration, forward and printing.
#include "nn/modules/normalization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "kernels/error.h"
#include "nn/modules/activation.h"  // detail::python_float, libtorch_float

namespace gradiens::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_) : Module("LayerNorm"), options(options_) {
  if (options.elementwise_affine_) {
    weight = register_parameter("weight", gradiens::empty(IntArrayRef(options.normalized_shape_)));
    bias = register_parameter("bias", gradiens::empty(IntArrayRef(options.normalized_shape_)));
  } else {
    // PyTorch registers None, keeping the slots.
    register_parameter("weight", Tensor(), /*requires_grad=*/false);
    register_parameter("bias", Tensor(), /*requires_grad=*/false);
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine_) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape_, weight, bias, options.eps_);
}

std::string LayerNormImpl::extra_repr() const {
  // normalized_shape prints as a Python tuple: (4,) or (3, 4).
  std::string shape = "(";
  for (size_t i = 0; i < options.normalized_shape_.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(options.normalized_shape_[i]);
  shape += options.normalized_shape_.size() == 1 ? ",)" : ")";
  return fmt::format("{}, eps={}, elementwise_affine={}", shape, detail::python_float(options.eps_),
                     options.elementwise_affine_ ? "True" : "False");
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LayerNorm(" << fmt::format("[{}]", fmt::join(options.normalized_shape(), ", "))
         << ", eps=" << detail::libtorch_float(options.eps())
         << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : Module("GroupNorm"), options(options_) {
  GD_CHECK(options.num_groups() > 0 && options.num_channels() % options.num_groups() == 0,
           "num_channels must be divisible by num_groups");
  const bool affine = options.affine();
  weight = register_parameter("weight", affine ? empty({options.num_channels()}) : Tensor());
  bias = register_parameter("bias", affine ? empty({options.num_channels()}) : Tensor());
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return functional::group_norm(
      input, functional::GroupNormFuncOptions(options.num_groups()).weight(weight).bias(bias).eps(options.eps()));
}

std::string GroupNormImpl::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", options.num_groups(), options.num_channels(),
                     detail::python_float(options.eps()), options.affine() ? "True" : "False");
}

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << detail::libtorch_float(options.eps()) << ", affine=" << (options.affine() ? "true" : "false")
         << ")";
}

std::string LocalResponseNormImpl::extra_repr() const {
  return fmt::format("{}, alpha={}, beta={}, k={}", options.size(), detail::python_float(options.alpha()),
                     detail::python_float(options.beta()), detail::python_float(options.k()));
}

void LocalResponseNormImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LocalResponseNorm(" << options.size() << ", alpha=" << detail::libtorch_float(options.alpha())
         << ", beta=" << detail::libtorch_float(options.beta()) << ", k=" << detail::libtorch_float(options.k())
         << ")";
}

Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  GD_CHECK(input.dim() == 4, fmt::format("CrossMapLRN2d: Expected input to be 4D, got {}D instead.", input.dim()));
  // Lua torch's running window, kept as PyTorch's (and libtorch's) forward computes it: the first channel sums
  // the first pre_pad squares; each next one adds the square pre_pad - 1 ahead and drops the one pre_pad behind
  // only from channel pre_pad + 1 on.
  const int64_t channels = input.size(1), pre_pad = (options.size() - 1) / 2 + 1;
  const Tensor squares = input * input;
  std::vector<Tensor> sums{squares.narrow(1, 0, std::min(pre_pad, channels)).sum({1})};
  for (int64_t c = 1; c < channels; ++c) {
    Tensor current = sums.back();
    if (c < channels - pre_pad + 1) current = current + squares.select(1, c + pre_pad - 1);
    if (c > pre_pad) current = current - squares.select(1, c - pre_pad);
    sums.push_back(current);
  }
  const Tensor scale = stack(sums, 1) * (options.alpha() / static_cast<double>(options.size())) + options.k();
  return input * scale.pow(-options.beta());
}

std::string CrossMapLRN2dImpl::extra_repr() const {
  return fmt::format("{}, alpha={}, beta={}, k={}", options.size(), detail::python_float(options.alpha()),
                     detail::python_float(options.beta()), options.k());
}

void CrossMapLRN2dImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CrossMapLRN2d(" << options.size() << ", alpha=" << detail::libtorch_float(options.alpha())
         << ", beta=" << detail::libtorch_float(options.beta()) << ", k=" << options.k() << ")";
}

}  // namespace gradiens::nn
