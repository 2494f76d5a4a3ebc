// LayerNorm, GroupNorm and LocalResponseNorm: registration, forward and printing.
#include "nn/modules/normalization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

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
    register_parameter("weight", Tensor());
    register_parameter("bias", Tensor());
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

}  // namespace gradiens::nn
