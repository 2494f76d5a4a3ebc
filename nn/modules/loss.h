// The loss modules (nn::CrossEntropyLoss, nn::MSELoss, ...): each holds its
// options and calls its nn::functional form. Class weights and pos_weight are
// registered as buffers, as in PyTorch, so to(dtype) converts them.
#pragma once

#include <string>
#include <utility>

#include "nn/functional/loss.h"
#include "nn/module.h"

namespace gradiens::nn {

namespace detail {
// One loss module: `Fn` is the functional form taking (input, target, options).
template <class Options, Tensor (*Fn)(const Tensor&, const Tensor&, const Options&)>
class LossModule : public Module {
 public:
  LossModule(std::string name, Options options) : Module(std::move(name)), options(std::move(options)) {
    if constexpr (requires { this->options.weight(); })
      if (this->options.weight().defined()) register_buffer("weight", this->options.weight());
    if constexpr (requires { this->options.pos_weight(); })
      if (this->options.pos_weight().defined()) register_buffer("pos_weight", this->options.pos_weight());
  }
  Tensor forward(const Tensor& input, const Tensor& target) { return Fn(input, target, options); }

  Options options;
};
}  // namespace detail

#define GRADIENS_LOSS_MODULE(Name, Options, fn)                                               \
  class Name##Impl : public detail::LossModule<Options, fn> {                                \
   public:                                                                                   \
    explicit Name##Impl(Options options = {}) : LossModule(#Name, std::move(options)) {}    \
  };                                                                                         \
  GRADIENS_MODULE(Name)

GRADIENS_LOSS_MODULE(CrossEntropyLoss, CrossEntropyLossOptions, functional::cross_entropy);
GRADIENS_LOSS_MODULE(NLLLoss, NLLLossOptions, functional::nll_loss);
GRADIENS_LOSS_MODULE(BCELoss, BCELossOptions, functional::binary_cross_entropy);
GRADIENS_LOSS_MODULE(BCEWithLogitsLoss, BCEWithLogitsLossOptions, functional::binary_cross_entropy_with_logits);
GRADIENS_LOSS_MODULE(MSELoss, MSELossOptions, functional::mse_loss);
GRADIENS_LOSS_MODULE(L1Loss, L1LossOptions, functional::l1_loss);
GRADIENS_LOSS_MODULE(HuberLoss, HuberLossOptions, functional::huber_loss);
GRADIENS_LOSS_MODULE(SmoothL1Loss, SmoothL1LossOptions, functional::smooth_l1_loss);
GRADIENS_LOSS_MODULE(KLDivLoss, KLDivLossOptions, functional::kl_div);

#undef GRADIENS_LOSS_MODULE

}  // namespace gradiens::nn
