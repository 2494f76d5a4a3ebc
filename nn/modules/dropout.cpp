// The dropout modules over nn::functional's dropouts.
#include "nn/modules/dropout.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/functional/dropout.h"
#include "nn/modules/activation.h"

namespace gradiens::nn {

namespace detail {

DropoutImplBase::DropoutImplBase(std::string name, const DropoutOptions& options_)
    : Module(std::move(name)), options(options_) {
  GD_CHECK(options.p() >= 0 && options.p() <= 1,
           fmt::format("dropout probability has to be between 0 and 1, but got {}", options.p()));
}

std::string DropoutImplBase::extra_repr() const {
  return "p=" + python_float(options.p()) + ", inplace=" + (options.inplace() ? "True" : "False");
}

void DropoutImplBase::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::" << name() << "(p=" << libtorch_float(options.p())
         << ", inplace=" << (options.inplace() ? "true" : "false") << ")";
}

}  // namespace detail

Tensor DropoutImpl::forward(const Tensor& input) {
  return functional::dropout(
      input, functional::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

Tensor Dropout2dImpl::forward(const Tensor& input) {
  return functional::dropout2d(
      input, functional::Dropout2dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

Tensor Dropout3dImpl::forward(const Tensor& input) {
  return functional::dropout3d(
      input, functional::Dropout3dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

Tensor AlphaDropoutImpl::forward(const Tensor& input) {
  return functional::alpha_dropout(
      input, functional::AlphaDropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

Tensor FeatureAlphaDropoutImpl::forward(const Tensor& input) {
  return functional::feature_alpha_dropout(input, functional::FeatureAlphaDropoutFuncOptions()
                                                      .p(options.p())
                                                      .training(is_training())
                                                      .inplace(options.inplace()));
}

}  // namespace gradiens::nn
